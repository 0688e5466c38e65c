"""Where a default Adult fit spends its time outside training: σ calibration and the progress ε.

Profiles (cProfile, one thread) a default `TabularSynthesizer(epsilon=E, epochs=K)` fit on the
bundled Adult training rows with the bundled schema and a progress function (as the CLI's bar
uses it), and reports the fit's wall time, the cumulative time inside
`calibrate_noise_multiplier` (every σ calibration of the fit: label model, GAN, ...) and inside
the progress reporter (the ε-so-far), each as seconds and as a share of the fit.

    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/fit_overheads.py [--epsilon 3] [--epochs 5] \
        [--recipes dp-gan dtgan-g] [--out bench/results/fit_overheads.jsonl]

Targets (the engine issue): calibration ≤ 2 s for the default Adult fit; the progress bar's
ε-so-far ≤ 1% of fit time. cProfile adds overhead to every Python call, so the shares are
measured on the profiled fit and the unprofiled fit's wall time is reported beside them.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time

import torch

from dpgan import Schema, TabularSynthesizer, datasets
from dpgan.privacy import calibration as calibration_module


def cumulative(stats: pstats.Stats, filename_part: str, function: str) -> float:
    """Cumulative seconds of one function (summed over its call sites, recursion counted once)."""
    total = 0.0
    for (filename, _, name), (_, _, _, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
        if name == function and filename_part in filename:
            total += cum
    return total


def fit_once(recipe: str, epsilon: float, epochs: int, data, schema, profile: bool) -> dict:
    calls: list[float] = []

    def progress(step: int, total: int, spent: float) -> None:
        calls.append(spent)

    synth = TabularSynthesizer(recipe=recipe, epsilon=epsilon, epochs=epochs, seed=0)
    profiler = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    synth.fit(data, schema=schema, progress=progress)
    if profiler is not None:
        profiler.disable()
    wall = time.perf_counter() - start
    row = {"recipe": recipe, "epsilon": epsilon, "epochs": epochs, "profiled": profile, "fit_s": wall}
    row["progress_calls"] = len(calls)
    if profiler is not None:
        stats = pstats.Stats(profiler)
        calibration = cumulative(
            stats, "privacy/calibration.py", calibration_module.calibrate_noise_multiplier.__name__
        )
        reporter = cumulative(stats, "training/progress.py", "__call__")  # training/progress.StepReporter.__call__
        row.update(
            calibration_s=calibration,
            calibration_share=calibration / wall,
            progress_s=reporter,
            progress_share=reporter / wall,
        )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epsilon", type=float, default=3.0)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--recipes", nargs="+", default=["dp-gan", "dtgan-g"])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data, _ = datasets.load_adult()  # the training file; the test file is not read
    schema = Schema.from_json(datasets.adult_schema_path())
    rows = []
    for recipe in args.recipes:
        for profile in (False, True):
            row = fit_once(recipe, args.epsilon, args.epochs, data, schema, profile)
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
