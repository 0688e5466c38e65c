"""Two linked tables read for scoring: each entity's key as canonical text, the schema's columns by
kind, and the events' times as numbers.

The evaluation reads real and synthetic tables alike, as `dpgan evaluate` reads a table: it is a
measurement the user runs on their own data, not a release, so nothing here is DP. A cell the schema's
kind does not read (a number column's text, a time its format does not parse) becomes missing, as the
kind's reader (dpgan.entities.reader) treats it one unit at a time: never a refusal, because whether
the scoring runs must not hang on one entity's cell either. Refusals name tables and columns only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.entities.schema import EntitySchema, parse_times
from dpgan.errors import InputError
from dpgan.evaluation.tables.fidelity import as_labels, is_numeric_kind
from dpgan.tables.schema.cells import cell_keys
from dpgan.tables.schema.table import Schema

SIDES = ("real", "synthetic", "test")


@dataclass(frozen=True)
class EntityFrames:
    """One side's two tables, typed for scoring. `parent_keys` and `event_keys` are the canonical
    key texts (None where a row has no key); `times` the events' times as numbers (NaN: unreadable)."""

    parents: pd.DataFrame  # the parents' schema columns: numbers as float, categories as text
    events: pd.DataFrame  # the events' schema columns, likewise
    parent_keys: np.ndarray
    event_keys: np.ndarray
    times: np.ndarray | None


def column_kinds(table: Schema) -> dict[str, str]:
    """Each modelled column's kind, from the public schema."""
    return {spec.name: spec.kind for spec in table.columns}


def typed(frame: pd.DataFrame, table: Schema) -> pd.DataFrame:
    """The schema's columns: numbers as float (NaN where a cell is none), categories as their labels."""
    out = {}
    for name, kind in column_kinds(table).items():
        if is_numeric_kind(kind):
            out[name] = pd.to_numeric(frame[name], errors="coerce").astype(np.float64).to_numpy()
        else:
            out[name] = as_labels(frame[name]).to_numpy()
    return pd.DataFrame(out)


def check_pair(parents: object, events: object, schema: EntitySchema, words: str) -> None:
    """One line for a side whose tables cannot be scored: names of tables and columns, no cell."""
    for table_words, frame, table in (("parents", parents, schema.parents), ("events", events, schema.events)):
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"the {words} {table_words} must be a pandas DataFrame, not {type(frame).__name__}")
        if schema.key not in frame.columns:
            raise InputError(f"the {words} {table_words} table has no key column {schema.key!r}")
        missing = [c for c in table.names if c not in frame.columns]
        if missing:
            named = ", ".join(map(repr, missing))
            raise InputError(f"the {words} {table_words} table lacks the schema's columns {named}")
    if schema.time is not None and schema.time.column not in events.columns:  # type: ignore[union-attr]
        raise InputError(f"the {words} events table has no time column {schema.time.column!r}")


def entity_frames(parents: pd.DataFrame, events: pd.DataFrame, schema: EntitySchema, words: str) -> EntityFrames:
    """`words` ("real", "synthetic", "held-out") names the side in a refusal."""
    check_pair(parents, events, schema, words)
    times = None if schema.time is None else parse_times(events[schema.time.column].reset_index(drop=True), schema.time)
    return EntityFrames(
        parents=typed(parents, schema.parents),
        events=typed(events, schema.events),
        parent_keys=cell_keys(parents[schema.key].reset_index(drop=True)),
        event_keys=cell_keys(events[schema.key].reset_index(drop=True)),
        times=times,
    )


def first_parents(frames: EntityFrames) -> tuple[np.ndarray, np.ndarray]:
    """The rows and keys of the entities: each keyed parent row whose key came first (a duplicate key
    is integrity's finding, not a second entity)."""
    keys = pd.Series(frames.parent_keys, dtype=object)
    rows = np.flatnonzero(keys.notna().to_numpy() & ~keys.duplicated().to_numpy())
    return rows, frames.parent_keys[rows].astype(str)


def events_per_entity(frames: EntityFrames) -> np.ndarray:
    """Each entity's number of events (0 for a parent without any); events of no parent are not counted."""
    _, keys = first_parents(frames)
    present = pd.notna(frames.event_keys)
    counts = pd.Series(frames.event_keys[present].astype(str)).value_counts()
    return counts.reindex(keys, fill_value=0).to_numpy(dtype=np.int64)


__all__ = ["SIDES", "EntityFrames", "column_kinds", "entity_frames", "events_per_entity", "first_parents"]
