"""Calibration time of whole `dpgan fit` runs at any target ε (issue 49: ≤ 5 s at any ε).

Each case runs the command line as a user does (a fresh process: imports, reading, the DP releases,
σ calibration, training, saving, the privacy report) under bench/fit_phases.py, which logs when
every σ or share search starts and ends. Reported per kind and ε: the fit's wall seconds, the
seconds spent calibrating (the outermost σ and share searches, summed: analytic Gaussian, the
pre-training reads' plan, the plug-ins' and the GAN's σ), the seconds in the accountant overall
(every epsilon_of, calibration's included), and how the fit ended (the ε it saved, or its one-line
refusal). Kinds: a 500-row Adult table with `--max-steps 10`, 40 days of the water districts
(the series' default model) and 500 digits (the images' default recipe). Rounds are interleaved:
every (kind, ε) once per round, so a busy spell falls on all alike. One thread (OMP_NUM_THREADS=1,
--threads 1).

    cd bench && OMP_NUM_THREADS=1 python calibration_speed.py --rounds 2 > results/calibration_speed.md

`--src` times another tree's code (e.g. the commit before a change) on the same cases.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dpgan import datasets

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
EPSILONS = (1e-3, 1.0, 1e3, 1e5, 1e6, 1e9)
KINDS = ("table", "sequence", "image")


def write_inputs(folder: Path) -> dict[str, list[str]]:
    """Each kind's input file and its public flags (the docs' Quickstart flags)."""
    table = folder / "adult500.csv"
    datasets.load_adult()[0].head(500).to_csv(table, index=False)
    water = datasets.load_water_districts()
    days = sorted(water["day"].unique())[:40]
    series = folder / "water40.csv"
    water[water["day"].isin(days)].to_csv(series, index=False)
    images, labels = datasets.load_digits_images()
    digits = folder / "digits500.npz"
    np.savez(digits, images=images[:500], labels=labels[:500])
    return {
        "table": [str(table), "--max-steps", "10"],
        "sequence": [
            str(series),
            "--kind",
            "sequence",
            "--id-column",
            "district,day",
            "--time-column",
            "hour",
            "--length",
            "24",
            "--value-columns",
            "inflow",
            "--bounds",
            "inflow=0:200",
            "--label-column",
            "district",
        ],  # fmt: skip
        "image": [str(digits), "--kind", "image", "--classes", ",".join(str(d) for d in range(10))],
    }


def phase_seconds(log: Path, phase: str) -> float:
    """Seconds between each outermost enter and exit of `phase` in a fit_phases log, summed."""
    total, opened = 0.0, None
    for line in log.read_text().splitlines():
        stamp, event, name, _ = line.split(" ", 3)
        if name != phase:
            continue
        if event == "enter":
            opened = float(stamp)
        elif opened is not None:
            total, opened = total + float(stamp) - opened, None
    return total


def run_case(src: Path, kind_args: list[str], epsilon: float, folder: Path, timeout: float) -> dict:
    log = folder / f"phases-{time.monotonic_ns()}.log"
    out = folder / "model"
    command = [
        sys.executable, str(HERE / "fit_phases.py"), str(log), "--", "fit", *kind_args, "--epsilon", f"{epsilon:g}",
        "--seed", "1", "--quiet", "--threads", "1", "--out", str(out), "--overwrite",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
        seconds, code = time.perf_counter() - start, done.returncode
        lines = [line for line in (done.stdout + done.stderr).splitlines() if not line.startswith("dpgan: warning")]
        ended = next((line for line in lines if line.startswith(("saved model", "dpgan: error"))), lines[-1:])
    except subprocess.TimeoutExpired:
        seconds, code, ended = time.perf_counter() - start, None, f"still running after {timeout:g} s (killed)"
    log.touch()
    return {
        "seconds": seconds,
        "code": code,
        "calibration": phase_seconds(log, "calibration"),
        "accounting": phase_seconds(log, "accounting"),
        "ended": str(ended).replace("|", "/").replace(f" to {out}", ""),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    parser.add_argument("--src", default=str(SRC), help="the dpgan source tree to time (default: this one)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a fit is killed")
    args = parser.parse_args()
    results: dict[tuple[str, float], list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs = write_inputs(folder)
        for _ in range(args.rounds):
            for kind in args.kinds:
                for epsilon in args.epsilons:
                    result = run_case(Path(args.src), inputs[kind], epsilon, folder, args.timeout)
                    results.setdefault((kind, epsilon), []).append(result)
                    print(f"{kind} ε={epsilon:g}: {result}", file=sys.stderr, flush=True)
    print("# Calibration time of whole `dpgan fit` runs, from ε = 1e-3 to 1e9 (issue 49)\n")
    print(
        f"Command: `cd bench && OMP_NUM_THREADS=1 python calibration_speed.py --rounds {args.rounds}`"
        f"{'' if Path(args.src) == SRC else f' --src {args.src}'}; {platform.machine()}, "
        f"{os.cpu_count()} cores shared with other jobs, one thread per fit (--threads 1). Seconds: median "
        f"(max) over {args.rounds} interleaved rounds.\n"
    )
    print("| kind | target ε | fit (s) | calibration (s) | accountant, all (s) | how the fit ended |")
    print("|---|---|---|---|---|---|")
    for (kind, epsilon), runs in results.items():

        def cell(key: str, runs: list[dict] = runs) -> str:
            values = [r[key] for r in runs]
            return f"{statistics.median(values):.1f} ({max(values):.1f})"

        timings = " | ".join(cell(key) for key in ("seconds", "calibration", "accounting"))
        print(f"| {kind} | {epsilon:g} | {timings} | {runs[-1]['ended']} |")


if __name__ == "__main__":
    main()
