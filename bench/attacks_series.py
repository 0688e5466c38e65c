"""Issue 15's shadow-model membership attack on series: the water district-days, a leak vs none.

Data as bench/sequences_water.py reads it (`dpgan.datasets.load_water_districts()`, complete
district-days, its seeded split by day) in the public log scale of its schema (inflow in [0, 200]
L/s, log1p, to [-1, 1]; the ten districts as labels): the attack's distances and features are taken
there. The attacker's reference series are the validation and test days, the test pool (the "real
training data" the fresh test fits draw from) the training days. Targets: the reference days most
isolated from the rest (dpgan.evaluation.attacks.series_membership's default rule), removed from
the reference.

Systems under attack (each fit on `--size` district-days with their district labels):
- gaussian: dpgan.sequences.baseline.DPGaussianSeries (per-district mean and covariance), at ε = ∞
  (ε = 1e6, as the water bench does: σ ≈ 0) and at finite ε (δ = 1e-5, PLD accountant);
- gan: SequenceSynthesizer at finite ε with a budget cut for many fits: `--gan-epochs` epochs at
  batch `--gan-batch` (defaults 20 and 64: about 20 · size / 64 critic steps), otherwise the
  defaults (LSTM generator, MLP critic, series unit).
Rows (one per system, ε and seed) go to bench/results/attacks_series.jsonl, ROC points left out.

    python bench/attacks_series.py --systems gaussian --epsilons inf 3
    python bench/attacks_series.py --systems gan --epsilons 3        # the GAN (about 300 fits)
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

import sequences_water as water
from dpgan.evaluation.sequences.membership import shadow_membership_series
from dpgan.privacy.calibration import FitBudget
from dpgan.sequences.baseline import DPGaussianSeries
from dpgan.sequences.codec import SeriesSet, label_names, read_array, read_long, unscale
from dpgan.synthesizers.sequence import SequenceSynthesizer

OUT = Path(__file__).resolve().parent / "results" / "attacks_series.jsonl"
DELTA = 1e-5


def gaussian(epsilon: float, n_labels: int):
    """DPGaussianSeries on scaled series and label codes; ε = ∞ runs as ε = 1e6 (σ ≈ 0)."""

    def fit_sample(values: np.ndarray, labels: np.ndarray | None, *, n: int, seed: int):
        rng = np.random.default_rng(seed)
        series = SeriesSet(values.astype(np.float32), labels, None, 0)
        model = DPGaussianSeries(FitBudget(epsilon if math.isfinite(epsilon) else 1e6, DELTA)).fit(
            series, n_labels, rng
        )
        return model.sample(n, rng)

    return fit_sample


def gan(epsilon: float, schema, epochs: float, batch_size: int):
    """SequenceSynthesizer fitted on the series (unscaled to L/s with their district names, as a
    user would), sampled back in the scaled space with label codes."""
    settings = {"epochs": epochs, "batch_size": batch_size}

    def fit_sample(values: np.ndarray, labels: np.ndarray | None, *, n: int, seed: int):
        if not math.isfinite(epsilon):  # the σ = 0 control of bench/sequences_water.py
            series = read_array(unscale(values, schema), label_names(labels, schema), schema)
            G = water.nonprivate_generator(series, schema, seed, settings)
            out, codes = G.sample(n, torch.Generator().manual_seed(seed))
            return out.numpy(), codes.numpy()
        synth = SequenceSynthesizer(
            epsilon=epsilon, delta=DELTA, seed=seed, model="gan", epochs=epochs, batch_size=batch_size
        )
        synth.fit(unscale(values, schema), schema, labels=label_names(labels, schema))
        out, codes = synth.generator.sample(n, torch.Generator().manual_seed(seed))  # type: ignore[union-attr]
        return out.numpy(), codes.numpy()

    return fit_sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", nargs="+", choices=("gaussian", "gan"), default=["gaussian"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[math.inf, 3.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--size", type=int, default=300, help="district-days per training set")
    parser.add_argument("--targets", type=int, default=5)
    parser.add_argument("--shadows", type=int, default=10, help="shadow training sets per target")
    parser.add_argument("--test-runs", type=int, default=5, help="fresh test training sets per target")
    parser.add_argument("--syn-sets", type=int, default=5, help="synthetic sets per fit")
    parser.add_argument("--synthetic-size", type=int, default=None, help="series per synthetic set (default --size)")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--no-dtw", action="store_true", help="Euclidean distance features only")
    parser.add_argument("--gan-epochs", type=float, default=20.0)
    parser.add_argument("--gan-batch", type=int, default=64)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    torch.set_num_threads(1)
    water.SCALE = "log"
    parts, labels = water.load()
    schema = water.schema_for(labels, entity=False)
    pool = read_long(parts["train"][schema.columns], schema)
    held_out = pd.concat([parts["validation"], parts["test"]])
    reference = read_long(held_out[schema.columns], schema)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        for epsilon in args.epsilons:
            for system in args.systems:
                if system == "gaussian":
                    fit_sample = gaussian(epsilon, len(labels))
                else:
                    fit_sample = gan(epsilon, schema, args.gan_epochs, args.gan_batch)
                started = time.time()
                result = shadow_membership_series(
                    reference.values, pool.values, fit_sample=fit_sample, rng=np.random.default_rng(seed),
                    reference_labels=reference.labels, test_pool_labels=pool.labels, n_targets=args.targets,
                    n_shadow=args.shadows, n_test_runs=args.test_runs, n_syn_sets=args.syn_sets, size=args.size,
                    synthetic_size=args.synthetic_size, attack_trees=args.trees, dtw=not args.no_dtw,
                )  # fmt: skip
                row = {
                    "data": "water",
                    "scale": "log",
                    "system": system,
                    "epsilon": None if math.isinf(epsilon) else epsilon,
                    "epsilon_run": (1e6 if system == "gaussian" else None) if math.isinf(epsilon) else epsilon,
                    "delta": DELTA,
                    "gan": {"epochs": args.gan_epochs, "batch_size": args.gan_batch} if system == "gan" else None,
                    "seed": seed,
                    "seconds": round(time.time() - started, 1),
                    "reference_series": len(reference.values),
                    "test_pool_series": len(pool.values),
                }
                row.update({k: v for k, v in result.items() if k not in ("roc", "note")})
                print(json.dumps(row), flush=True)
                with out.open("a") as handle:
                    handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
