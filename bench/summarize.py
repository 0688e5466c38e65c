"""Turn bench/results/adult.jsonl into the markdown table of bench/RESULTS.md (mean ± sd over seeds).

python bench/summarize.py bench/results/adult.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

import numpy as np


def main(path: str) -> None:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row["epsilon"]].append(row)

    def cell(values: list[float], digits: int = 3) -> str:
        vals = np.array([v for v in values if v is not None], dtype=float)
        if len(vals) == 0:
            return "n/a"
        return f"{vals.mean():.{digits}f} ± {vals.std(ddof=1) if len(vals) > 1 else 0.0:.{digits}f}"

    print(
        "| ε | ε spent (ledger) | seeds | balanced RF acc. (synthetic) | gap to real (pts) "
        "| RF acc. | fit s | share >50K |"
    )
    print("|---|---|---|---|---|---|---|---|")
    order = sorted(groups, key=lambda e: float(e))
    for eps in order:
        g = groups[eps]
        real = g[0]["balanced_rf_real"]
        bal = [r["balanced_rf_synthetic"] for r in g]
        gap = [100 * (real - b) for b in bal if b is not None]
        spent = max(r["epsilon_spent"] for r in g)
        print(
            f"| {eps} | {spent:.3f} | {len(g)} | {cell(bal)} | {cell(gap, 1)} | {cell([r['rf_synthetic'] for r in g])} "
            f"| {cell([r['fit_seconds'] for r in g], 0)} | {cell([r['share_high_income'] for r in g], 2)} |"
        )
    first = rows[0]
    print(
        f"\nReal data, same protocol: balanced RF accuracy {first['balanced_rf_real']:.3f}, "
        f"RF accuracy {first['rf_real']:.3f}."
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/adult.jsonl")
