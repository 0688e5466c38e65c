"""Issue 53, series and images: the default statistics model's fit at ×1, ×10 and ×100 units, read in blocks.

Each kind's units are written once per scale to an .npy on disk (the base set repeated, each copy
with its own small noise, clipped to the public box), then fitted by the kind's default DP statistics
model (dpgan.statistics) through `VectorBlocks` reading that file BLOCK units at a time with plain
reads: what a block reader gives the model (dpgan.statistics.blocks). For contrast, the same file
loaded whole into memory (`memory`, one array as before the block reader) at the scales that fit.

- series: the BWDF water districts (6,888 district-days of 24 hourly inflows, labelled by district,
  public bound 200 L/s), ×1 / ×10 / ×100 = 6,888 / 68,880 / 688,800 series; the default series model
  "gaussian-copula" in its default form (a DP histogram per label, then the centred DP Gaussian of
  the normal scores in a quarter basis, with the residual's spectrum): three passes over the blocks;
- images: MNIST-5k's 4,000 training digits (28×28, ten labels; Fashion-MNIST is not on this
  machine), ×1 / ×10 / ×100 = 4,000 / 40,000 / 400,000 images; the default "gaussian" image model at
  ε = 3 (each class's centred DP Gaussian in the 276 lowest DCT frequencies): two passes;
- series-fit: the same BWDF series, in L/s (unscaled), through the LIBRARY's fit
  (`SequenceSynthesizer(epsilon=3, seed=0).fit(PATH.npy, labels=LABELS.npy)`, the default
  "gaussian-copula"), every data step included: the DP bounds (no public bound), the DP label set,
  the DP tally, then the model (dpgan.sequences.series_file: six passes over the blocks). `memory`:
  the arrays loaded whole and passed to the same fit (the in-memory path).

Every fit runs in a child process of its own (one thread: OMP_NUM_THREADS=1 and torch's), which
reports its fit's wall time and its peak resident memory (resource.getrusage(RUSAGE_SELF).ru_maxrss)
and its resident memory after the imports, before any data (the baseline); rounds are interleaved
(every kind and scale once per round, in turn). ε = 3, δ = 1e-5, PLD.

    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/scale_growth_kinds.py --rounds 2 \
        --out bench/results/scale_growth_kinds.md
    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/scale_growth_kinds.py --kinds series-fit --rounds 2 \
        --out bench/results/scale_growth_series_fit.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from dpgan.statistics.blocks import VectorBlocks

BLOCK = 8192  # units per block
SCORED = 2_000  # synthetic series scored per series-fit (--score)
SCORE_VARIABLE = "DPGAN_BENCH_SCORE"  # --score, passed to the child processes
EPSILON, DELTA = 3.0, 1e-5
COPY_NOISE = 0.02  # each copy's own noise, in the box's units ([-1, 1])
WATER_BOUND = 200.0  # the public upper bound of an hourly inflow (L/s), as bench/sequences_water.py


def base_units(kind: str, part: str = "all") -> tuple[np.ndarray, np.ndarray]:
    """The base set as (n, d) values in [-1, 1] and label codes. Series with `--score`: `part`
    "train" (four of every five district-days) is what the copies repeat, "test" (every fifth) is
    held out to score the fits."""
    from dpgan import datasets

    if kind == "sequence":
        frame = datasets.load_water_districts().sort_values(["district", "day", "hour"])
        days = frame["inflow"].to_numpy().reshape(-1, 24)
        districts = frame["district"].to_numpy()[::24]
        codes = np.unique(districts, return_inverse=True)[1]
        keep = np.arange(len(days)) % 5 != 0 if part == "train" else np.arange(len(days)) % 5 == 0
        if part == "all":
            keep = np.ones(len(days), dtype=bool)
        return np.clip(days[keep] / WATER_BOUND * 2.0 - 1.0, -1.0, 1.0), codes[keep].astype(np.int64)
    images, labels = datasets.load_mnist_5k("train")
    return images.reshape(len(images), -1).astype(np.float64) / 127.5 - 1.0, labels.astype(np.int64)


def write_long_parts(scale: int, folder: Path) -> tuple[Path, Path]:
    """×`scale` copies of the BWDF series as a long table (series, hour, inflow, district), one
    Parquet part per copy, each part's rows shuffled (a series' readings scattered in its part)."""
    import pandas as pd

    values, labels = base_units("sequence")
    values = (values + 1.0) / 2.0 * WATER_BOUND
    n, length = values.shape
    parts = folder / f"series-long-{scale}"
    parts.mkdir()
    for copy in range(scale):
        gen = np.random.default_rng(copy)
        noisy = np.clip(values + gen.normal(0.0, COPY_NOISE * WATER_BOUND / 2.0 if copy else 0.0, values.shape), 0, 200)
        frame = pd.DataFrame({"series": np.repeat(np.arange(copy * n, (copy + 1) * n), length),
                              "hour": np.tile(np.arange(length), n), "inflow": noisy.reshape(-1),
                              "district": np.repeat(labels, length)})  # fmt: skip
        frame.sample(frac=1.0, random_state=copy).to_parquet(parts / f"part-{copy:04d}.parquet", index=False)
    return parts, parts


def long_fit(folder: Path, mode: str) -> dict:
    """The series fit of a long Parquet table through the library: `blocks`, the folder grouped in
    buckets (dpgan.sequences.long_parquet); `memory`, the parts read into one frame."""
    import resource

    import pandas as pd

    from dpgan.sequences.long_parquet import LongParquet
    from dpgan.sequences.schema import SequenceSchema, ValueColumn
    from dpgan.synthesizers import SequenceSynthesizer

    schema = SequenceSchema(id="series", time="hour", length=24, values=(ValueColumn("inflow"),), label="district")
    baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    synth = SequenceSynthesizer(epsilon=EPSILON, delta=DELTA, seed=0, threads=1)
    start = time.perf_counter()
    source = LongParquet.open(folder) if mode == "blocks" else pd.read_parquet(folder)
    synth.fit(source, schema, progress=False)
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"kind": "series-long", "mode": mode, "units": 6888 * len(list(folder.glob("*.parquet"))), "d": 24,
            "fit_s": round(seconds, 2), "baseline_mb": round(baseline_kb / 1024, 1),
            "peak_mb": round(peak_kb / 1024, 1), "epsilon": round(float(synth.ledger.epsilon(DELTA, "pld")), 4),
            "estimated_kept": round(float(synth.training["estimated_units"])),
            "labels": len(synth.schema.categories)}  # fmt: skip


def write_scaled(kind: str, scale: int, folder: Path) -> tuple[Path, Path]:
    """×`scale` copies of the base set, each with its own noise, written copy by copy to .npy files
    (for `series-fit`: the series in L/s, the fit's own input, not scaled to the box)."""
    if kind == "series-long":
        return write_long_parts(scale, folder)
    if kind == "series-fit":
        values, labels = base_units("sequence", "train" if os.environ.get(SCORE_VARIABLE) else "all")
        values = (values + 1.0) / 2.0 * WATER_BOUND  # back to L/s: the library's fit scales them itself
    else:
        values, labels = base_units(kind)
    n, d = values.shape
    path, label_path = folder / f"{kind}-{scale}.npy", folder / f"{kind}-{scale}-labels.npy"
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n * scale, d))
    for copy in range(scale):
        noise = np.random.default_rng(copy).normal(0.0, COPY_NOISE if copy else 0.0, values.shape)
        if kind == "series-fit":
            out[copy * n : (copy + 1) * n] = np.clip(values + noise * WATER_BOUND / 2.0, 0.0, WATER_BOUND)
        else:
            out[copy * n : (copy + 1) * n] = np.clip(values + noise, -1.0, 1.0)
    out.flush()
    del out
    np.save(label_path, np.tile(labels, scale))
    return path, label_path


