"""The series kind's commands (registered in dpgan.sequences.registration): its fit flags, `dpgan
fit --kind sequence`, `dpgan sample` on a series model and `dpgan evaluate --kind sequence`.

A model's destination is checked before any private row is read; every argument before PyTorch
or pandas load."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpgan.cli.arguments import (
    check_file,
    check_model_dir,
    chosen_model,
    column_names,
    parse_bounds,
    parse_categories,
    parse_conditions,
)
from dpgan.cli.output import ProgressBar, short
from dpgan.cli.tables import check_table_output
from dpgan.errors import InputError
from dpgan.serialization import check_model_destination
from dpgan.tables.reading.table_io import check_readable


def add_fit_flags(series: argparse._ArgumentGroup, add_settings: Callable[[], None]) -> None:
    """The fit help's series section: the settings' flags, then the columns' roles."""
    add_settings()
    series.add_argument("--id-column", help="the column naming each series, or several (district,day) that do together")
    series.add_argument(
        "--value-columns", help="the measured columns A,B,... (default: every column that has no other role)"
    )
    series.add_argument("--time-column", help="the column ordering readings within a series")
    series.add_argument("--length", type=int, help="readings per series (others are dropped, counted)")
    series.add_argument(
        "--label-column",
        help="a label constant along each series (public labels: --categories L=A,B; else released with DP)",
    )
    series.add_argument("--entity-column", help="protect every series of one owner together")
    series.add_argument("--max-series-per-entity", type=int, default=1, help="series kept per entity (public)")


def fit_command(args: argparse.Namespace, settings: dict[str, Any]) -> int:
    """`dpgan fit --kind sequence`: a long table of series (one row per reading) with a sequence
    schema, or the columns' roles given as options; bounds and labels not given (--bounds,
    --categories, or null in the schema) are estimated with DP in the fit's ledger. `settings`: the
    loop's and the series' settings flags the user gave."""
    if Path(args.data).suffix.lower() == ".npy":
        return fit_file_command(args, settings)
    torchrun = int(os.environ.get("WORLD_SIZE") or 1) > 1
    blocked = Path(args.data).is_dir() or (torchrun and Path(args.data).suffix.lower() == ".parquet")
    data_path = Path(args.data) if blocked else check_readable(args.data)
    schema_path = check_file(args.schema, "schema file") if args.schema else None
    out = check_model_destination(args.out, args.overwrite)  # before any private row is read
    bounds, categories = parse_bounds(args.bounds), parse_categories(args.categories)
    if schema_path is not None and (bounds or categories):
        raise InputError("--bounds and --categories describe series without a schema: write them into it")
    if torchrun and not blocked:
        raise InputError("a series fit under torchrun reads an .npy file or a Parquet long table in blocks")

    from dpgan.sequences.long_parquet import LongParquet
    from dpgan.sequences.schema import SequenceSchema, schema_from_options
    from dpgan.tables.reading.table_io import read_header

    source = LongParquet.open(data_path) if blocked else None  # a folder of parts: grouped in buckets
    if schema_path is not None:
        schema = SequenceSchema.from_json(schema_path)
    else:
        names = source.columns() if source is not None else read_header(data_path)[0]
        schema = schema_from_options(
            names,
            id=column_names(args.id_column, "--id-column"),
            time=args.time_column,
            length=args.length,
            bounds=bounds,
            label=args.label_column,
            categories=categories,
            entity=args.entity_column,
            max_series_per_entity=args.max_series_per_entity,
            value_columns=column_names(args.value_columns, "--value-columns"),
        )

    from dpgan.tables.reading.table_io import read_private_table

    synth = new_synthesizer(args, settings)
    if source is not None:
        return fit_blocks(args, synth, source, schema, out)
    synth.fit(read_private_table(data_path), schema, progress=ProgressBar(not args.quiet, args.accountant))
    synth.save(out, overwrite=args.overwrite)
    print_fitted(synth, out)
    return 0


def new_synthesizer(args: argparse.Namespace, settings: dict[str, Any]) -> Any:
    from dpgan.synthesizers import SequenceSynthesizer

    return SequenceSynthesizer(
        epsilon=args.epsilon,
        delta=args.delta,
        accountant=args.accountant,
        seed=args.seed,
        noise_multiplier=args.noise_multiplier,
        device=args.device,
        threads=args.threads,
        **({} if chosen_model(args) is None else {"model": chosen_model(args)}),
        **settings,
    )


