"""Fit a private table to its public schema without letting any one row decide whether the fit runs.

If one unknown category, one missing value in a complete column, one word in a numeric column or
one infinity made `fit` fail, the existence of a released model would say that no such row was
in the table, and the error would print the row to the curator's terminal and logs. So by
default every cell is mapped into the schema by a fixed public rule, one cell at a time:

| cell | becomes |
|---|---|
| a category the schema does not list | `other_category`, else null if the column is nullable, else the row is dropped |
| a missing value in a complete column | `other_category` (categorical), else the row is dropped |
| text in a numeric column, an infinity | null if the column is nullable, else the row is dropped |
| a number outside the bounds | clamped to the bound (by the encoder) |
| values outside a combination rule's allowed list | the row is dropped (counted as an unknown category) |
| a fractional number in an integer column | rounded |
| no date/time in a date, timestamp or time column | null if the column is nullable, else the row is dropped |
| a date/time outside the bounds | clamped to the bound |

(A column with a public `hierarchy` first maps an unlisted category to its nearest listed ancestor,
dpgan.tables.schema.hierarchy: `02199` to `021*`.) Each rule reads one row only, so a neighbouring
table stays a neighbouring table after it (the mapping is 1-stable under add/remove: dropping is a
per-row rule, not a data-dependent filter), and the DP guarantee of what is trained on it carries
over. How many rows needed which repair is private; `Conformed.repairs` holds one 0/1 per row and
reason, which dpgan releases only as a Gaussian noisy count
(dpgan.privacy.mechanisms.noisy_indicator_counts, in the ledger).

`strict=True` keeps the refusal for users who want clean data or nothing: the message names the
column and the kind of problem, never a value or a count.

Without `strict` this module follows dpgan.privacy.unit_rule: it refuses on public structure only
(the column names against the schema's), maps each row by a rule of that row, and a table with no
rows (its header only: the columns are public) conforms to an empty table, which trains like any
other (the noisy row count N̂ says how many rows there were).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.tables.schema.cells import (
    INFINITE,
    NULL,
    NUMBER,
    TEXT,
    boolean_value,
    canonical_text,
    classify,
    per_value,
)
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.datetimes import column_values, day_first_of
from dpgan.tables.schema.rule_breaks import outside_combinations
from dpgan.tables.schema.table import Schema

UNKNOWN_CATEGORY = "unknown category"
MISSING_IN_COMPLETE = "missing value in a complete column"
NOT_A_NUMBER = "not a number"
INFINITE_VALUE = "infinite value"
OUT_OF_BOUNDS = "outside the bounds (clamped)"
REASONS = (UNKNOWN_CATEGORY, MISSING_IN_COMPLETE, NOT_A_NUMBER, INFINITE_VALUE, OUT_OF_BOUNDS)
# what --strict refuses (clamping out-of-range numbers was never an error)
REFUSED = {
    UNKNOWN_CATEGORY: "holds values that are not among its schema categories",
    MISSING_IN_COMPLETE: 'has missing values but the schema says it is complete (mark it "nullable": true)',
    NOT_A_NUMBER: "holds values that are not numbers",
    INFINITE_VALUE: "holds infinite values",
}
# the unit rule for tables, as the privacy report states it
INPUT_RULE = (
    "each row is mapped into the schema by its own cells: a category the schema does not list becomes the other "
    "category (or null, or the row is dropped), a missing value in a complete column the other category (or the "
    "row is dropped), text or an infinity in a numeric column null (or the row is dropped), a number outside the "
    "bounds the bound; no row decides whether the fit runs, and the repairs are counted with DP, per kind"
)
STRICT_NOTE = "strict mode; without it such cells are mapped into the schema and counted with DP"


@dataclass(frozen=True)
class Conformed:
    """The table in schema order with clean values (rows that could not be mapped removed), and
    for every input row which repairs it needed (private: release only through a DP count)."""

    frame: pd.DataFrame
    repairs: np.ndarray  # (input rows, len(REASONS)) bool

    @property
    def dropped(self) -> int:
        return int(len(self.repairs) - len(self.frame))


@dataclass
class _Column:
    """One column's clean values, which input rows must go, and the repairs per reason."""

    values: np.ndarray
    drop: np.ndarray
    reasons: dict[str, np.ndarray]
    # what only strict mode refuses (the default rounds or keeps it): messages without values
    strict_refusals: tuple[str, ...] = ()


def check_structure(frame: pd.DataFrame, schema: Schema) -> None:
    """Refuse what is table structure, not a row's value: the column names (public). A table with
    no rows is not refused: whether it has any is private (dpgan.privacy.unit_rule), and the fit
    runs on none, its noisy row count saying so."""
    if not isinstance(frame, pd.DataFrame):
        raise InputError("data must be a pandas DataFrame")
    if len(set(map(str, frame.columns))) != frame.shape[1]:
        raise InputError("the table has duplicate column names")
    check_columns(list(frame.columns), schema)


