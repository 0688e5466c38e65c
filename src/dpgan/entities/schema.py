"""The entity kind's public facts: the key column, each table's columns (the table kind's
ColumnSpec, read through its public schema API), the time column and k = `max_events`.

All of it is public metadata the user supplies, as a schema per table or as hints (categorical
lists, numeric bounds); nothing here reads a private value, so nothing here can depend on a unit.
A table with neither a schema nor a hint for any of its columns is one line: this step of the kind
does not buy a schema with DP (the table kind's `dpgan schema` can, one table at a time).

The time column, when there is one, is declared by its public window (`min`, `max`) and its
format: "number" (any number), "integer" (whole numbers), "order" (whole numbers that only number
an entity's events, as a series' step index: sampled events are numbered from the window's min in
time order), a strftime format such as "%Y-%m-%dT%H:%M:%SZ" that every time cell is parsed with, one
cell at a time, and that sampled times are written in, or a pandas datetime64 dtype
("datetime64[us]", "datetime64[ns, Europe/Paris]"; "datetime64" alone is pandas' default,
microseconds) for a column of typed date-times: each typed cell is read by the tables' date rule
(dpgan.tables.schema.datetimes: zoned cells in UTC, naive ones by their wall clock) and sampled times
are written back in that dtype, in its zone. A cell the format does not read is that event's problem
alone (reader.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.datetimes import (
    TIMESTAMP,
    TYPED,
    TYPED_DATE,
    cell_format,
    cell_value,
    to_iso,
    to_units,
    write_values,
)
from dpgan.tables.schema.table import Schema, read_schema_file

ORDER = "order"
NUMBER_FORMATS = ("number", "integer", ORDER)
MAX_EVENTS = 10_000
TOP_KEYS = frozenset(("key", "max_events", "time", "parents", "events"))
TIME_KEYS = frozenset(("column", "min", "max", "format"))


@dataclass(frozen=True)
class TimeSpec:
    """The events' time column: its public window [min, max] and its format."""

    column: str
    min: Any
    max: Any
    format: str = "number"

    def __post_init__(self) -> None:
        if not isinstance(self.column, str) or not self.column:
            raise InputError("the time column needs a name")
        if not isinstance(self.format, str) or not self.format:
            raise InputError(
                "the time format is 'number', 'integer', 'order', a strftime format such as %Y-%m-%d or a "
                "datetime64 dtype"
            )
        if self.is_typed:
            typed_dtype(self.format, self.column)
        low, high = self.bounds
        if not low < high:
            raise InputError(f"the time column {self.column!r}: its window's min must come before its max")

    @property
    def is_number(self) -> bool:
        return self.format in NUMBER_FORMATS

    @property
    def is_typed(self) -> bool:
        """A column of typed date-times (a datetime64 dtype), not text or numbers."""
        return self.format.startswith(TYPED)

    @property
    def bounds(self) -> tuple[float, float]:
        """The window in the time's numbers (seconds since 1970 for a date format; for a typed column,
        its ends as ISO text, date-time values or seconds, a zoned end in UTC)."""
        values = []
        for end, value in (("min", self.min), ("max", self.max)):
            if self.is_typed:
                try:
                    number = to_units(self.column, TIMESTAMP, value)
                except InputError:
                    number = math.nan
            else:
                number = parse_times(pd.Series([value], dtype=object), self)[0]
            if not math.isfinite(number):
                raise InputError(f"the time column {self.column!r}: its window's {end} is not a time in its format")
            values.append(float(number))
        return values[0], values[1]

    def to_dict(self) -> dict[str, Any]:
        low, high = (to_iso(TIMESTAMP, b) for b in self.bounds) if self.is_typed else (self.min, self.max)
        return {"column": self.column, "min": low, "max": high, "format": self.format}


def typed_dtype(fmt: str, column: str) -> Any:
    """The pandas dtype a typed time format names, or one line saying what is wrong."""
    try:
        dtype = pd.api.types.pandas_dtype(f"{TYPED}[us]" if fmt == TYPED else fmt)
    except (TypeError, ValueError):
        dtype = None
    if dtype is None or not pd.api.types.is_datetime64_any_dtype(dtype):
        raise InputError(
            f"the time column {column!r}: format {fmt!r} is not a datetime64 dtype (e.g. datetime64[us], "
            "datetime64[ns, UTC])"
        )
    return dtype


