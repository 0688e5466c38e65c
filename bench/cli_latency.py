"""Wall and CPU seconds of the light commands a user runs after a fit: `dpgan inspect` and
`dpgan sample -n 10`, on a table, a series and an image model (the README Quickstart's fits, the
table's with `--max-steps 20`), for one or more source trees, alternated run by run so that a
change of load on the shared machine hits every tree alike.

    OMP_NUM_THREADS=1 python bench/cli_latency.py --src OLD/src --src src --repeats 5 > bench/results/cli_latency.md

The models are fitted once by each tree, into a temporary folder of its own. Each command runs in a
fresh interpreter (imports included: they are most of the time); the table gives the median wall
seconds and the median user + system CPU seconds, with the load average before and after (on a
machine shared with other jobs the wall time depends on it; the CPU seconds much less).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
FITS = {
    "table": ["adult.csv", "--epsilon", "3", "--target", "income", "--max-steps", "20"],
    "series": [
        "water.csv", "--kind", "sequence", "--epsilon", "3", "--id-column", "district,day", "--time-column", "hour",
        "--length", "24", "--value-columns", "inflow", "--bounds", "inflow=0:200", "--label-column", "district",
    ],
    "image": ["digits.npz", "--kind", "image", "--epsilon", "3", "--classes", "0,1,2,3,4,5,6,7,8,9"],
}  # fmt: skip
SAMPLE_OUT = {"table": "s.csv", "series": "s.csv", "image": "s.npz"}


def dpgan(src: str, args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one `python -m dpgan ...` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([PYTHON, "-m", "dpgan", *args], cwd=cwd, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def make_data(folder: Path, src: str, *, fit: bool = True) -> None:
    """The bundled data as the Quickstart's files in `folder`; with `fit`, each kind's model too."""
    code = (
        "import numpy as np; from dpgan import datasets; datasets.load_adult()[0].to_csv('adult.csv', index=False); "
        "datasets.load_water_districts().to_csv('water.csv', index=False); x, y = datasets.load_digits_images(); "
        "np.savez('digits.npz', images=x, labels=y)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
    subprocess.run([PYTHON, "-c", code], cwd=folder, env=env, check=True)
    for kind, args in FITS.items() if fit else ():
        dpgan(src, ["fit", *args, "--out", f"{kind}-model", "--quiet"], folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", required=True, help="a source tree (PYTHONPATH); repeatable")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # each tree fits its own models (a model file format may change between trees: issue 50's
        # statistics models are written as their released arrays, which an older tree refuses)
        folders = {}
        for index, src in enumerate(args.src):
            folders[src] = Path(tmp) / f"tree-{index}"
            folders[src].mkdir()
            make_data(folders[src], src)
        commands = {}
        for kind in FITS:
            commands[f"inspect ({kind})"] = ["inspect", f"{kind}-model"]
            out = SAMPLE_OUT[kind]
            commands[f"sample -n 10 ({kind})"] = ["sample", f"{kind}-model", "-n", "10", "--out", out, "--overwrite"]
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        load_before = os.getloadavg()[0]
        for _ in range(args.repeats):
            for name, command in commands.items():
                for src in args.src:
                    times.setdefault((name, src), []).append(dpgan(src, command, folders[src]))
        load_after = os.getloadavg()[0]
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    print(f"# `dpgan inspect` and `dpgan sample -n 10`: median of {args.repeats} fresh interpreters\n")
    print(
        f"Command: `OMP_NUM_THREADS={threads} python bench/cli_latency.py "
        + " ".join(f"--src {s}" for s in args.src)
        + f" --repeats {args.repeats}`; {os.cpu_count()} cores, load average {load_before:.2f} before, "
        f"{load_after:.2f} after.\n"
    )
    print("| command | " + " | ".join(f"{s}: wall s | {s}: CPU s" for s in args.src) + " |")
    print("|---|" + "---|---|" * len(args.src))
    for name in commands:
        cells = []
        for src in args.src:
            walls, cpus = zip(*times[(name, src)])
            cells += [f"{statistics.median(walls):.2f}", f"{statistics.median(cpus):.2f}"]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
