"""`dpgan fit` for tables and series, and `dpgan schema` (images: dpgan.cli.images).

A model's destination is checked before any private row is read."""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

from dpgan.cli.arguments import (
    check_budget,
    check_file,
    column_names,
    loop_settings,
    parse_bounds,
    parse_categories,
    synth_kwargs,
    table_hints,
)
from dpgan.cli.kind_flags import refuse_unread_flags
from dpgan.cli.output import ProgressBar, print_report_warning
from dpgan.cli.settings_flags import KIND_SETTINGS, given_settings
from dpgan.errors import DPGanWarning, InputError
from dpgan.recipes import RECIPES
from dpgan.serialization import check_model_destination
from dpgan.tables.reading.table_io import check_readable


def cmd_fit(args: argparse.Namespace) -> int:
    check_budget(args)
    if args.kind != "table" and int(os.environ.get("WORLD_SIZE") or 1) > 1:
        raise InputError("a distributed fit (torchrun) is for tables only: fit series and images in one process")
    refuse_unread_flags(args, args.kind)  # e.g. --gaussian-base on a table, --checkpoint on images: one line
    if args.kind == "sequence":
        return fit_sequence(args)
    if args.kind == "image":
        from dpgan.cli.images import fit_image

        return fit_image(args, loop_settings(args) | given_settings(args, KIND_SETTINGS["image"]))
    if args.recipe is not None and args.recipe not in RECIPES:
        raise InputError(f"--recipe {args.recipe} is an image recipe; table recipes: {', '.join(RECIPES)}")
    from dpgan.tables.reading.parquet_source import ParquetSource, should_stream

    source = ParquetSource(args.data, memory_budget_mb=args.memory_budget_mb)
    # public inputs only: a directory of Parquet files, or --stream (never the file's size: a row could tip it)
    streamed = should_stream(args.data, args.stream)
    if streamed:
        source.files()  # a missing path, an empty directory or a non-Parquet file: refused now
    data_path = source.path if streamed else check_readable(args.data)
    schema_path = check_file(args.schema, "schema file") if args.schema else None
    out = check_model_destination(args.out, args.overwrite)  # before any private row is read
    categorical, bounds, categories = table_hints(args)
    if schema_path is not None and (categorical or bounds or categories):
        raise InputError(
            "--categorical, --categories and --bounds describe a table without a schema: write them into it"
        )

    from dpgan.tables.schema.table import Schema

    schema = Schema.from_json(schema_path) if schema_path is not None else None  # before PyTorch loads

    from dpgan.privacy.distributed import process_group_context
    from dpgan.synthesizers import TabularSynthesizer
    from dpgan.tables.reading.table_io import read_private_table

    synth = TabularSynthesizer(**synth_kwargs(args))  # checks the remaining settings before reading data
    context = process_group_context(
        device=str(synth.device)
    )  # under torchrun: every rank fits, rank 0 alone prints and writes
    try:
        data = source if streamed else read_private_table(data_path)
        return fit_table(args, synth, data, schema, out, context.is_main)
    finally:
        if context.distributed:
            import torch.distributed

            torch.distributed.destroy_process_group()


def fit_table(args: argparse.Namespace, synth: Any, data: Any, schema: Any, out: Path, main: bool) -> int:
    """The table fit of `cmd_fit` on this rank (`main`: the one that prints and writes)."""
    categorical, bounds, categories = table_hints(args)
    if not main:
        warnings.simplefilter("ignore", DPGanWarning)
    synth.fit(
        data,
        schema=schema,
        target=args.target,
        categorical=categorical,
        bounds=bounds,
        categories=categories,
        strict=args.strict,
        keep_identifiers=args.keep_identifier_columns,
        progress=ProgressBar(not args.quiet and main, args.accountant),
        checkpoint=args.checkpoint,
        checkpoint_every=args.checkpoint_every,
        public_data=args.public_data,
        public_warm_start_steps=args.public_warm_start_steps,
    )
    if not main:
        return 0
    synth.save(out, overwrite=args.overwrite)
    report = synth.privacy_report()
    print(f"saved model to {out}: ε={report['epsilon']:.4f}, δ={report['delta']:g} ({report['accountant']})")
    print_report_warning(report)
    return 0


