"""The thread policy (issue 31): `dpgan demo` and `dpgan audit --epsilon 3` at DPGAN_THREADS=auto (the
default: the cores other jobs leave free, re-read as the fit runs), 1, and 2 (torch's default on
this 2-core machine before the policy), on an idle machine, with a second CPU-bound process running
(a pure-Python busy loop: exactly one core, as a second user job would take), and, for auto and 2,
with that process starting 20 s into the demo.

    PYTHONPATH=src python bench/threads.py [--rounds 1] [--capped-steps 150] \
        [--out bench/results/threads.md]

Full runs (wall time of the whole command, as a user waits for it) for every case except the
loaded two-thread one, which took 31 minutes for a demo when the issue was filed: that case is
measured on a capped Adult fit (`--capped-steps` private steps, the demo's settings otherwise) as
seconds per step, next to the same capped fit at one thread, and its full time extrapolated from
the demo's step count. Cases are interleaved round by round so that drift in the machine's load
falls on every case alike. Goals: demo ≤ 3 minutes and audit ≤ 2 minutes under load; idle no
slower than two threads.

To keep measuring one version while the tree changes, run it from a copy of src (PYTHONPATH): the
commands it starts inherit the path.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import torch

DEMO_STEPS = 1913  # the default Adult ε = 3 fit's private steps (the demo prints its ledger)
CAPPED_FIT = """
import sys, time
from dpgan import Schema, TabularSynthesizer, datasets
train, _ = datasets.load_adult()
schema = Schema.from_json(datasets.adult_schema_path())
synth = TabularSynthesizer(epsilon=3.0, seed=0, max_steps=int(sys.argv[1]))
started = time.perf_counter()
synth.fit(train, schema=schema)
print(time.perf_counter() - started, synth.training["steps"])
"""


@contextmanager
def busy_core(loaded: bool, after: float = 1.0):
    """A second CPU-bound process for the body's duration (none when not `loaded`), started `after`
    seconds in (the body starts after one second, or at once when the load is to arrive later)."""
    if not loaded:
        yield
        return
    process = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({after}); exec('while True: pass')"])
    try:
        if after <= 1.0:
            time.sleep(1.0)
        yield
    finally:
        process.kill()
        process.wait()


def run(command: list[str], threads: int | str) -> float:
    env = {**os.environ, "DPGAN_THREADS": str(threads)}
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def capped_seconds_per_step(threads: int | str, steps: int) -> float:
    env = {**os.environ, "DPGAN_THREADS": str(threads)}
    out = subprocess.run(
        [sys.executable, "-c", CAPPED_FIT, str(steps)], env=env, check=True, capture_output=True, text=True
    ).stdout.split()
    return float(out[0]) / int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--capped-steps", type=int, default=150)
    parser.add_argument("--out", default="bench/results/threads.md")
    args = parser.parse_args()
    dpgan = [sys.executable, "-m", "dpgan.cli"]
    rows: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        demo = [*dpgan, "demo", "--quiet", "--out-dir", str(Path(tmp) / "demo")]
        audit = [*dpgan, "audit", "--epsilon", "3", "--quiet"]
        for _ in range(args.rounds):
            for loaded in (False, True):
                state = "loaded" if loaded else "idle"
                with busy_core(loaded):
                    for threads in ("auto", 1, 2):
                        per_step = capped_seconds_per_step(threads, args.capped_steps)
                        rows.setdefault(f"capped fit, s/step, {state}, threads {threads}", []).append(per_step)
                        if loaded and threads == 2:
                            continue  # extrapolated below: a full run takes half an hour
                        rows.setdefault(f"demo, s, {state}, threads {threads}", []).append(run(demo, threads))
                        rows.setdefault(f"audit, s, {state}, threads {threads}", []).append(run(audit, threads))
            for threads in ("auto", 2):
                with busy_core(True, after=20.0):
                    rows.setdefault(f"demo, s, load arrives at 20 s, threads {threads}", []).append(run(demo, threads))
    lines = [
        "# Thread policy: demo and audit wall time, threads auto, 1 and 2, idle and loaded",
        "",
        f"Command: `PYTHONPATH=src python bench/threads.py --rounds {args.rounds} --capped-steps "
        f"{args.capped_steps}`; {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"{time.strftime('%Y-%m-%d')}. Loaded: a second process runs a pure-Python busy loop. "
        "Median over rounds.",
        "",
        "| case | median | all rounds |",
        "|---|---|---|",
    ]
    for name, values in rows.items():
        values = sorted(values)
        lines.append(f"| {name} | {values[len(values) // 2]:.3f} | {', '.join(f'{v:.3f}' for v in values)} |")
    loaded2 = sorted(rows["capped fit, s/step, loaded, threads 2"])
    lines += [
        "",
        f"Loaded, 2 threads, demo extrapolated: {loaded2[len(loaded2) // 2] * DEMO_STEPS:.0f} s of training "
        f"({DEMO_STEPS} steps at the capped fit's s/step; preparation and the utility check not included).",
    ]
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
