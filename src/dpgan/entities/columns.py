"""A column's public cells: each value of one column to a cell of its public domain, and back.

The cells come from the column's ColumnSpec alone (public): a categorical or boolean column has one
cell per category; a numeric one has its schema's bins (its `bin_edges`, or `bins` equal parts on
its scale), or `default_bins` equal parts when the schema has one bin, and an integer column with no
more whole numbers than that has one cell per number. Every column has one more cell last: missing
(a null, text in a numeric column, a category outside the list without an `other_category`).

Each value is mapped by a rule that reads that value alone (dpgan.tables.schema.cells), so one
entity never changes how another's values are mapped. A value mapped into the domain rather than
taken as it is (clamped into the bounds, sent to the missing cell or to `other_category`) is
flagged, so the reader can count the entities that had one (with DP).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.tables.schema.cells import NULL, NUMBER, boolean_value, canonical_text, cell_keys, classify
from dpgan.tables.schema.columns import ColumnSpec


@dataclass(frozen=True)
class ColumnCells:
    """The cells of one column (the last one: missing)."""

    spec: ColumnSpec
    edges: np.ndarray  # numeric: the bins' edges on the column's scale; else empty
    integers: bool  # an integer column with one cell per whole number

    @classmethod
    def of(cls, spec: ColumnSpec, default_bins: int) -> ColumnCells:
        if not spec.is_numeric:
            return cls(spec, np.zeros(0), False)
        if spec.kind == "integer" and spec.bins == 1 and spec.integer_levels <= default_bins:
            low = float(np.ceil(spec.min))  # type: ignore[arg-type]
            return cls(spec, np.arange(spec.integer_levels + 1) + low - 0.5, True)
        if spec.bin_edges:
            inner = np.array([_scaled(spec, e) for e in spec.bin_edges])
        else:
            count = spec.bins if spec.bins > 1 else default_bins
            inner = np.linspace(_scaled(spec, spec.min), _scaled(spec, spec.max), count + 1)[1:-1]
        return cls(spec, np.concatenate([[_scaled(spec, spec.min)], inner, [_scaled(spec, spec.max)]]), False)

    @property
    def size(self) -> int:
        """Cells, the missing one included."""
        if self.spec.is_numeric:
            return len(self.edges)  # len(edges) - 1 bins, plus missing
        return len(self.spec.categories) + 1

    @property
    def missing(self) -> int:
        return self.size - 1

    def codes(self, values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """Each value's cell, and whether it was mapped into the domain (not taken as it is)."""
        spec = self.spec
        if spec.is_numeric:
            cells = classify(values)
            number = cells.number.copy()
            mapped = cells.kind != NUMBER
            low, high = float(spec.min), float(spec.max)  # type: ignore[arg-type]
            present = cells.kind == NUMBER
            outside = present & ((number < low) | (number > high))
            mapped |= outside
            clamped = np.clip(np.where(present, number, low), low, high)
            scaled = _scaled(spec, clamped) if not self.integers else np.round(clamped)
            code = np.clip(np.searchsorted(self.edges, scaled, side="right") - 1, 0, len(self.edges) - 2)
            code = np.where(present, code, self.missing)
            return code.astype(np.int64), (mapped & (cells.kind != NULL)) | (~present & (not spec.nullable))
        if spec.kind == "boolean":
            flags = values.map(lambda v: boolean_value(v) if not _is_null(v) else None)
            code = np.array([self.missing if f is None else int(bool(f)) for f in flags], dtype=np.int64)
            null = np.array([_is_null(v) for v in values], dtype=bool)
            return code, (code == self.missing) & (~null | (not spec.nullable))
        keys = cell_keys(values)
        index = {canonical_text(c): i for i, c in enumerate(spec.categories)}
        fallback = self.missing if spec.other_category is None else spec.categories.index(spec.other_category)
        code = np.array([self.missing if k is None else index.get(k, fallback) for k in keys], dtype=np.int64)
        outside = np.array([k is not None and k not in index for k in keys], dtype=bool)
        return code, outside | ((code == self.missing) & (not spec.nullable))

    def values(self, codes: np.ndarray, rng: np.random.Generator) -> pd.Series:
        """Values for cells (post-processing): a category, or a uniform place inside a bin on the
        column's scale; the missing cell gives a null."""
        spec = self.spec
        codes = np.asarray(codes, dtype=np.int64)
        missing = codes == self.missing
        if not spec.is_numeric:
            categories = np.array(list(spec.categories) + [None], dtype=object)
            return pd.Series(categories[codes], dtype=object)
        safe = np.where(missing, 0, codes)
        if self.integers:
            number = self.edges[safe] + 0.5
        else:
            place = self.edges[safe] + rng.random(len(codes)) * (self.edges[safe + 1] - self.edges[safe])
            number = np.clip(_unscaled(spec, place), spec.min, spec.max)
            if spec.kind == "integer":
                number = np.round(number)
        out = pd.Series(np.where(missing, np.nan, number))
        if spec.kind == "integer" and not missing.any():
            return out.astype(np.int64)
        return out


def _is_null(value: object) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA


def _scaled(spec: ColumnSpec, x: float | np.ndarray) -> float | np.ndarray:
    """A numeric value on its column's scale (ColumnSpec.scale: linear, log from min, or ratio)."""
    if spec.scale == "log":
        return np.log1p(np.asarray(x, dtype=np.float64) - spec.min)
    if spec.scale == "ratio":
        return np.log(np.asarray(x, dtype=np.float64) / spec.min)
    return np.asarray(x, dtype=np.float64) if isinstance(x, np.ndarray) else float(x)  # type: ignore[arg-type]


def _unscaled(spec: ColumnSpec, y: np.ndarray) -> np.ndarray:
    if spec.scale == "log":
        return np.expm1(y) + spec.min
    if spec.scale == "ratio":
        return np.exp(y) * spec.min
    return y


__all__ = ["ColumnCells"]
