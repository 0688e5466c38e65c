"""Wall time of the default fit a new user runs on a small table: `dpgan fit T.csv --target Y --epsilon 1`.

For each table (the bench tables' train splits, capped at `--max-rows`, and Adult's training file
capped the same way), the split is written as a CSV and the command line is run as a user runs it
(a fresh process: import, reading, the DP schema, the plug-ins, training, saving), `--rounds` times,
the tables interleaved round by round so a busy spell of the machine falls on every table alike.
Reported per table: rows, columns, the median and the range of the wall seconds, and the private
steps and 2-way releases the fit made (its model's record). Threads: the CLI's default (auto), unless
`--threads` is given. The goal (issue 33): a table of at most 10,000 rows in 60 s or less on 2 cores.

    cd bench && python fit_time.py --tables hmda chile churn flchain loans sacramento adult --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from dpgan import datasets
from tables import TABLES, split

RESULTS = Path(__file__).resolve().parent / "results" / "fit_time.jsonl"
SRC = Path(__file__).resolve().parent.parent / "src"


def train_rows(name: str, cap: int) -> tuple[pd.DataFrame, str]:
    """The table's train split (Adult: its training file), at most `cap` rows, and its target."""
    if name == "adult":
        frame, _ = datasets.load_adult()
        return frame.sample(n=min(cap, len(frame)), random_state=0).reset_index(drop=True), "income"
    return split(name, cap, 1)["train"], TABLES[name].target


def run_fit(csv: Path, target: str, out: Path, seed: int, threads: str | None) -> tuple[float, dict]:
    command = [sys.executable, "-m", "dpgan", "fit", str(csv), "--target", target, "--epsilon", "1"]
    command += ["--seed", str(seed), "--out", str(out), "--overwrite", "--quiet"]
    if threads is not None:
        command += ["--threads", threads]
    env = {**os.environ, "PYTHONPATH": str(SRC), "PYTHONWARNINGS": "ignore"}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{csv.name}: the fit failed: {done.stderr.strip()[-400:]}")
    meta = json.loads((out / "model.json").read_text())
    pairs = next((e.get("count") for e in meta["ledger"] if "2-way" in e.get("name", "")), 0)
    return seconds, {"steps": meta["training"].get("steps"), "pair_releases": pairs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="+", default=["hmda", "chile", "churn", "flchain", "loans", "adult"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-rows", type=int, default=10_000)
    parser.add_argument("--threads", help="passed to the CLI (default: its own, auto)")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tables = {}
        for name in args.tables:
            frame, target = train_rows(name, args.max_rows)
            csv = folder / f"{name}.csv"
            frame.to_csv(csv, index=False)
            tables[name] = (csv, target, frame.shape)
        times: dict[str, list[float]] = {name: [] for name in tables}
        facts: dict[str, dict] = {}
        for round_ in range(args.rounds):
            for name, (csv, target, _) in tables.items():
                seconds, facts[name] = run_fit(csv, target, folder / f"m_{name}", round_, args.threads)
                times[name].append(seconds)
                print(f"round {round_} {name}: {seconds:.1f} s", flush=True)
    rows = []
    for name, (_, _, shape) in tables.items():
        row = {
            "table": name,
            "rows": shape[0],
            "columns": shape[1],
            "median_seconds": round(statistics.median(times[name]), 1),
            "seconds": [round(t, 1) for t in times[name]],
            "threads": args.threads or "auto",
            "cpus": os.cpu_count(),
            **facts[name],
        }
        rows.append(row)
    with Path(args.out).open("a") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    print("| table | rows | columns | median s | range s | steps | 2-way releases |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        low, high = min(row["seconds"]), max(row["seconds"])
        print(
            f"| {row['table']} | {row['rows']:,} | {row['columns']} | {row['median_seconds']} | {low}–{high} | "
            f"{row['steps']} | {row['pair_releases']} |"
        )


if __name__ == "__main__":
    main()