def check_columns(columns: Sequence[Any], schema: Schema) -> None:
    """Refuse column names the schema does not have, and schema columns the table lacks (names
    are public: a Parquet stream's come from its footers)."""
    unknown = [str(c) for c in columns if c not in schema.names]
    if unknown:
        raise InputError(f"columns not in the schema: {', '.join(unknown)}")
    missing = [n for n in schema.names if n not in columns]
    if missing:
        raise InputError(f"schema columns missing from the table: {', '.join(missing)}")


def conform(frame: pd.DataFrame, schema: Schema, *, strict: bool = False) -> Conformed:
    """Map every cell into `schema` by the rules of the module docstring (or refuse, `strict`)."""
    check_structure(frame, schema)
    if strict and len(frame) == 0:  # clean data or nothing: strict mode's opt-in refusals read the rows
        raise InputError(f"the table is empty ({STRICT_NOTE})")
    rows = len(frame)
    drop = np.zeros(rows, dtype=bool)
    repairs = np.zeros((rows, len(REASONS)), dtype=bool)
    columns: dict[str, np.ndarray] = {}
    for spec in schema.columns:
        column = _conform_column(spec, frame[spec.name])
        if strict:
            _refuse(spec, column)
        for reason, rows_hit in column.reasons.items():
            repairs[:, REASONS.index(reason)] |= rows_hit
        drop |= column.drop
        columns[spec.name] = column.values
    if schema.rules:  # a combination outside a rule's public list: an unknown category of the pair
        outside = outside_combinations(pd.DataFrame(columns), schema) & ~drop
        if strict and bool(outside.any()):
            raise InputError(f"rows hold combinations outside a rule's allowed list ({STRICT_NOTE})")
        repairs[:, REASONS.index(UNKNOWN_CATEGORY)] |= outside
        drop |= outside
    kept = ~drop
    clean = pd.DataFrame({name: values[kept] for name, values in columns.items()})
    return Conformed(clean.reset_index(drop=True), repairs)


