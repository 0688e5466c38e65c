"""An entity as one row: its parent row beside aggregates of its events, the row that the two-sample
test, the parent-level TSTR and the membership attack read.

Aggregates: the number of events; the mean of each numeric event column; for each categorical event
column the entity's most frequent category and that category's share of its events; with a time
column, the first time and the span (last − first), in days for a date format (seconds / 86,400),
in the time's own units for a number format, the first time counted from the window's start. An
entity without events has count 0 and its other aggregates missing ("(none)" for a category): a
synthesizer that makes too many empty entities shows in them. Events of no parent belong to no entity.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.entities.schema import EntitySchema
from dpgan.evaluation.entities.frames import EntityFrames, column_kinds, first_parents
from dpgan.evaluation.tables.fidelity import is_numeric_kind

COUNT = "events"
FIRST, SPAN = "first_time", "time_span"
NONE = "(none)"
DAY = 86_400.0


def aggregate_names(schema: EntitySchema) -> dict[str, str]:
    """The aggregate columns and their kinds, in the summaries' order."""
    names = {COUNT: "integer"}
    for name, kind in column_kinds(schema.events).items():
        if is_numeric_kind(kind):
            names[f"{name}_mean"] = "continuous"
        else:
            names[f"{name}_top"] = "categorical"
            names[f"{name}_top_share"] = "continuous"
    if schema.time is not None:
        names[FIRST], names[SPAN] = "continuous", "continuous"
    return names


def summary_kinds(schema: EntitySchema) -> dict[str, str]:
    """The summaries' columns (parents' first, then the aggregates) and their kinds."""
    return column_kinds(schema.parents) | aggregate_names(schema)


def entity_summaries(frames: EntityFrames, schema: EntitySchema) -> pd.DataFrame:
    """One row per entity (the first parent row of each key), columns as `summary_kinds`."""
    rows, keys = first_parents(frames)
    out = frames.parents.iloc[rows].reset_index(drop=True)
    keyed = pd.notna(frames.event_keys)
    owner = frames.event_keys[keyed].astype(str)
    events = frames.events[keyed].reset_index(drop=True)
    grouped = events.groupby(owner, sort=False)
    out[COUNT] = pd.Series(owner).value_counts().reindex(keys, fill_value=0).to_numpy(dtype=np.int64)
    for name, kind in column_kinds(schema.events).items():
        if is_numeric_kind(kind):
            out[f"{name}_mean"] = grouped[name].mean().reindex(keys).to_numpy(dtype=np.float64)
            continue
        top, shares = pd.Series(np.nan, index=keys, dtype=object), pd.Series(np.nan, index=keys)
        if len(events):
            table = events.groupby([owner, events[name].to_numpy()], sort=False).size().unstack(fill_value=0)
            top = table.idxmax(axis=1).reindex(keys)
            shares = (table.max(axis=1) / table.sum(axis=1)).reindex(keys)
        out[f"{name}_top"] = top.fillna(NONE).astype(str).to_numpy()
        out[f"{name}_top_share"] = shares.to_numpy(dtype=np.float64)
    if schema.time is not None and frames.times is not None:
        unit = 1.0 if schema.time.is_number else DAY
        times = pd.Series(frames.times[keyed]).groupby(owner, sort=False)
        start = schema.time.bounds[0]
        out[FIRST] = ((times.min().reindex(keys) - start) / unit).to_numpy(dtype=np.float64)
        out[SPAN] = ((times.max() - times.min()).reindex(keys) / unit).to_numpy(dtype=np.float64)
    return out


__all__ = ["COUNT", "aggregate_names", "entity_summaries", "summary_kinds"]
