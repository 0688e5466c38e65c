"""`dpgan schema`: a table's schema learned with DP (or a template written from its header alone),
to inspect, edit and reuse with `--schema`. A table command: the table kind's registration
(dpgan.tables.registration) adds it to the parser."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from dpgan.cli.arguments import ACCOUNTANTS, check_budget, table_hints
from dpgan.cli.options import hierarchy_option, hint_options, key_option
from dpgan.cli.tables import parse_hierarchies, parse_keys
from dpgan.errors import InputError
from dpgan.tables.reading.table_io import check_readable


def add_schema_command(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """`dpgan schema` in the parser (`command(name, help)` gives its sub-parser)."""
    schema = command("schema", "learn a schema with DP (or write a template) to inspect, edit and reuse with --schema")
    schema.add_argument("data", help="the private table (.csv or .parquet)")
    schema.add_argument("--epsilon", type=float, help="budget for the schema; a fit with it counts this too")
    schema.add_argument("--delta", type=float, default=1e-5, help="δ for the schema's release")
    schema.add_argument("--accountant", default="pld", choices=ACCOUNTANTS, help="how ε is computed")
    schema.add_argument("--seed", type=int, help="reproducible noise, for experiments only")
    schema.add_argument(
        "--template", action="store_true", help="read only the header (names, declared types): no values, no budget"
    )
    hint_options(schema)
    key_option(schema)
    hierarchy_option(schema)
    schema.add_argument("--out", required=True, help="schema JSON to write")
    schema.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    schema.set_defaults(func=cmd_schema)


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
        hierarchies=parse_hierarchies(args.hierarchy),
        keys=parse_keys(args.key),
    )
    for note in notes:
        print(f"dpgan: note: {note}", file=sys.stderr)
    schema.to_json(out)
    print(
        f"wrote a schema learned with DP (ε={args.epsilon:g}, δ={args.delta:g}) to {out}; a fit with it counts "
        "this purchase in its own ledger. Inspect and edit it freely."
    )
    return 0


__all__ = ["add_schema_command", "cmd_schema"]
