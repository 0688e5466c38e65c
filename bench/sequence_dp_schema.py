"""What the DP schema release of a sequence fit gives on the water district-days: the released
inflow bounds and label set (district) when the schema gives neither, at the fit's shares of ε
(dpgan.sequences.dp_schema), per ε and seed; the data's own range for comparison (printed here
only, a benchmark on public data).

    python bench/sequence_dp_schema.py --epsilons 1 3 10 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json

import numpy as np

import sequences_water as water
from dpgan.errors import InputError
from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import FitBudget
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.sequences.codec import read_long_raw
from dpgan.sequences.dp_schema import complete_schema

DELTA = 1e-5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 3.0, 10.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    args = parser.parse_args()
    parts, districts = water.load()
    schema = SequenceSchema(
        id="series", time="hour", length=24, values=(ValueColumn("inflow", None, None),), label="district"
    )
    raw = read_long_raw(parts["train"][schema.columns], schema)
    print(json.dumps({"data_min": float(np.min(raw.values)), "data_max": float(np.max(raw.values))}))
    for epsilon in args.epsilons:
        for seed in args.seeds:
            ledger = PrivacyLedger(budget=Budget(epsilon, DELTA, "pld"))
            shares = FitBudget(epsilon, DELTA, "pld")
            try:
                released = complete_schema(raw, schema, budget=shares, ledger=ledger, rng=np.random.default_rng(seed))
            except InputError as error:  # the fit would stop here and ask for public bounds
                print(json.dumps({"epsilon": epsilon, "seed": seed, "refused": str(error)}))
                continue
            value = released.schema.values[0]
            row = {
                "epsilon": epsilon,
                "seed": seed,
                "low": value.min,
                "high": value.max,
                "labels": len(released.schema.categories),
                "of_labels": len(districts),
                "epsilon_spent": round(ledger.epsilon(DELTA, "pld"), 4),
            }
            print(json.dumps(row))


if __name__ == "__main__":
    main()
