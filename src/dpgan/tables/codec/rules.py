"""How the schema's rules (dpgan.tables.schema.rules) are kept: the columns the generator learns in
their place, and the sampled rows rebuilt from them so that every rule holds on every row.

Per kind, and why:

- a sum or difference is not learned: its column is left out of the learned table and computed
  from its parts on every sampled row (a reparametrisation: one column fewer to learn, and the rule
  holds exactly; the column may then leave its declared bounds only if its parts' bounds allow it);
- an inequality, by default ("gap"), is learned as `low` and the gap `high - low`, a column of its
  own whose public range comes from the two columns' public bounds (rule_checks.gap_bounds), and
  `high` is rebuilt as `low + gap`, clipped to its bounds; a real row that breaks the rule has a
  negative gap, which the codec clamps to the gap's lower bound like any value out of range. With
  "clip" both columns are learned and `high` is raised to `low` on a sampled row that breaks the
  rule; with "swap" the two are swapped there (bench/notes/34-rules.md measures the three);
- a fixed combination is learned as one categorical column over the allowed tuples (its index),
  split back into its columns on sampling: the generator never sees a combination outside the list.
  A real row outside the list is dropped when the table is mapped into the schema (unknown
  category, counted with DP: dpgan.tables.reading.conform); rows from elsewhere (the audit's public
  rows) are given the allowed tuple that shares most of their values.

Last, every sampled row goes through `enforce`: the rule's repair (an integer rounded, a strict
inequality's `high` raised by one step) keeps rows that rounding or the bounds would break.

Privacy: the learned columns are a function of each row alone and of the public schema, so a
neighbouring table stays neighbouring (the unit's own row changes, no other); sampling reads only
released rows and the public rules (post-processing). Neither costs ε. The ledger changes only where
a release depends on the learned columns themselves (the 2-way anchor measures the pairs of the
learned columns, so a sum rule leaves it one column fewer to measure).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.tables.codec.column_transforms import restore_dtype
from dpgan.tables.schema.columns import MAX_BINARY_VALUES, ColumnSpec
from dpgan.tables.schema.datetimes import RESOLUTION_SECONDS, write_values
from dpgan.tables.schema.rule_breaks import match_key, match_keys, rule_numbers
from dpgan.tables.schema.rule_checks import application_order, gap_bounds
from dpgan.tables.schema.rules import Combination, Derived, Inequality
from dpgan.tables.schema.table import Schema


@dataclass(frozen=True)
class RuleCodec:
    """A schema with rules as the generator learns it (`learned`: no rules), and the maps between
    the user's rows and the learned ones."""

    schema: Schema
    learned: Schema
    internal: dict[int, str]  # rule index -> its learned column (a gap, a combination's index)
    dtypes: dict[str, str | None]

    @classmethod
    def of(cls, schema: Schema, dtypes: dict[str, str | None]) -> RuleCodec:
        columns, internal = _learned_columns(schema)
        learned = Schema(columns, target=schema.target, source=schema.source, geo=schema.geo)
        return cls(schema, learned, internal, dict(dtypes))

    @property
    def order(self) -> list[int]:
        return application_order(self.schema.rules)

    def to_learned(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The learned columns of user rows (a function of each row and the public rules)."""
        out = {name: frame[name].reset_index(drop=True) for name in self.learned.names if name in frame.columns}
        for index, rule in enumerate(self.schema.rules):
            name = self.internal.get(index)
            if isinstance(rule, Inequality) and name is not None:
                low, high = (rule_numbers(frame[c], self.schema[c]) for c in (rule.low, rule.high))
                out[name] = pd.Series(high - low)
            elif isinstance(rule, Combination):
                out[name] = pd.Series(_combination_index(frame, rule), dtype=np.int64)  # type: ignore[index]
        return pd.DataFrame(out)[self.learned.names]

    def from_learned(self, frame: pd.DataFrame) -> pd.DataFrame:
        """User rows from decoded learned rows: every rule applied, in an order where each reads
        columns already final, then repaired so that it holds on every row."""
        out = {name: frame[name].reset_index(drop=True) for name in self.learned.names if name in self.schema.names}
        for index in self.order:
            rule = self.schema.rules[index]
            if isinstance(rule, Combination):
                codes = frame[self.internal[index]].to_numpy(dtype=np.int64)
                for position, name in enumerate(rule.columns):
                    values = np.array([t[position] for t in rule.allowed] + [None], dtype=object)
                    out[name] = _restore(pd.Series(values[codes], dtype=object), self.schema[name], self.dtypes)
            elif isinstance(rule, Derived):
                parts = np.stack([s * _numbers(out[c]) for c, s in zip(rule.of, rule.signs)], axis=1)
                out[rule.column] = self._numeric(rule.column, parts.sum(axis=1))
            else:
                out.update(self._inequality(index, rule, frame, out))
        return pd.DataFrame(out)[self.schema.names]

    def _inequality(
        self, index: int, rule: Inequality, frame: pd.DataFrame, out: dict[str, pd.Series]
    ) -> dict[str, pd.Series]:
        low, high_spec = rule_numbers(out[rule.low], self.schema[rule.low]), self.schema[rule.high]
        if rule.method == "gap":
            high = low + _numbers(frame[self.internal[index]])
            high = np.clip(_rounded(high, high_spec), float(high_spec.min), float(high_spec.max))  # type: ignore[arg-type]
        else:
            high = rule_numbers(out[rule.high], high_spec)
        if rule.method == "swap":
            broken = _breaks(low, high, rule.strict)
            low, high = np.where(broken, high, low), np.where(broken, low, high)
        kept = {rule.high: self._numeric(rule.high, enforce(rule, low, high, high_spec.kind, _step(high_spec)))}
        if rule.method == "swap":
            kept[rule.low] = self._numeric(rule.low, low)
        return kept

    def _numeric(self, name: str, values: np.ndarray) -> pd.Series:
        spec = self.schema[name]
        if spec.is_temporal:  # written back in the column's own format (text or datetime64)
            return write_values(values, spec.kind, str(spec.format), spec.timezone, spec.resolution, name)
        values = _rounded(values, spec)
        missing = np.isnan(values)
        if spec.kind == "integer":
            series = pd.Series(np.nan_to_num(values).astype(np.int64), name=name)
            if spec.nullable or missing.any():
                series = series.astype("Int64")
                series[missing] = pd.NA
        else:
            series = pd.Series(values, name=name)
        return _restore(series, spec, self.dtypes)


def enforce(
    rule: Inequality, low: np.ndarray, high: np.ndarray, high_kind: str, step: float | None = None
) -> np.ndarray:
    """`high` raised where it breaks `low ≤ high` (`<`: by one whole number for an integer
    column, by `step` for a temporal one — a day, or its resolution in seconds, so the rule survives
    writing the value at that resolution — by one float step otherwise); rows with a null either
    side are left as they are."""
    if step is not None:
        least = low + step if rule.strict else low
    elif high_kind == "integer":
        least = np.floor(low) + 1.0 if rule.strict else np.ceil(low)
    else:
        least = np.nextafter(low, np.inf) if rule.strict else low
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(low) | np.isnan(high), high, np.maximum(high, least))


def _step(spec: ColumnSpec) -> float | None:
    """A temporal column's smallest step on its scale (None for a number column)."""
    if not spec.is_temporal:
        return None
    return 1.0 if spec.kind == "date" else float(RESOLUTION_SECONDS[spec.resolution])


def _breaks(low: np.ndarray, high: np.ndarray, strict: bool) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return (low >= high) if strict else (low > high)


def _learned_columns(schema: Schema) -> tuple[tuple[ColumnSpec, ...], dict[int, str]]:
    """The learned columns in the user's order: a sum's column left out, a gap in place of its
    `high`, a combination's index where its first column stands (its other columns left out)."""
    taken = set(schema.names)
    internal: dict[int, str] = {}
    replaced: dict[str, ColumnSpec | None] = {}
    for index, rule in enumerate(schema.rules):
        if isinstance(rule, Derived):
            replaced[rule.column] = None
        elif isinstance(rule, Inequality) and rule.method == "gap":
            internal[index] = _fresh(f"{rule.high} - {rule.low}", taken)
            replaced[rule.high] = _gap_spec(internal[index], schema[rule.low], schema[rule.high], rule.strict)
        elif isinstance(rule, Combination):
            internal[index] = _fresh(f"({', '.join(rule.columns)})", taken)
            categories = tuple(range(len(rule.allowed)))
            replaced[rule.columns[0]] = ColumnSpec(internal[index], "categorical", categories=categories)
            replaced.update({name: None for name in rule.columns[1:]})
    columns = [replaced.get(c.name, c) for c in schema.columns]
    return tuple(c for c in columns if c is not None), internal


def _gap_spec(name: str, low: ColumnSpec, high: ColumnSpec, strict: bool) -> ColumnSpec:
    """The gap's public domain: its range from the bounds, `high`'s bins and nulls; a log scale if
    `high` has one (durations are long-tailed), binary codes if `high` has them and they fit."""
    least, most = gap_bounds(low, high, strict)
    kind = "integer" if low.kind == high.kind == "integer" else "continuous"
    levels = int(np.floor(most)) - int(np.ceil(least)) + 1
    if high.encoding == "binary" and kind == "integer" and 2 <= levels <= MAX_BINARY_VALUES:
        return ColumnSpec(name, kind, min=least, max=most, nullable=high.nullable, encoding="binary")
    scale = "linear" if high.scale == "linear" else "log"
    return ColumnSpec(name, kind, min=least, max=most, nullable=high.nullable, scale=scale, bins=high.bins)


def _fresh(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "'"
    taken.add(name)
    return name


def _numbers(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def _rounded(values: np.ndarray, spec: ColumnSpec) -> np.ndarray:
    return np.round(values) if spec.kind == "integer" else values


def _restore(series: pd.Series, spec: ColumnSpec, dtypes: dict[str, str | None]) -> pd.Series:
    if spec.kind == "boolean":
        series = series.astype("boolean" if spec.nullable else bool)
    elif spec.kind == "integer":
        series = series.astype("Int64" if spec.nullable else "int64")
    return restore_dtype(series.rename(spec.name), dtypes.get(spec.name))


def _combination_index(frame: pd.DataFrame, rule: Combination) -> np.ndarray:
    """Each row's allowed tuple (its index); a row outside the list gets the first tuple that
    shares most of its values (conform drops such rows before a fit reads them)."""
    index = {tuple(map(match_key, t)): i for i, t in enumerate(rule.allowed)}
    keys = zip(*(match_keys(frame[name]) for name in rule.columns))
    return np.fromiter((index[k] if k in index else _nearest(k, rule) for k in keys), dtype=np.int64)


def _nearest(key: Sequence[str | None], rule: Combination) -> int:
    shared = [sum(a == match_key(b) for a, b in zip(key, t)) for t in rule.allowed]
    return int(np.argmax(shared))
