"""Series between their public schema and the networks' [-1, 1] arrays, and back.

Reading is dpgan.sequences.reader's (the unit rule: each series kept or dropped by its own cells,
with the reason counted). `encode` then needs a complete schema (public, or completed by the DP
releases of dpgan.sequences.dp_schema): each value column is scaled from its [min, max] to [-1, 1]
(values outside are clamped to the bounds, as for tables), the label becomes its index among the
categories. A series whose label is not in the label set (public, or DP-released) is dropped and
counted like any other unreadable series: one series never decides whether the fit runs. With an
entity column the unit is the entity: it is kept when at least one of its series is, and the
tally counts entities. Messages name columns and problems, never a value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.privacy.unit_rule import UnitTally
from dpgan.sequences.reader import (
    ENTITY_REASONS,
    LABEL_OUTSIDE,
    NO_USABLE_SERIES,
    RawSeries,
    read_array_raw,
    read_long_raw,
)
from dpgan.sequences.schema import SequenceSchema
from dpgan.tables.schema.cells import canonical_text


@dataclass
class SeriesSet:
    """Kept series scaled to [-1, 1], their labels and owners, and the tally of the units."""

    values: np.ndarray  # (N, T, F) float32
    labels: np.ndarray | None  # (N,) category indices
    entities: np.ndarray | None  # (N,) owner codes: private, used for sampling units only, never saved
    tally: UnitTally  # units (series, or entities) kept and dropped per reason: released only with DP
    dropped_series: int = 0  # series dropped, whatever the unit (private: tests and the tally only)

    @property
    def dropped(self) -> int:
        """Series dropped (any reason)."""
        return self.dropped_series

    @property
    def dropped_units(self) -> int:
        """Units dropped: series, or entities left with no kept series."""
        return self.tally.total_dropped


def _bounds(schema: SequenceSchema) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    schema.require_complete()
    low = np.array([v.min for v in schema.values], dtype=np.float64)
    high = np.array([v.max for v in schema.values], dtype=np.float64)
    return low, high, np.array([v.scale == "log" for v in schema.values])


def scale(values: np.ndarray, schema: SequenceSchema) -> np.ndarray:
    """Public bounds → [-1, 1], per value column (last axis): linear, or log1p(x − min) scaled."""
    low, high, log = _bounds(schema)
    shifted = np.clip(values, low, high) - low
    unit = np.where(log, np.log1p(shifted) / np.log1p(high - low), shifted / (high - low))
    return (2.0 * unit - 1.0).astype(np.float32)


def unscale(values: np.ndarray, schema: SequenceSchema) -> np.ndarray:
    low, high, log = _bounds(schema)
    unit = (np.clip(values.astype(np.float64), -1.0, 1.0) + 1.0) / 2.0
    return low + np.where(log, np.expm1(unit * np.log1p(high - low)), unit * (high - low))


def _label_codes(labels: np.ndarray, schema: SequenceSchema) -> np.ndarray:
    """Category indices of the labels' canonical texts; -1 for a label outside the label set."""
    index = {canonical_text(c): i for i, c in enumerate(schema.categories)}
    return np.fromiter((index.get(str(v), -1) for v in labels), dtype=np.int64, count=len(labels))


def encode(raw: RawSeries, schema: SequenceSchema) -> SeriesSet:
    """Scale the kept series with the (complete) schema and code their labels; series whose label
    is outside the label set are dropped and counted (module docstring)."""
    schema.require_complete()
    values, labels, entities = raw.values, None, raw.entities
    series = UnitTally(raw.series.reasons)
    series.merge(raw.series)
    if schema.label is not None:
        if raw.labels is None:
            raise InputError("the schema names a label: pass one label per series")
        labels = _label_codes(raw.labels, schema)
        keep = labels >= 0
        series.kept -= int((~keep).sum())
        series.drop(LABEL_OUTSIDE, int((~keep).sum()))
        values, labels = values[keep], labels[keep]
        entities = None if entities is None else entities[keep]
    elif raw.labels is not None:
        raise InputError("labels were given but the schema has no label column")
    if entities is None:
        tally = series
    else:
        tally = UnitTally(ENTITY_REASONS)
        tally.keep(len(np.unique(entities)))
        tally.drop(NO_USABLE_SERIES, raw.units - tally.kept)
        entities = pd.factorize(entities, sort=True)[0].astype(np.int64)
    return SeriesSet(scale(values, schema), labels, entities, tally, series.total_dropped)


def read_long(frame: pd.DataFrame, schema: SequenceSchema) -> SeriesSet:
    """The kept series of a long table (one row per reading), in the order of their ids."""
    return encode(read_long_raw(frame, schema), schema)


def read_array(array: np.ndarray, labels: np.ndarray | None, schema: SequenceSchema) -> SeriesSet:
    """Series given as an (N, T) or (N, T, F) array (and optional labels): same checks, same scaling."""
    return encode(read_array_raw(array, labels, schema), schema)


def label_names(codes: np.ndarray | None, schema: SequenceSchema) -> np.ndarray | None:
    """Category indices → the schema's label values (None stays None)."""
    return None if codes is None else np.asarray(schema.categories, dtype=object)[codes]


def write_long(
    values: np.ndarray, labels: np.ndarray | None, schema: SequenceSchema, *, first: int = 0
) -> pd.DataFrame:
    """Generated series (scaled) as a long table with the input's columns: series numbered
    first..first+N-1 in every id column (a label or entity among them gets its own value; `first`
    continues the numbers of the chunks written before), times 0..T-1; each synthetic series is its
    own entity (no real owner is behind it)."""
    n, length, _ = values.shape
    numbers = np.repeat(np.arange(first, first + n), length)
    out = pd.DataFrame({c: numbers for c in schema.id_columns})
    out[schema.time] = np.tile(np.arange(length), n)
    flat = unscale(values, schema).reshape(n * length, -1)
    for index, name in enumerate(schema.value_names):
        out[name] = flat[:, index]
    if schema.entity is not None and schema.entity != schema.label:
        out[schema.entity] = numbers  # each synthetic series is its own entity
    if schema.label is not None and labels is not None:
        out[schema.label] = label_names(np.repeat(labels, length), schema)
    return out[[c for c in schema.columns if c in out]]


__all__ = [
    "RawSeries",
    "SeriesSet",
    "encode",
    "label_names",
    "read_array",
    "read_array_raw",
    "read_long",
    "read_long_raw",
    "scale",
    "unscale",
    "write_long",
]
