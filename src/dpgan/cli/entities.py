"""The entity kind's commands (registered in dpgan.entities.registration): its fit flags, `dpgan fit
--kind entity`, `dpgan sample` on an entity model and `dpgan evaluate --kind entity`.

A model's destination is checked before any private row is read; every argument before pandas or
PyTorch load."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpgan.cli.arguments import check_file, check_model_dir, chosen_model, parse_bounds, parse_categories
from dpgan.cli.options import key_option
from dpgan.cli.output import StageProgress, short
from dpgan.errors import InputError
from dpgan.serialization import check_model_destination
from dpgan.tables.reading.table_io import check_readable

TABLE_SUFFIXES = (".csv", ".parquet")


def add_fit_flags(group: argparse._ArgumentGroup, add_settings: Callable[[], None]) -> None:
    """The fit help's entity section: the settings' flags, then the tables' roles."""
    add_settings()
    group.add_argument("--events", metavar="EVENTS", help="the events table (.csv or .parquet), one row per event")
    key_option(group)  # one --key with the table kind's (its key columns): the entity reads one name
    group.add_argument(
        "--max-events", type=int, help="k: events read per entity for the event columns (public; default 32)"
    )
    if "--time-column" not in group._option_string_actions:  # the series' section may have added it (one flag)
        group.add_argument("--time-column", help="the column ordering readings or events")
    group.add_argument("--time-min", metavar="TIME", help="entities: the time window's first time (public)")
    group.add_argument("--time-max", metavar="TIME", help="entities: the time window's last time (public)")
    group.add_argument(
        "--time-format",
        help="entities: number, integer, order (a step index: sampled events numbered from --time-min), or a "
        "strftime format such as %%Y-%%m-%%dT%%H:%%M:%%SZ (default: number with a window; without one, the format "
        "and window are learned with DP)",
    )


def fit_command(args: argparse.Namespace, settings: dict[str, Any]) -> int:
    """`dpgan fit PARENTS --kind entity --events EVENTS --key COLUMN [--time-column C [--time-min T
    --time-max T] [--time-format F]] [--schema S.json | --categories ... --bounds ...]`; a table without
    a schema or a hint, and a time column without its window, are learned with DP. A folder of Parquet
    parts (or, under torchrun, Parquet files) is read in buckets of entities with the schema given
    (dpgan.entities.parquet); under torchrun rank 0 alone prints and writes."""
    if args.events is None:
        raise InputError("--kind entity needs the events table: --events EVENTS.csv")
    blocked = in_buckets(args.data, args.events)
    if blocked:  # checked by the reader: a folder's or a file's footers, one line naming the file
        parents_path, events_path = Path(args.data), Path(args.events)
    else:
        parents_path, events_path = check_readable(args.data), check_readable(args.events)
    schema_path = check_file(args.schema, "schema file") if args.schema else None
    out = check_model_destination(args.out, args.overwrite)  # before any private row is read
    bounds, categories = parse_bounds(args.bounds), parse_categories(args.categories)
    window = (args.time_min, args.time_max)
    if (window[0] is None) != (window[1] is None) or (args.time_column is None and window[0] is not None):
        raise InputError("a time column's public window is --time-min and --time-max, both, with --time-column")
    key = entity_key(args.key)
    if schema_path is None and key is None:
        raise InputError("--kind entity needs --key COLUMN (or --schema with the key)")

    from dpgan.entities.facade import EntitySynthesizer
    from dpgan.tables.reading.table_io import read_private_table

    chosen = chosen_model(args)
    synth = EntitySynthesizer(
        epsilon=args.epsilon, delta=args.delta, accountant=args.accountant, seed=args.seed,
        **({} if chosen is None else {"model": chosen}), **settings,
    )  # fmt: skip
    public: dict[str, Any]
    if schema_path is not None:
        if key or args.time_column or bounds or categories or args.max_events:
            raise InputError("--schema holds the key, the time, k and both tables: drop the other flags")
        public = {"schema": schema_path}
    else:
        public = {"key": key, "categories": categories, "bounds": bounds,
                  "max_events": args.max_events if args.max_events is not None else 32}  # fmt: skip
        if args.time_column is not None:  # without a window: its format and window bought with DP
            public |= {"time_column": args.time_column, "time_bounds": None if window[0] is None else window,
                       "time_format": args.time_format}  # fmt: skip
    if blocked:
        from dpgan.privacy.distributed import rank_session

        with rank_session(device=str(synth.device)) as context:
            synth.fit(parents_path, events_path, **public)
            if context.is_main:
                synth.save(out, overwrite=args.overwrite)
                print_fitted(synth, out)
        return 0
    synth.fit(read_private_table(parents_path), read_private_table(events_path), **public)
    synth.save(out, overwrite=args.overwrite)
    print_fitted(synth, out)
    return 0


