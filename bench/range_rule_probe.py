"""How the no-schema path finds a numeric column's range, across public tables: the rule's knobs.

For every numeric column (by its hand-written schema) of the bench tables' TRAIN splits and of
Adult's training file, the column's grid histogram is released many times with the noise a
no-schema fit at ε would add (σ from dpgan's own preprocessing plan for that table's shape), and
the numeric rule of dpgan.tables.inference.numeric (two histograms at √2σ: grid bins and whole
numbers; point masses out of the range; the range between the mass's quantiles, its tails and a
margin bin) is applied with each setting of its knobs: the bin threshold in noise stds, the margin
bin's threshold in noise stds, and the quantiles.
Reported per setting: the mean share of training values outside the learned range (clamped) and
the mean share of the learned range (on the scale the learned spec encodes it with: linear, log1p
or ratio) that lies outside the data (wasted). No model is trained and
no test split is read: this chooses the rule's defaults.

    python bench/range_rule_probe.py --epsilon 1 --fraction 0.25 --draws 20
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

import dpgan.tables.inference.domain as domain
import dpgan.tables.inference.numeric as inference
from dpgan import Schema, datasets
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.mechanisms import set_union_threshold
from dpgan.privacy.preprocessing import plan_preprocessing
from dpgan.tables.fit.preparation import preprocessing_events
from dpgan.tables.inference.column_kinds import NUMERIC, PublicHints, class_counts, decide_kind
from dpgan.tables.inference.domain import domain_counts, release_domain
from dpgan.tables.inference.infer import decide_column
from tables import TUNING_TABLES, schema_path, split

RESULTS = Path(__file__).resolve().parent / "results" / "range_rule_probe.jsonl"


def numeric_columns() -> dict[str, tuple[pd.DataFrame, list[str], str | None]]:
    """table → (train rows, numeric columns, target)."""
    out = {}
    for name in TUNING_TABLES:  # never a held-out table
        hand = Schema.from_json(schema_path(name))
        train = split(name, 20000, 1)["train"]
        out[name] = (train, [c.name for c in hand.columns if c.is_numeric], hand.target)
    adult, _ = datasets.load_adult()
    adult_schema = Schema.from_json(datasets.adult_schema_path())
    out["adult"] = (adult, [c.name for c in adult_schema.columns if c.is_numeric], adult_schema.target)
    return out


def base_sigma(frame: pd.DataFrame, target: str | None, epsilon: float, fraction: float) -> float:
    events = preprocessing_events(
        frame.shape[1], infer=True, has_target=target is not None, count_repairs=True, needs_prior=False
    )
    budget = FitBudget(epsilon, 1e-5, "pld")
    return plan_preprocessing(
        budget=budget, fraction=fraction, events=events, keyed_histograms=frame.shape[1]
    ).noise_multiplier


def scores(values: np.ndarray, low: float, high: float, scale_name: str) -> tuple[float, float]:
    """(share of values outside the range, share of the range outside the data), on the encoding scale."""
    clamped = float(np.mean((values < low) | (values > high)))
    lo_data, hi_data = float(values.min()), float(values.max())

    def scale(x: float) -> float:
        if scale_name == "ratio":
            return math.log(max(x, low) / low)
        return math.log1p(max(x - low, 0.0)) if scale_name == "log" else x

    width = scale(high) - scale(low)
    inside = max(0.0, min(scale(high), scale(hi_data)) - max(scale(low), scale(lo_data)))
    return clamped, (1.0 - inside / width) if width > 0 else 0.0


def learned(frame: pd.DataFrame, column: str, released, sigma: float):
    """The column's spec from the released counts, its kind from the exact class counts."""
    kind = decide_kind(column, class_counts(frame[column]), sigma=0.0, hints=PublicHints())
    return decide_column(column, kind, released, sigma=sigma, rows=float(len(frame)), hints=PublicHints()).spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--fraction", type=float, default=0.25)
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument(
        "--resolution",
        choices=("adaptive", "finest"),
        default="adaptive",
        help="the grid's bins a decade: as a fit chooses them from N̂ and σ (grid_resolution), or always 6",
    )
    args = parser.parse_args()
    settings = list(itertools.product((3.0, 3.5, 4.0), (1.0, 2.0, math.inf), ((0.005, 0.995), (0.01, 0.99))))
    totals = {s: [] for s in settings}
    for table, (frame, columns, target) in numeric_columns().items():
        sigma = base_sigma(frame, target, args.epsilon, args.fraction)
        threshold = set_union_threshold(sigma, 1e-6 / frame.shape[1])
        for column in columns:
            counts = domain_counts(frame[column], NUMERIC)
            values = pd.to_numeric(frame[column], errors="coerce").dropna().to_numpy(dtype=np.float64)
            integer = decide_kind(column, class_counts(frame[column]), sigma=0.0, hints=PublicHints()).integer
            for draw in range(args.draws):
                rng = np.random.default_rng(draw)
                rows = float(len(frame)) if args.resolution == "adaptive" else None  # None: the finest grid
                released = release_domain(counts, sigma, threshold, rng, None, integer, rows)  # as a fit does
                for setting in settings:
                    inference.NUMERIC_BIN_SIGMAS, inference.MARGIN_SIGMAS, inference.RANGE_QUANTILES = setting
                    domain.NUMERIC_BIN_SIGMAS = inference.NUMERIC_BIN_SIGMAS  # one module before the split
                    spec = learned(frame, column, released, sigma)
                    if not spec.is_numeric:  # levels far apart: categories, no range to score
                        continue
                    result = scores(values, float(spec.min), float(spec.max), spec.scale)
                    totals[setting].append((table, column, *result))
    rows = []
    for (k, margin, quantiles), results in totals.items():
        clamped = np.array([r[2] for r in results])
        wasted = np.array([r[3] for r in results])
        rows.append(
            {
                "epsilon": args.epsilon,
                "fraction": args.fraction,
                "resolution": args.resolution,
                "sigmas": k,
                "margin_sigmas": margin,
                "quantiles": list(quantiles),
                "clamped_mean": round(float(clamped.mean()), 4),
                "clamped_p90": round(float(np.quantile(clamped, 0.9)), 4),
                "wasted_mean": round(float(wasted.mean()), 4),
                "columns": len(results) // args.draws,
            }
        )
    with Path(args.out).open("a") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    print("| σ-threshold | margin bin's σ | quantiles | clamped (mean) | clamped (p90) | range outside data (mean) |")
    print("|---|---|---|---|---|---|")
    for row in sorted(rows, key=lambda r: r["clamped_mean"] + r["wasted_mean"]):
        print(
            f"| {row['sigmas']} | {row['margin_sigmas']} | {row['quantiles']} | {row['clamped_mean']:.3f} | "
            f"{row['clamped_p90']:.3f} | {row['wasted_mean']:.3f} |"
        )


if __name__ == "__main__":
    main()
