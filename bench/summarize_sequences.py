"""Turn rows of bench/sequences_water.py into RESULTS.md's table: per split, system and ε, the mean ±
sd over seeds of the DTW ratios (mean and median distance to the nearest real training series over
the held-out floor), the label's TSTR accuracy and AUC, the profile and ACF errors and fit seconds.

    python bench/summarize_sequences.py bench/results/sequences_water_grid.jsonl [--split test]

`--by-settings` keeps rows with different `--set` settings apart (one line per system, ε and settings),
for option screens such as bench/results/sequences_water_gaussian_base.jsonl.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np

SYSTEMS = ("gan", "gan-entity", "gaussian")


def _cell(values: list[float], digits: int) -> str:
    vals = np.asarray(values, dtype=float)
    spread = vals.std(ddof=1) if len(vals) > 1 else 0.0
    return f"{vals.mean():.{digits}f} ± {spread:.{digits}f}"


def _measures(row: dict) -> dict[str, float]:
    dtw = row["dtw"]
    return {
        "dtw_mean": dtw["ratio_to_floor"],
        "dtw_median": dtw["synthetic_median"] / dtw["heldout_median"],
        "tstr_acc": row["label_tstr"]["accuracy"]["tstr"],
        "tstr_auc": row["label_tstr"]["roc_auc"]["tstr"],
        "profile": row["mean_profile_mae"],
        "acf": row["autocorrelation_mae"],
        "membership": row["membership_auc"],
        "seconds": row["fit_seconds"],
        # the two-sample scores (issue 35); rows written before them have none
        "discriminative": (row.get("discriminative") or {}).get("score", float("nan")),
        "predictive": (row.get("predictive") or {}).get("ratio", float("nan")),
    }


def table(rows: list[dict], split: str, by_settings: bool = False) -> str:
    groups: dict[tuple[str, float], list[dict[str, float]]] = defaultdict(list)
    for row in rows:
        if row.get("split") == split and row["system"] in SYSTEMS:
            epsilon = float("inf") if row["epsilon"] is None else float(row["epsilon"])
            system = row["system"]
            if by_settings and row.get("settings"):
                system += " " + json.dumps(row["settings"], sort_keys=True)
            groups[(system, epsilon)].append(_measures(row))
    lines = [
        "| system | ε | seeds | DTW ratio (mean) | DTW ratio (median) | TSTR acc. | TSTR AUC "
        "| profile MAE (L/s) | ACF MAE | membership AUC | discriminative | next-step ratio | fit s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for system, epsilon in sorted(groups, key=lambda k: (k[1], SYSTEMS.index(k[0].split(" ")[0]), k[0])):
        g = groups[(system, epsilon)]

        def col(key: str, digits: int, g: list[dict[str, float]] = g) -> str:
            return _cell([m[key] for m in g], digits)

        lines.append(
            f"| {system} | {epsilon:g} | {len(g)} | {col('dtw_mean', 2)} | {col('dtw_median', 2)} "
            f"| {col('tstr_acc', 3)} | {col('tstr_auc', 3)} | {col('profile', 2)} | {col('acf', 3)} "
            f"| {col('membership', 3)} | {col('discriminative', 3)} | {col('predictive', 2)} | {col('seconds', 0)} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--split", default="validation")
    parser.add_argument("--by-settings", action="store_true", help="one line per distinct --set settings")
    args = parser.parse_args()
    rows = [json.loads(line) for line in open(args.path) if line.strip()]
    print(table(rows, args.split, args.by_settings))


if __name__ == "__main__":
    main()
