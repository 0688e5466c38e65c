"""The command line's argument checks and parsers: every flag is checked here, before PyTorch,
pandas or the data load, so a typo costs a second, not a wasted fit and its budget."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from dpgan.errors import InputError
from dpgan.privacy.epsilon_range import check_target_epsilon

ACCOUNTANTS = ("pld", "rdp", "rdp-classic")


MAX_SAMPLE_ROWS = 100_000_000


def positive(value: float | None, flag: str, *, integer: bool = False) -> None:
    if value is None:
        return
    if not math.isfinite(value) or value <= 0 or (integer and int(value) != value):
        kind = "a positive whole number" if integer else "a positive number"
        raise InputError(f"{flag} must be {kind}, not {value:g}")


LOOP_FLAGS = ("epochs", "max_steps", "max_examples", "batch_size")  # fit flags that are the loop's settings, by name


def loop_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The loop's settings the user gave as flags (--epochs, --max-steps, --max-examples, --batch-size)."""
    return {key: getattr(args, key) for key in LOOP_FLAGS if getattr(args, key, None) is not None}


def chosen_model(args: argparse.Namespace) -> str | None:
    """The model --model names, or --recipe (its other word, for tables and images); both, naming
    two models, is one line; None: neither (the kind's default)."""
    from dpgan.model_catalog import one_name

    return one_name(getattr(args, "model", None), getattr(args, "recipe", None), ("--model", "--recipe"))


def check_budget(args: argparse.Namespace) -> None:
    epsilon = getattr(args, "epsilon", None)
    if epsilon is not None:
        if not epsilon > 0:  # zero, negative or nan; an infinite ε is told the supported range
            positive(epsilon, "--epsilon")
        check_target_epsilon(epsilon, "--epsilon")
    delta = getattr(args, "delta", None)
    if delta is not None and not 0.0 < delta < 1.0:
        raise InputError(f"--delta must be in (0, 1), not {delta:g}")
    positive(getattr(args, "epochs", None), "--epochs")
    positive(getattr(args, "batch_size", None), "--batch-size", integer=True)
    positive(getattr(args, "noise_multiplier", None), "--noise-multiplier")


def check_file(path: str, what: str) -> Path:
    if not Path(path).is_file():
        raise InputError(f"{what} not found: {path}")
    return Path(path)


def check_model_dir(path: str) -> Path:
    if not Path(path).is_dir():
        raise InputError(f"model directory not found: {path}")
    return Path(path)


def column_names(text: str | None, flag: str) -> list[str] | None:
    """`A,B` → ["A", "B"] (None stays None); an empty or repeated name is one line."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    if any(not n for n in names) or len(set(names)) != len(names):
        raise InputError(f"{flag} lists distinct, non-empty column names: A,B")
    return names


def categorical_names(items: list[str] | None) -> list[str]:
    return [name.strip() for item in items or [] for name in item.split(",") if name.strip()]


def parse_bounds(items: list[str] | None) -> dict[str, tuple[float, float]]:
    """`--bounds age=0:120` → {"age": (0.0, 120.0)}."""
    out: dict[str, tuple[float, float]] = {}
    for item in items or []:
        column, sep, span = item.partition("=")
        low, colon, high = span.partition(":")
        try:
            pair = (float(low), float(high))
        except ValueError:
            pair = (math.nan, math.nan)
        if not (sep and colon and column) or not (
            math.isfinite(pair[0]) and math.isfinite(pair[1]) and pair[0] < pair[1]
        ):
            raise InputError(f"--bounds takes COLUMN=LOW:HIGH with LOW < HIGH, got {item!r}")
        out[column] = pair
    return out


def parse_categories(items: list[str] | None) -> dict[str, list[str]]:
    """`--categories deny=no,yes` → {"deny": ["no", "yes"]}."""
    out: dict[str, list[str]] = {}
    for item in items or []:
        column, sep, values = item.partition("=")
        listed = [v.strip() for v in values.split(",") if v.strip()]
        if not (sep and column and listed):
            raise InputError(f"--categories takes COLUMN=VALUE[,VALUE...], got {item!r}")
        out[column] = listed
    return out


def geo_pair(item: str) -> tuple[str, str]:
    """`--geo lat,lon` → ("lat", "lon")."""
    names = tuple(name.strip() for name in item.split(","))
    if len(names) != 2 or not all(names):
        raise InputError(f"--geo takes LATITUDE,LONGITUDE column names, got {item!r}")
    return names  # type: ignore[return-value]


def parse_conditions(items: list[str] | None) -> dict[str, str] | None:
    """`--condition income='>50K'` → {"income": ">50K"}; values stay strings (matched by text)."""
    if not items:
        return None
    out = {}
    for item in items:
        column, sep, value = item.partition("=")
        if not sep or not column:
            raise InputError(f"--condition takes COLUMN=VALUE, got {item!r}")
        out[column] = value
    return out


def table_hints(args: argparse.Namespace) -> tuple[list[str], dict[str, tuple[float, float]], dict[str, list[str]]]:
    """--categorical, --bounds and --categories: a table's public hints, parsed."""
    return categorical_names(args.categorical), parse_bounds(args.bounds), parse_categories(args.categories)
