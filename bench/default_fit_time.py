"""Wall and CPU seconds of each kind's default fit from the command line, for one or more source
trees, alternated run by run (issue 50: a refactor must not make any kind's default fit slower).

The fits are the README Quickstart's (bench/cli_latency.py's FITS: the table's with
`--max-steps 20`, the series' DP copula, the images' DP Gaussian), each in a fresh interpreter
(imports included), `--repeats` times per tree; the table gives the median wall and user + system
CPU seconds, with the load average before and after.

    OMP_NUM_THREADS=1 python bench/default_fit_time.py --src OLD/src --src src --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cli_latency import FITS, dpgan, make_data  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", action="append", required=True, help="a source tree (PYTHONPATH); repeat")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        load_before = os.getloadavg()[0]
        make_data(folder, args.src[0], fit=False)
        for round_ in range(args.repeats):
            for kind, fit_args in FITS.items():
                for index, src in enumerate(args.src):
                    out = f"{kind}-{index}-{round_}"
                    times.setdefault((kind, src), []).append(
                        dpgan(src, ["fit", *fit_args, "--out", out, "--quiet"], folder)
                    )
        load_after = os.getloadavg()[0]
    print(f"# Default fit of each kind: median of {args.repeats} fresh interpreters per tree\n")
    print(
        f"Command: `OMP_NUM_THREADS=1 python bench/default_fit_time.py {' '.join('--src ' + s for s in args.src)} "
        f"--repeats {args.repeats}`; load average {load_before:.2f} before, {load_after:.2f} after.\n"
    )
    header = " | ".join(f"{src}: wall s | {src}: CPU s" for src in args.src)
    print(f"| kind | {header} |")
    print("|---|" + "---|---|" * len(args.src))
    for kind in FITS:
        cells = []
        for src in args.src:
            walls, cpus = zip(*times[(kind, src)])
            cells.append(f"{statistics.median(walls):.2f} | {statistics.median(cpus):.2f}")
        print(f"| {kind} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
