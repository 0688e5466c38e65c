"""Dates, timestamps and times of day: their public formats, the rule that reads one cell as one,
and the linear scale a temporal column is learned on.

A temporal column is a number on a linear scale inside dpgan: days since 1970-01-01 for a `date`,
seconds since 1970-01-01 00:00 for a `timestamp` (UTC when the cell carried a zone, its wall clock
otherwise), seconds since midnight for a `time` of day. Its public domain (min, max, bins) lives on
that scale, so every table model learns it as it learns a number (dpgan.tables.codec.datetime_transform).

Which cells hold a date is decided by a public rule that reads the cell alone (`cell_format`): the
stripped text fully matches one of the public FORMATS and is a real calendar value, or the cell is
a typed date/time value (pandas Timestamp, Python datetime/date). A slash date `03/04/2021` fits
both `%m/%d/%Y` and `%d/%m/%Y`: it goes to a cell of its own (AMBIGUOUS), so which order a column
uses is decided by DP counts of the cells that only one order can read, never copied from a cell
(dpgan.tables.inference.datetimes). The rule never looks at the column's dtype or at other rows.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.tables.schema.zones import COLON_ZONE, has_zone, python_pattern, with_colon, zone_of

DATE, TIMESTAMP, TIME = "date", "timestamp", "time"
TEMPORAL_KINDS = (DATE, TIMESTAMP, TIME)
TYPED = "datetime64"  # the format of a column of pandas/Python date-time values rather than text
ISO = "iso"  # a schema's shorthand for the kind's ISO pattern
ISO_PATTERNS = {DATE: "%Y-%m-%d", TIMESTAMP: "%Y-%m-%d %H:%M:%S", TIME: "%H:%M:%S"}
RESOLUTIONS = {DATE: ("day",), TIMESTAMP: ("second", "minute", "hour", "day"), TIME: ("second", "minute", "hour")}
RESOLUTION_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
DEFAULT_RESOLUTION = {DATE: "day", TIMESTAMP: "second", TIME: "second"}
SECONDS_PER_DAY = 86400
UNITS = {DATE: "days since 1970-01-01", TIMESTAMP: "seconds since 1970-01-01 00:00", TIME: "seconds since midnight"}
_EPOCH = dt.datetime(1970, 1, 1)

_D, _T = r"\d{4}-\d{1,2}-\d{1,2}", r"\d{1,2}:\d{2}"
_ZONE = r"(Z|[+-]\d{2}:?\d{2})"
_SLASH = r"\d{1,2}/\d{1,2}/\d{4}"


@dataclass(frozen=True)
class TemporalFormat:
    """One public format: its strftime pattern, the kind it writes, the full-match regex of its text."""

    pattern: str
    kind: str
    regex: str


# the public list, in the order of the class histogram's temporal cells (its order is public too)
FORMATS: tuple[TemporalFormat, ...] = (
    TemporalFormat("%Y-%m-%d", DATE, _D),
    TemporalFormat("%Y/%m/%d", DATE, r"\d{4}/\d{1,2}/\d{1,2}"),
    TemporalFormat("%d.%m.%Y", DATE, r"\d{1,2}\.\d{1,2}\.\d{4}"),
    TemporalFormat("%m/%d/%Y", DATE, _SLASH),
    TemporalFormat("%d/%m/%Y", DATE, _SLASH),
    TemporalFormat("%Y-%m-%d %H:%M:%S", TIMESTAMP, _D + " " + _T + r":\d{2}"),
    TemporalFormat("%Y-%m-%dT%H:%M:%S", TIMESTAMP, _D + "T" + _T + r":\d{2}"),
    TemporalFormat("%Y-%m-%d %H:%M", TIMESTAMP, _D + " " + _T),
    TemporalFormat("%Y-%m-%dT%H:%M", TIMESTAMP, _D + "T" + _T),
    TemporalFormat("%Y-%m-%d %H:%M:%S.%f", TIMESTAMP, _D + " " + _T + r":\d{2}\.\d{1,6}"),
    TemporalFormat("%Y-%m-%dT%H:%M:%S.%f", TIMESTAMP, _D + "T" + _T + r":\d{2}\.\d{1,6}"),
    TemporalFormat("%Y-%m-%d %H:%M:%S%z", TIMESTAMP, _D + " " + _T + r":\d{2}" + _ZONE),
    TemporalFormat("%Y-%m-%dT%H:%M:%S%z", TIMESTAMP, _D + "T" + _T + r":\d{2}" + _ZONE),
    TemporalFormat("%m/%d/%Y %H:%M", TIMESTAMP, _SLASH + " " + _T),
    TemporalFormat("%d/%m/%Y %H:%M", TIMESTAMP, _SLASH + " " + _T),
    TemporalFormat("%m/%d/%Y %H:%M:%S", TIMESTAMP, _SLASH + " " + _T + r":\d{2}"),
    TemporalFormat("%d/%m/%Y %H:%M:%S", TIMESTAMP, _SLASH + " " + _T + r":\d{2}"),
    TemporalFormat("%H:%M:%S", TIME, _T + r":\d{2}"),
    TemporalFormat("%H:%M", TIME, _T),
)
# pairs of formats that differ only in the order of day and month: the cell either one reads
# (both fields ≤ 12) is counted in an AMBIGUOUS cell of its own
SLASH_PAIRS = ((3, 4), (13, 14), (15, 16))
# the histogram's cells beyond the formats: a slash value both orders read (one per pair), and the
# typed values: a date (a naive midnight, a datetime.date), a naive time stamp, a zoned one
AMBIGUOUS = tuple(len(FORMATS) + i for i in range(len(SLASH_PAIRS)))
TYPED_DATE, TYPED_NAIVE, TYPED_ZONED = (len(FORMATS) + len(SLASH_PAIRS) + i for i in range(3))
CELLS = len(FORMATS) + len(SLASH_PAIRS) + 3
CELL_KINDS = (
    tuple(f.kind for f in FORMATS) + tuple(FORMATS[a].kind for a, _ in SLASH_PAIRS) + (DATE, TIMESTAMP, TIMESTAMP)
)
_COMPILED = tuple(re.compile(f.regex) for f in FORMATS)
_PREFILTER = re.compile(r"\d{1,4}[-/.:]")
_MAX_LENGTH = 40


def cell_format(value: Any) -> int:
    """The temporal cell (an index below CELLS) a cell falls in by itself, or -1 (not temporal)."""
    if isinstance(value, (dt.datetime, np.datetime64)):
        stamp = pd.Timestamp(value)
        if pd.isna(stamp):
            return -1
        if stamp.tzinfo is not None:
            return TYPED_ZONED
        return TYPED_DATE if stamp == stamp.normalize() else TYPED_NAIVE
    if isinstance(value, dt.date):
        return TYPED_DATE
    if not isinstance(value, str):
        return -1
    text = value.strip()
    if len(text) > _MAX_LENGTH or not _PREFILTER.match(text):
        return -1
    for index, regex in enumerate(_COMPILED):
        if regex.fullmatch(text):
            return (
                _slash_cell(text, index) if _in_pair(index) else index if _parses(text, FORMATS[index].pattern) else -1
            )
    return -1


def _in_pair(index: int) -> bool:
    return any(index in pair for pair in SLASH_PAIRS)


def _slash_cell(text: str, index: int) -> int:
    """A slash value's cell: the order only one pattern reads, or the pair's AMBIGUOUS cell."""
    pair = next(i for i, p in enumerate(SLASH_PAIRS) if index in p)
    month_first, day_first = SLASH_PAIRS[pair]
    by_month = _parses(text, FORMATS[month_first].pattern)
    by_day = _parses(text, FORMATS[day_first].pattern)
    if by_month and by_day:
        return AMBIGUOUS[pair]
    return month_first if by_month else day_first if by_day else -1


def _parses(text: str, pattern: str) -> bool:
    return _strptime(text, pattern) is not None


def _strptime(text: str, pattern: str) -> dt.datetime | None:
    try:
        return dt.datetime.strptime(text, python_pattern(pattern))
    except ValueError:
        return None


def pattern_of_cell(cell: int, day_first: bool) -> str | None:
    """The pattern a cell is read with (an ambiguous slash cell: in the column's order); None: typed."""
    if cell < len(FORMATS):
        return FORMATS[cell].pattern
    if cell in AMBIGUOUS:
        month_first, day_first_index = SLASH_PAIRS[AMBIGUOUS.index(cell)]
        return FORMATS[day_first_index if day_first else month_first].pattern
    return None


def day_first_of(pattern: str) -> bool:
    """Whether a pattern puts the day before the month (how its column reads an ambiguous slash)."""
    return pattern.find("%d") < pattern.find("%m")


def cell_value(value: Any, kind: str, day_first: bool = False, pattern: str | None = None) -> float:
    """A temporal cell on `kind`'s linear scale (NaN when the cell holds no such value): the public
    rule conform and the domain release both apply, one cell at a time. Text is read with the
    column's own `pattern` when given and it fits, else with the public format the cell matches (an
    ambiguous slash date in the column's order). A timestamp cell in a date column gives its date,
    a date cell in a timestamp column its midnight, a timestamp cell in a time column its time of
    day; zoned cells are taken in UTC."""
    moment, cell_kind = _read(value, day_first, pattern)
    if moment is None:
        return math.nan
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.timezone.utc).replace(tzinfo=None)
    if kind == TIME:
        return math.nan if cell_kind == DATE else _seconds_of_day(moment)
    if cell_kind == TIME:
        return math.nan
    if kind == DATE:
        return float((moment.date() - _EPOCH.date()).days)
    return (moment - _EPOCH).total_seconds()


