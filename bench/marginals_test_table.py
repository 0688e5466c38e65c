"""Issue 54's test-split table: per table and ε, the mean over seeds of the TSTR AUC gap / 2-way error
(seeds; fit seconds) of each system's rows in bench/results/marginals_54, then each default against AIM
where AIM finished (its mean gap and the worst table, the model's gap less AIM's).

    python bench/marginals_test_table.py [--cells FILE]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "marginals_54"
FILES = {
    "default": "test_default_csv.jsonl",  # CSV-only, the default (the class tree)
    "cells": "test_cells.jsonl",  # hand schemas, the default since the cells (the class tree)
    "tree": "test_tree.jsonl",  # hand schemas, the class tree on the schema's equal bins (before the cells)
    "gan": "test_gan.jsonl",
    "compose": "test_compose.jsonl",
    "peers": "test_peers.jsonl",  # MST (and the first tree rows, mode "schema")
    "aim": "test_aim.jsonl",
}
NAMES = {
    "default": "CSV-only default (class tree)",
    "cells": "hand schema default (class tree, DP cells)",
    "tree": "class tree, equal bins",
    "gan": "GAN, hand schema",
    "compose": "composition",
    "mst": "MST",
    "aim": "AIM",
}
TABLES = ("creditcard", "hmda", "chile", "nmes", "doctorvisits", "flchain", "cps", "churn", "loans", "adult")
Row = tuple[int, float, float, float]


def load(paths: dict[str, Path]) -> dict[tuple[str, float, str], list[Row | None]]:
    """Each system's rows by (table, ε, system); None for a run that did not finish."""
    cells: dict[tuple[str, float, str], list[Row | None]] = collections.defaultdict(list)
    for key, path in paths.items():
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            mode = r.get("mode")
            system = {"no-schema": "default", "schema": "tree" if key in ("peers", "tree") else key}.get(mode, mode)
            system = "compose" if key == "compose" else system
            finished = "auc_diff" in r and not r.get("error")
            row = (r["seed"], r["auc_diff"], r.get("two_way_error"), r.get("fit_seconds")) if finished else None
            cells[(r["table"], float(r["epsilon"]), system)].append(row)
    return cells


def mean_gap(rows: list[Row | None]) -> float | None:
    done = [r for r in rows if r]
    return statistics.mean(r[1] for r in done) if done else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=Path, help="the hand-schema default's rows (default: results/marginals_54)")
    args = parser.parse_args()
    paths = {key: RESULTS / name for key, name in FILES.items()}
    if args.cells is not None:
        paths["cells"] = args.cells
    cells = load(paths)
    order = ("default", "cells", "tree", "gan", "compose", "mst", "aim")
    print("| table | ε | " + " | ".join(NAMES[s] for s in order) + " |")
    print("|---|---|" + "---|" * len(order))
    for eps in (1.0, 3.0):
        for table in TABLES:
            row = f"| {table} | {eps:g} |"
            for system in order:
                raw = cells.get((table, eps, system), [])
                done = [r for r in raw if r]
                if not done:
                    row += " t/o |" if raw else " — |"
                    continue
                seconds = [r[3] for r in done if r[3] is not None]
                gap, two_way = statistics.mean(r[1] for r in done), statistics.mean(r[2] for r in done)
                row += f" {gap:.3f} / {two_way:.3f} ({len(done)}; {min(seconds):.0f}-{max(seconds):.0f} s) |"
            print(row)
    print()
    for system in ("default", "cells", "gan"):
        for eps in (1.0, 3.0):
            pairs = []
            for table in TABLES:
                aim, model = mean_gap(cells.get((table, eps, "aim"), [])), mean_gap(cells.get((table, eps, system), []))
                if aim is not None and model is not None:
                    pairs.append((model, aim, table))
            if pairs:
                worst = max((round(m - a, 3), t) for m, a, t in pairs)
                print(
                    f"{NAMES[system]}, ε = {eps:g}: {len(pairs)} tables where AIM finished; mean gap "
                    f"{statistics.mean(p[0] for p in pairs):.4f} vs AIM {statistics.mean(p[1] for p in pairs):.4f}; "
                    f"worst table (gap − AIM's): {worst[0]:+.3f} ({worst[1]})"
                )


if __name__ == "__main__":
    main()