def npy_blocks(path: Path, label_path: Path) -> tuple[VectorBlocks, int]:
    """The .npy files read BLOCK rows at a time with plain reads (no memory map, whose pages would
    count in the resident memory): a block reader's memory, one block of values and labels."""

    def header(handle) -> tuple[tuple[int, ...], np.dtype]:  # noqa: ANN001
        np.lib.format.read_magic(handle)
        shape, _, dtype = np.lib.format.read_array_header_1_0(handle)
        return shape, dtype

    with open(path, "rb") as handle:
        shape, _ = header(handle)

    def read() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        with open(path, "rb") as values, open(label_path, "rb") as labels:
            (n, d), dtype = header(values)
            _, label_dtype = header(labels)
            for start in range(0, n, BLOCK):
                size = min(BLOCK, n - start)
                yield np.fromfile(values, dtype, size * d).reshape(size, d), np.fromfile(labels, label_dtype, size)

    return VectorBlocks(int(shape[1]), read), int(shape[0])


def fit(kind: str, path: Path, label_path: Path, mode: str) -> dict:
    """The child: the kind's default statistics model fitted on the file (blocks or one array)."""
    import resource

    import torch

    from dpgan.images.gaussian import coefficient_clip, image_basis
    from dpgan.privacy.accounting import PrivacyLedger
    from dpgan.privacy.calibration import FitBudget
    from dpgan.sequences.baseline import gaussian_arguments
    from dpgan.sequences.settings import SequenceSettings
    from dpgan.statistics.blocks import in_memory
    from dpgan.statistics.copula import DPGaussianCopula
    from dpgan.statistics.gaussian import DPGaussian

    torch.set_num_threads(1)
    if kind == "series-fit":
        return library_fit(path, label_path, mode)
    if kind == "series-long":
        return long_fit(path, mode)
    baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    budget = FitBudget(EPSILON, DELTA, "pld")
    ledger, rng = PrivacyLedger(budget=budget.ledger_budget()), np.random.default_rng(0)
    start = time.perf_counter()
    if mode == "blocks":
        source, n = npy_blocks(path, label_path)
        d = source.dimension
    else:
        values = np.load(path).astype(np.float64)
        source = in_memory(values, np.load(label_path))
        n, d = values.shape
    if kind == "sequence":
        s = SequenceSettings()
        form = (s.copula_basis, s.copula_clip, s.gaussian_shrink, s.copula_residual)
        model = DPGaussianCopula(-1.0, 1.0, bins=s.copula_bins, channels=1, **gaussian_arguments(24, 1, form))
        model.fit(
            source, None, 10, rng, ledger=ledger, histogram_target=budget.at(s.copula_fraction),
            target=budget.whole_target(), event="copula", note="",
        )  # fmt: skip
    else:
        shape = (1, 28, 28)
        model = DPGaussian(-1.0, 1.0, basis=image_basis(shape, 0.4), clip=coefficient_clip(shape, 0.3))
        model.fit(source, None, 10, rng, ledger=ledger, target=budget.whole_target(), event="gaussian", note="")
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hwm_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
    epsilon = ledger.epsilon(DELTA, "pld")
    return {"kind": kind, "mode": mode, "units": n, "d": d, "fit_s": round(seconds, 2),
            "baseline_mb": round(baseline_kb / 1024, 1), "peak_mb": round(peak_kb / 1024, 1),
            "vmhwm_mb": round(hwm_kb / 1024, 1),
            "epsilon": round(float(epsilon), 4)}  # fmt: skip


