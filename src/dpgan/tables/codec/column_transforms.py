"""Column transforms: one column of a table to and from its block of the generator's output.

Every transform is a pure function of the public `ColumnSpec`: no state is fitted on private
rows (pitfall: min/max scaling or category lists read off the data). Out-of-range values are
clamped to the public bounds, never dropped. A geo pair's transform builds on these
(dpgan.tables.codec.geo); TableEncoder (dpgan.tables.codec.encoder) puts them side by side.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.models.output_spans import SOFTMAX, TANH
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.table import Schema


class ColumnTransform:
    """Encode/decode one column from its public spec alone."""

    value_modes = 0

    def __init__(self, spec: ColumnSpec, dtype: str | None = None) -> None:
        self.spec = spec
        self.dtype = dtype

    @property
    def activations(self) -> list[tuple[str, int]]:
        raise NotImplementedError

    @property
    def width(self) -> int:
        return sum(w for _, w in self.activations)

    def span_value_modes(self) -> list[int]:
        """Per output span, how many leading slots are bins that carry a value (softmax spans only)."""
        return [self.value_modes if activation == SOFTMAX else 0 for activation, _ in self.activations]

    @property
    def names(self) -> list[str]:
        """The table columns this transform codes (one, or a geo pair's two)."""
        return [self.spec.name]

    @property
    def span_name(self) -> str:
        """The name its output spans carry: the column's (the anchors treat it as one variable)."""
        return self.spec.name

    def encode(self, series: pd.Series) -> np.ndarray:
        raise NotImplementedError

    def decode(self, block: np.ndarray, rng: np.random.Generator) -> pd.Series:
        raise NotImplementedError

    def encode_frame(self, frame: pd.DataFrame) -> np.ndarray:
        return self.encode(frame[self.spec.name])

    def decode_frame(self, block: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
        return self.decode(block, rng).reset_index(drop=True).to_frame(self.spec.name)


def sample_categories(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw one category index per row from the generator's probabilities (post-processing)."""
    probs = np.clip(probs, 0.0, None) + 1e-12
    cumulative = np.cumsum(probs / probs.sum(axis=1, keepdims=True), axis=1)
    draws = rng.random((probs.shape[0], 1))
    return np.minimum((draws > cumulative).sum(axis=1), probs.shape[1] - 1)


class NumericTransform(ColumnTransform):
    """Continuous or integer: the public range, scaled linearly, on a log1p scale or in ratio, is cut
    into `bins` bins (equal on the scale, or at the schema's public `bin_edges`); a row is a softmax
    over its mode [bins..., point masses..., missing] plus its position inside the bin in [-1, 1].
    Rows at a point mass or null carry 0 as position. With one bin and no point masses or nulls
    this is plain min-max scaling to [-1, 1].
    """

    @property
    def value_modes(self) -> int:  # type: ignore[override]
        return self.spec.bins

    @property
    def modes(self) -> int:
        return self.spec.bins + len(self.spec.point_masses) + int(self.spec.nullable)

    @property
    def activations(self) -> list[tuple[str, int]]:
        spans = [(TANH, 1)]
        if self.modes > 1:
            spans.append((SOFTMAX, self.modes))
        return spans

    def _scaled(self, values: np.ndarray) -> np.ndarray:
        """Values clipped to the public range and mapped to [0, 1] on the column's scale."""
        lo, hi = float(self.spec.min), float(self.spec.max)  # type: ignore[arg-type]
        if self.spec.scale == "ratio":
            return np.log(np.clip(values, lo, hi) / lo) / np.log(hi / lo)
        clipped = np.clip(values, lo, hi) - lo
        if self.spec.scale == "log":
            return np.log1p(clipped) / np.log1p(hi - lo)
        return clipped / (hi - lo)

    def _unscaled(self, unit: np.ndarray) -> np.ndarray:
        lo, hi = float(self.spec.min), float(self.spec.max)  # type: ignore[arg-type]
        if self.spec.scale == "ratio":
            return lo * np.exp(unit * np.log(hi / lo))
        if self.spec.scale == "log":
            return lo + np.expm1(unit * np.log1p(hi - lo))
        return lo + unit * (hi - lo)

    def _knots(self) -> tuple[np.ndarray, np.ndarray]:
        """Where the bins' edges lie on the scale, and where equal bins put them: with public
        `bin_edges` the unit interval is stretched piecewise linearly so that bin k is [k, k+1]/bins."""
        outer = np.array([float(self.spec.min), *map(float, self.spec.bin_edges), float(self.spec.max)])  # type: ignore[arg-type]
        return self._scaled(outer), np.linspace(0.0, 1.0, len(outer))

    def _to_unit(self, values: np.ndarray) -> np.ndarray:
        scaled = self._scaled(values)
        if not self.spec.bin_edges:
            return scaled
        on_scale, equal = self._knots()
        return np.interp(scaled, on_scale, equal)

    def _from_unit(self, unit: np.ndarray) -> np.ndarray:
        if self.spec.bin_edges:
            on_scale, equal = self._knots()
            unit = np.interp(unit, equal, on_scale)
        return self._unscaled(unit)

    def encode(self, series: pd.Series) -> np.ndarray:
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bins = self.spec.bins
        unit = self._to_unit(np.nan_to_num(values)) * bins
        mode = np.minimum(np.floor(unit), bins - 1).astype(np.int64)
        position = 2.0 * (unit - mode) - 1.0
        for index, mass in enumerate(self.spec.point_masses, start=bins):
            mode[values == float(mass)] = index
        mode[np.isnan(values)] = self.modes - 1
        position[mode >= bins] = 0.0
        columns = [position[:, None]]
        if self.modes > 1:
            one_hot = np.zeros((len(values), self.modes))
            one_hot[np.arange(len(values)), mode] = 1.0
            columns.append(one_hot)
        return np.concatenate(columns, axis=1).astype(np.float32)

    def decode(self, block: np.ndarray, rng: np.random.Generator) -> pd.Series:
        lo, hi = float(self.spec.min), float(self.spec.max)  # type: ignore[arg-type]
        bins = self.spec.bins
        modes = sample_categories(block[:, 1 : 1 + self.modes], rng) if self.modes > 1 else np.zeros(len(block), int)
        position = (np.clip(block[:, 0].astype(np.float64), -1.0, 1.0) + 1.0) / 2.0
        values = self._from_unit((np.minimum(modes, bins - 1) + position) / bins)
        for index, mass in enumerate(self.spec.point_masses, start=bins):
            values[modes == index] = float(mass)
        if self.spec.kind == "integer":
            values = np.clip(np.round(values), np.ceil(lo), np.floor(hi))
        missing = modes == self.modes - 1 if self.spec.nullable else np.zeros(len(values), dtype=bool)
        if self.spec.kind == "integer":
            series = pd.Series(values.astype(np.int64), name=self.spec.name)
            if self.spec.nullable:
                series = series.astype("Int64")
                series[missing] = pd.NA
        else:
            values[missing] = np.nan
            series = pd.Series(values, name=self.spec.name)
        return restore_dtype(series, self.dtype)


class BinaryCodeTransform(ColumnTransform):
    """A small integer column as bits (Boob et al.): the value's offset from the public minimum,
    most significant bit first, each bit ±1 in one tanh span, then a ±1 null bit if nullable.
    Four bits carry sixteen levels where a softmax needs sixteen outputs. Decoding reads each bit's
    sign; a code beyond the public range is rounded into it (the top level), so every released
    value lies inside the public bounds."""

    @property
    def levels(self) -> int:
        return self.spec.integer_levels

    @property
    def bits(self) -> int:
        return max(1, int(self.levels - 1).bit_length())

    @property
    def activations(self) -> list[tuple[str, int]]:
        return [(TANH, self.bits + int(self.spec.nullable))]

    def encode(self, series: pd.Series) -> np.ndarray:
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        missing = np.isnan(values)
        low = int(np.ceil(float(self.spec.min)))  # type: ignore[arg-type]
        codes = np.clip(np.round(np.nan_to_num(values, nan=low)) - low, 0, self.levels - 1).astype(np.int64)
        codes[missing] = 0
        shifts = np.arange(self.bits - 1, -1, -1)
        bits = 2.0 * ((codes[:, None] >> shifts) & 1) - 1.0
        if self.spec.nullable:
            bits = np.concatenate([bits, np.where(missing, 1.0, -1.0)[:, None]], axis=1)
        return bits.astype(np.float32)

    def decode(self, block: np.ndarray, rng: np.random.Generator) -> pd.Series:
        ones = block[:, : self.bits] > 0.0
        codes = (ones * (1 << np.arange(self.bits - 1, -1, -1))).sum(axis=1)
        low = int(np.ceil(float(self.spec.min)))  # type: ignore[arg-type]
        values = low + np.minimum(codes, self.levels - 1)
        series = pd.Series(values.astype(np.int64), name=self.spec.name)
        if self.spec.nullable:
            series = series.astype("Int64")
            series[block[:, self.bits] > 0.0] = pd.NA
        return restore_dtype(series, self.dtype)


class CategoricalTransform(ColumnTransform):
    """Categorical or boolean: one-hot over the public categories, plus a null slot if nullable."""

    @property
    def slots(self) -> list:
        return list(self.spec.categories) + ([None] if self.spec.nullable else [])

    @property
    def activations(self) -> list[tuple[str, int]]:
        return [(SOFTMAX, len(self.slots))]

    def encode(self, series: pd.Series) -> np.ndarray:
        index = {c: i for i, c in enumerate(self.spec.categories)}
        other = index.get(self.spec.other_category) if self.spec.other_category is not None else None
        null_slot = len(self.spec.categories)
        # each distinct value looked up once (sampling re-encodes every generated chunk for the
        # label model, so a per-row Python loop here was a fifth of the sampling time)
        inverse, uniques = pd.factorize(series.to_numpy(dtype=object), use_na_sentinel=True)
        lookup = np.empty(len(uniques) + 1, dtype=np.int64)
        lookup[-1] = null_slot  # factorize's -1: None, NaN, pd.NA
        for position, value in enumerate(uniques):
            if value in index:
                lookup[position] = index[value]
            elif other is not None:
                lookup[position] = other
            else:  # validate() rejects this earlier; kept as a guard
                raise ValueError(f"column {self.spec.name!r}: unknown category {value!r}")
        codes = lookup[inverse]
        one_hot = np.zeros((len(series), len(self.slots)), dtype=np.float32)
        one_hot[np.arange(len(series)), codes] = 1.0
        return one_hot

    def decode(self, block: np.ndarray, rng: np.random.Generator) -> pd.Series:
        codes = sample_categories(block, rng)
        slots = np.array(self.slots, dtype=object)
        series = pd.Series(slots[codes], name=self.spec.name, dtype=object)
        if self.spec.kind == "boolean":
            series = series.astype("boolean" if self.spec.nullable else bool)
        return restore_dtype(series, self.dtype)


def restore_dtype(series: pd.Series, dtype: str | None) -> pd.Series:
    """Give the column back the dtype it had in the training table, where that is possible."""
    if dtype is None or str(series.dtype) == dtype:
        return series
    try:
        if dtype == "category":
            return series.astype("category")
        if series.isna().any() and dtype.startswith(("int", "uint")):
            return series.astype("Int64")
        if dtype == "bool" and series.isna().any():
            return series.astype("boolean")
        return series.astype(dtype)
    except (TypeError, ValueError):
        return series


def public_dtypes(schema: Schema) -> dict[str, str | None]:
    """The dtype each column gets back when sampled, from its public kind and nullability only.

    Never the training table's own dtypes: pandas infers those from the values (one empty cell
    turns int64 into float64), so saving them would release a bit per column."""
    dtypes: dict[str, str | None] = {}
    for spec in schema.columns:
        if spec.kind == "integer":
            dtypes[spec.name] = "Int64" if spec.nullable else "int64"
        elif spec.kind == "continuous":
            dtypes[spec.name] = "float64"
        elif spec.kind == "boolean":
            dtypes[spec.name] = "boolean" if spec.nullable else "bool"
        else:  # objects, as the categories are written in the schema; dates as their format says
            dtypes[spec.name] = None
    return dtypes


def make_transform(spec: ColumnSpec, dtype: str | None = None) -> ColumnTransform:
    if spec.encoding == "binary":
        return BinaryCodeTransform(spec, dtype)
    if spec.is_numeric:
        return NumericTransform(spec, dtype)
    return CategoricalTransform(spec, dtype)


__all__ = [
    "BinaryCodeTransform",
    "CategoricalTransform",
    "ColumnTransform",
    "NumericTransform",
    "make_transform",
    "public_dtypes",
    "restore_dtype",
    "sample_categories",
]
