"""Issue 14 option 6: a latitude/longitude pair coded as one 2-D column (`geo_pairs`) against the
same fit with the two coordinates coded one at a time, on the Sacramento home-sales table.

Besides bench/csv_only.py's scores (TSTR R² of price, JSD/WD, association difference, 2-way
error), each row has the two measures a map of the released rows depends on: the total variation
distance between the real and synthetic 2-D histograms of the points (10 × 10 equal cells of the
public box) and the mean distance (km) from a synthetic point to its nearest real point, with the
same for held-out real points (the floor).

    python bench/geo_columns.py --split validation --epsilons 1 3 10 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from csv_only import DELTA, RESULTS_DIR, round_trip, score_synthetic
from dpgan import Schema, TabularSynthesizer
from dpgan.tables.reading.table_io import read_private_table
from tables import schema_path, split

TABLE = "sacramento"
PAIR = ("latitude", "longitude")
GRID = 10
KM_PER_DEGREE = 111.2


def histogram_tv(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema) -> float:
    """Total variation distance of the two tables' 2-D point histograms over the public box."""
    edges = [np.linspace(schema[c].min, schema[c].max, GRID + 1) for c in PAIR]  # type: ignore[arg-type]
    counts = []
    for frame in (real, synthetic):
        points = frame[list(PAIR)].dropna().to_numpy(dtype=float)
        hist, _, _ = np.histogram2d(points[:, 0], points[:, 1], bins=edges)
        counts.append(hist / max(hist.sum(), 1.0))
    return float(0.5 * np.abs(counts[0] - counts[1]).sum())


def nearest_km(points: pd.DataFrame, reference: pd.DataFrame) -> float:
    """Mean distance (km, equirectangular) from each point to the nearest reference point."""
    a = points[list(PAIR)].dropna().to_numpy(dtype=float)
    b = reference[list(PAIR)].dropna().to_numpy(dtype=float)
    scale = np.array([1.0, np.cos(np.radians(b[:, 0].mean()))]) * KM_PER_DEGREE
    distances = np.sqrt((((a[:, None, :] - b[None, :, :]) * scale) ** 2).sum(axis=2))
    return float(distances.min(axis=1).mean())


VARIANTS = ("separate", "geo", "geo-4")  # one at a time (8 bins each); a 8 × 8 grid; a 4 × 4 grid


def schema_for(variant: str) -> Schema:
    """The hand schema; "geo-4" cuts each coordinate into 4 bins instead of 8 (a coarser grid)."""
    hand = Schema.from_json(schema_path(TABLE))
    if variant != "geo-4":
        return hand
    columns = tuple(replace(c, bins=4) if c.name in PAIR else c for c in hand.columns)
    return replace(hand, columns=columns)


def run_one(epsilon: float, seed: int, split_name: str, variant: str) -> dict:
    hand = Schema.from_json(schema_path(TABLE))
    fit_schema = schema_for(variant)
    geo = variant != "separate"
    parts = split(TABLE)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        train = round_trip(parts["train"], directory, "train", hand)
        scored = round_trip(parts[split_name], directory, split_name, hand)
        train_user = read_private_table(directory / "train.csv")
    settings = {"geo_pairs": [list(PAIR)]} if geo else {}
    synth = TabularSynthesizer(epsilon=epsilon, delta=DELTA, seed=seed, **settings)
    started = time.time()
    synth.fit(train_user, schema=fit_schema)
    fit_seconds = time.time() - started
    synthetic = synth.sample(len(train), seed=seed)
    row = {"table": TABLE, "mode": "schema", "split": split_name, "epsilon": epsilon, "seed": seed}
    row |= {"settings": settings | {"variant": variant}, "task": "regression", "fit_seconds": round(fit_seconds, 1)}
    row |= {
        "geo_tv": histogram_tv(train, synthetic, hand),
        "geo_nearest_km": nearest_km(synthetic, train),
        "geo_nearest_km_floor": nearest_km(scored, train),
    }
    row.update(score_synthetic(TABLE, hand, train, synthetic, scored, seed, 1))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 3.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--out", default=str(RESULTS_DIR / "geo_columns.jsonl"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    for seed in args.seeds:
        for epsilon in args.epsilons:
            for variant in args.variants:
                row = run_one(epsilon, seed, args.split, variant)
                keys = ("epsilon", "seed", "settings", "geo_tv", "geo_nearest_km", "geo_nearest_km_floor")
                keys += ("r2_diff", "two_way_error", "association_diff", "fit_seconds")
                print(json.dumps({k: row.get(k) for k in keys}), flush=True)
                with open(args.out, "a") as handle:
                    handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