def time_format_of(events: pd.DataFrame, column: str) -> str:
    """The time format a window without one implies, from the caller's dtype of the column (public, as
    the key column's is: reader.check_keys): a datetime64 column its dtype, an integer one "integer",
    any other "number". No cell is read."""
    dtype = events[column].dtype if column in events.columns else None
    if dtype is not None and pd.api.types.is_datetime64_any_dtype(dtype):
        return str(dtype)
    if dtype is not None and pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        return "integer"
    return "number"


def parse_times(cells: pd.Series, spec: TimeSpec) -> np.ndarray:
    """Each cell's time as a number (NaN where the format does not read it), read cell by cell:
    a number format reads finite numbers (whole ones for "integer" and "order"); a date format, text in exactly
    that format (seconds since 1970)."""
    if spec.is_typed:
        return _typed_seconds(cells)
    if spec.is_number:
        from dpgan.tables.schema.cells import NUMBER, classify

        cells_ = classify(cells)
        number = np.where(cells_.kind == NUMBER, cells_.number, np.nan)
        if spec.format in ("integer", ORDER):
            number = np.where(number == np.round(number), number, np.nan)
        return number
    texts = cells.map(lambda v: v.strip() if isinstance(v, str) else None)
    parsed = pd.to_datetime(texts, format=spec.format, errors="coerce")
    if getattr(parsed.dt, "tz", None) is not None:
        parsed = parsed.dt.tz_convert("UTC").dt.tz_localize(None)
    seconds = parsed.to_numpy(dtype="datetime64[ns]").astype("int64").astype(np.float64) / 1e9
    return np.where(parsed.isna().to_numpy(), np.nan, seconds)


def _typed_seconds(cells: pd.Series) -> np.ndarray:
    """Each typed date-time cell in seconds since 1970 (a zoned one in UTC, a naive one by its wall clock),
    NaN for any other cell (text, numbers, NaT): the tables' rule (`cell_value`) on one cell at a
    time, run once per distinct value; a datetime64 column, whose every cell is typed, at once."""
    if pd.api.types.is_datetime64_any_dtype(cells.dtype):
        stamps = cells.dt.tz_convert("UTC").dt.tz_localize(None) if cells.dt.tz is not None else cells
        return ((stamps - pd.Timestamp(0)) / pd.Timedelta(seconds=1)).to_numpy(dtype=np.float64, na_value=np.nan)
    codes, uniques = pd.factorize(pd.Series(cells.to_numpy(dtype=object), dtype=object), use_na_sentinel=True)
    read = [cell_value(v, TIMESTAMP) if cell_format(v) >= TYPED_DATE else math.nan for v in uniques]
    parsed = np.append(np.asarray(read, dtype=np.float64), np.nan)  # code -1 (null) takes the last
    return parsed[codes]