def validate_table(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """Refuse a table that does not fit the schema (strict mode: the messages name the column and
    the problem, never a value or a count); return it in schema order.

    Training does not call this: it maps such cells into the schema and counts them with DP."""
    conform(frame, schema, strict=True)
    return frame[schema.names]


def _refuse(spec: ColumnSpec, column: _Column) -> None:
    messages = [m for reason, m in REFUSED.items() if reason in column.reasons and bool(column.reasons[reason].any())]
    for message in [*messages, *column.strict_refusals]:
        raise InputError(f"column {spec.name!r} {message} ({STRICT_NOTE})")


def _strict_refusals(null: np.ndarray, fractional: np.ndarray | None = None) -> tuple[str, ...]:
    refusals = []
    if bool(null.all()):
        refusals.append("has no values (all missing)")
    if fractional is not None and bool(fractional.any()):
        refusals.append("is integer but holds fractional values")
    return tuple(refusals)


def _conform_column(spec: ColumnSpec, series: pd.Series) -> _Column:
    if spec.is_temporal:
        return _temporal(spec, series)
    if spec.is_numeric:
        return _numeric(spec, series)
    if spec.kind == "boolean":
        return _boolean(spec, series)
    return _categorical(spec, series)


def _unusable(spec: ColumnSpec, bad: np.ndarray, reason: str, reasons: dict[str, np.ndarray]) -> np.ndarray:
    """Cells that cannot be kept become null in a nullable column; otherwise their rows go."""
    reasons[reason] = reasons.get(reason, np.zeros_like(bad)) | bad
    return np.zeros_like(bad) if spec.nullable else bad


def _numeric(spec: ColumnSpec, series: pd.Series) -> _Column:
    cells = classify(series)
    values = cells.number.copy()
    fractional = None
    if spec.kind == "integer":
        with np.errstate(invalid="ignore"):
            fractional = (cells.kind == NUMBER) & (values != np.round(values))
        values = np.round(values)
    reasons: dict[str, np.ndarray] = {}
    drop = _unusable(spec, cells.kind == TEXT, NOT_A_NUMBER, reasons)
    drop = drop | _unusable(spec, cells.kind == INFINITE, INFINITE_VALUE, reasons)
    if not spec.nullable:
        reasons[MISSING_IN_COMPLETE] = cells.kind == NULL
        drop = drop | (cells.kind == NULL)
    with np.errstate(invalid="ignore"):
        outside = (cells.kind == NUMBER) & ((values < float(spec.min)) | (values > float(spec.max)))  # type: ignore[arg-type]
    reasons[OUT_OF_BOUNDS] = outside
    values = np.where(outside, np.clip(values, float(spec.min), float(spec.max)), values)  # type: ignore[arg-type]
    return _Column(values.astype(np.float64), drop, reasons, _strict_refusals(cells.kind == NULL, fractional))


def _temporal(spec: ColumnSpec, series: pd.Series) -> _Column:
    """A date/time column on its linear scale (dpgan.tables.schema.datetimes.cell_value, a rule of
    one cell): a cell that holds none is 'not a number' (null or its row dropped), bounds clamp."""
    null = classify(series).kind == NULL
    fmt = str(spec.format)
    values = column_values(series, spec.kind, day_first_of(fmt), fmt)
    values[null] = np.nan
    reasons: dict[str, np.ndarray] = {}
    drop = _unusable(spec, ~null & np.isnan(values), NOT_A_NUMBER, reasons)
    if not spec.nullable:
        reasons[MISSING_IN_COMPLETE] = null
        drop = drop | null
    low, high = float(spec.min), float(spec.max)  # type: ignore[arg-type]
    with np.errstate(invalid="ignore"):
        outside = ~np.isnan(values) & ((values < low) | (values > high))
    reasons[OUT_OF_BOUNDS] = outside
    values = np.where(outside, np.clip(values, low, high), values)
    return _Column(values.astype(np.float64), drop, reasons, _strict_refusals(null))


def _boolean(spec: ColumnSpec, series: pd.Series) -> _Column:
    null = classify(series).kind == NULL
    # once per distinct value where the column allows (dpgan.tables.schema.cells.per_value)
    parsed = per_value(series, _boolean_values, None)
    parsed[null] = None
    unknown = ~null & np.array([p is None for p in parsed], dtype=bool)
    reasons: dict[str, np.ndarray] = {}
    drop = _unusable(spec, unknown, UNKNOWN_CATEGORY, reasons)
    if not spec.nullable:
        reasons[MISSING_IN_COMPLETE] = null
        drop = drop | null
    return _Column(parsed.astype(object), drop, reasons, _strict_refusals(null))


def _boolean_values(series: pd.Series) -> np.ndarray:
    out = np.empty(len(series), dtype=object)
    out[:] = [boolean_value(v) for v in series.to_numpy(dtype=object)]
    return out


def _categorical(spec: ColumnSpec, series: pd.Series) -> _Column:
    exact = {c: c for c in reversed(spec.categories)}
    by_text = {canonical_text(c): c for c in reversed(spec.categories)}
    by_number = {v: c for c in reversed(spec.categories) if (v := _as_number(c)) is not None}

    def matches(cells: pd.Series) -> np.ndarray:
        values = cells.to_numpy(dtype=object)
        found = np.full(len(values), None, dtype=object)  # nulls stay None, unmatched (as before)
        for row in np.flatnonzero(~pd.isna(values)):
            found[row] = _match(values[row], exact, by_text, by_number)
            if found[row] is _NO_MATCH and spec.hierarchy is not None:  # its nearest listed ancestor
                ancestors = (by_text[a] for a in spec.hierarchy.ancestors(canonical_text(values[row])) if a in by_text)
                found[row] = next(ancestors, _NO_MATCH)
        return found

    null = classify(series).kind == NULL
    # the match runs once per distinct value where the column allows (cells.per_value)
    matched = per_value(series, matches, None)
    unknown = ~null & np.fromiter((m is _NO_MATCH for m in matched), dtype=bool, count=len(matched))
    out = np.where(null | unknown, None, matched)
    reasons: dict[str, np.ndarray] = {}
    other = spec.other_category
    if other is not None:
        out[unknown] = other
        reasons[UNKNOWN_CATEGORY] = unknown
        drop = np.zeros(len(series), dtype=bool)
    else:
        drop = _unusable(spec, unknown, UNKNOWN_CATEGORY, reasons)
    if not spec.nullable:
        reasons[MISSING_IN_COMPLETE] = null
        if other is not None:
            out[null] = other
        else:
            drop = drop | null
    return _Column(out, drop, reasons, _strict_refusals(null))


_NO_MATCH = object()


def _match(value: Any, exact: dict[Any, Any], by_text: dict[str, Any], by_number: dict[float, Any]) -> Any:
    """The schema category a cell names: the same value, else the same canonical text, else the
    same number (a CSV's "2.0" for a schema's 2)."""
    try:
        if value in exact:
            return exact[value]
    except TypeError:  # unhashable cell: compare by text
        pass
    match = by_text.get(canonical_text(value), _NO_MATCH)
    if match is _NO_MATCH and (number := _as_number(value)) is not None:
        match = by_number.get(number, _NO_MATCH)
    return match


def _as_number(value: Any) -> float | None:
    """A finite number the value is or spells (not a boolean), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None
    return number if np.isfinite(number) else None