def fit_file_command(args: argparse.Namespace, settings: dict[str, Any]) -> int:
    """`dpgan fit --kind sequence --data S.npy`: an (N, T[, F]) array of unlabelled series read by
    memory map in blocks (dpgan.sequences.series_file), with a statistics model; its T and F are
    public, its bounds bought with DP (or --schema). Under torchrun every rank reads its share of
    the blocks and holds the one-process model; rank 0 alone prints and writes."""
    schema_path = check_file(args.schema, "schema file") if args.schema else None
    out = check_model_destination(args.out, args.overwrite)  # before any private row is read
    roles = (args.id_column, args.time_column, args.value_columns, args.length, args.label_column, args.entity_column)
    if args.bounds or args.categories or any(r is not None for r in roles):
        raise InputError("an .npy of series takes no --bounds, --categories or column roles: give bounds in a --schema")

    from dpgan.sequences.schema import SequenceSchema
    from dpgan.sequences.series_file import SeriesFile

    schema = SequenceSchema.from_json(schema_path) if schema_path is not None else None
    synth = new_synthesizer(args, settings)  # its settings checked before the file is opened
    return fit_blocks(args, synth, SeriesFile.open(args.data), schema, out)


def fit_blocks(args: argparse.Namespace, synth: Any, source: Any, schema: Any, out: Path) -> int:
    """A fit of series read in blocks (dpgan.sequences.series_file), on this process or this rank:
    under torchrun rank 0 alone prints and writes."""
    from dpgan.privacy.distributed import rank_session

    with rank_session(device=str(synth.device)) as context:
        synth.fit(source, schema, progress=ProgressBar(not args.quiet and context.is_main, args.accountant))
        if context.is_main:
            synth.save(out, overwrite=args.overwrite)
            print_fitted(synth, out)
    return 0


def print_fitted(synth: Any, out: Path) -> None:
    report = synth.privacy_report()
    print(f"saved model to {out}: ε={report['epsilon']:.4f}, δ={report['delta']:g} ({report['accountant']})")
    print(f"unit of privacy: {report['unit_of_privacy']}")
    if report["dp_schema"]:
        print(f"schema: {report['schema_source']}")
    print(f"{synth.unit_summary()} (noisy counts)")


def sample_command(args: argparse.Namespace) -> int:
    """`dpgan sample` on a series model: -n series, written as a long table."""
    out = check_table_output(args)
    conditions = parse_conditions(args.condition)
    from dpgan.synthesizers import load_model

    synth: Any = load_model(args.model)
    if args.region_points:
        raise InputError("--region-points applies to table models")
    label = None
    if conditions:
        column, label = next(iter(conditions.items()))
        if len(conditions) > 1 or column != synth.schema.label:
            raise InputError("a sequence model takes one --condition, on its label column")
    _, rows = synth.sample_to(out, args.n, seed=args.seed, label=label)  # streamed: memory flat in -n
    print(f"wrote {args.n} series ({rows} rows) to {out}")
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    """`dpgan evaluate --kind sequence`: three long tables of series, the schema from --schema or
    the --model that made the synthetic ones; writes metrics.json and report.html."""
    for path in (args.real, args.synthetic, args.test):
        check_readable(path)
    if args.model is None and args.schema is None:
        raise InputError("--kind sequence needs the sequence schema: --schema S.json or --model MODEL_DIR")
    if args.model is not None:
        check_model_dir(args.model)

    from dpgan.evaluation.evaluate import save_metrics
    from dpgan.evaluation.headline import headline_line
    from dpgan.evaluation.sequences.metrics import evaluate_sequences
    from dpgan.evaluation.sequences.report import write_sequence_report
    from dpgan.sequences.codec import label_names, read_long, unscale
    from dpgan.sequences.schema import SequenceSchema
    from dpgan.synthesizers import SequenceSynthesizer, load_model
    from dpgan.tables.reading.table_io import read_table

    model = load_model(args.model) if args.model is not None else None
    if model is not None and not isinstance(model, SequenceSynthesizer):
        raise InputError("--model is a table model; --kind sequence needs a sequence model")
    schema = SequenceSchema.from_json(check_file(args.schema, "schema file")) if args.schema else model.schema  # type: ignore[union-attr]
    assert schema is not None
    arrays, labels = [], []
    for path in (args.real, args.synthetic, args.test):
        series = read_long(read_table(path), schema)
        arrays.append(unscale(series.values, schema))
        labels.append(label_names(series.labels, schema))
    metrics = evaluate_sequences(
        *arrays, real_labels=labels[0], synthetic_labels=labels[1], test_labels=labels[2], seed=args.seed
    )
    if model is not None:
        metrics["privacy"] = model.privacy_report() | {"model_dir": str(args.model)}
    out = Path(args.out)
    metrics_path = save_metrics(metrics, out / "metrics.json")
    report_path = write_sequence_report(out / "report.html", metrics, *arrays, schema.value_names)
    dtw = metrics["dtw_nearest"]
    print(f"wrote {metrics_path} and {report_path}")
    print(headline_line(metrics))
    print(
        f"DTW to the nearest real series: synthetic {short(dtw['synthetic_mean'])}, "
        f"held-out floor {short(dtw['heldout_mean'])}; membership AUC {short(metrics['membership_auc'])}"
    )
    return 0


__all__ = ["add_fit_flags", "evaluate_command", "fit_command", "sample_command"]
