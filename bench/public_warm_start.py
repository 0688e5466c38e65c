"""Public warm start (issue 14, option 3): the same private fit with and without a public table.

Protocol (an OPTIMISTIC proxy for real public data: the public rows come from the same population
as the private ones, which genuinely public data rarely does): each table's train split is cut in
two disjoint halves by a seeded permutation; one half is the private table, the other is handed to
`fit(public_data=...)`. Both fits use the hand-written schema, the same seed and ε; each samples
as many rows as the private half and is scored by dpgan's evaluation against the VALIDATION split
(test splits are never read here). One JSON line per fit goes to
bench/results/public_warm_start_validation.jsonl.

    OMP_NUM_THREADS=1 python bench/public_warm_start.py --tables chile churn --seeds 0 1 --epsilon 1
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from dpgan import Schema, TabularSynthesizer
from dpgan.evaluation import evaluate
from dpgan.tables.reading.table_io import read_private_table
from tables import TABLES, schema_path, split

DELTA = 1e-5
RESULTS = Path(__file__).resolve().parent / "results" / "public_warm_start_validation.jsonl"


def halves(frame, seed: int):
    order = np.random.default_rng(1000 + seed).permutation(len(frame))
    cut = len(frame) // 2
    return frame.iloc[order[:cut]].reset_index(drop=True), frame.iloc[order[cut:]].reset_index(drop=True)


def run(name: str, seed: int, epsilon: float, steps: int) -> list[dict]:
    spec, hand = TABLES[name], Schema.from_json(schema_path(name))
    parts = split(name, 20000, 20000)
    private, public = halves(parts["train"], seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        private.to_csv(Path(tmp) / "private.csv", index=False)
        public.to_csv(Path(tmp) / "public.csv", index=False)
        private_user = read_private_table(Path(tmp) / "private.csv")
        for public_path in (None, Path(tmp) / "public.csv"):
            synth = TabularSynthesizer(epsilon=epsilon, delta=DELTA, seed=seed)
            started = time.time()
            synth.fit(private_user, schema=hand, public_data=public_path, public_warm_start_steps=steps)
            fit_seconds = time.time() - started
            synthetic = synth.sample(len(private), seed=seed)
            metrics = evaluate(private, synthetic, parts["validation"], spec.target, schema=hand, seed=seed, n_jobs=1)
            mean = metrics["utility_summary"]["mean"]
            rows.append(
                {
                    "table": name,
                    "seed": seed,
                    "epsilon": epsilon,
                    "split": "validation",
                    "public_rows": None if public_path is None else len(public),
                    "private_rows": len(private),
                    "warm_start_steps": None if public_path is None else steps,
                    "epsilon_spent": synth.ledger.epsilon(DELTA),
                    "fit_seconds": round(fit_seconds, 1),
                    "jsd_mean": metrics["fidelity"]["jsd_mean"],
                    "wd_mean": metrics["fidelity"]["wd_mean"],
                    "utility_mean": mean,
                }
            )
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "utility_mean"}), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="+", default=["chile", "churn"], choices=list(TABLES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    with open(args.out, "a") as out:
        for name in args.tables:
            for seed in args.seeds:
                for row in run(name, seed, args.epsilon, args.steps):
                    out.write(json.dumps(row, default=str) + "\n")


if __name__ == "__main__":
    main()
