"""Reading series: a long table (one row per reading) or an (N, T[, F]) array, by the unit rule.

The rule (dpgan.privacy.unit_rule): no series decides a public fact. Refusals here depend on public
inputs only: the input's type, the schema's column names missing from the table's header, an
array's shape beyond N and its dtype, labels missing altogether when the schema names a label.
Everything else is decided series by series, from that series' cells alone:

- its identity: the canonical text of its id cell(s) (`1`, `1.0` and `"1"` are one id; dpgan.
  transforms.cells; a composite id is the tuple of its columns' texts), and with an entity column
  the pair (entity, id), so one entity's rows can never join or break another entity's series.
  A reading whose id (or entity) is missing belongs to no unit: it is ignored, never counted (its
  own series, if it had one, is then incomplete);
- its order: its time cells' kinds and keys (dpgan.sequences.times); the series order is the text
  order of the ids, which no other series changes;
- whether it is kept: exactly `length` readings at distinct times of one kind, every value a
  finite number and one label, else it is dropped with the first reason of SERIES_REASONS that
  applies (`UnitTally`). No input is refused for its series' content, an empty one included: the
  fit releases the tally with DP and runs on what was kept.

Messages name columns and problems, never a value or a count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.privacy.unit_rule import UnitTally, public_refusal
from dpgan.sequences.schema import SequenceSchema
from dpgan.sequences.times import MISSING, UNREADABLE, time_keys
from dpgan.tables.schema.cells import NULL, NUMBER, cell_keys, classify

TIME_UNREADABLE = "a time missing, unreadable or of mixed kinds"
INCOMPLETE = "not `length` readings at distinct times"
VALUE_MISSING = "a missing value"
VALUE_UNREADABLE = "text or an infinity in a value column"
NO_SINGLE_LABEL = "a missing or changing label"
LABEL_OUTSIDE = "a label outside the label set"
# why a series is dropped, in the order they are checked (public: fixed before reading)
SERIES_REASONS = (TIME_UNREADABLE, INCOMPLETE, VALUE_MISSING, VALUE_UNREADABLE, NO_SINGLE_LABEL, LABEL_OUTSIDE)
NO_USABLE_SERIES = "no usable series"
ENTITY_REASONS = (NO_USABLE_SERIES,)


@dataclass
class RawSeries:
    """The kept series before scaling: private values, read only by DP releases and `encode`."""

    values: np.ndarray  # (N, T, F) float64, unscaled
    labels: np.ndarray | None  # (N,) each series' label as canonical text (object)
    entities: np.ndarray | None  # (N,) owner codes 0..E-1 (entity column only)
    series: UnitTally  # series kept and dropped per reason (SERIES_REASONS)
    units: int  # units in the input (series, or entities), kept or not

    @property
    def dropped(self) -> int:
        """Series dropped so far."""
        return self.series.total_dropped


def read_long_raw(frame: pd.DataFrame, schema: SequenceSchema) -> RawSeries:
    """The kept series of a long table, unscaled, in the text order of their ids (module docstring)."""
    if not isinstance(frame, pd.DataFrame):
        raise public_refusal("a long table of series must be a pandas DataFrame")
    missing = [c for c in schema.columns if c not in frame.columns]
    if missing:
        raise public_refusal(f"the table lacks the schema's columns {', '.join(map(repr, missing))}")
    owner_column = [schema.entity] if schema.entity is not None else []
    keys = {c: cell_keys(frame[c]) for c in [*owner_column, *schema.id_columns]}
    rows = pd.DataFrame({f"key{i}": k for i, k in enumerate(keys.values())})
    times = time_keys(frame[schema.time])
    rows["time_kind"], rows["time"] = times.kind, times.key
    rows["time_bad"] = (times.kind == MISSING) | (times.kind == UNREADABLE)
    value_missing = np.zeros(len(frame), dtype=bool)
    value_bad = np.zeros(len(frame), dtype=bool)
    for index, name in enumerate(schema.value_names):
        cells = classify(frame[name])
        value_missing |= cells.kind == NULL
        value_bad |= (cells.kind != NULL) & (cells.kind != NUMBER)
        rows[f"value{index}"] = cells.number
    rows["value_missing"], rows["value_bad"] = value_missing, value_bad
    if schema.label is not None:
        rows["label"] = cell_keys(frame[schema.label])
    key_columns = list(rows.columns[: len(keys)])
    rows = rows[rows[key_columns].notna().all(axis=1)]  # readings of no unit: ignored
    return _group_series(rows, key_columns, schema)


def _group_series(rows: pd.DataFrame, key_columns: list[str], schema: SequenceSchema) -> RawSeries:
    """Each series' verdict from its own rows, then the kept ones as an array in id order."""
    groups = rows.groupby(key_columns, sort=True)
    summary = groups.agg(
        size=("time", "size"),
        distinct=("time", "nunique"),
        kinds=("time_kind", "nunique"),
        time_bad=("time_bad", "any"),
        value_missing=("value_missing", "any"),
        value_bad=("value_bad", "any"),
    )
    reason = pd.Series(None, index=summary.index, dtype=object)
    checks = [
        (summary["time_bad"] | (summary["kinds"] > 1), TIME_UNREADABLE),
        ((summary["size"] != schema.length) | (summary["distinct"] != schema.length), INCOMPLETE),
        (summary["value_missing"], VALUE_MISSING),
        (summary["value_bad"], VALUE_UNREADABLE),
    ]
    if schema.label is not None:
        labels = groups["label"]
        checks.append(((labels.nunique(dropna=False) != 1) | labels.first().isna().to_numpy(), NO_SINGLE_LABEL))
    for failed, why in checks:
        reason = reason.where(reason.notna() | ~failed.to_numpy(), why)
    tally = UnitTally(SERIES_REASONS)
    for why, count in reason.value_counts().items():
        tally.drop(str(why), int(count))
    kept_index = summary.index[reason.isna().to_numpy()]
    tally.keep(len(kept_index))
    series_of_row = groups.ngroup().to_numpy()  # the position of each row's series in id order
    keep_row = reason.isna().to_numpy()[series_of_row]
    kept = rows[keep_row].assign(series=series_of_row[keep_row])
    kept = kept.sort_values(["series", "time"], kind="stable")
    value_columns = [f"value{i}" for i in range(len(schema.values))]
    array = kept[value_columns].to_numpy(dtype=np.float64).reshape(-1, schema.length, len(schema.values))
    firsts = kept.iloc[:: schema.length] if len(kept) else kept
    labels = firsts["label"].to_numpy(dtype=object) if schema.label is not None else None
    entities, units = None, len(summary)
    if schema.entity is not None:
        owners = summary.index.get_level_values(0)
        units = int(owners.nunique())
        entities = pd.factorize(firsts["key0"].to_numpy(), sort=True)[0].astype(np.int64)
    return RawSeries(array, labels, entities, tally, units)


