"""Which rows break a schema's rules (dpgan.tables.schema.rules), each row judged by its own cells.

Read on private rows by two callers only: the mapping of a table into its schema
(dpgan.tables.reading.conform drops a row outside a combination's allowed list, a rule of that row,
and counts it with DP among the unknown categories) and the evaluation for the data owner
(dpgan.evaluation.tables.rules: how many real rows broke each rule, and that no synthetic row does),
whose numbers are not a release. Cells are compared by value, as numbers for an inequality or a
sum, by their canonical text for a combination, so a CSV's text and a typed frame agree. A date,
timestamp or time column is compared on its linear scale (`rule_numbers`: the public cell rule of
dpgan.tables.schema.datetimes, in the column's format), so its text and its conformed numbers agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpgan.tables.schema.cells import canonical_text
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.datetimes import column_values, day_first_of
from dpgan.tables.schema.rules import Combination, Inequality, Rule
from dpgan.tables.schema.table import Schema

SUM_TOLERANCE = 1e-9  # relative and absolute: float sums in another order, a CSV round trip


def broken_rows(frame: pd.DataFrame, rule: Rule, schema: Schema | None = None) -> np.ndarray:
    """One bool per row: the row breaks `rule`. An inequality or a sum with a null cell holds
    (the rule speaks of present values only; a sum's column is null with its parts). `schema`: the
    columns' specs, which read a temporal column's text on its scale."""
    if isinstance(rule, Combination):
        allowed = {tuple(map(match_key, t)) for t in rule.allowed}
        keys = zip(*(match_keys(frame[name]) for name in rule.columns))
        return np.fromiter((k not in allowed for k in keys), dtype=bool, count=len(frame))
    if isinstance(rule, Inequality):
        specs = (None, None) if schema is None else (schema[rule.low], schema[rule.high])
        low, high = rule_numbers(frame[rule.low], specs[0]), rule_numbers(frame[rule.high], specs[1])
        with np.errstate(invalid="ignore"):
            return (low >= high) if rule.strict else (low > high)
    total = sum(sign * _numbers(frame[name]) for name, sign in zip(rule.of, rule.signs))
    column = _numbers(frame[rule.column])
    with np.errstate(invalid="ignore"):
        close = np.isclose(column, total, rtol=SUM_TOLERANCE, atol=SUM_TOLERANCE)
    return ~close & ~np.isnan(column) & ~np.isnan(total)  # type: ignore[operator]


def rule_break_counts(frame: pd.DataFrame, schema: Schema) -> list[dict[str, Any]]:
    """Per rule: its words, its JSON and how many rows of `frame` break it (exact: an evaluation's
    number, never a release)."""
    return [
        {
            "rule": rule.label,
            "spec": rule.to_dict(),
            "rows": len(frame),
            "broken": int(broken_rows(frame, rule, schema).sum()),
        }
        for rule in schema.rules
    ]


def outside_combinations(frame: pd.DataFrame, schema: Schema) -> np.ndarray:
    """The rows whose values form no allowed tuple of some combination rule (conform drops them)."""
    outside = np.zeros(len(frame), dtype=bool)
    for rule in schema.rules:
        if isinstance(rule, Combination):
            outside |= broken_rows(frame, rule)
    return outside


def _numbers(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def rule_numbers(series: pd.Series, spec: ColumnSpec | None) -> np.ndarray:
    """A column as the numbers a rule compares: a temporal column's cells on its linear scale (a
    conformed column is already numbers; text and datetime64 are read in the column's format), any
    other column's cells as numbers (NaN: null or no number)."""
    if spec is None or not spec.is_temporal or pd.api.types.is_numeric_dtype(series.dtype):
        return _numbers(series)
    fmt = str(spec.format)
    return column_values(series, spec.kind, day_first_of(fmt), fmt)


def match_key(value: Any) -> str | None:
    return None if value is None or (not isinstance(value, str) and pd.isna(value)) else canonical_text(value)


def match_keys(series: pd.Series) -> list[str | None]:
    """Each cell's key, computed once per distinct value."""
    codes, uniques = pd.factorize(series.to_numpy(dtype=object), use_na_sentinel=True)
    texts = [match_key(u) for u in uniques] + [None]
    return [texts[c] for c in codes]


__all__ = ["broken_rows", "match_key", "match_keys", "outside_combinations", "rule_break_counts"]
