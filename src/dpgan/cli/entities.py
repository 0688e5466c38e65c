"""The entity kind's commands (registered in dpgan.entities.registration): its fit flags, `dpgan fit
--kind entity`, `dpgan sample` on an entity model and `dpgan evaluate --kind entity`.

A model's destination is checked before any private row is read; every argument before pandas or
PyTorch load."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpgan.cli.arguments import check_file, chosen_model, parse_bounds, parse_categories
from dpgan.cli.options import key_option
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
        help="entities: number, integer, or a strftime format such as %%Y-%%m-%%dT%%H:%%M:%%SZ (default: number "
        "with a window; without one, the format and window are learned with DP)",
    )


def fit_command(args: argparse.Namespace, settings: dict[str, Any]) -> int:
    """`dpgan fit PARENTS --kind entity --events EVENTS --key COLUMN [--time-column C [--time-min T
    --time-max T] [--time-format F]] [--schema S.json | --categories ... --bounds ...]`; a table without
    a schema or a hint, and a time column without its window, are learned with DP."""
    parents_path = check_readable(args.data)
    if args.events is None:
        raise InputError("--kind entity needs the events table: --events EVENTS.csv")
    events_path = check_readable(args.events)
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
    synth.fit(read_private_table(parents_path), read_private_table(events_path), **public)
    synth.save(out, overwrite=args.overwrite)
    report = synth.privacy_report()
    print(f"saved model to {out}: ε={report['epsilon']:.4f}, δ={report['delta']:g} ({report['accountant']})")
    print(f"unit of privacy: {report['unit_of_privacy']}")
    if report["dp_schema"]:
        print(f"schema: {report['schema_source']}")
    print(f"{synth.unit_summary()} (noisy counts)")
    return 0


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
    from dpgan.tables.reading.table_io import write_table

    synth = kind_of_model(args.model).load("facade").load(args.model)
    parents, events = synth.sample(args.n, seed=args.seed)
    parents_path.parent.mkdir(parents=True, exist_ok=True)
    write_table(parents, parents_path)
    write_table(events, events_path)
    print(f"wrote {len(parents)} entities to {parents_path} and their {len(events)} events to {events_path}")
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    """`dpgan evaluate --kind entity`: not in this step (bench/entities.py measures the kind)."""
    raise InputError("dpgan evaluate --kind entity is not available yet: bench/entities.py scores entity models")


__all__ = ["add_fit_flags", "evaluate_command", "fit_command", "sample_command", "sample_outputs"]