def format_times(values: np.ndarray, spec: TimeSpec, owner: np.ndarray | None = None) -> pd.Series:
    """Times (numbers) written in the input's format: numbers, text, or the typed column's dtype (the
    tables' writer, whole seconds, then put in the dtype's zone and unit). "order": each event's rank
    among its entity's (`owner`, the events in time order) from the window's min, whatever the drawn
    times (post-processing)."""
    if spec.format == ORDER and owner is not None:
        owner = np.asarray(owner)
        by_owner = np.argsort(owner, kind="stable")
        sizes = np.bincount(owner) if len(owner) else np.zeros(0, np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(sizes) else np.zeros(0, np.int64)
        rank = np.empty(len(owner), dtype=np.int64)
        rank[by_owner] = np.arange(len(owner)) - np.repeat(starts, sizes)
        return pd.Series(int(round(spec.bounds[0])) + rank)
    if spec.is_typed:
        dtype = typed_dtype(spec.format, spec.column)
        stamps = write_values(np.asarray(values, dtype=np.float64), TIMESTAMP, TYPED, None, "second", spec.column)
        zone = getattr(dtype, "tz", None)
        if zone is not None:
            stamps = stamps.dt.tz_localize("UTC").dt.tz_convert(zone)
        return stamps.astype(dtype).reset_index(drop=True)
    if spec.format == "number":
        return pd.Series(np.asarray(values, dtype=np.float64))
    if spec.format in ("integer", ORDER):
        return pd.Series(np.round(values).astype(np.int64))
    return pd.Series(_stamps(values, spec.format).strftime(spec.format), dtype=object)


def time_text(seconds: float, fmt: str) -> str:
    """One time (seconds since 1970) as text in a date format (a learned window's ends)."""
    return str(_stamps(np.array([seconds]), fmt).strftime(fmt)[0])


def _stamps(values: np.ndarray, fmt: str) -> pd.DatetimeIndex:
    """Times (seconds since 1970, UTC) as stamps; zoned in UTC when the format writes a zone (%z),
    as the tables write zoned input (times are read in UTC: `parse_times`)."""
    stamps = pd.to_datetime(np.round(np.asarray(values, dtype=np.float64)).astype(np.int64), unit="s")
    return stamps.tz_localize("UTC") if "%z" in fmt else stamps


@dataclass(frozen=True)
class EntitySchema:
    """The key, each table's modelled columns, the time column and k (at most k events of an entity
    are read for the event columns' statistics; see statistics.py for what k does to sensitivity)."""

    key: str
    parents: Schema
    events: Schema
    max_events: int = 32
    time: TimeSpec | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise InputError("the key column needs a name")
        m = self.max_events
        if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= MAX_EVENTS:
            raise InputError(f"max_events (k) must be a whole number from 1 to {MAX_EVENTS:,}")
        for words, table in (("parents", self.parents), ("events", self.events)):
            if self.key in table.names:
                raise InputError(f"the key column {self.key!r} is not one of the {words}' modelled columns: drop it")
        if self.time is not None:
            if self.time.column == self.key or self.time.column in self.events.names:
                raise InputError(f"the time column {self.time.column!r} is not one of the events' modelled columns")
            self.time.bounds  # noqa: B018 - the window is checked now

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "max_events": self.max_events,
            "time": None if self.time is None else self.time.to_dict(),
            "parents": self.parents.to_dict(),
            "events": self.events.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> EntitySchema:
        if not isinstance(data, dict) or not TOP_KEYS >= set(data) or not {"key", "parents", "events"} <= set(data):
            raise InputError("an entity schema is an object with 'key', 'parents', 'events' (and 'max_events', 'time')")
        time = data.get("time")
        if time is not None and (not isinstance(time, dict) or not TIME_KEYS >= set(time) or "column" not in time):
            raise InputError("an entity schema's 'time' is an object with 'column', 'min', 'max' and 'format'")
        return cls(
            key=data["key"],
            parents=Schema.from_dict(data["parents"]),
            events=Schema.from_dict(data["events"]),
            max_events=data.get("max_events", 32),
            time=None if time is None else TimeSpec(time["column"], time.get("min"), time.get("max"),
                                                     time.get("format", "number")),
        )  # fmt: skip

    @classmethod
    def from_json(cls, path: str | Path) -> EntitySchema:
        return cls.from_dict(read_schema_file(path))


def table_schema(
    words: str,
    names: Sequence[str],
    given: Schema | dict | str | Path | None,
    categories: Mapping[str, Sequence[Any]],
    bounds: Mapping[str, tuple[float, float]],
    skip: Sequence[str],
) -> Schema:
    """One table's schema: the one given (a Schema, its dict or its JSON file), or the columns of
    `names` (the table's header: public) that have a hint: a list of categories (categorical) or
    bounds (continuous). Neither is one line."""
    if given is not None:
        if isinstance(given, Schema):
            return given
        return Schema.from_dict(given) if isinstance(given, dict) else Schema.from_json(given)
    columns = []
    for name in names:
        if name in skip:
            continue
        if name in categories:
            columns.append(ColumnSpec(name, "categorical", categories=tuple(categories[name]), nullable=True))
        elif name in bounds:
            low, high = bounds[name]
            columns.append(ColumnSpec(name, "continuous", min=float(low), max=float(high), nullable=True))
    if not columns:
        raise InputError(
            f"the {words} table needs its public schema ({words} schema) or hints for its columns "
            "(categories COLUMN=A,B,... or bounds COLUMN=LOW:HIGH): none of its columns has one"
        )
    return Schema(tuple(columns))


__all__ = [
    "EntitySchema", "NUMBER_FORMATS", "ORDER", "TimeSpec", "format_times", "parse_times", "table_schema",
    "time_format_of", "time_text", "typed_dtype",
]  # fmt: skip
