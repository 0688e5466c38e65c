"""Data-parallel DP-SGD speed: a 2-process gloo fit (torchrun) against one process, on Adult.

    PYTHONPATH=src python bench/distributed_speed.py [--epochs 1] [--rows 0] \
        [--out bench/results/distributed_speed.md]

Each configuration fits `TabularSynthesizer(epsilon=3, epochs=E, seed=0)` (dp-gan, the default
recipe and batch size) on the bundled Adult training rows with the bundled schema, so σ, q and the
step count — and so ε and the ledger — are the same in every run (the report checks it). What is
timed: the training loop, from the first private step's progress call to the last one (the DP
preprocessing and σ calibration before it are the same work on every rank and not what the
processes split), scaled to time per epoch = loop time × steps per epoch / (steps − 1).
Configurations: one process with one thread, one process with two threads (the same cores as two
processes), and `torchrun --nproc_per_node 2` with one thread each (gloo). Each rank of the
distributed run reads the whole table: the clipped per-record sums, the critic's fake-only term and
the generator step are split by position; the noise and the plug-ins' gradients are not.

The timings are as measured on a host shared with other jobs: compare them within one report only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def worker(args: argparse.Namespace) -> None:
    """One fit (one rank of it under torchrun); rank 0 writes the timings as JSON to --result."""
    import torch

    from dpgan import Schema, TabularSynthesizer, datasets
    from dpgan.privacy.distributed import process_group_context

    torch.set_num_threads(args.threads)
    context = process_group_context()
    table = datasets.load_adult()[0]
    if args.rows:
        table = table.sample(args.rows, random_state=0).reset_index(drop=True)
    stamps: list[tuple[int, float]] = []

    def progress(done: int, total: int, epsilon: float) -> None:
        stamps.append((done, time.perf_counter()))

    synth = TabularSynthesizer(epsilon=3.0, epochs=args.epochs, seed=0, accountant="rdp")
    started = time.perf_counter()
    synth.fit(table, schema=Schema.from_json(datasets.adult_schema_path()), progress=progress)
    fit_seconds = time.perf_counter() - started
    if context.is_main:
        (first, t0), (last, t1) = stamps[0], stamps[-1]
        steps = synth.training["steps"]
        per_step = (t1 - t0) / max(1, last - first)
        result = {
            "world_size": context.world_size,
            "threads": args.threads,
            "rows": len(table),
            "steps": steps,
            "epochs": args.epochs,
            "seconds_per_step": per_step,
            "seconds_per_epoch": per_step * steps / args.epochs,
            "fit_seconds": fit_seconds,
            "epsilon": synth.privacy_report()["epsilon"],
            "ledger": synth.ledger.to_dict(),
        }
        Path(args.result).write_text(json.dumps(result))
    if context.distributed:
        import torch.distributed

        torch.distributed.destroy_process_group()


def run(command: list[str], threads: int) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent / "src"), env.get("PYTHONPATH")]))
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--rows", type=int, default=0, help="a sample of Adult's rows (0: all)")
    parser.add_argument("--out", default=str(HERE / "results" / "distributed_speed.md"))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    me = str(Path(__file__).resolve())
    common = ["--worker", "--epochs", str(args.epochs), "--rows", str(args.rows)]
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).parent / "torchrun")
    configurations = {
        "1 process, 1 thread": ([sys.executable, me, *common, "--threads", "1"], 1),
        "1 process, 2 threads": ([sys.executable, me, *common, "--threads", "2"], 2),
        "2 processes (torchrun, gloo), 1 thread each": (
            [torchrun, "--standalone", "--nproc_per_node", "2", me, *common, "--threads", "1"],
            1,
        ),
    }
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, (command, threads) in configurations.items():
            result = Path(tmp) / "result.json"
            run([*command, "--result", str(result)], threads)
            results[label] = json.loads(result.read_text())
    base = results["1 process, 1 thread"]
    same = all(r["ledger"] == base["ledger"] and r["epsilon"] == base["epsilon"] for r in results.values())
    lines = [
        "# Data-parallel DP-SGD: 2 processes (gloo) against 1 process, Adult",
        "",
        f"Command: `PYTHONPATH=src python bench/distributed_speed.py --epochs {args.epochs:g}"
        + (f" --rows {args.rows}" if args.rows else "")
        + "`",
        "",
        f"Host: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}. "
        "The host is shared with other jobs: the figures are as measured, not a controlled benchmark.",
        "",
        f"Fit: dp-gan defaults, ε=3 (RDP), δ=1e-5, seed 0, {base['rows']} rows, {base['steps']} steps "
        f"({args.epochs:g} epoch(s)); ε and the ledger identical in every run: {same} "
        f"(ε = {base['epsilon']:.4f}).",
        "",
        "| configuration | s / step | s / epoch | speed-up vs 1 process, 1 thread | whole fit (s) |",
        "|---|---|---|---|---|",
    ]
    for label, r in results.items():
        lines.append(
            f"| {label} | {r['seconds_per_step']:.4f} | {r['seconds_per_epoch']:.2f} | "
            f"{base['seconds_per_epoch'] / r['seconds_per_epoch']:.2f}× | {r['fit_seconds']:.1f} |"
        )
    lines += [
        "",
        "The clipped per-record sums, the critic's fake-only term and the generator step are split "
        "between the ranks by batch position; the draws, the noise and the plug-ins' gradients (the "
        "2-way anchor) are computed whole on every rank (lockstep), and each step pays three "
        "all-reduces, so the speed-up is bounded by the share of the step the split work takes.",
    ]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
