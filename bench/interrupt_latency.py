"""How long Ctrl-C takes to stop `dpgan fit` and `dpgan sample` in each phase (issue 49: ≤ 2 s).

Each case runs the command line in a fresh process under bench/fit_phases.py (which logs when each
phase starts), waits until the chosen phase has run for a given time, sends SIGINT (what Ctrl-C
sends) and measures the seconds until the process has exited. Reported per case: the phase the
signal fell in, the latency, the exit code and last stderr line, and any file left next to the
output (a half-written model or table, or a hidden staging sibling). One thread (OMP_NUM_THREADS=1,
--threads 1), on the 500-row Adult table.

    cd bench && OMP_NUM_THREADS=1 python interrupt_latency.py --rounds 2 > results/interrupt_latency.md
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dpgan import datasets

HERE = Path(__file__).resolve().parent
SLOW = 2.0  # seconds after SIGINT at which a still-running child is asked where it is
SRC = HERE.parent / "src"

# (label, phase or phase:function whose first start the signal waits for, seconds into it, dpgan
# arguments; {table} and {model} are filled in). The default steps (T ≈ 1,200 on 500 rows) make the
# GAN's calibration compose long ledgers; ε = 1e5 its small-σ grid; -n 2e6 a long sample.
CASES = [
    ("fit ε=1: DP schema releases", "releases", 0.3, ["fit", "{table}", "--epsilon", "1"]),
    ("fit ε=10: GAN calibration", "calibration:sigma_and_steps", 0.5, ["fit", "{table}", "--epsilon", "10"]),
    ("fit ε=1e5: pre-training reads' σ", "calibration", 0.2, ["fit", "{table}", "--epsilon", "1e5"]),
    ("fit ε=1e5: GAN calibration", "calibration:sigma_and_steps", 0.5, ["fit", "{table}", "--epsilon", "1e5"]),
    ("fit ε=1: training", "training", 2.0, ["fit", "{table}", "--epsilon", "1"]),
    ("sample 2e6 rows", "sample", 1.0, ["sample", "{model}", "-n", "2000000"]),
]


def wait_for(log: Path, phase: str, process: subprocess.Popen, timeout: float) -> float | None:
    """Seconds (the child's clock) at which `phase` first started, or None if the child ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if log.exists():
            for line in log.read_text().splitlines():
                stamp, event, name, what = line.split(" ", 3)
                if event == "enter" and phase in (name, f"{name}:{what}"):
                    return float(stamp)
        time.sleep(0.02)
    return None


def open_phase(log: Path, at: float) -> str:
    """The innermost phase open at the child's time `at` (seconds since it started)."""
    stack: list[str] = []
    for line in log.read_text().splitlines():
        stamp, event, name, what = line.split(" ", 3)
        if float(stamp) > at:
            break
        if event == "enter":
            stack.append(f"{name} ({what})")
        elif stack:
            stack = [s for s in stack if not s.startswith(name + " ")]
    return stack[-1] if stack else "start-up"


def run_case(case: tuple, folder: Path, model: Path, table: Path) -> dict:
    label, phase, delay, template = case
    out = folder / f"out-{time.monotonic_ns()}"
    out.mkdir()
    log = out / "phases.log"
    target = out / ("model" if template[0] == "fit" else "rows.csv")
    argv = [a.format(table=table, model=model) for a in template] + ["--out", str(target), "--threads", "1"]
    if template[0] == "fit":
        argv += ["--seed", "1", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    process = subprocess.Popen(
        [sys.executable, str(HERE / "fit_phases.py"), str(log), "--", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    begun = time.monotonic()
    started = wait_for(log, phase, process, 600.0)
    if started is None:
        process.communicate()
        return {"label": label, "phase": f"{phase} never started", "latency": float("nan"), "code": process.returncode}
    time.sleep(delay)
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    stuck = ""
    try:
        _, err = process.communicate(timeout=SLOW)
    except subprocess.TimeoutExpired:  # still running: ask it where (fit_phases' faulthandler)
        process.send_signal(signal.SIGUSR1)
        _, err = process.communicate()
        frames = [line.strip() for line in err.splitlines() if line.strip().startswith("File ")]
        stuck = frames[0] if frames else "no Python frame"
    latency = time.monotonic() - sent
    left = sorted(p.name for p in out.iterdir() if p.name != "phases.log")
    return {
        "label": label,
        "phase": open_phase(log, sent - begun - 0.05),  # the child's clock starts a little after Popen
        "latency": latency,
        "code": process.returncode,
        "stderr": next((line for line in reversed(err.splitlines()) if line.startswith("dpgan:")), ""),
        "left": ", ".join(left) or "nothing",
        "stuck": stuck,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        table = folder / "adult500.csv"
        datasets.load_adult()[0].head(500).to_csv(table, index=False)
        model = folder / "model"
        env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}
        fit = ["fit", str(table), "--epsilon", "1", "--max-steps", "10", "--quiet", "--seed", "1", "--out", str(model)]
        subprocess.run([sys.executable, "-m", "dpgan", *fit], check=True, env=env, capture_output=True)
        for _ in range(args.rounds):
            for case in CASES:
                rows.append(run_case(case, folder, model, table))
                print(rows[-1], file=sys.stderr, flush=True)
    print("# Ctrl-C latency of `dpgan fit` and `dpgan sample`, phase by phase (issue 49)\n")
    print(
        f"Command: `cd bench && OMP_NUM_THREADS=1 python interrupt_latency.py --rounds {args.rounds}`; "
        f"{platform.machine()}, {os.cpu_count()} cores shared with other jobs, one thread (--threads 1). "
        "SIGINT is sent once the phase has run for the stated seconds; latency = SIGINT to process exit.\n"
    )
    print(
        "| case | phase open at SIGINT | latency (s) | exit | last stderr line | left next to --out | where, if > 2 s |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['label']} | {row['phase']} | {row['latency']:.2f} | {row['code']} | "
            f"{row.get('stderr', '')} | {row.get('left', '')} | {row.get('stuck', '')} |"
        )
    latencies = [r["latency"] for r in rows if r["latency"] == r["latency"]]
    print(f"\nLatency over all cases: median {statistics.median(latencies):.2f} s, max {max(latencies):.2f} s.")


if __name__ == "__main__":
    main()
