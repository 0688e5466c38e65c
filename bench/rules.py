"""Issue 51: public rules between columns on the churn table (modeldata wa_churn, a tuning table).

The table's natural rules, written before any fit from what the columns mean:
- an inequality: `monthly_charges <= total_charges` (the total is at least one month's charge;
  total is null for the 11 customers of tenure 0, where the rule says nothing);
- fixed combinations of the survey form: `internet_service` is "No" exactly when each of the six
  internet add-ons says "No internet service" (one rule over the 7 columns: 129 allowed tuples), and
  `phone_service` is 0 exactly when `multiple_lines` says "No phone service" (2 combination rules).

Variants (the hand schema of bench/tables/schemas/churn.json each time):
- "none": no rules;
- "gap", "clip", "swap": the inequality alone, kept by each method (dpgan.tables.codec.rules);
- "all": the inequality ("gap") and the 2 combinations.
Each row: the share of synthetic rows breaking the inequality and any combination (whether or not the
variant declares them), the Wasserstein distance of monthly_charges, total_charges and of the gap
total - monthly to the real held-out rows (divided by the real column's range), with the same for the
real training rows (the floor), and csv_only's scores (TSTR, JSD/WD, 2-way error).

    OMP_NUM_THREADS=1 PYTHONPATH=src:bench python bench/rules.py --epsilons 1 3 --seeds 0 1
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy.stats import wasserstein_distance

from csv_only import DELTA, RESULTS_DIR, round_trip, score_synthetic
from dpgan import Schema, TabularSynthesizer
from dpgan.tables.reading.table_io import read_private_table
from dpgan.tables.schema.rule_breaks import broken_rows
from dpgan.tables.schema.rules import Combination, Inequality, rules_from_list
from tables import schema_path, split

TABLE = "churn"
LOW, HIGH = "monthly_charges", "total_charges"
ADD_ONS = ("online_security", "online_backup", "device_protection", "tech_support", "streaming_tv", "streaming_movies")
VARIANTS = ("none", "gap", "clip", "swap", "all")


def combination_rules() -> list[dict]:
    """The survey form's structure (public: it is how the questions were asked)."""
    # a column is set by one rule: the six add-ons share internet_service, so they are one rule of 129 tuples
    with_internet = [["DSL", *v] for v in product(("No", "Yes"), repeat=6)]
    with_internet += [["Fiber optic", *v] for v in product(("No", "Yes"), repeat=6)]
    internet = with_internet + [["No"] + ["No internet service"] * 6]
    rules = [{"kind": "combination", "columns": ["internet_service", *ADD_ONS], "allowed": internet}]
    phone = [[1, "No"], [1, "Yes"], [0, "No phone service"]]
    return rules + [{"kind": "combination", "columns": ["phone_service", "multiple_lines"], "allowed": phone}]


def rules_for(variant: str) -> list[dict]:
    if variant == "none":
        return []
    method = "gap" if variant == "all" else variant
    inequality = {"kind": "inequality", "low": LOW, "high": HIGH, "method": method}
    return [inequality] + (combination_rules() if variant == "all" else [])


def measured_rules() -> list:
    """Every rule of the table, declared or not, for counting breaks."""
    return list(rules_from_list(rules_for("all")))


def break_shares(frame: pd.DataFrame) -> dict[str, float]:
    rules = measured_rules()
    inequality = next(r for r in rules if isinstance(r, Inequality))
    combos = np.zeros(len(frame), dtype=bool)
    for rule in rules:
        if isinstance(rule, Combination):
            combos |= broken_rows(frame, rule)
    return {
        "inequality_break_share": float(broken_rows(frame, inequality).mean()),
        "combination_break_share": float(combos.mean()),
    }


def distances(real: pd.DataFrame, other: pd.DataFrame) -> dict[str, float]:
    """Wasserstein distances divided by the real column's range (present values only)."""
    out = {}
    gap_real = pd.to_numeric(real[HIGH], errors="coerce") - pd.to_numeric(real[LOW], errors="coerce")
    gap_other = pd.to_numeric(other[HIGH], errors="coerce") - pd.to_numeric(other[LOW], errors="coerce")
    pairs = {
        LOW: (real[LOW], other[LOW]),
        HIGH: (real[HIGH], other[HIGH]),
        "gap": (gap_real, gap_other),
    }
    for name, (a, b) in pairs.items():
        a = pd.to_numeric(a, errors="coerce").dropna().to_numpy(float)
        b = pd.to_numeric(b, errors="coerce").dropna().to_numpy(float)
        out[f"wd_{name}"] = float(wasserstein_distance(a, b) / (a.max() - a.min()))
    return out


def run_one(epsilon: float, seed: int, split_name: str, variant: str) -> dict:
    hand = Schema.from_json(schema_path(TABLE))
    fit_schema = replace(hand, rules=rules_from_list(rules_for(variant)))
    parts = split(TABLE)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        train = round_trip(parts["train"], directory, "train", hand)
        scored = round_trip(parts[split_name], directory, split_name, hand)
        train_user = read_private_table(directory / "train.csv")
    synth = TabularSynthesizer(epsilon=epsilon, delta=DELTA, seed=seed)
    started = time.time()
    synth.fit(train_user, schema=fit_schema)
    fit_seconds = time.time() - started
    synthetic = synth.sample(len(train), seed=seed)
    row = {"table": TABLE, "mode": "schema", "split": split_name, "epsilon": epsilon, "seed": seed}
    row |= {"variant": variant, "rules": len(fit_schema.rules), "fit_seconds": round(fit_seconds, 1)}
    row |= break_shares(synthetic) | {f"real_{k}": v for k, v in break_shares(train).items()}
    row |= distances(scored, synthetic) | {f"floor_{k}": v for k, v in distances(scored, train).items()}
    row["epsilon_spent"] = synth.ledger.epsilon(DELTA, "pld")
    row.update(score_synthetic(TABLE, hand, train, synthetic, scored, seed, 1))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 3.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--out", default=str(RESULTS_DIR / "rules.jsonl"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    for seed in args.seeds:
        for epsilon in args.epsilons:
            for variant in args.variants:
                row = run_one(epsilon, seed, args.split, variant)
                keys = ("epsilon", "seed", "variant", "inequality_break_share", "combination_break_share")
                keys += ("wd_monthly_charges", "wd_total_charges", "wd_gap", "auc_diff", "two_way_error", "fit_seconds")
                print(json.dumps({k: row.get(k) for k in keys}), flush=True)
                with open(args.out, "a") as handle:
                    handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
