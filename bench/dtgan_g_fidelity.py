"""Quick fidelity probe for dtgan-g on UCI Adult: fit once, print mean JSD / WD, per column, and
numeric quantiles (real vs synthetic). Used to find why dtgan-g's generator did not learn the
one-way distributions and to size the marginal anchor (RESULTS §8); no classifiers, one seed.

    python bench/dtgan_g_fidelity.py 1 '{"marginal_anchor": false}'
    python bench/dtgan_g_fidelity.py 50 '{"marginal_anchor": false}'
    python bench/dtgan_g_fidelity.py 1 '{"marginal_weight": 1}'
    python bench/dtgan_g_fidelity.py 1                # the recipe's defaults
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import torch

from dpgan import Schema, TabularSynthesizer, datasets
from dpgan.evaluation.tables.fidelity import column_kinds, fidelity


def main() -> None:
    torch.set_num_threads(1)
    epsilon = float(sys.argv[1])
    overrides = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    train, _ = datasets.load_adult()
    schema = Schema.from_json(datasets.adult_schema_path())
    started = time.time()
    synth = TabularSynthesizer(recipe="dtgan-g", epsilon=epsilon, delta=1e-5, seed=0, **overrides)
    synth.fit(train, schema=schema)
    fit_seconds = time.time() - started
    synthetic = synth.sample(len(train), seed=0)
    scores = fidelity(train, synthetic, column_kinds(train, schema))
    summary = {"epsilon": epsilon, "overrides": overrides, "fit_seconds": round(fit_seconds)}
    summary.update(jsd_mean=round(scores["jsd_mean"], 3), wd_mean=round(scores["wd_mean"], 3))
    print(json.dumps(summary))
    print({name: round(e.get("jsd", e.get("wd")) or 0.0, 3) for name, e in scores["per_column"].items()})
    quantiles = [0.1, 0.25, 0.5, 0.75, 0.9]
    for column in ("age", "fnlwgt", "hours-per-week"):
        real, fake = (np.quantile(frame[column], quantiles).round(0) for frame in (train, synthetic))
        print(column, "real", real, "synthetic", fake)


if __name__ == "__main__":
    main()
