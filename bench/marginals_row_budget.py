"""The marginals model's row budget (dpgan.tables.fit.row_sample): TSTR AUC and fit cost as the
budget R (`max_examples`) varies, on NYC flights 2013 read as Parquet parts (bench/scale_growth.py's
sets: the 202,066 train-split rows ×k), CSV-only (the DP schema; hints `--target late
--categorical late`, so the default model is the marginals model), scored on 20,000 rows of the
validation split (`--split validation`, the default: R is chosen on it) or the test split.

    PYTHONPATH=src OMP_NUM_THREADS=1 python bench/marginals_row_budget.py --budgets 0 25000 50000 100000 200000 \
        --epsilons 1 3 --seeds 0 1 --copies 1 --out bench/results/marginals_row_budget.jsonl

Each (copies, ε, seed) runs every budget in turn (interleaved, so they see the same machine load);
one torch thread. Rows: fit seconds (wall and CPU of this process), TSTR AUC of a histogram
gradient-boosting classifier on 20,000 synthetic rows, the rate the fit read at.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import scale_growth


def one_fit(directory: Path, budget: int, epsilon: float, seed: int) -> dict:
    import pandas as pd

    from dpgan import ParquetSource, TabularSynthesizer

    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(epsilon=epsilon, delta=scale_growth.DELTA, seed=seed, threads=1, max_examples=budget)
        synth.fit(
            ParquetSource(str(directory), batch_rows=scale_growth.BATCH_ROWS), target="late", categorical=["late"]
        )
    fit_s, fit_cpu = time.perf_counter() - start, time.process_time() - cpu
    synthetic = synth.sample(scale_growth.SCORED_SAMPLE, seed=seed)
    held = pd.read_parquet(directory.parent / "scored.parquet")
    return {
        "budget": budget,
        "epsilon": epsilon,
        "seed": seed,
        "model": synth.training["recipe"],
        "rows_read_rate": synth.training.get("marginals", {}).get("rows_read_rate", 1.0),
        "fit_s": round(fit_s, 1),
        "fit_cpu_s": round(fit_cpu, 1),
        "auc_tstr": round(scale_growth.tstr_auc(synthetic, held), 4),
        "epsilon_spent": synth.privacy_report()["epsilon"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budgets", nargs="+", type=int, default=[0, 25_000, 50_000, 100_000, 200_000])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 3.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--copies", nargs="+", type=int, default=[1])
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--out", default=str(scale_growth.RESULTS / "marginals_row_budget.jsonl"))
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    sets = scale_growth.write_table_sets(args.copies, args.split)
    with open(args.out, "a") as out:
        for copies in args.copies:
            for epsilon in args.epsilons:
                for seed in args.seeds:
                    for budget in args.budgets:
                        row = {"copies": copies, "split": args.split, **one_fit(sets[copies], budget, epsilon, seed)}
                        print(json.dumps(row), flush=True)
                        out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
