"""Tables of bench/images.py rows: per data set, split, recipe, ε and settings, the students' scores
over seeds (mean [min, max]) and the real-data ceiling; the Fréchet feature distance and its real
held-out floor where the rows carry them (bench/images.py --frechet).

    python bench/summarize_images.py bench/results/images.jsonl --split test
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict


def cell(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.mean(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--split", default="test")
    args = parser.parse_args()
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for line in open(args.path):
        row = json.loads(line)
        if row["split"] == args.split:
            settings = dict(row["settings"])
            if row.get("synthetic_images") not in (None, row.get("train_images")):
                settings["(students on synthetic images)"] = row["synthetic_images"]
            key = (row["data"], row["recipe"], row["epsilon_target"], json.dumps(settings, sort_keys=True))
            groups[key].append(row)
    students = ("logreg", "mlp", "cnn")
    header = " | ".join(f"{s} AuROC | {s} acc." for s in students)
    print(f"| data | recipe | ε | settings | seeds | {header} | guide acc. | FD (floor) | fit s |")
    print("|---" * (8 + 2 * len(students)) + "|")
    for (data, recipe, epsilon, settings), rows in sorted(groups.items()):
        scores = []
        for student in students:
            got = [r["synthetic"][student] for r in rows if student in r["synthetic"]]
            scores += [cell([g["auroc"] for g in got]), cell([g["accuracy"] for g in got])] if got else ["", ""]
        fit = statistics.mean(r["fit_seconds"] for r in rows)
        guide = [r["guide_accuracy"] for r in rows if r.get("guide_accuracy") is not None]
        joined = " | ".join(scores)
        guided = cell(guide) if guide else ""
        frechet = [r["frechet"] for r in rows if r.get("frechet") and r["frechet"]["synthetic"] is not None]
        distance = ""
        if frechet:
            distance = f"{cell([f['synthetic'] for f in frechet])} ({cell([f['heldout'] for f in frechet])})"
        cells = f"{joined} | {guided} | {distance}"
        print(f"| {data} | {recipe} | {epsilon:g} | {settings} | {len(rows)} | {cells} | {fit:.0f} |")
    real = [r for rows in groups.values() for r in rows if r.get("real")]
    by_data: dict[str, list[dict]] = defaultdict(list)
    for r in real:
        by_data[r["data"]].append(r["real"])
    for data, rows in by_data.items():
        parts = [
            f"{s} AuROC {cell([r[s]['auroc'] for r in rows])}, acc. {cell([r[s]['accuracy'] for r in rows])}"
            for s in students
            if s in rows[0]
        ]
        print(f"\nreal-data students on {data} ({len(rows)} rows): " + "; ".join(parts))


if __name__ == "__main__":
    main()