def fit_sequence(args: argparse.Namespace) -> int:
    """`dpgan fit --kind sequence`: a long table of series (one row per reading) with a sequence
    schema, or the columns' roles given as options; bounds and labels not given (--bounds,
    --categories, or null in the schema) are estimated with DP in the fit's ledger."""
    data_path = check_readable(args.data)
    schema_path = check_file(args.schema, "schema file") if args.schema else None
    out = check_model_destination(args.out, args.overwrite)  # before any private row is read
    bounds, categories = parse_bounds(args.bounds), parse_categories(args.categories)
    if schema_path is not None and (bounds or categories):
        raise InputError("--bounds and --categories describe series without a schema: write them into it")

    from dpgan.sequences.schema import SequenceSchema, schema_from_options
    from dpgan.tables.reading.table_io import read_header

    if schema_path is not None:
        schema = SequenceSchema.from_json(schema_path)
    else:
        names, _ = read_header(data_path)
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

    from dpgan.synthesizers import SequenceSynthesizer
    from dpgan.tables.reading.table_io import read_private_table

    settings = loop_settings(args) | given_settings(args, KIND_SETTINGS["sequence"])
    synth = SequenceSynthesizer(
        epsilon=args.epsilon,
        delta=args.delta,
        accountant=args.accountant,
        seed=args.seed,
        noise_multiplier=args.noise_multiplier,
        device=args.device,
        threads=args.threads,
        **settings,
    )
    synth.fit(read_private_table(data_path), schema, progress=ProgressBar(not args.quiet, args.accountant))
    synth.save(out, overwrite=args.overwrite)
    report = synth.privacy_report()
    print(f"saved model to {out}: ε={report['epsilon']:.4f}, δ={report['delta']:g} ({report['accountant']})")
    print(f"unit of privacy: {report['unit_of_privacy']}")
    if report["dp_schema"]:
        print(f"schema: {report['schema_source']}")
    print(f"{synth.unit_summary()} (noisy counts)")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    data_path = check_readable(args.data)
    out = Path(args.out)
    if out.suffix.lower() != ".json":
        raise InputError(f"--out must end in .json, not {out.name!r}")
    if out.exists() and not args.overwrite:
        raise InputError(f"{out} exists; pass --overwrite to replace it")
    if args.template:
        if args.epsilon is not None:
            raise InputError("--template reads no values and spends no budget: drop --epsilon")
        from dpgan.tables.reading.table_io import read_header
        from dpgan.tables.schema.template import schema_template

        names, declared = read_header(data_path)
        out.write_text(json.dumps(schema_template(names, declared, target=args.target), indent=1) + "\n")
        print(
            f"wrote a schema template for {len(names)} columns to {out} (no values read): fill in its kinds and domains"
        )
        return 0
    if args.epsilon is None:
        raise InputError("give --epsilon to learn the schema with DP, or --template to write one to fill in by hand")
    check_budget(args)
    categorical, bounds, categories = table_hints(args)

    from dpgan.tables.fit.preparation import buy_schema
    from dpgan.tables.reading.table_io import read_private_table

    schema, notes = buy_schema(
        read_private_table(data_path),
        epsilon=args.epsilon,
        delta=args.delta,
        accountant=args.accountant,
        target=args.target,
        categorical=categorical,
        bounds=bounds,
        categories=categories,
        seed=args.seed,
    )
    for note in notes:
        print(f"dpgan: note: {note}", file=sys.stderr)
    schema.to_json(out)
    print(
        f"wrote a schema learned with DP (ε={args.epsilon:g}, δ={args.delta:g}) to {out}; a fit with it counts "
        "this purchase in its own ledger. Inspect and edit it freely."
    )
    return 0