def library_fit(path: Path, label_path: Path, mode: str) -> dict:
    """The series fit through the library (`SequenceSynthesizer.fit`, the default "gaussian-copula"),
    every data step included: DP bounds, the DP label set, the DP tally, then the model. `blocks`:
    the .npy paths (memory-mapped, read in blocks, dpgan.sequences.series_file); `memory`: the
    arrays loaded whole and passed in memory (the fit as before the block reader)."""
    import resource

    from dpgan.synthesizers import SequenceSynthesizer

    baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    synth = SequenceSynthesizer(epsilon=EPSILON, delta=DELTA, seed=0, threads=1)
    start = time.perf_counter()
    if mode == "blocks":
        synth.fit(path, labels=label_path, progress=False)
    else:
        synth.fit(np.load(path), labels=np.load(label_path), progress=False)
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    n, d = np.load(path, mmap_mode="r").shape
    kept = synth.training["estimated_units"]
    row = {"kind": "series-fit", "mode": mode, "units": int(n), "d": int(d), "fit_s": round(seconds, 2),
           "baseline_mb": round(baseline_kb / 1024, 1), "peak_mb": round(peak_kb / 1024, 1),
           "epsilon": round(float(synth.ledger.epsilon(DELTA, "pld")), 4), "estimated_kept": round(float(kept)),
           "labels": len(synth.schema.categories)}  # fmt: skip
    if os.environ.get(SCORE_VARIABLE):
        row |= series_headline(synth)
    return row