def in_buckets(parents: str, events: str) -> bool:
    """Whether the two tables are read in buckets of entities (dpgan.entities.parquet): a folder of
    Parquet parts, or under torchrun Parquet files (public: the paths the user chose, never a size).
    Then both must be Parquet: one line otherwise."""
    paths = [Path(parents), Path(events)]
    torchrun = int(os.environ.get("WORLD_SIZE") or 1) > 1
    if not any(p.is_dir() for p in paths) and not torchrun:
        return False
    for path in paths:
        if not path.is_dir() and path.suffix.lower() != ".parquet":
            why = "under torchrun" if torchrun else "with a folder of parts"
            raise InputError(f"{path.name}: {why}, both tables are read in buckets: give each as a .parquet file "
                             "or a folder of them")  # fmt: skip
    return True


def print_fitted(synth: Any, out: Path) -> None:
    report = synth.privacy_report()
    print(f"saved model to {out}: ε={report['epsilon']:.4f}, δ={report['delta']:g} ({report['accountant']})")
    print(f"unit of privacy: {report['unit_of_privacy']}")
    if report["dp_schema"]:
        print(f"schema: {report['schema_source']}")
    print(f"{synth.unit_summary()} (noisy counts)")


def entity_key(given: list[str] | None) -> str | None:
    """`--key COLUMN` for entities: one column name. The flag is shared with the table kind, where it
    may be given again and take a format (`--key id=uuid`); neither means anything here."""
    if not given:
        return None
    if len(given) > 1 or "=" in given[0]:
        raise InputError("--kind entity takes one --key COLUMN (the column naming each event's entity), no format")
    return given[0]


def sample_outputs(out: str, overwrite: bool) -> tuple[Path, Path]:
    """--out DIR: DIR/parents.csv and DIR/events.csv; --out DIR/NAME.parquet (or .csv): that file for
    the parents and DIR/events.parquet (.csv) beside it."""
    path = Path(out)
    if path.suffix.lower() in TABLE_SUFFIXES:
        parents, events = path, path.with_name(f"events{path.suffix.lower()}")
        if parents.name == events.name:
            raise InputError(f"--out names the parents' file; {events.name} is where the events go: name it otherwise")
    elif path.suffix:
        raise InputError(f"--out is a directory or a .csv / .parquet file for the parents, not {path.name!r}")
    else:
        parents, events = path / "parents.csv", path / "events.csv"
    for file in (parents, events):
        if file.exists() and not overwrite:
            raise InputError(f"{file} exists; pass --overwrite to replace it")
    return parents, events


def sample_command(args: argparse.Namespace) -> int:
    """`dpgan sample MODEL -n N --out DIR` on an entity model: N entities, two linked tables."""
    if args.condition or args.region_points:
        raise InputError("--condition and --region-points apply to table models")
    parents_path, events_path = sample_outputs(args.out, args.overwrite)
    from dpgan.kinds import kind_of_model

    synth = kind_of_model(args.model).load("facade").load(args.model)
    parents_path.parent.mkdir(parents=True, exist_ok=True)
    parents, events = synth.sample_to(parents_path, events_path, args.n, seed=args.seed)  # memory flat in -n
    print(f"wrote {parents} entities to {parents_path} and their {events} events to {events_path}")
    return 0


def synthetic_inputs(synthetic: str, events: str | None) -> tuple[Path, Path]:
    """--synthetic DIR (what `dpgan sample --out DIR` wrote: DIR/parents.csv and DIR/events.csv, or
    their .parquet), or --synthetic PARENTS with its events beside it as sample writes them
    (events.csv / events.parquet) or named by --synthetic-events."""
    path = Path(synthetic)
    if path.is_dir():
        found = [path / f"parents{suffix}" for suffix in TABLE_SUFFIXES if (path / f"parents{suffix}").is_file()]
        if not found:
            raise InputError(f"--synthetic {path} holds no parents.csv or parents.parquet (what dpgan sample writes)")
        parents = found[0]
    else:
        parents = check_readable(path)
    if events is not None:
        return parents, check_readable(events)
    beside = parents.with_name(f"events{parents.suffix.lower()}")
    if beside == parents or not beside.is_file():
        raise InputError(f"no {beside.name} beside {parents}: name the synthetic events with --synthetic-events")
    return parents, beside


