"""Sampling throughput: stream Adult rows to CSV and Parquet; rows per minute and peak memory.

    PYTHONPATH=src OMP_NUM_THREADS=1 python bench/sample_throughput.py [--model DIR] [--rounds 3]

Without --model it first fits an Adult model quickly (datasets.load_adult()'s training split,
ε=3, δ=1e-5, 1 epoch, the default recipe dp-gan with its label model) and saves it to a
temporary folder: sampling speed depends on the network's size, not on how well it is trained.
Each timing runs in a fresh process (`--worker`), so its peak RSS (ru_maxrss) is its own: the
1M and 3M row runs show whether memory stays flat in n. Rounds interleave CSV and Parquet.
The stage breakdown times one 100k-row chunk's parts (generator forward, decode, label model,
writing) in the main process. Timings are as measured, on whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "sample_throughput.md"


def worker(model: str, n: int, out: str) -> dict:
    """Stream n rows to `out` in this process; seconds from the loaded model to the renamed file."""
    from dpgan.synthesizers import load_model

    synth = load_model(model)
    start = time.perf_counter()
    synth.sample_to(out, n, seed=0)  # type: ignore[attr-defined]
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    return {"rows": n, "seconds": seconds, "peak_rss_mb": peak_mb, "bytes": os.path.getsize(out)}


def run_worker(model: str, n: int, out: Path) -> dict:
    command = [sys.executable, __file__, "--worker", model, str(n), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    out.unlink()
    return json.loads(done.stdout.strip().splitlines()[-1])


def stages(model: str, rows: int = 100_000) -> dict[str, float]:
    """Seconds per stage for one chunk of `rows`, in the order sampling runs them."""
    import numpy as np
    import torch

    from dpgan.synthesizers import load_model

    synth = load_model(model)
    fitted = synth._fitted()  # type: ignore[attr-defined]
    rng, gen = np.random.default_rng(0), torch.Generator().manual_seed(0)
    times: dict[str, float] = {}
    start = time.perf_counter()
    z = torch.randn(rows, synth.config.noise_dim, generator=gen)  # type: ignore[attr-defined]
    encoded = fitted.generator.sample_encoded(z).numpy()
    times["generator forward"] = time.perf_counter() - start
    start = time.perf_counter()
    frame = fitted.encoder.decode(encoded, rng)
    times["decode"] = time.perf_counter() - start
    start = time.perf_counter()
    for processor in fitted.post_processors:
        frame, _ = processor.redraw(frame, fitted.encoder, rng)
    times["label model (re-encode, classify, redraw)"] = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        frame.to_csv(Path(folder) / "x.csv", index=False)
        times["write CSV"] = time.perf_counter() - start
        start = time.perf_counter()
        frame.to_parquet(Path(folder) / "x.parquet", index=False)
        times["write Parquet"] = time.perf_counter() - start
    return times


def fit_model(folder: Path) -> tuple[str, float]:
    from dpgan import Schema, TabularSynthesizer, datasets

    train, _ = datasets.load_adult()
    start = time.perf_counter()
    synth = TabularSynthesizer(epsilon=3.0, delta=1e-5, epochs=1, seed=0)
    synth.fit(train, schema=Schema.from_json(datasets.adult_schema_path()))
    seconds = time.perf_counter() - start
    return str(synth.save(folder / "adult-model")), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a saved Adult table model (default: fit one, ε=3, 1 epoch)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--big", type=int, default=3_000_000, help="second size, for peak memory against n")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        fit_seconds = None
        model = args.model
        if model is None:
            model, fit_seconds = fit_model(tmp)
        runs = []
        for round_ in range(args.rounds):
            for suffix in (".csv", ".parquet"):
                result = run_worker(model, args.rows, tmp / f"rows{suffix}")
                runs.append({"round": round_ + 1, "format": suffix[1:], **result})
                print(json.dumps(runs[-1]), flush=True)
        for suffix in (".csv", ".parquet"):
            result = run_worker(model, args.big, tmp / f"big{suffix}")
            runs.append({"round": "big", "format": suffix[1:], **result})
            print(json.dumps(runs[-1]), flush=True)
        breakdown = stages(model)
    write_report(args, runs, breakdown, fit_seconds)


def write_report(args: argparse.Namespace, runs: list[dict], breakdown: dict[str, float], fit_s: float | None) -> None:
    command = "PYTHONPATH=src OMP_NUM_THREADS=1 python bench/sample_throughput.py " + " ".join(sys.argv[1:])
    lines = [
        "# Sampling throughput (streamed to a file)",
        "",
        f"Command: `{command.strip()}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, shared with other workers at the time of the run:"
        " timings are as measured (a quiet machine will do better). OMP_NUM_THREADS="
        f"{os.environ.get('OMP_NUM_THREADS', 'unset')}.",
        "",
        "Model: Adult, dp-gan, ε=3, δ=1e-5, 1 epoch, with its DP label model (income)"
        + (f"; fitted in {fit_s:.0f} s" if fit_s is not None else f"; loaded from {args.model}")
        + ". Each row below is a fresh process streaming rows with `sample_to(path, n, seed=0)`.",
        "",
        "| round | format | rows | seconds | rows/min | peak RSS (MB) | file MB |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        lines.append(
            f"| {r['round']} | {r['format']} | {r['rows']:,} | {r['seconds']:.1f} | "
            f"{r['rows'] / r['seconds'] * 60:,.0f} | {r['peak_rss_mb']:.0f} | {r['bytes'] / 1e6:.0f} |"
        )
    lines += ["", "Stages of one 100,000-row chunk (seconds):", "", "| stage | seconds |", "|---|---:|"]
    lines += [f"| {name} | {seconds:.3f} |" for name, seconds in breakdown.items()]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], int(sys.argv[3]), sys.argv[4])))
    else:
        main()
