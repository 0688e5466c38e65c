"""The order of a series' readings, from each time cell alone.

Why a rule of one cell. If the time column's type were decided for the whole table (numbers when
every cell parses as one, else text), one added series whose times are `x00..x11` or `1:00` would
turn every other series' `0, 1, 2, ..., 10` into the text order `0, 1, 10, 11, 2, ...` and change
which times count as equal (`1`, `01`, `1.0`): it would re-order and re-select the readings of
every other unit, a free bit the DP guarantee does not cover. So each cell gets a kind and a sort
key by itself (dpgan.tables.schema.cells' per-cell classes), and each series is ordered by its own
cells only (dpgan.sequences.reader): a series whose times are not all of one kind, or hold a
missing or infinite time, cannot be ordered and is dropped and counted.

Kinds and keys:
- NUMBER: a finite number, or text that spells one (`"7"`, `"07"`, `"7.0"` are the time 7);
- CLOCK: text `H:MM` or `H:MM:SS[.f]` (a time of day), keyed by its seconds;
- TEXT: any other text, including dates and timestamps (written as ISO text, whose text order is
  their time order), keyed by its rank in the text order of the distinct texts; the order of two
  texts does not depend on any other text, so neither does a series' order;
- MISSING (an empty or null cell) and UNREADABLE (an infinity): the series cannot be ordered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.tables.schema.cells import INFINITE, NULL, NUMBER, TEXT, classify

MISSING, UNREADABLE, NUMBER_TIME, CLOCK_TIME, TEXT_TIME = 0, 1, 2, 3, 4
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?")


@dataclass(frozen=True)
class TimeKeys:
    """Every time cell's kind and its sort key (NaN where the kind has none)."""

    kind: np.ndarray  # int8
    key: np.ndarray  # float64


def clock_seconds(text: str) -> float | None:
    """Seconds since midnight of `H:MM[:SS[.f]]`, else None (minutes and seconds below 60)."""
    match = _CLOCK.fullmatch(text)
    if match is None:
        return None
    hours, minutes, seconds = int(match.group(1)), int(match.group(2)), float(match.group(3) or 0.0)
    if minutes >= 60 or seconds >= 60:
        return None
    return hours * 3600.0 + minutes * 60.0 + seconds


def time_keys(column: pd.Series) -> TimeKeys:
    """The kind and sort key of every cell of a time column, each read by itself (module docstring)."""
    cells = classify(column)
    n = len(column)
    kind = np.full(n, TEXT_TIME, dtype=np.int8)
    key = np.full(n, np.nan)
    kind[cells.kind == NULL] = MISSING
    kind[cells.kind == INFINITE] = UNREADABLE
    numbers = cells.kind == NUMBER
    kind[numbers] = NUMBER_TIME
    key[numbers] = cells.number[numbers]
    texts = np.flatnonzero(cells.kind == TEXT)
    if len(texts):
        distinct, inverse = np.unique(cells.text[texts].astype(str), return_inverse=True)
        clocks = np.array([clock_seconds(t) for t in distinct], dtype=object)
        is_clock = np.array([c is not None for c in clocks], dtype=bool)
        per_distinct = np.where(is_clock, np.array([c if c is not None else np.nan for c in clocks], float), 0.0)
        per_distinct[~is_clock] = np.arange(len(distinct))[~is_clock]  # the rank in the text order
        kind[texts] = np.where(is_clock[inverse], CLOCK_TIME, TEXT_TIME)
        key[texts] = per_distinct[inverse]
    return TimeKeys(kind, key)


__all__ = ["CLOCK_TIME", "MISSING", "NUMBER_TIME", "TEXT_TIME", "UNREADABLE", "TimeKeys", "clock_seconds", "time_keys"]
