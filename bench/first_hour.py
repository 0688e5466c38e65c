"""The README's two commands as a new user meets them: a fresh clone, `make demo`, `make test`.

Each round clones the repository (the committed HEAD) into a new folder and times, in order,
`make install` (the first install: a new venv, PyTorch's CPU wheel from pip's cache or index),
`make demo`, `make install-test` and `make test`, each as a user types it. A round runs idle, or
with one busy process (a pure-Python loop on one core, as another user's job would be) started
before the clone and stopped after the last command. Rounds alternate idle and loaded, so a slow
period of the machine falls on both. Results: one JSON line per command to --out, and a table on
stdout.

    python bench/first_hour.py --rounds 1 --out bench/results/first_hour.jsonl

Nothing else should run on the machine meanwhile: the "idle" rows mean it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("install", "demo", "install-test", "test")


def busy_loop() -> None:  # pragma: no cover - runs in a child process until terminated
    while True:
        pass


def run_round(load: str, keep: bool, commands: tuple[str, ...] = COMMANDS) -> list[dict[str, object]]:
    """Clone, then time each make target; returns one record per command."""
    folder = Path(tempfile.mkdtemp(prefix="dpgan-first-hour-"))
    busy = multiprocessing.Process(target=busy_loop, daemon=True) if load == "loaded" else None
    if busy is not None:
        busy.start()
    records: list[dict[str, object]] = []
    try:
        subprocess.run(["git", "clone", "-q", str(ROOT), str(folder / "dpgan")], check=True)
        head = subprocess.run(
            ["git", "-C", str(folder / "dpgan"), "rev-parse", "--short", "HEAD"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "DPGAN_THREADS")}
        for target in commands:
            start = time.perf_counter()
            done = subprocess.run(
                ["make", target], cwd=folder / "dpgan", env=env, capture_output=True, text=True, check=False
            )
            seconds = time.perf_counter() - start
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            record = {"command": f"make {target}", "load": load, "seconds": round(seconds, 1), "rc": done.returncode}
            records.append({**record, "commit": head, "tail": tail})
            print(json.dumps(record), flush=True)
            if done.returncode != 0:
                break
    finally:
        if busy is not None:
            busy.terminate()
            busy.join()
        if not keep:
            subprocess.run(["rm", "-rf", str(folder)], check=False)
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="idle/loaded pairs")
    parser.add_argument("--loads", default="idle,loaded", help="which loads, in order within a round")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "first_hour.jsonl")
    parser.add_argument("--keep", action="store_true", help="keep the clones")
    parser.add_argument("--commands", default=",".join(COMMANDS), help="the make targets, in order")
    args = parser.parse_args()
    machine = {"cores": os.cpu_count(), "python": platform.python_version(), "date": time.strftime("%Y-%m-%d")}
    all_records = []
    for _ in range(args.rounds):
        for load in args.loads.split(","):
            all_records += run_round(load, args.keep, tuple(args.commands.split(",")))
    with args.out.open("a", encoding="utf-8") as fh:
        for record in all_records:
            fh.write(json.dumps({**record, **machine}) + "\n")
    print("| command | load | seconds |\n|---|---|---|")
    for record in all_records:
        print(f"| {record['command']} | {record['load']} | {record['seconds']} |")
    return 0 if all(r["rc"] == 0 for r in all_records) else 1


if __name__ == "__main__":
    sys.exit(main())
