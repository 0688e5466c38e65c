"""Where a default Adult fit spends its time outside training: σ calibration and the progress ε.

Fits `TabularSynthesizer(recipe=R, epsilon=E, epochs=K, seed=0)` on the bundled Adult training rows
with the bundled schema and a progress function (as the CLI's bar uses it), with timers wrapped
around the three budget searches (the pre-training reads' plan, the classifiers' and the GAN's σ
calibrations: every call of `plan_preprocessing` and `calibrate_noise_multiplier` the fit makes)
and around the progress reporter's refreshes. Wrapping (bench-only) adds a clock read per call,
not cProfile's per-Python-call overhead, which inflated the pure-Python accounting several-fold.

    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/fit_overheads.py [--epsilon 3] [--epochs 5] \
        [--recipes dp-gan dtgan-g] [--checkpoint-every 100] [--out bench/results/fit_overheads.jsonl]

Targets (the engine issue): calibration ≤ 2 s for the default Adult fit; the progress bar's
ε-so-far ≤ 1 % of fit time. With --checkpoint-every the fit also writes its resumable
checkpoint (to a temporary directory) and the time of every write is reported.
"""

from __future__ import annotations

import argparse
import functools
import json
import tempfile
import time
from collections import defaultdict

import torch

import dpgan.tables.fit.preparation as preparation
from dpgan import Schema, TabularSynthesizer, datasets
from dpgan.privacy import calibration
from dpgan.training import checkpoint, progress

SPENT: defaultdict[str, float] = defaultdict(float)
CALLS: defaultdict[str, int] = defaultdict(int)


def timed(name: str, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[name] += time.perf_counter() - start
            CALLS[name] += 1

    return wrapper


def install_timers() -> None:
    """Wrap the searches where the fit looks them up (module globals) and the reporter's call."""
    preparation.plan_preprocessing = timed("plan", preparation.plan_preprocessing)
    calibrate = timed("calibration", calibration.calibrate_noise_multiplier)
    calibration.calibrate_noise_multiplier = calibrate  # sigma_and_steps and the shares look it up here
    progress.StepReporter.__call__ = timed("progress", progress.StepReporter.__call__)
    checkpoint.FitCheckpoint.save = timed("checkpoint", checkpoint.FitCheckpoint.save)


def fit_once(recipe: str, epsilon: float, epochs: int, data, schema, checkpoint_every: int | None = None) -> dict:
    SPENT.clear()
    CALLS.clear()
    shown: list[float] = []
    synth = TabularSynthesizer(recipe=recipe, epsilon=epsilon, epochs=epochs, seed=0)
    with tempfile.TemporaryDirectory() as directory:
        options = {"checkpoint": directory, "checkpoint_every": checkpoint_every} if checkpoint_every else {}
        start = time.perf_counter()
        synth.fit(data, schema=schema, progress=lambda step, total, spent: shown.append(spent), **options)
        wall = time.perf_counter() - start
    row: dict = {"recipe": recipe, "epsilon": epsilon, "epochs": epochs, "fit_s": wall, "refreshes": len(shown)}
    row["checkpoint_every"] = checkpoint_every
    for name in ("plan", "calibration", "progress", "checkpoint"):
        row[f"{name}_s"] = SPENT[name]
        row[f"{name}_calls"] = CALLS[name]
        row[f"{name}_share"] = SPENT[name] / wall
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epsilon", type=float, default=3.0)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--recipes", nargs="+", default=["dp-gan", "dtgan-g"])
    parser.add_argument("--checkpoint-every", type=int, default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    install_timers()
    data, _ = datasets.load_adult()  # the training file; the test file is not read
    schema = Schema.from_json(datasets.adult_schema_path())
    for recipe in args.recipes:
        row = fit_once(recipe, args.epsilon, args.epochs, data, schema, args.checkpoint_every)
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
