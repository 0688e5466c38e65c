"""Rows as vectors for the attacks: one-hot categoricals, min-max numerics in [0, 1].

Bounds and category lists come from the public schema when there is one. Without it they are read
off the real tables: acceptable here because an attack is an evaluation, not a release. Missing
values get their own one-hot slot (categoricals) or a 0 value plus an indicator (numerics), so a
missing value is a value like any other for distances and regressions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.tables.schema.encoding_hints import kind_from_dtype
from dpgan.tables.schema.table import Schema


@dataclass(frozen=True)
class NumericColumn:
    name: str
    lo: float
    hi: float
    missing_slot: bool

    @property
    def width(self) -> int:
        return 1 + int(self.missing_slot)


@dataclass(frozen=True)
class CategoricalColumn:
    """Codes 0..K-1 are `categories`, K is "missing" (if `missing_slot`); -1 is an unknown value."""

    name: str
    categories: tuple[Any, ...]
    missing_slot: bool
    other_index: int | None = None  # where unknown values go (a DP schema's "(other)"), if anywhere

    @property
    def width(self) -> int:
        return len(self.categories) + int(self.missing_slot)


Column = NumericColumn | CategoricalColumn


class AttackEncoder:
    """A fixed layout of columns; the same for every table it encodes, so vectors are comparable."""

    def __init__(self, columns: Sequence[Column]) -> None:
        if not columns:
            raise InputError("the attacks need at least one column")
        self.columns = list(columns)
        self.width = sum(c.width for c in self.columns)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def without(self, name: str) -> "AttackEncoder":
        return AttackEncoder([c for c in self.columns if c.name != name])

    @classmethod
    def build(cls, frames: Sequence[pd.DataFrame], schema: Schema | None = None) -> "AttackEncoder":
        """Layout from the public schema, or else from the union of `frames` (the real tables)."""
        names = list(frames[0].columns)
        for frame in frames[1:]:
            missing = [str(n) for n in names if n not in frame.columns]
            if missing:
                raise InputError(f"columns missing from a table given to the attacks: {', '.join(missing)}")
        columns: list[Column] = []
        for name in names:
            if schema is not None and name in schema.names:
                columns.append(_from_spec(schema, name))
            else:
                series = pd.concat([f[name] for f in frames], ignore_index=True)
                columns.append(_from_data(str(name), series))
        return cls(columns)

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """(rows, width) float64 matrix."""
        blocks = []
        for c in self.columns:
            if isinstance(c, NumericColumn):
                scaled = self.scaled(frame, c.name)
                missing = np.isnan(scaled)
                blocks.append(np.where(missing, 0.0, scaled)[:, None])
                if c.missing_slot:
                    blocks.append(missing.astype(np.float64)[:, None])
            else:
                codes = self.codes(frame, c.name)
                one_hot = np.zeros((len(frame), c.width))
                known = codes >= 0
                one_hot[np.flatnonzero(known), codes[known]] = 1.0
                blocks.append(one_hot)
        return np.concatenate(blocks, axis=1)

    def scaled(self, frame: pd.DataFrame, name: str) -> np.ndarray:
        """A numeric column min-max scaled and clipped to [0, 1]; NaN where missing."""
        c = self.column(name)
        assert isinstance(c, NumericColumn)
        values = numeric_values(frame[name])
        return np.clip((values - c.lo) / (c.hi - c.lo), 0.0, 1.0)

    def codes(self, frame: pd.DataFrame, name: str) -> np.ndarray:
        """Integer codes of a categorical column (see `CategoricalColumn`)."""
        c = self.column(name)
        assert isinstance(c, CategoricalColumn)
        series = frame[name].astype(object)
        missing = series.isna().to_numpy()
        index = {value: i for i, value in enumerate(c.categories)}
        mapped = np.array(series.map(lambda v: -1 if _is_missing(v) else index.get(v, -1)), dtype=np.int64)
        unknown = (mapped < 0) & ~missing
        if c.other_index is not None:
            mapped[unknown] = c.other_index
        mapped[missing] = len(c.categories) if c.missing_slot else -1
        return mapped


def numeric_values(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def _is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _from_spec(schema: Schema, name: str) -> Column:
    spec = schema[name]
    if spec.is_numeric:
        return NumericColumn(name, float(spec.min), float(spec.max), spec.nullable)  # type: ignore[arg-type]
    categories = tuple(spec.categories)
    other = categories.index(spec.other_category) if spec.other_category is not None else None
    return CategoricalColumn(name, categories, spec.nullable, other)


def _from_data(name: str, series: pd.Series) -> Column:
    kind = kind_from_dtype(series)
    has_missing = bool(series.isna().any())
    values = series.dropna()
    if kind in ("continuous", "integer"):
        numbers = numeric_values(values)
        lo, hi = (float(numbers.min()), float(numbers.max())) if len(numbers) else (0.0, 1.0)
        return NumericColumn(name, lo, hi if hi > lo else lo + 1.0, has_missing)
    categories = tuple(sorted(pd.unique(values.astype(object)), key=lambda v: (type(v).__name__, str(v))))
    return CategoricalColumn(name, categories, has_missing)
