"""`dpgan fit` (each kind's own part: its registration, dpgan.kinds).

A model's destination is checked before any private row is read."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from dpgan import kinds
from dpgan.cli.arguments import check_budget, chosen_model, loop_settings
from dpgan.cli.kind_flags import refuse_unread_flags
from dpgan.cli.settings_flags import given_settings, settings_classes
from dpgan.errors import InputError


def cmd_fit(args: argparse.Namespace, defaults: Mapping[str, Any]) -> int:
    """`dpgan fit`: the kind's registration (dpgan.kinds) runs it, once every flag the kind would not
    read is refused (`defaults`: the fit parser's, which tell a flag given from one not)."""
    check_budget(args)
    kind = kinds.kind(args.kind)
    if not kind.distributed and int(os.environ.get("WORLD_SIZE") or 1) > 1:
        alone = kinds.in_words([k.distributed_words or k.noun for k in kinds.kinds() if k.distributed])
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
