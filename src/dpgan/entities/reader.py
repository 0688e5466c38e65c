"""Reading a parent table and an events table by the unit rule (dpgan.privacy.unit_rule).

The unit is the entity: a key value with every parent row and every event row that names it.
Refusals depend on public inputs only: the tables' types and column names, the key column's dtype
in each table (the caller's), the schema. Everything else is decided unit by unit, from that unit's
rows alone:

- a row whose key is missing belongs to no unit: ignored, never counted. Keys are matched by their
  canonical text (dpgan.tables.schema.cells: `1`, `1.0` and `"1"` are one key);
- a key with exactly one parent row is an entity and is kept, with or without events (an entity
  with no events is an entity whose count is 0: the count histogram holds it);
- a key with events but no parent row (ORPHAN), or with two parent rows or more (DUPLICATE), is
  dropped; the kept and dropped units are one released tally, each unit in one cell;
- an event whose time cell its format does not read is dropped from its entity (that entity's
  rows alone decide it); times outside the public window are clamped into it; values are mapped
  into their column's cells (columns.py). The entities with a dropped event or a mapped value are
  counted (two more cells of the tally, each entity at most once in each);
- of an entity's n readable events, at most k (`max_events`) are read for the event columns: a
  uniformly drawn k, kept in time order. Uniform, not the first k: the first k of a plane are its
  January flights, a biased picture of its year; the entity's count, first time and time span are
  read from all n (each is one number per entity, whatever n).

The k-of-n draw is keyed (`keyed_priorities`): each event's priority is a keyed hash of its entity's
key text and its place among that entity's readable events in the input's order, under one seed
drawn from the fit's generator (one draw, whatever the data). So the draw is the same whether the
tables are read whole or in buckets (dpgan.entities.parquet), on one process or on K ranks, and
an entity's events read depend on its own rows alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpgan.entities.columns import ColumnCells
from dpgan.entities.schema import NUMBER_FORMATS, EntitySchema, parse_times
from dpgan.privacy.unit_rule import UnitTally, public_refusal
from dpgan.tables.schema.cells import cell_keys
from dpgan.tables.schema.datetimes import TYPED

ORPHAN = "events whose key names no parent"
DUPLICATE = "a key with more than one parent row"
UNIT_REASONS = (ORPHAN, DUPLICATE)
TIME_DROPPED = "entities with an event dropped for an unreadable time"
MAPPED = "entities with a value mapped into the schema"
FLAGS = (TIME_DROPPED, MAPPED)


@dataclass
class EntityRead:
    """The kept entities, private: read only by the DP releases (statistics.py)."""

    parent_codes: np.ndarray  # (E, d_p) cells of each entity's parent columns
    counts: np.ndarray  # (E,) readable events of each entity (all of them, not only the k read)
    start: np.ndarray | None  # (E,) first time (NaN without events); None without a time column
    span: np.ndarray | None  # (E,) last time - first time
    owner: np.ndarray  # (M,) the entity of each event read (at most k per entity)
    position: np.ndarray  # (M,) its place among its entity's events read, 0..m-1, in time order
    read: np.ndarray  # (E,) events read per entity: min(count, k)
    event_codes: np.ndarray  # (M, d_e) cells of each event's columns
    tally: UnitTally  # kept, dropped per UNIT_REASONS
    flags: np.ndarray  # (2,) entities counted in each of FLAGS
    event_times: np.ndarray | None = None  # (M,) each read event's time (clamped); None without a time column


def check_tables(parents: pd.DataFrame, events: pd.DataFrame, schema: EntitySchema) -> None:
    """The refusals, on public inputs only (column names, the caller's dtypes, the schema)."""
    check_keys(parents, events, schema.key, None if schema.time is None else schema.time.column,
               (schema.parents.names, schema.events.names))  # fmt: skip
    if schema.time is not None:
        check_time_dtype(schema.time.column, schema.time.format, events[schema.time.column].dtype)


def check_time_dtype(column: str, fmt: str, dtype: Any) -> None:
    """The time column's dtype (the caller's: public) against its format: a datetime64 column holds no
    text or numbers, and a typed format reads date-time values, which only a datetime64 or object
    column can hold (a CSV's text column cannot): either mismatch would drop every event, so it is one
    line, whatever the cells."""
    typed, typed_format = pd.api.types.is_datetime64_any_dtype(dtype), fmt.startswith(TYPED)
    if typed and not typed_format:
        raise public_refusal(
            f"the time column {column!r} holds typed date-times ({dtype}), not "
            f"{'numbers' if fmt in NUMBER_FORMATS else 'text'}: give its format as its dtype, or no format"
        )
    if typed_format and not typed and not pd.api.types.is_object_dtype(dtype):
        raise public_refusal(
            f"the time column {column!r} holds {dtype} values, not typed date-times: give its format "
            "(a strftime format such as %Y-%m-%d, or number)"
        )


def check_keys(
    parents: pd.DataFrame, events: pd.DataFrame, key: str, time_column: str | None, names: tuple = ((), ())
) -> None:
    """The refusals of `check_tables` from the key, the time column and each table's modelled `names`
    (a schema bought with DP checks them before its releases: dpgan.entities.inference)."""
    for words, frame in (("parents", parents), ("events", events)):
        if not isinstance(frame, pd.DataFrame):
            raise public_refusal(f"the {words} must be a pandas DataFrame")
    for words, frame, table in (("parents", parents, names[0]), ("events", events, names[1])):
        if key not in frame.columns:
            raise public_refusal(f"the {words} table has no key column {key!r}")
        missing = [c for c in table if c not in frame.columns]
        if missing:
            raise public_refusal(f"the {words} table lacks the schema's columns {', '.join(map(repr, missing))}")
    if time_column is not None and time_column not in events.columns:
        raise public_refusal(f"the events table has no time column {time_column!r}")
    numeric = [pd.api.types.is_numeric_dtype(f[key].dtype) for f in (parents, events)]
    if numeric[0] != numeric[1]:
        said = ["numbers" if n else "text" for n in numeric]
        raise public_refusal(
            f"the key column {key!r} holds {said[0]} in the parents but {said[1]} in the events: "
            "give it one type in both tables"
        )


@dataclass
class EntityRows:
    """Which rows belong to the kept entities (private): each entity's parent row, in entity order,
    and the events rows of kept entities with their entity; the tally of kept and dropped units."""

    parent_rows: np.ndarray  # (E,) the parent row of each entity
    keys: np.ndarray  # (E,) each entity's key, its canonical text
    event_rows: np.ndarray  # (M,) the rows of every event of a kept entity, in the input's order
    owner: np.ndarray  # (M,) each one's entity
    tally: UnitTally

    @property
    def entities(self) -> int:
        return len(self.parent_rows)


def entity_rows(parents: pd.DataFrame, events: pd.DataFrame, key: str) -> EntityRows:
    """The unit rule of the module docstring on the key columns alone (no schema read)."""
    parent_keys, event_keys = cell_keys(parents[key]), cell_keys(events[key])
    p_rows, e_rows = np.flatnonzero(pd.notna(parent_keys)), np.flatnonzero(pd.notna(event_keys))
    keys = np.concatenate([parent_keys[p_rows], event_keys[e_rows]]).astype(str)
    texts, unit = np.unique(keys, return_inverse=True)  # each unit's place in the text order of keys
    units = int(unit.max()) + 1 if len(unit) else 0
    p_unit, e_unit = unit[: len(p_rows)], unit[len(p_rows) :]
    parents_of = np.bincount(p_unit, minlength=units)
    kept = parents_of == 1
    tally = UnitTally(UNIT_REASONS)
    tally.keep(int(kept.sum()))
    tally.drop(ORPHAN, int((parents_of == 0).sum()))
    tally.drop(DUPLICATE, int((parents_of >= 2).sum()))
    entity_of = np.full(units, -1, dtype=np.int64)
    entity_of[kept] = np.arange(int(kept.sum()))
    p_keep = kept[p_unit]
    p_take = p_rows[p_keep][np.argsort(entity_of[p_unit[p_keep]], kind="stable")]
    e_keep = kept[e_unit]
    return EntityRows(p_take, texts[kept], e_rows[e_keep], entity_of[e_unit[e_keep]], tally)


def read_entities(
    parents: pd.DataFrame, events: pd.DataFrame, schema: EntitySchema, bins: int, rng: np.random.Generator
) -> EntityRead:
    """The kept entities of the two tables (the module docstring's rule): the refusals, then the
    read with the k-of-n draw keyed by one seed drawn from `rng`."""
    check_tables(parents, events, schema)
    return read_checked(parents, events, schema, bins, subsample_seed(rng))


def subsample_seed(rng: np.random.Generator) -> int:
    """The k-of-n draw's seed: one draw of the fit's generator, whatever the data."""
    return int(rng.integers(0, 2**63 - 1))


def read_checked(parents: pd.DataFrame, events: pd.DataFrame, schema: EntitySchema, bins: int, seed: int) -> EntityRead:
    """`read_entities` on tables whose public refusals were checked (a bucket of Parquet tables is
    checked once, on their headers: dpgan.entities.parquet), the k-of-n draw keyed by `seed`."""
    units = entity_rows(parents, events, schema.key)
    tally, entities = units.tally, units.entities
    parent_codes, mapped = _codes(parents.iloc[units.parent_rows], schema.parents.columns, bins, entities)

    rows, owner = units.event_rows, units.owner
    time_dropped = np.zeros(entities, dtype=bool)
    times = np.zeros(len(rows))
    if schema.time is not None:
        times = parse_times(events[schema.time.column].iloc[rows].reset_index(drop=True), schema.time)
        unreadable = ~np.isfinite(times)
        time_dropped[owner[unreadable]] = True
        low, high = schema.time.bounds
        outside = (times < low) | (times > high)
        mapped[owner[outside & ~unreadable]] = True
        rows, owner, times = rows[~unreadable], owner[~unreadable], np.clip(times[~unreadable], low, high)
    counts = np.bincount(owner, minlength=entities)
    start = span = None
    if schema.time is not None:
        start, last = np.full(entities, np.nan), np.full(entities, np.nan)
        np.fmin.at(start, owner, times)
        np.fmax.at(last, owner, times)
        span = last - start

    # at most k events per entity, drawn uniformly: each event's random priority, the k first by it
    k = schema.max_events
    take = priority_rank(owner, counts, keyed_priorities(units.keys, owner, counts, seed)) < k
    rows, owner, times = rows[take], owner[take], times[take]
    order = np.lexsort((rows, times, owner))  # time order within each entity (ties: the input's order)
    rows, owner, times = rows[order], owner[order], times[order]
    read = np.bincount(owner, minlength=entities)
    position = np.arange(len(rows)) - np.repeat(_starts(read), read)
    event_codes, event_mapped = _codes(events.iloc[rows], schema.events.columns, bins, len(rows))
    mapped[owner[event_mapped]] = True
    flags = np.array([time_dropped.sum(), mapped.sum()], dtype=np.float64)
    event_times = times if schema.time is not None else None
    return EntityRead(parent_codes, counts, start, span, owner, position, read, event_codes, tally, flags, event_times)


def _codes(frame: pd.DataFrame, columns: tuple, bins: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's cell per column, and whether any of its values was mapped into the schema."""
    codes = np.zeros((rows, len(columns)), dtype=np.int64)
    mapped = np.zeros(rows, dtype=bool)
    for j, spec in enumerate(columns):
        code, moved = ColumnCells.of(spec, bins).codes(frame[spec.name].reset_index(drop=True))
        codes[:, j], mapped = code, mapped | np.asarray(moved, dtype=bool)  # flags, never row numbers
    return codes, mapped


def priority_rank(owner: np.ndarray, counts: np.ndarray, priority: np.ndarray) -> np.ndarray:
    """Each row's place (0 first) among its entity's rows by `priority`: with uniform priorities, the
    rows ranked below k are a uniform draw of at most k of each entity's rows (`counts` = bincount of
    `owner`). The model's read and the CSV-only path's schema (inference.py) draw their k by it."""
    by_priority = np.lexsort((priority, owner))
    rank = np.empty(len(owner), dtype=np.int64)
    rank[by_priority] = np.arange(len(owner)) - np.repeat(_starts(counts), counts)
    return rank


def keyed_priorities(keys: np.ndarray, owner: np.ndarray, counts: np.ndarray, seed: int) -> np.ndarray:
    """Each event's priority in [0, 1): a keyed hash (SipHash under `seed`, pandas' object hash) of
    its entity's key text (`keys[owner]`), mixed with its place among its entity's events in the
    input's order (splitmix64). The events ranked below k by it are a uniform draw of at most k per
    entity for a fresh seed; it reads nothing but the entity's own key and rows."""
    hashed = pd.util.hash_pandas_object(pd.Series(keys, dtype=object), index=False, hash_key=f"{seed % 2**64:016x}")
    place = priority_rank(owner, counts, np.arange(len(owner), dtype=np.float64)).astype(np.uint64)
    with np.errstate(over="ignore"):
        x = hashed.to_numpy()[owner] + (place + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _starts(sizes: np.ndarray) -> np.ndarray:
    """Where each group of `sizes` starts in a sorted array."""
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, np.int64)


__all__ = [
    "DUPLICATE", "EntityRead", "EntityRows", "FLAGS", "MAPPED", "ORPHAN", "TIME_DROPPED", "UNIT_REASONS", "check_keys",
    "check_tables", "check_time_dtype", "entity_rows", "keyed_priorities", "priority_rank", "read_checked",
    "read_entities", "subsample_seed",
]  # fmt: skip