def _read(value: Any, day_first: bool, pattern: str | None) -> tuple[dt.datetime | None, str]:
    """The moment a cell holds and the kind of cell it is (None: no moment)."""
    if pattern is not None and pattern != TYPED and isinstance(value, str):
        moment = _strptime(value.strip(), pattern)
        if moment is not None:
            has_date = any(d in pattern for d in ("%Y", "%y", "%d", "%j"))
            has_time = "%H" in pattern or "%I" in pattern
            return moment, TIMESTAMP if has_date and has_time else DATE if has_date else TIME
    cell = cell_format(value)
    if cell < 0:
        return None, ""
    if cell >= TYPED_DATE:
        stamp = pd.Timestamp(value)
        return stamp.to_pydatetime(), CELL_KINDS[cell]
    return _strptime(value.strip(), pattern_of_cell(cell, day_first) or ""), CELL_KINDS[cell]


def _seconds_of_day(moment: dt.datetime) -> float:
    return moment.hour * 3600.0 + moment.minute * 60.0 + moment.second + moment.microsecond / 1e6


def column_values(series: pd.Series, kind: str, day_first: bool = False, pattern: str | None = None) -> np.ndarray:
    """`cell_value` of every cell (once per distinct value: the rule reads one cell)."""
    values = series.to_numpy(dtype=object)
    out = np.full(len(values), np.nan)
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    parsed = np.array([cell_value(v, kind, day_first, pattern) for v in uniques], dtype=np.float64)
    present = codes >= 0
    out[present] = parsed[codes[present]]
    return out


