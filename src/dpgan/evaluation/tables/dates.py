"""Date, timestamp and time-of-day columns as an evaluation reads them: a number on the column's
linear scale (days, or seconds) and the calendar's parts.

A date written as text would otherwise be a category with one value per day (a useless one-hot
in TSTR, a marginal distance over thousands of labels). Here each temporal column becomes its
number (continuous: marginal distance on the scale) plus its parts: year (continuous), month and
day of the week (categorical), and for a timestamp or a time of day the hour (categorical). The
parts are features in TSTR and have their own marginals in the fidelity section, so the report
shows whether weekday and month shares survived. Which columns are temporal comes from the
public schema, or without one from the public cell rule (dpgan.tables.schema.datetimes) on the
real training rows (evaluation reads real rows without a DP claim anyway).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.tables.inference.column_kinds import class_counts
from dpgan.tables.inference.temporal_kinds import choose_temporal
from dpgan.tables.schema.datetimes import (
    DATE,
    SECONDS_PER_DAY,
    TEMPORAL_KINDS,
    TIME,
    TIMESTAMP,
    column_values,
    day_first_of,
)
from dpgan.tables.schema.table import Schema

PARTS = {DATE: ("year", "month", "weekday"), TIMESTAMP: ("year", "month", "weekday", "hour"), TIME: ("hour",)}
PART_KINDS = {"year": "continuous", "month": "categorical", "weekday": "categorical", "hour": "categorical"}


def temporal_columns(real: pd.DataFrame, kinds: dict[str, str], schema: Schema | None) -> dict[str, tuple[str, str]]:
    """{column: (kind, format)} of the temporal columns: the schema's, else those the cell rule
    reads as dates or times (their format chosen from exact counts)."""
    found = {}
    for name in real.columns:
        if schema is not None and name in schema.names:
            spec = schema[name]
            if spec.is_temporal:
                found[name] = (spec.kind, str(spec.format))
            continue
        if kinds.get(name) not in (None, "categorical") and not pd.api.types.is_datetime64_any_dtype(real[name]):
            continue
        counts = class_counts(real[name])
        choice = choose_temporal(np.array(counts.temporal), counts.numbers + counts.text, 0.0)
        if choice is not None:
            found[name] = (choice.kind, choice.format)
    return found


def with_date_parts(
    frames: dict[str, pd.DataFrame], kinds: dict[str, str], temporal: dict[str, tuple[str, str]]
) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """Every frame with each temporal column replaced by its number and followed by its parts
    (named "column.part"), and the kinds to read them by."""
    if not temporal:
        return frames, kinds
    out_kinds: dict[str, str] = {}
    for name, kind in kinds.items():
        if name not in temporal:
            out_kinds[name] = kind
            continue
        out_kinds[name] = "continuous"
        for part in PARTS[temporal[name][0]]:
            out_kinds[f"{name}.{part}"] = PART_KINDS[part]
    out = {}
    for label, frame in frames.items():
        columns = {}
        for name in kinds:
            if name not in temporal:
                columns[name] = frame[name]
                continue
            kind, fmt = temporal[name]
            units = column_values(frame[name], kind, day_first_of(fmt), fmt)
            columns[name] = pd.Series(units, index=frame.index)
            columns.update({f"{name}.{part}": _part(units, kind, part, frame.index) for part in PARTS[kind]})
        out[label] = pd.DataFrame(columns, index=frame.index)
    return out, out_kinds


def _part(units: np.ndarray, kind: str, part: str, index: pd.Index) -> pd.Series:
    """One calendar part of values on the kind's scale (missing stays missing)."""
    if part == "hour":
        seconds = units if kind == TIME else np.mod(units, SECONDS_PER_DAY)
        values = pd.Series(np.floor(seconds / 3600.0), index=index)
        return values.map(lambda h: None if np.isnan(h) else str(int(h))).astype(object)
    days = units if kind == DATE else np.floor(units / SECONDS_PER_DAY)
    stamps = pd.Series(pd.to_datetime(np.nan_to_num(days), unit="D"), index=index)
    missing = np.isnan(days)
    if part == "year":
        return pd.Series(np.where(missing, np.nan, stamps.dt.year.to_numpy(dtype=np.float64)), index=index)
    values = stamps.dt.month if part == "month" else stamps.dt.day_of_week
    return pd.Series(np.where(missing, None, values.astype(str).to_numpy(dtype=object)), index=index, dtype=object)


__all__ = ["PARTS", "TEMPORAL_KINDS", "temporal_columns", "with_date_parts"]
