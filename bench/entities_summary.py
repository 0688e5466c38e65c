"""Markdown tables of bench/entity_defaults.py's JSON lines: one row per configuration, mean ± std over seeds.

cd bench && python entities_summary.py results/entities_flights_validation.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

import numpy as np

CONFIG = (
    "system",
    "epsilon",
    "link",
    "max_events",
    "position_buckets",
    "event_pairs",
    "count_groups",
    "counts_above_k",
)


def cell(values: list[float]) -> str:
    return f"{np.mean(values):.3f}" if len(values) == 1 else f"{np.mean(values):.3f} ± {np.std(values):.3f}"


def summary(path: str) -> str:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    targets = list(rows[0]["tstr"])
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[tuple(row.get(k, "-") for k in CONFIG)].append(row)
    marginals = all("marginal_error" in m for m in rows if m["system"] != "real (TRTR)")
    head = [*CONFIG, "chosen link", "seeds", "KS events/entity", "2-way event error"]
    head += ["1-way event error", "fit s"] if marginals else []
    head += [f"{t} {m}" for t in targets for m in ("acc", "bal. acc")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for config, members in groups.items():
        chosen = sorted({str(m.get("chosen_link", "-")) for m in members})
        values = [cell([m["ks_counts"] for m in members]), cell([m["pair_error"] for m in members])]
        if marginals:  # the mean over event columns of each column's error; fit seconds (median)
            values.append(cell([float(np.mean(list(m["marginal_error"].values()))) for m in members]))
            values.append(
                "-" if "fit_seconds" not in members[0] else f"{np.median([m['fit_seconds'] for m in members]):.1f}"
            )
        values += [cell([m["tstr"][t][k] for m in members]) for t in targets for k in ("accuracy", "balanced")]
        lines.append("| " + " | ".join([*map(str, config), "/".join(chosen), str(len(members)), *values]) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(f"{name}\n\n{summary(name)}\n")