# ---------------------------------------------------------------- the schema's fields


def check_temporal(name: str, kind: str, fmt: str, timezone: str | None, resolution: str) -> tuple[str, str]:
    """The format and resolution of a temporal column, normalised ("iso" and "" mean the kind's ISO
    pattern; "" resolution the kind's default), or one line saying what is wrong."""
    fmt = ISO_PATTERNS[kind] if fmt in ("", ISO) else fmt
    if not isinstance(fmt, str) or (fmt != TYPED and not _round_trips(fmt, kind)):
        raise InputError(
            f'column {name!r}: \'format\' must be "iso", "{TYPED}" or a strftime pattern that writes a {kind} '
            'and reads it back (e.g. "%d/%m/%Y")'
        )
    if fmt == TYPED and kind == TIME:
        raise InputError(f'column {name!r}: a time of day is written as text (a pattern such as "%H:%M")')
    resolution = resolution or DEFAULT_RESOLUTION[kind]
    if resolution not in RESOLUTIONS[kind]:
        raise InputError(f"column {name!r}: 'resolution' of a {kind} must be one of {', '.join(RESOLUTIONS[kind])}")
    if COLON_ZONE in fmt and not fmt.endswith(COLON_ZONE):
        raise InputError(f"column {name!r}: '{COLON_ZONE}' (an offset written +01:00) must end the format")
    if timezone is not None:
        if kind == TIME or not (fmt == TYPED or has_zone(fmt)):
            raise InputError(
                f"column {name!r}: 'timezone' applies to timestamps written with %z, {COLON_ZONE} or as {TYPED}"
            )
        zone_of(timezone, name)
    return fmt, resolution


