"""Long tables (or 3-D arrays) of series in, scaled arrays out, and back.

Reading has two stages. `read_long_raw` / `read_array_raw` check the table against the schema's
column roles and keep the complete series unscaled (`RawSeries`): a series is kept when it has
exactly `length` readings at distinct times and no missing value; every other series (a DST day of
23 or 25 hours, a day with a gap) is dropped, and the fit releases how many with DP (the count of
dropped series is as private as any other count). `encode` then needs a complete schema (public,
or completed by the DP releases of dpgan.sequences.dp_schema): each value column is scaled from its
[min, max] to [-1, 1] (values outside are clamped to the bounds, as for tables), the label becomes
its index among the categories. A public label set is a claim about the data: a label outside it is
an error. A DP-released one is a selection: series with another label are dropped and counted with
the dropped units. Messages name columns and problems, never a value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.sequences.schema import DP, SequenceSchema

MAX_SERIES = 5_000_000


@dataclass
class SeriesSet:
    """Complete series scaled to [-1, 1], their labels and owners, and how many were dropped."""

    values: np.ndarray  # (N, T, F) float32
    labels: np.ndarray | None  # (N,) category indices
    entities: np.ndarray | None  # (N,) owner codes: private, used for sampling units only, never saved
    dropped: int  # series dropped (incomplete)
    dropped_units: int = 0  # units left with no complete series (= dropped without an entity column)


@dataclass
class RawSeries:
    """The complete series before scaling: private values, read only by DP releases and `encode`."""

    values: np.ndarray  # (N, T, F) float64, unscaled
    labels: np.ndarray | None  # (N,) the label cells as read (object)
    entities: np.ndarray | None  # (N,) owner codes 0..E-1
    dropped: int  # series dropped (incomplete)
    units: int  # units in the input (series, or entities), complete or not


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


def _label_codes(labels: pd.Series, schema: SequenceSchema) -> np.ndarray:
    """Category indices; -1 for a label outside a DP-released set (the caller drops those series)."""
    index = {str(c): i for i, c in enumerate(schema.categories)}
    if labels.isna().any():
        raise InputError(f"label column {schema.label!r} holds a missing value: every series needs its label")
    codes = labels.map(lambda v: index.get(str(v), -1)).to_numpy(dtype=np.int64)
    if (codes < 0).any() and schema.categories_source != DP:
        raise InputError(f"label column {schema.label!r} holds a value outside the schema's categories")
    return codes


def encode(raw: RawSeries, schema: SequenceSchema) -> SeriesSet:
    """Scale the complete series with the (complete) schema and code their labels; with a DP label
    set, series whose label was not released are dropped, and units left with none are counted."""
    schema.require_complete()
    values, labels, entities = raw.values, None, raw.entities
    if schema.label is not None:
        if raw.labels is None:
            raise InputError("the schema names a label: pass one label per series")
        labels = _label_codes(pd.Series(raw.labels, dtype=object), schema)
        keep = labels >= 0
        values, labels = values[keep], labels[keep]
        entities = None if entities is None else entities[keep]
    elif raw.labels is not None:
        raise InputError("labels were given but the schema has no label column")
    dropped = raw.dropped + (len(raw.values) - len(values))
    kept_units = len(values) if entities is None else len(np.unique(entities))
    if entities is not None:
        entities = pd.factorize(entities)[0].astype(np.int64)
    return SeriesSet(scale(values, schema), labels, entities, int(dropped), int(raw.units - kept_units))


def read_long(frame: pd.DataFrame, schema: SequenceSchema) -> SeriesSet:
    """The complete series of a long table (one row per reading), in the order of their ids."""
    return encode(read_long_raw(frame, schema), schema)


def read_array(array: np.ndarray, labels: np.ndarray | None, schema: SequenceSchema) -> SeriesSet:
    """Series given as an (N, T) or (N, T, F) array (and optional labels): same checks, same scaling."""
    return encode(read_array_raw(array, labels, schema), schema)


def read_long_raw(frame: pd.DataFrame, schema: SequenceSchema) -> RawSeries:
    """The complete series of a long table, unscaled, in the order of their ids (needs only the
    schema's column roles and length)."""
    if not isinstance(frame, pd.DataFrame) or len(frame) == 0:
        raise InputError("the table is empty: no series to learn from")
    missing = [c for c in schema.columns if c not in frame.columns]
    if missing:
        raise InputError(f"the table lacks the schema's columns {', '.join(map(repr, missing))}")
    if frame[schema.id].isna().any():
        raise InputError(f"id column {schema.id!r} has missing cells: every reading needs its series id")
    if frame[schema.time].isna().any():
        raise InputError(f"time column {schema.time!r} has missing cells: every reading needs its time")
    values = {}
    for name in schema.value_names:
        numbers = pd.to_numeric(frame[name], errors="coerce")
        if (numbers.isna() & frame[name].notna()).any():
            raise InputError(f"value column {name!r} holds text where numbers belong")
        values[name] = numbers.to_numpy(dtype=np.float64)
    if any(np.isinf(v).any() for v in values.values()):
        raise InputError("a value column holds an infinite value")
    times = frame[schema.time]
    as_numbers = pd.to_numeric(times, errors="coerce")
    if not as_numbers.isna().any():  # a CSV's "10" must sort after "9"
        times = as_numbers
    ordered = pd.DataFrame({"id": frame[schema.id].to_numpy(), "time": times.to_numpy()} | values)
    try:
        ordered = ordered.sort_values(["id", "time"], kind="stable")
    except TypeError:
        raise InputError(f"the id and time columns ({schema.id!r}, {schema.time!r}) must each hold one type") from None
    groups = ordered.groupby("id", sort=False)
    sizes = groups.size()
    if len(sizes) > MAX_SERIES:
        raise InputError(f"the table has more than {MAX_SERIES:,} series")
    distinct = groups["time"].nunique()
    complete_ids = sizes.index[(sizes == schema.length) & (distinct == schema.length)]
    kept = ordered[ordered["id"].isin(complete_ids)]
    array = kept[schema.value_names].to_numpy(dtype=np.float64).reshape(-1, schema.length, len(schema.values))
    has_nan = np.isnan(array).any(axis=(1, 2))
    array = array[~has_nan]
    ids = kept["id"].to_numpy()[:: schema.length][~has_nan]
    dropped = len(sizes) - len(ids)
    by_id = frame.drop_duplicates(schema.id).set_index(schema.id)
    labels = entities = None
    units = len(sizes)
    if schema.label is not None:
        per_series = frame.groupby(schema.id, sort=False)[schema.label].nunique(dropna=False)
        if (per_series > 1).any():
            raise InputError(f"label column {schema.label!r} changes within a series: it must be constant per series")
        labels = by_id.loc[ids, schema.label].to_numpy(dtype=object)
    if schema.entity is not None:
        per_series = frame.groupby(schema.id, sort=False)[schema.entity].nunique(dropna=False)
        if (per_series > 1).any() or frame[schema.entity].isna().any():
            raise InputError(f"entity column {schema.entity!r} must name one owner per series, with no gaps")
        entities = pd.factorize(by_id.loc[ids, schema.entity].to_numpy())[0].astype(np.int64)
        units = int(frame[schema.entity].nunique())
    return RawSeries(array, labels, entities, int(dropped), units)


def read_array_raw(array: np.ndarray, labels: np.ndarray | None, schema: SequenceSchema) -> RawSeries:
    """An (N, T) or (N, T, F) array of series (and optional labels), unscaled; each series is a unit."""
    data = np.asarray(array)
    if data.ndim == 2:
        data = data[:, :, None]
    if data.ndim != 3 or data.shape[0] == 0:
        raise InputError("series must be a non-empty (N, T) or (N, T, F) array")
    if data.shape[1:] != (schema.length, len(schema.values)):
        raise InputError(f"each series must have shape ({schema.length}, {len(schema.values)}) as the schema says")
    if not np.issubdtype(data.dtype, np.number):
        raise InputError("series must hold numbers")
    data = data.astype(np.float64)
    if np.isinf(data).any():
        raise InputError("the series hold an infinite value")
    complete = ~np.isnan(data).any(axis=(1, 2))
    kept_labels = None
    if schema.label is not None:
        if labels is None or len(labels) != len(data):
            raise InputError("the schema names a label: pass one label per series")
        kept_labels = np.asarray(labels, dtype=object)[complete]
    elif labels is not None:
        raise InputError("labels were given but the schema has no label column")
    return RawSeries(data[complete], kept_labels, None, int((~complete).sum()), len(data))


def label_names(codes: np.ndarray | None, schema: SequenceSchema) -> np.ndarray | None:
    """Category indices → the schema's label values (None stays None)."""
    return None if codes is None else np.asarray(schema.categories, dtype=object)[codes]


def write_long(values: np.ndarray, labels: np.ndarray | None, schema: SequenceSchema) -> pd.DataFrame:
    """Generated series (scaled) as a long table with the input's columns: ids 0..N-1, times
    0..T-1; each synthetic series is its own entity (no real owner is behind it)."""
    n, length, _ = values.shape
    ids = np.repeat(np.arange(n), length)
    out = pd.DataFrame({schema.id: ids, schema.time: np.tile(np.arange(length), n)})
    flat = unscale(values, schema).reshape(n * length, -1)
    for index, name in enumerate(schema.value_names):
        out[name] = flat[:, index]
    if schema.label is not None and labels is not None:
        out[schema.label] = label_names(np.repeat(labels, length), schema)
    if schema.entity is not None and schema.entity != schema.label:
        out[schema.entity] = ids  # each synthetic series is its own entity
    return out


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