def series_headline(synth) -> dict:  # noqa: ANN001
    """The series headline (dpgan.evaluation.headline: shape, mean profile, autocorrelation and the
    district's TSTR AUC) of SCORED synthetic series against the base set's whole training part (the
    copies' originals, in L/s), with the held-out fifth of the district-days as the test set."""
    from dpgan.evaluation.sequences.metrics import evaluate_sequences

    start = time.perf_counter()
    to_litres = lambda values: (values + 1.0) / 2.0 * WATER_BOUND  # noqa: E731
    train, train_codes = base_units("sequence", "train")
    test, test_codes = base_units("sequence", "test")
    series, labels = synth.sample(SCORED, seed=0)
    metrics = evaluate_sequences(  # the whole training part: its first rows would be a few districts only
        to_litres(train), np.asarray(series).reshape(len(series), -1), to_litres(test),
        real_labels=train_codes.astype(str), synthetic_labels=np.asarray(labels).astype(str),
        test_labels=test_codes.astype(str),
    )  # fmt: skip
    headline = metrics["headline"]
    return {"headline": round(headline["score"], 4), "headline_real": round(headline["real"], 4),
            "score_s": round(time.perf_counter() - start, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    kinds = ["sequence", "image", "series-fit", "series-long"]
    parser.add_argument("--kinds", nargs="+", default=["sequence", "image"], choices=kinds)
    parser.add_argument("--scales", nargs="+", type=int, default=[1, 10, 100])
    parser.add_argument(
        "--memory-values", type=float, default=4e7, help="also fit as one array the sets of at most this many values"
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--score", action="store_true", help="series-fit: hold out a fifth of the base set, score each fit's headline"
    )
    parser.add_argument("--out", type=Path, default=None, help="a .md for the table (and a .jsonl beside it)")
    parser.add_argument("--child", nargs=4, metavar=("KIND", "FILE", "LABELS", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--prepare", nargs=3, metavar=("KIND", "SCALE", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, path, labels, mode = args.child
        print(json.dumps(fit(kind, Path(path), Path(labels), mode)))
        return
    if args.prepare:  # in a child too: Linux children inherit their parent's peak RSS (ru_maxrss)
        kind, scale, folder = args.prepare
        path, labels = write_scaled(kind, int(scale), Path(folder))
        size = int(np.load(path, mmap_mode="r").size) if path.suffix == ".npy" else 6888 * 24 * int(scale)
        print(json.dumps({"path": str(path), "labels": str(labels), "values": size}))
        return
    env = os.environ | {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    env |= {SCORE_VARIABLE: "1"} if args.score else {}
    rows = []

    def child(*arguments: str) -> dict:
        done = subprocess.run(
            [sys.executable, __file__, *arguments], env=env, capture_output=True, text=True, check=True
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory(prefix="scale-growth-kinds-") as tmp:
        files = {(k, s): child("--prepare", k, str(s), tmp) for k in args.kinds for s in args.scales}
        jobs = [(k, s, "blocks") for k in args.kinds for s in args.scales]
        jobs += [(k, s, "memory") for (k, s), f in files.items() if f["values"] <= args.memory_values]
        for round_ in range(args.rounds):
            for kind, scale, mode in jobs:
                made = files[(kind, scale)]
                row = child("--child", kind, made["path"], made["labels"], mode) | {"scale": scale, "round": round_}
                print(json.dumps(row), flush=True)
                rows.append(row)
    if args.out:
        write_results(rows, args)


def write_results(rows: list[dict], args: argparse.Namespace) -> None:
    args.out.with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = [
        "# Series and images at ×1, ×10, ×100 units: the default statistics model read in blocks",
        "",
        "Command (one thread per fit: OMP_NUM_THREADS=1, torch.set_num_threads(1); the 2-core machine shared "
        "with other jobs):",
        "",
        "    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/scale_growth_kinds.py " + " ".join(sys.argv[1:]),
        "",
        f"Blocks of {BLOCK:,} units read from the .npy with plain reads (no memory map; series-fit: the "
        "library's SeriesFile, 8,192 series a block, every data step included); "
        "`memory`: the same file loaded as one array. "
        "Fit time and peak RSS per child process (median over rounds; peak RSS includes the imports, "
        "`baseline`). The fit time includes σ's calibration and the accountant's first load "
        "(1–2 s whatever the scale), so its per-unit cost at ×1 is mostly that.",
        "",
        "| kind | mode | scale | units | fit s (median) | fit s per 100k units | peak RSS MB | baseline RSS MB | ε |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    keys = sorted({(r["kind"], r["mode"], r["scale"]) for r in rows}, key=lambda k: (k[0], k[1], k[2]))
    for kind, mode, scale in keys:
        group = [r for r in rows if (r["kind"], r["mode"], r["scale"]) == (kind, mode, scale)]
        seconds = float(np.median([r["fit_s"] for r in group]))
        peak = max(r["peak_mb"] for r in group)
        units = group[0]["units"]
        lines.append(
            f"| {kind} | {mode} | ×{scale} | {units:,} | {seconds:.2f} | {seconds / units * 1e5:.2f} | {peak:.0f} | "
            f"{group[0]['baseline_mb']:.0f} | {group[0]['epsilon']} |"
        )
    scored = [r for r in rows if "headline" in r]
    if scored:  # --score: each series fit's headline against the held-out fifth
        lines += ["", "| kind | mode | scale | headline (synthetic) | headline (real held-out) | score s |"]
        lines += ["|---|---|---|---|---|---|"]
        lines += [
            f"| {r['kind']} | {r['mode']} | ×{r['scale']} | {r['headline']:.3f} | {r['headline_real']:.3f} | "
            f"{r['score_s']} |"
            for r in scored
        ]
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