OTHER_KINDS_FLAGS = {"classes": "--classes", "audit": "--audit", "attacks": "--attacks",
                     "attack_shadows": "--attack-shadows", "attack_test_runs": "--attack-test-runs",
                     "attack_epochs": "--attack-epochs"}  # fmt: skip


def evaluate_command(args: argparse.Namespace) -> int:
    """`dpgan evaluate --kind entity --real PARENTS --real-events EVENTS --test PARENTS --test-events
    EVENTS --synthetic DIR [--model MODEL | --schema S.json] [--target COLUMN] --out REPORT_DIR`: the
    evaluation in the entity's words (dpgan.evaluation.entities), metrics.json and report.html."""
    given = [flag for dest, flag in OTHER_KINDS_FLAGS.items() if getattr(args, dest, None) not in (None, False)]
    if given:
        raise InputError(f"{', '.join(given)} apply to other kinds; --kind entity always runs its membership "
                         "attack on whole entities")  # fmt: skip
    for flag, value in (("--real-events", args.real_events), ("--test-events", args.test_events)):
        if value is None:
            raise InputError(f"--kind entity needs each side's events table: {flag} EVENTS.csv")
    real = check_readable(args.real), check_readable(args.real_events)
    test = check_readable(args.test), check_readable(args.test_events)
    synthetic = synthetic_inputs(args.synthetic, args.synthetic_events)
    if (args.model is None) == (args.schema is None):
        raise InputError("--kind entity needs the entity schema: --model MODEL_DIR (its schema and ledger) or "
                         "--schema S.json, one of them")  # fmt: skip
    if args.model is not None:
        check_model_dir(args.model)
    schema_path = check_file(args.schema, "schema file") if args.schema is not None else None

    from dpgan.evaluation.entities.metrics import evaluate_entities
    from dpgan.evaluation.entities.report import write_entity_report
    from dpgan.evaluation.evaluate import save_metrics
    from dpgan.evaluation.headline import headline_line
    from dpgan.kinds import kind_of_model
    from dpgan.tables.reading.table_io import read_private_table

    if schema_path is not None:
        from dpgan.entities.schema import EntitySchema

        model: Any = EntitySchema.from_json(schema_path)
    else:
        from dpgan.entities.facade import EntitySynthesizer

        model = kind_of_model(args.model).load("facade").load(args.model)
        if not isinstance(model, EntitySynthesizer):
            raise InputError("--model is not an entity model: --kind entity needs the model that sampled --synthetic")
    pairs = [(read_private_table(p), read_private_table(e)) for p, e in (real, synthetic, test)]
    bar = StageProgress(not args.quiet)
    try:
        metrics = evaluate_entities(*pairs, model, target=args.target, seed=args.seed, n_jobs=args.jobs,
                                    progress=bar)  # fmt: skip
    finally:
        bar.close()
    if metrics.get("privacy") is not None:
        metrics["privacy"]["model_dir"] = str(args.model)
    out = Path(args.out)
    metrics_path = save_metrics(metrics, out / "metrics.json")
    report_path = write_entity_report(out / "report.html", metrics)
    counts, tstr = metrics["events_per_entity"], metrics["tstr"]["mean"]
    auc = next((tstr[m] for m in ("roc_auc", "r2") if m in tstr), {})
    print(f"wrote {metrics_path} and {report_path}")
    print(headline_line(metrics))
    print(f"integrity {'holds' if metrics['integrity']['synthetic']['holds'] else 'BROKEN'}; events per entity KS "
          f"{short(counts['ks_test'], 3)} (floor {short(counts['ks_floor'], 3)}); two-sample AUC "
          f"{short(metrics['two_sample']['auc'], 3)}; TSTR {short(auc.get('tstr'), 3)} vs TRTR "
          f"{short(auc.get('trtr'), 3)}; membership AUC {short(metrics['membership'].get('auc'), 3)}")  # fmt: skip
    return 0


__all__ = ["add_fit_flags", "evaluate_command", "fit_command", "sample_command", "sample_outputs", "synthetic_inputs"]
