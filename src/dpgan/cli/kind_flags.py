"""Which of `dpgan fit`'s plain flags each data kind reads.

A flag the chosen kind would not read is one clear line before anything is read, never a silent
no-op: a `--checkpoint` that an image fit ignored would leave the user believing the fit could be
resumed, a `--schema` that it ignored that the images were described. One check covers both sorts
of flag: the settings classes' (dpgan.cli.settings_flags.refuse_other_kinds) and the plain ones,
which each kind's registration lists (dpgan.kinds: `Kind.flags`); the flags every kind reads (the
budget, the output, the compute and the loop's) are listed in `EVERY_KIND`, and a test checks that
each flag of `dpgan fit` is in one of the two.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from dpgan import kinds
from dpgan.cli.settings_flags import flag_name, refuse_other_kinds
from dpgan.errors import InputError

EVERY_KIND = frozenset(
    {
        "command", "func", "data", "kind", "epsilon", "delta", "accountant", "noise_multiplier", "seed",
        "quiet", "out", "overwrite", "threads", "verbose", "device", "epochs", "batch_size", "max_steps",
        "max_examples", "model",
    }
)  # fmt: skip


def flag_readers() -> dict[str, tuple[str, ...]]:
    """dest → the kinds that read it, for every plain fit flag some kind's registration lists."""
    readers: dict[str, tuple[str, ...]] = {}
    for kind in kinds.kinds():
        for dest in kind.flags:
            readers[dest] = (*readers.get(dest, ()), kind.name)
    return readers


def parser_defaults(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """Each flag's default in `parser` (dest → default): a flag is given when its value is not."""
    return {action.dest: action.default for action in parser._actions}


def refuse_unread_flags(args: argparse.Namespace, kind: kinds.Kind, defaults: Mapping[str, Any]) -> None:
    """One line naming the first flag given (away from its default in `defaults`, the parser's)
    that `kind` does not read: the settings classes' flags first (another kind's class), then the
    plain flags."""
    refuse_other_kinds(args, kind)
    for dest, readers in flag_readers().items():
        if kind.name not in readers and getattr(args, dest, None) != defaults.get(dest):
            said = " or ".join(f"--kind {k}" for k in readers)
            raise InputError(f"{flag_name(dest)} applies to {said}, not to --kind {kind.name}")


__all__ = ["EVERY_KIND", "flag_readers", "parser_defaults", "refuse_unread_flags"]
