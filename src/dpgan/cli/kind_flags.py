"""Which of `dpgan fit`'s plain flags each data kind reads.

A flag the chosen kind would not read is one clear line before anything is read, never a silent
no-op: a `--checkpoint` that an image fit ignored would leave the user believing the fit could be
resumed, a `--schema` that it ignored that the images were described. One check covers both sorts
of flag: the settings classes' (dpgan.cli.settings_flags.refuse_other_kinds) and the plain ones
listed here; the flags every kind reads
(the budget, the output, the compute and the loop's) are listed in `EVERY_KIND`, and a test checks
that each flag of `dpgan fit` is in one of the two lists.
"""

from __future__ import annotations

import argparse
from typing import Any

from dpgan.cli.settings_flags import flag_name, refuse_other_kinds
from dpgan.errors import InputError

TABLE, SEQUENCE, IMAGE = "table", "sequence", "image"

# dest → (the parser's default, the kinds that read it); the defaults are pinned to the parser by a test
FLAG_KINDS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "schema": (None, (TABLE, SEQUENCE)),
    "bounds": (None, (TABLE, SEQUENCE)),
    "categories": (None, (TABLE, SEQUENCE)),
    "target": (None, (TABLE,)),
    "categorical": (None, (TABLE,)),
    "strict": (False, (TABLE,)),
    "stream": (False, (TABLE,)),
    "memory_budget_mb": (512.0, (TABLE,)),
    "schema_from_data_without_dp": (False, (TABLE,)),
    "keep_identifier_columns": (False, (TABLE,)),
    "public_data": (None, (TABLE,)),
    "public_warm_start_steps": (500, (TABLE,)),
    "checkpoint": (None, (TABLE,)),
    "checkpoint_every": (100, (TABLE,)),
    "condition_column": (None, (TABLE,)),
    "geo": (None, (TABLE,)),
    "recipe": (None, (TABLE, IMAGE)),
    "id_column": (None, (SEQUENCE,)),
    "value_columns": (None, (SEQUENCE,)),
    "time_column": (None, (SEQUENCE,)),
    "length": (None, (SEQUENCE,)),
    "label_column": (None, (SEQUENCE,)),
    "entity_column": (None, (SEQUENCE,)),
    "max_series_per_entity": (1, (SEQUENCE,)),
    "classes": (None, (IMAGE,)),
    "unconditional": (False, (IMAGE,)),
    "image_shape": (None, (IMAGE,)),
    "pixel_range": (None, (IMAGE,)),
}
EVERY_KIND = frozenset(
    {
        "command", "func", "data", "kind", "epsilon", "delta", "accountant", "noise_multiplier", "seed",
        "quiet", "out", "overwrite", "threads", "verbose", "device", "epochs", "batch_size", "max_steps",
        "max_examples",
    }
)  # fmt: skip


def refuse_unread_flags(args: argparse.Namespace, kind: str) -> None:
    """One line naming the first flag given (away from its default) that `kind` does not read: the
    settings classes' flags first (another kind's class), then the plain flags of `FLAG_KINDS`."""
    refuse_other_kinds(args, kind)
    for dest, (default, kinds) in FLAG_KINDS.items():
        if kind not in kinds and getattr(args, dest, default) != default:
            readers = " or ".join(f"--kind {k}" for k in kinds)
            raise InputError(f"{flag_name(dest)} applies to {readers}, not to --kind {kind}")


__all__ = ["EVERY_KIND", "FLAG_KINDS", "refuse_unread_flags"]
