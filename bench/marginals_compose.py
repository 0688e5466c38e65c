"""The tables' marginals model and the GAN composed (issue 54): the marginals model fitted on a share of
ε (CSV-only: it buys the schema), its DP schema and its sampled rows handed to the GAN as its schema and
as a public warm start (post-processing of a DP release: no ε), the GAN fitted on the rest of ε.

Privacy: two fits on the same table, each (ε_i, δ/2)-DP by its own ledger; the composition is charged by
composing both ledgers' entries with the library's accountant (`epsilon_spent` in each row, at δ), and
the shares are set so that it stays within ε (basic composition: s·ε + (1 − s)·ε).
Scored as bench/csv_only.py scores a fit (TSTR against TRTR, the 2-way error, association), on the
validation split unless told.

    cd bench && OMP_NUM_THREADS=1 PYTHONPATH=../src:. python marginals_compose.py --tables hmda chile churn \\
        flchain loans --epsilons 1 3 --seeds 0 1 --share 0.5 --out results/marginals_54/validation_compose.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from csv_only import DELTA, prepared, score_synthetic
from dpgan import TabularSynthesizer
from dpgan.privacy.accounting import epsilon_of
from tables import TABLES, split


def compose_one(name: str, seed: int, epsilon: float, share: float, split_name: str, parts: dict,
                anchor: bool) -> dict[str, Any]:  # fmt: skip
    """One composed fit (module docstring), scored."""
    spec = TABLES[name]
    hand, train_schema, scored, train_user = prepared(name, parts, split_name)
    hints: dict[str, Any] = {"target": spec.target}
    if spec.task != "regression":
        hints["categorical"] = [spec.target]
    started = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = TabularSynthesizer(model="marginals", epsilon=share * epsilon, delta=DELTA / 2, seed=seed, threads=1)
        first.fit(train_user, schema=None, **hints)
        public = first.sample(len(train_user), seed=seed)
        second = TabularSynthesizer(epsilon=(1 - share) * epsilon, delta=DELTA / 2, seed=seed, threads=1,
                                    pair_anchor=anchor)  # fmt: skip
        second.fit(train_user, schema=first.schema, public_data=public)
    fit_seconds = time.time() - started
    synthetic = second.sample(len(train_schema), seed=seed)
    spent = epsilon_of([*first.ledger.entries, *second.ledger.entries], DELTA, second.accountant)
    row: dict[str, Any] = {
        "table": name, "mode": "no-schema", "hints": hints, "split": split_name, "epsilon": epsilon,
        "epsilon_spent": spent, "seed": seed,
        "settings": {"model": "marginals+gan", "share": share, "pair_anchor": anchor},
        "task": spec.task, "rows": {"train": len(train_schema), "scored": len(scored)},
        "fit_seconds": round(fit_seconds, 1), "steps": second.training.get("steps"),
    }  # fmt: skip
    row.update(score_synthetic(name, hand, train_schema, synthetic, scored, seed, 1, False))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="+", default=["hmda", "chile", "churn", "flchain", "loans"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 3.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--share", type=float, default=0.5, help="the marginals model's share of ε")
    parser.add_argument("--no-anchor", dest="anchor", action="store_false", help="the GAN without its 2-way anchor")
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--max-train-rows", type=int, default=20000)
    parser.add_argument("--max-eval-rows", type=int, default=20000)
    parser.add_argument("--out", default="results/marginals_54/validation_compose.jsonl")
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        for epsilon in args.epsilons:
            for name in args.tables:
                parts = split(name, args.max_train_rows, args.max_eval_rows)
                row = compose_one(name, seed, epsilon, args.share, args.split, parts, args.anchor)
                print(json.dumps({k: row.get(k) for k in ("table", "epsilon", "seed", "epsilon_spent", "fit_seconds",
                                                          "auc_diff", "steps")}), flush=True)  # fmt: skip
                with out.open("a") as handle:
                    handle.write(json.dumps(row, default=str) + "\n")


if __name__ == "__main__":
    main()