def _round_trips(pattern: str, kind: str) -> bool:
    """A pattern writes the kind's parts and strptime reads them back (2001-02-03 04:05:06.000007)."""
    reference = dt.datetime(2001, 2, 3, 4, 5, 6, 7, tzinfo=dt.timezone.utc)
    try:
        back = dt.datetime.strptime(reference.strftime(python_pattern(pattern)), python_pattern(pattern))
    except (ValueError, TypeError):
        return False
    if kind in (DATE, TIMESTAMP) and back.date() != reference.date():
        return False
    if kind in (TIMESTAMP, TIME) and (back.hour, back.minute) != (4, 5):
        return False
    return True


def to_units(name: str, kind: str, bound: Any) -> float:
    """A schema bound on the kind's scale: ISO text ("2021-03-07", "21:01"), a date/time value, or
    already a number on the scale."""
    if isinstance(bound, (int, float)) and not isinstance(bound, bool):
        if not math.isfinite(bound):
            raise InputError(f"column {name!r}: {kind} bounds must be finite")
        return float(bound)
    value = math.nan
    if isinstance(bound, str) and kind == TIME:  # "24:00:00", the end of the day, strptime refuses
        value = float(SECONDS_PER_DAY) if bound.strip() in ("24:00", "24:00:00") else cell_value(bound, TIME)
    elif isinstance(bound, (str, dt.date, np.datetime64)):
        try:
            stamp = pd.Timestamp(bound)
        except (ValueError, TypeError):
            stamp = None
        if stamp is not None and not pd.isna(stamp):
            value = cell_value(stamp.to_pydatetime() if kind != DATE else stamp.normalize().to_pydatetime(), kind)
    if not math.isfinite(value):
        raise InputError(f"column {name!r}: {kind} bounds 'min' and 'max' must be ISO text such as {_EXAMPLES[kind]}")
    return value


_EXAMPLES = {DATE: '"2021-03-07"', TIMESTAMP: '"2021-03-07 21:01:06"', TIME: '"21:01:06"'}


def to_iso(kind: str, units: float) -> str:
    """A bound on the kind's scale as ISO text (the schema file's form)."""
    if kind == DATE:
        return (_EPOCH + dt.timedelta(days=round(units))).date().isoformat()
    if kind == TIME:
        seconds = min(max(int(round(units)), 0), SECONDS_PER_DAY)
        return (
            f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
            if seconds < SECONDS_PER_DAY
            else "24:00:00"
        )
    return (_EPOCH + dt.timedelta(seconds=round(units))).isoformat(sep=" ")


# ---------------------------------------------------------------- writing sampled values back


def write_values(units: np.ndarray, kind: str, fmt: str, timezone: str | None, resolution: str, name: str) -> pd.Series:
    """Sampled values on the kind's scale (NaN: null) as the input had them: text in the column's
    pattern (None for nulls; `%:z` writes the offset as +01:00), or a datetime64 column (with
    `timezone`, a zone name or a fixed offset, when it had one)."""
    step = RESOLUTION_SECONDS[resolution]
    missing = np.isnan(units)
    if kind == DATE:
        seconds = np.round(np.nan_to_num(units)) * SECONDS_PER_DAY
    else:
        seconds = np.round(np.nan_to_num(units) / step) * step
        if kind == TIME:
            seconds = np.clip(seconds, 0, SECONDS_PER_DAY - 1)
    stamps = pd.Series(pd.to_datetime(seconds.astype(np.int64), unit="s"), name=name)
    stamps[missing] = pd.NaT
    if timezone is None and has_zone(fmt):
        timezone = "UTC"  # zoned input learned in UTC: written with +0000
    if timezone is not None:
        stamps = stamps.dt.tz_localize("UTC").dt.tz_convert(zone_of(timezone, name))
    if fmt == TYPED:
        return stamps if kind != DATE else stamps.dt.normalize()
    text = stamps.dt.strftime(python_pattern(fmt)).astype(object)
    if COLON_ZONE in fmt:
        text = pd.Series([with_colon(v) if isinstance(v, str) else v for v in text], index=text.index, dtype=object)
    text[missing] = None
    return pd.Series(text, name=name, dtype=object)


__all__ = [
    "AMBIGUOUS", "CELLS", "CELL_KINDS", "DATE", "FORMATS", "ISO", "SECONDS_PER_DAY", "SLASH_PAIRS", "TEMPORAL_KINDS",
    "TIME", "TIMESTAMP", "TYPED", "TYPED_DATE", "TYPED_NAIVE", "TYPED_ZONED", "cell_format", "cell_value",
    "check_temporal", "column_values", "day_first_of", "to_iso", "to_units", "write_values",
]  # fmt: skip
