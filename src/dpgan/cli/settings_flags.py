"""The fit's per-kind flags, generated from the settings dataclasses (dpgan.setting).

Each field a settings class declares with `setting(default, help)` becomes one flag: `--name-with-
dashes`; a bool becomes `--x/--no-x`; a field with choices takes one of them; a number takes a
number. The help shows the field's default, and a recipe's own default where a recipe's plug-ins
change it ("default: off; dtgan-g: on"), read from the same records the library uses, so a help
line cannot drift from the library. Every generated flag defaults to None: only the flags the user
gave reach the facade (`given_settings`), and a flag of another data kind is refused with one line
(`refuse_other_kinds`), before pandas or PyTorch load. Which classes a kind takes is its registration's
(dpgan.kinds: `Kind.settings`); the loop's (TrainingConfig) are every kind's.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import MISSING
from typing import Any

from dpgan import kinds
from dpgan.errors import InputError
from dpgan.recipes import RECIPES
from dpgan.recipes.images import IMAGE_RECIPES
from dpgan.setting import flag_fields
from dpgan.training.config import TrainingConfig


def settings_classes(kind: kinds.Kind) -> tuple[type, ...]:
    """The settings classes whose flags `kind`'s fit takes: the loop's, then the kind's own."""
    return (TrainingConfig, *(kinds.load(path) for path in kind.settings))


def flag_name(name: str) -> str:
    """A setting's or an argument's name as its flag: `max_steps` → `--max-steps`."""
    return "--" + name.replace("_", "-")


def shown(value: Any) -> str:
    """A default as the help shows it: on/off, a number, a name; None (the recipe's, which the help
    lists after it) is off unless a recipe sets it."""
    if value is None:
        return "off"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def recipe_defaults(name: str) -> str:
    """ "; dtgan-g: on" for the recipes whose plug-ins set `name` (tables' and images' recipes)."""
    recipes = [*RECIPES.values(), *IMAGE_RECIPES.values()]
    said = [f"{r.name}: {shown(r.plugins[name])}" for r in recipes if name in r.plugins]
    return "".join(f"; {item}" for item in said)


def add_settings_flags(
    group: argparse._ArgumentGroup, cls: type, seen: set[str], advanced: argparse._ArgumentGroup | None = None
) -> None:
    """One flag per field of `cls` declared with `setting` (an advanced one in `advanced` when the
    command has that section); `seen` guards against a name that two settings classes would both
    declare (the parser would refuse it later, less clearly)."""
    for field in flag_fields(cls):
        if field.name in seen:
            raise RuntimeError(f"internal error: two settings classes declare the flag {flag_name(field.name)}")
        seen.add(field.name)
        default = None if field.default is MISSING else field.default
        meta = field.metadata
        said = meta["shown"] if meta["shown"] is not None else shown(default)
        text = f"{meta['help']} (default: {said}{recipe_defaults(field.name)})".replace("%", "%%")
        flag = flag_name(field.name)
        place = advanced if meta["advanced"] and advanced is not None else group
        if isinstance(default, bool) or "bool" in str(field.type):
            place.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=text)
        elif meta["choices"]:
            place.add_argument(flag, choices=list(meta["choices"]), default=None, help=text)
        else:
            kind = int if isinstance(default, int) or str(field.type).startswith("int") else float
            place.add_argument(flag, type=kind, default=None, metavar=meta["metavar"], help=text)


def add_kind_flags(groups: Mapping[str, argparse._ArgumentGroup], *, own_flags: bool = True) -> None:
    """Each kind's flags in its help section, for the sections the command has (`demo` fits tables
    only): the loop's settings in "advanced", then each kind's settings classes and (`own_flags`)
    its own flags, placed by its registration's `add_flags`."""
    seen: set[str] = set()
    advanced = groups.get("advanced")
    if advanced is not None:
        add_settings_flags(advanced, TrainingConfig, seen, advanced)
    for kind in kinds.kinds():
        group = groups.get(kind.section[0])
        if group is None:
            continue

        def add_settings(kind: kinds.Kind = kind, group: argparse._ArgumentGroup = group) -> None:
            for cls in settings_classes(kind)[1:]:
                add_settings_flags(group, cls, seen, advanced)

        if own_flags and kind.add_flags is not None:
            kind.load("add_flags")(group, add_settings)
        else:
            add_settings()


def given_settings(args: argparse.Namespace, classes: Sequence[type]) -> dict[str, Any]:
    """The flags of `classes` the user gave, as the facade's keywords."""
    return {
        field.name: getattr(args, field.name)
        for cls in classes
        for field in flag_fields(cls)
        if getattr(args, field.name, None) is not None
    }


def refuse_other_kinds(args: argparse.Namespace, kind: kinds.Kind) -> None:
    """One line for a flag that belongs to another data kind's settings (`--gaussian-base` on a table)."""
    own = settings_classes(kind)
    for other in kinds.kinds():
        for cls in settings_classes(other):
            if cls in own:
                continue
            given = [flag_name(f.name) for f in flag_fields(cls) if getattr(args, f.name, None) is not None]
            if given:
                raise InputError(f"{', '.join(given)} apply to --kind {other.name}, not to --kind {kind.name}")


__all__ = ["add_kind_flags", "flag_name", "given_settings", "refuse_other_kinds", "settings_classes"]
