"""`dpgan fit` (each kind's own part: its registration, dpgan.kinds) and `dpgan schema`.

A model's destination is checked before any private row is read."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpgan import kinds
from dpgan.cli.arguments import check_budget, chosen_model, loop_settings, parse_hierarchies, parse_keys, table_hints
from dpgan.cli.kind_flags import refuse_unread_flags
from dpgan.cli.settings_flags import given_settings, settings_classes
from dpgan.errors import InputError
from dpgan.tables.reading.table_io import check_readable


def cmd_fit(args: argparse.Namespace, defaults: Mapping[str, Any]) -> int:
    """`dpgan fit`: the kind's registration (dpgan.kinds) runs it, once every flag the kind would not
    read is refused (`defaults`: the fit parser's, which tell a flag given from one not)."""
    check_budget(args)
    kind = kinds.kind(args.kind)
    if not kind.distributed and int(os.environ.get("WORLD_SIZE") or 1) > 1:
        alone = kinds.in_words([k.noun for k in kinds.kinds() if k.distributed])
        others = kinds.in_words([k.noun for k in kinds.kinds() if not k.distributed])
        raise InputError(f"a distributed fit (torchrun) is for {alone} only: fit {others} in one process")
    refuse_unread_flags(args, kind, defaults)  # e.g. --gaussian-base on a table, --checkpoint on images: one line
    args.model = checked_model(args, kind)
    return int(kind.load("fit")(args, loop_settings(args) | given_settings(args, settings_classes(kind))))


def checked_model(args: argparse.Namespace, kind: kinds.Kind) -> str | None:
    """The model --model (or --recipe, its other word) names, one of `kind`'s (its registration's
    models), checked before anything is read; None: the kind's default."""
    name = chosen_model(args)
    if name is None:
        return None
    names = [m.name for m in kind.model_entries()]
    if name not in names:
        flag = "--model" if args.model is not None else "--recipe"
        others = [k.name for k in kinds.kinds() if k is not kind and name in [m.name for m in k.model_entries()]]
        where = f"; {name} is a model of {kinds.in_words([f'--kind {o}' for o in others])}" if others else ""
        known = ", ".join(names) or "none"
        raise InputError(f"{flag} {name} is not a model of --kind {kind.name} (its models: {known}){where}")
    return name


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
