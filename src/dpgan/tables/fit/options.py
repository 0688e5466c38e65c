"""The public arguments of `TabularSynthesizer`, checked before any read of the private table.

Why here: every refusal of a bad argument (a setting, a hint, a schema, the table's structure)
happens before the ledger exists, so bad input costs no budget and says one clear line. Hints and
schemas are public metadata the user supplies; nothing in this module reads a cell of the data
beyond its column names and shape (`check_structure` compares the table's columns with the
schema's, which is public either way).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.recipes import MARGINALS, Recipe
from dpgan.tables.inference.column_kinds import PublicHints
from dpgan.tables.reading.conform import check_structure
from dpgan.tables.registration import MARGINALS_MAX_ROWS, TABLE_MAX_EXAMPLES
from dpgan.tables.schema.hierarchy import Hierarchy
from dpgan.tables.schema.keys import KeySpec, key_specs
from dpgan.tables.schema.table import Schema
from dpgan.tables.settings import TableSettings, split_settings
from dpgan.training.config import TrainingConfig


@dataclass(frozen=True)
class FitOptions:
    """How `fit` treats the table: public hints, strictness, identifiers (non-private path), and
    the key columns (the hint's and the schema's: dropped before any read, generated on sampling)."""

    hints: PublicHints
    strict: bool
    keep_identifiers: bool
    keys: tuple[KeySpec, ...] = ()

    def learned(self, data: pd.DataFrame) -> pd.DataFrame:
        """`data` without its key columns: what every release reads (the keys' cells never are)."""
        present = [k.name for k in self.keys if k.name in data.columns]
        return data.drop(columns=present) if present else data


def default_examples_cap(recipe: Recipe) -> int:
    """The table GAN's budget of per-example gradients when the user names neither `epochs` nor
    `max_examples` (nor a whole `config`): T = min(⌈60·N̂/L⌉, ⌈TABLE_MAX_EXAMPLES/L⌉).

    Why: 60 epochs make the private steps grow with the rows, but at a fixed ε more rows mean less
    noise per step (σ falls with q = L/N̂; the noise on the mean gradient ∝ √T/(N̂ε)), so past
    some size more passes stop paying: on 100,000 flights rows at ε = 3 (validation split) the 2M
    budget (1,954 steps) scored at least as well as 60 epochs (5,862) and better than 1M
    (bench/notes/37-scale.md). Below
    2M/60 ≈ 33,333 noisy rows the cap does not bind, so every table the defaults were chosen on
    (Adult, hmda, chile, churn, flchain) fits as before. A recipe with its own epochs (dtgan-g: 10
    passes at batch 64) keeps its own schedule.

    Privacy: the cap is a public constant; with N̂ (the noisy row count) and the public settings
    it sets T, and σ is calibrated for the T that runs (dpgan.training.schedule.capped_steps), so
    two neighbouring tables with the same N̂ draw run the same steps.

    The marginals model reads each row once and trains nothing: its budget is of rows read
    (dpgan.tables.fit.row_sample: past it, a Poisson sample of about that many rows)."""
    if recipe.name == MARGINALS.name:  # the rows it reads (dpgan.tables.fit.row_sample)
        return MARGINALS_MAX_ROWS
    if "epochs" in recipe.overrides:
        return 0
    return TABLE_MAX_EXAMPLES


def positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise InputError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def training_config(
    recipe: Recipe,
    config: TrainingConfig | None,
    table: TableSettings | None,
    overrides: Mapping[str, Any],
    *,
    batch_size: int | None,
    epochs: float | None,
) -> tuple[TrainingConfig, TableSettings]:
    """The recipe's loop settings (or `config` wholesale) and its plug-in defaults (or `table`
    wholesale), each keyword override on top of the record that holds its name, both checked."""
    ours, loop = split_settings(overrides)
    try:
        base = replace(config or TrainingConfig(**recipe.overrides), **loop)
        settings = replace(table or TableSettings(**recipe.plugins), **ours)
    except TypeError as exc:
        raise InputError(f"unknown setting: {exc}") from None
    if batch_size is not None:
        base = replace(base, batch_size=positive_int(batch_size, "batch_size"))
    if epochs is not None:
        if not (isinstance(epochs, (int, float)) and epochs > 0 and math.isfinite(epochs)):
            raise InputError("epochs must be a positive number")
        base = replace(base, epochs=float(epochs))
    elif config is None and "max_examples" not in loop:
        base = replace(base, max_examples=default_examples_cap(recipe))
    base.check()
    settings.check()
    if recipe.dp_on == "generator" and (base.clipping_groups != "none" or base.adaptive_clip_quantile > 0):
        # the generator hook clips rows of ∂L/∂x̃, not a critic's per-record gradient
        raise InputError(f"grouped and adaptive clipping apply to critic recipes, not {recipe.name}")
    return base, settings


def parse_hints(
    target: str | None,
    categorical: Sequence[str],
    bounds: Mapping[str, tuple[float, float]] | None,
    categories: Mapping[str, Sequence[str]] | None = None,
    hierarchies: Mapping[str, Any] | None = None,
) -> PublicHints:
    if target is not None and not isinstance(target, str):
        raise InputError("target must be a column name")
    if isinstance(categorical, str) or not all(isinstance(c, str) for c in categorical):
        raise InputError("categorical must be a list of column names")
    parsed: dict[str, tuple[float, float]] = {}
    for name, pair in dict(bounds or {}).items():
        try:
            low, high = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise InputError(f"bounds of {name!r} must be a (low, high) pair of numbers") from None
        parsed[str(name)] = (low, high)
    lists: dict[str, tuple[str, ...]] = {}
    for name, values in dict(categories or {}).items():
        if isinstance(values, str) or not all(isinstance(v, (str, int, float, bool)) for v in values):
            raise InputError(f"categories of {name!r} must be a list of values")
        lists[str(name)] = tuple(str(v) for v in values)
    if hierarchies is not None and not isinstance(hierarchies, Mapping):
        raise InputError('hierarchies must map column names to hierarchies, e.g. {"zip": {"prefix": [3, 1]}}')
    trees = {
        str(name): tree if isinstance(tree, Hierarchy) else Hierarchy.from_dict(tree, str(name))
        for name, tree in (hierarchies or {}).items()
    }
    return PublicHints(target, tuple(categorical), parsed, lists, trees)


def coerce_schema(schema: Schema | str | Path | dict | None) -> Schema | None:
    if schema is None or isinstance(schema, Schema):
        return schema
    if isinstance(schema, dict):
        return Schema.from_dict(schema)
    if isinstance(schema, (str, Path)):
        return Schema.from_json(schema)
    raise InputError("schema must be a Schema, a dict, or a path to a JSON file")


def schema_with_hints(
    schema: Schema | str | Path | dict | None,
    target: str | None,
    categorical: Sequence[str],
    bounds: Mapping[str, tuple[float, float]] | None,
    categories: Mapping[str, Sequence[str]] | None,
    hierarchies: Mapping[str, Any] | None = None,
) -> tuple[Schema | None, PublicHints]:
    """The schema (its target named or replaced by `target`) and the hints; the hints that describe
    a table without a schema are refused beside one (write them into it)."""
    schema = coerce_schema(schema)
    hints = parse_hints(target, categorical, bounds, categories, hierarchies)
    if schema is not None:
        if hints.categorical or hints.bounds or hints.categories or hints.hierarchies:
            raise InputError(
                "categorical, categories, bounds and hierarchy hints apply without a schema: write them into it"
            )
        if hints.target is not None:
            schema = replace(schema, target=hints.target)
    return schema, hints


CLASS_KINDS = ("categorical", "boolean")  # a target the marginals model's class tree conditions on
RELEASED = "released"  # a target's kind the DP schema decides (no schema, no hint on it)


def target_kind(
    schema: Schema | str | Path | dict | None,
    target: str | None,
    categorical: Sequence[str] = (),
    bounds: Mapping[str, tuple[float, float]] | None = None,
    categories: Mapping[str, Sequence[str]] | None = None,
) -> str | None:
    """What the user's public arguments say of the fit's target: None (none named), "class" (a
    categorical or boolean column: the schema's kind, or named in the `categorical` or `categories`
    hints), "numeric" (the schema's kind, or given `bounds`), or RELEASED (only the target hint:
    its kind comes with the DP schema). A bad schema or hint is refused here as fit_arguments would."""
    parsed, hints = schema_with_hints(schema, target, categorical, bounds, categories)
    if parsed is not None:
        return None if parsed.target is None else ("class" if parsed[parsed.target].kind in CLASS_KINDS else "numeric")
    if hints.target is None:
        return None
    if hints.target in hints.categorical or hints.target in hints.categories:
        return "class"
    return "numeric" if hints.target in hints.bounds else RELEASED


def class_target(schema: Schema) -> bool:
    """Whether a released (or given) schema's target is a class: what the default model waits for
    when only the target was named (post-processing of the DP schema: no further read)."""
    return schema.target is not None and schema[schema.target].kind in CLASS_KINDS


def fit_arguments(
    data: Any,
    schema: Schema | str | Path | dict | None,
    *,
    target: str | None,
    categorical: Sequence[str],
    bounds: Mapping[str, tuple[float, float]] | None,
    categories: Mapping[str, Sequence[str]] | None,
    strict: bool,
    keep_identifiers: bool,
    keys: Sequence[str] | Mapping[str, str] | None = None,
    hierarchies: Mapping[str, Any] | None = None,
) -> tuple[Schema | None, FitOptions]:
    """`fit`'s arguments checked against each other and the table's structure: (schema, options).

    A schema's target may be named or replaced by `target`; the other hints apply only without a
    schema (write them into it). `keys` (names, or names to formats) adds key columns to the
    schema's own (dpgan.tables.schema.keys). The table's structure is refused before any budget is
    spent."""
    if not isinstance(data, pd.DataFrame):
        raise InputError("data must be a pandas DataFrame")
    if data.shape[1] == 0:  # no columns: public structure (a table with no rows still fits, below)
        raise InputError("the table has no columns: nothing to learn from")
    schema, hints = schema_with_hints(schema, target, categorical, bounds, categories, hierarchies)
    specs = table_keys(keys, list(data.columns), schema, hints)
    options = FitOptions(hints, bool(strict), bool(keep_identifiers), specs)
    learned = options.learned(data)  # names only: no cell of a key column is read
    if learned.shape[1] == 0:
        raise InputError("the table has no columns besides its keys: nothing to learn from")
    if schema is not None:
        check_structure(learned, schema)  # table structure is refused before any budget is spent
    else:
        hints.check(learned.columns)
    return schema, options


def table_keys(
    keys: Sequence[str] | Mapping[str, str] | None, columns: Sequence[Any], schema: Schema | None, hints: PublicHints
) -> tuple[KeySpec, ...]:
    """The key columns: the schema's, then the hint's (placed where they stand in the header); a
    key named by another hint (target, categorical, bounds, categories) is refused."""
    hinted = key_specs(keys, columns)
    named = {hints.target} | set(hints.categorical) | set(hints.bounds) | set(hints.categories) | set(hints.hierarchies)
    clash = sorted(k.name for k in hinted if k.name in named or (schema is not None and k.name in schema.names))
    if clash:
        raise InputError(f"key column {clash[0]!r} is also named as a learned column: a key is never learned")
    own = () if schema is None else tuple(k for k in schema.keys if k.name not in {h.name for h in hinted})
    return own + hinted