def read_array_raw(array: np.ndarray, labels: np.ndarray | None, schema: SequenceSchema) -> RawSeries:
    """An (N, T) or (N, T, F) array of series (and optional labels), unscaled; each series is a unit.
    Its dtype and shape beyond N are the caller's (public); each series is kept or dropped alone.
    A list of series is refused on its type: ``np.asarray`` would give it the common dtype and
    shape of all its series, so one series of text or of another length would decide a refusal
    or a dtype (dpgan.privacy.unit_rule); one array has one dtype and shape, both the caller's."""
    if not isinstance(array, np.ndarray):
        raise public_refusal("series must be one numpy array (N, T) or (N, T, F), not a list: stack them first")
    data = array
    if data.ndim == 2:
        data = data[:, :, None]
    if data.ndim != 3:
        raise public_refusal("series must be an (N, T) or (N, T, F) array")
    if data.shape[1:] != (schema.length, len(schema.values)):
        raise public_refusal(f"each series must have shape ({schema.length}, {len(schema.values)}) as the schema says")
    if not np.issubdtype(data.dtype, np.number) or np.issubdtype(data.dtype, np.complexfloating):
        raise public_refusal("series must hold real numbers (a numeric array)")
    data = data.astype(np.float64)
    if schema.label is not None:
        if labels is None:
            raise public_refusal("the schema names a label: pass one label per series")
        if np.ndim(labels) != 1 or len(labels) != len(data):
            raise public_refusal("labels must be a 1-D array with one label per series")
        texts = cell_keys(pd.Series(np.asarray(labels, dtype=object), dtype=object))
    elif labels is not None:
        raise public_refusal("labels were given but the schema has no label column")
    missing = np.isnan(data).any(axis=(1, 2))
    unreadable = np.isinf(data).any(axis=(1, 2)) & ~missing
    no_label = (pd.isna(texts) & ~missing & ~unreadable) if schema.label is not None else np.zeros(len(data), bool)
    tally = UnitTally(SERIES_REASONS)
    tally.drop(VALUE_MISSING, int(missing.sum()))
    tally.drop(VALUE_UNREADABLE, int(unreadable.sum()))
    tally.drop(NO_SINGLE_LABEL, int(no_label.sum()))
    keep = ~(missing | unreadable | no_label)
    tally.keep(int(keep.sum()))
    kept_labels = texts[keep] if schema.label is not None else None
    return RawSeries(data[keep], kept_labels, None, tally, len(data))


__all__ = [
    "ENTITY_REASONS",
    "INCOMPLETE",
    "LABEL_OUTSIDE",
    "NO_SINGLE_LABEL",
    "NO_USABLE_SERIES",
    "RawSeries",
    "SERIES_REASONS",
    "TIME_UNREADABLE",
    "VALUE_MISSING",
    "VALUE_UNREADABLE",
    "read_array_raw",
    "read_long_raw",
]
