"""Issue 53, series and images: `sample_to` (what `dpgan sample` runs) at 10k, 100k and 1M units.

A small model of each kind is fitted and saved once (series: the default "gaussian-copula" on the
water districts at ε = 3, 24 hourly inflows; images: the default "gaussian" recipe on the 1,797
8×8 digits at ε = 3), then each sample runs in a child process of its own that loads the model and
streams n units to disk (series: a Parquet long table, 24 rows per series; images: an .npz and its
contact sheet), or (`--memory-sizes`) samples them whole and then writes them, as before; each
reports its wall time and its peak resident memory (resource.getrusage(RUSAGE_SELF).ru_maxrss, and
the baseline once the model is loaded). One thread (OMP_NUM_THREADS=1).

    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/sample_growth_kinds.py --out bench/results/sample_growth_kinds.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = (10_000, 100_000, 1_000_000)


def fit_models(folder: Path) -> None:
    import numpy as np
    from sklearn.datasets import load_digits

    from dpgan import ImageSynthesizer, SequenceSynthesizer, datasets
    from dpgan.sequences import SequenceSchema, ValueColumn

    water = datasets.load_water_districts()
    schema = SequenceSchema(
        id=("district", "day"), time="hour", length=24, values=(ValueColumn("inflow", 0.0, 200.0),),
        label="district", categories=tuple(sorted(water["district"].unique())),
    )  # fmt: skip
    SequenceSynthesizer(epsilon=3.0, seed=0).fit(water, schema).save(folder / "sequence")
    digits = load_digits()
    images = np.round(digits.images * 255 / 16).astype(np.uint8)
    classes = [str(d) for d in range(10)]
    ImageSynthesizer(epsilon=3.0, seed=0, classes=classes).fit(images, digits.target.astype(str)).save(folder / "image")


def sample(kind: str, model: Path, n: int, out: Path, mode: str = "streamed") -> dict:
    import resource

    import torch

    from dpgan.synthesizers import load_model

    torch.set_num_threads(1)
    synth = load_model(model)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    target = out / ("s.parquet" if kind == "sequence" else "s.npz")
    if mode == "streamed":
        synth.sample_to(target, n, seed=0)
    elif kind == "sequence":  # what `dpgan sample` ran before it streamed: the whole table, then written
        from dpgan.tables.reading.table_io import write_table

        write_table(synth.sample(n, seed=0), target)
    else:
        from dpgan.images.io import write_contact_sheet, write_images

        images, labels = synth.sample(n, seed=0)
        write_images(target, images, labels, pixel_range=synth.pixel_range)
        write_contact_sheet(out / "s.png", images, labels, pixel_range=synth.pixel_range)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"kind": kind, "mode": mode, "n": n, "seconds": round(seconds, 2), "per_minute": round(n / seconds * 60),
            "baseline_mb": round(baseline / 1024, 1), "peak_mb": round(peak / 1024, 1),
            "file_mb": round(target.stat().st_size / 2**20, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument(
        "--memory-sizes", nargs="*", type=int, default=[1_000_000], help="also sampled whole, then written"
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--fit", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fit:
        fit_models(Path(args.fit))
        return
    if args.child:
        kind, model, n, out, mode = args.child
        print(json.dumps(sample(kind, Path(model), int(n), Path(out), mode)))
        return
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    rows = []
    with tempfile.TemporaryDirectory(prefix="sample-growth-kinds-") as tmp:
        folder = Path(tmp)
        subprocess.run([sys.executable, __file__, "--fit", tmp], env=env, check=True, capture_output=True)
        jobs = [(n, "streamed") for n in args.sizes] + [(n, "memory") for n in args.memory_sizes]
        for n, mode in jobs:
            for kind in ("sequence", "image"):
                out = folder / f"{kind}-{n}-{mode}"
                out.mkdir()
                command = [sys.executable, __file__, "--child", kind, str(folder / kind), str(n), str(out), mode]
                done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
                row = json.loads(done.stdout.strip().splitlines()[-1])
                print(json.dumps(row), flush=True)
                rows.append(row)
                for written in out.iterdir():
                    written.unlink()
    if args.out:
        lines = [
            "# Series and images: `sample_to` (`dpgan sample`) at 10k, 100k and 1M units",
            "",
            "Command (one thread; the 2-core machine shared with other jobs):",
            "",
            "    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/sample_growth_kinds.py " + " ".join(sys.argv[1:]),
            "",
            "`streamed`: `sample_to` (what `dpgan sample` runs); `memory`: `sample(n)` whole, then written "
            "(what `dpgan sample` ran before it streamed).",
            "",
            "| kind | mode | n | seconds | units per minute | peak RSS MB | RSS after loading the model MB | file MB |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['kind']} | {r['mode']} | {r['n']:,} | {r['seconds']} | {r['per_minute']:,} | {r['peak_mb']:.0f} | "
            f"{r['baseline_mb']:.0f} | {r['file_mb']} |"
            for r in rows
        ]
        args.out.write_text("\n".join(lines) + "\n")
        args.out.with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    main()
