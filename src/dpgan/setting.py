"""Settings fields the command line shows as flags, declared once beside the setting.

A settings dataclass (the loop's TrainingConfig, a kind's TableSettings, SequenceSettings or
ImageSettings) declares a field with `setting(default, "help")` when a user may set it from the
command line; dpgan.cli.settings_flags turns each such field into a flag (`--pair-budget-fraction`
for `pair_budget_fraction`; a bool becomes `--x/--no-x`) whose help shows the field's default, and
hands the flags the user gave back as keywords of the kind's facade. So a new plug-in setting is a
flag by declaring it, and a flag's default can never drift from the library's. This module and
the settings modules import neither PyTorch nor pandas: the command line checks every flag before
it loads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import Field, field, fields
from typing import Any


def setting(
    default: Any,
    help: str,
    *,
    choices: Sequence[str] | None = None,
    metavar: str | None = None,
    advanced: bool = False,
    shown: str | None = None,
) -> Any:
    """A dataclass field with `default` that the command line offers as a flag with `help` (in the
    help's "advanced" section when `advanced`: a published option, off by default); `shown`: the
    help's words for the default where it is a rule rather than a value."""
    meta = {"help": help, "choices": tuple(choices or ()), "metavar": metavar, "advanced": advanced, "shown": shown}
    return field(default=default, metadata=meta)


def flag_fields(cls: type) -> list[Field]:  # type: ignore[type-arg]
    """The fields of the settings dataclass `cls` declared with `setting`, in declaration order."""
    return [f for f in fields(cls) if "help" in f.metadata]


__all__ = ["flag_fields", "setting"]
