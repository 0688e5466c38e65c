"""Time zones as text writes them: the public list of zone writings, the rule that reads one cell's,
and the fixed offsets a schema's `timezone` may name.

A zoned timestamp written as text ends in `Z`, `+01:00` or `+0100`. Which of those a column uses is
a public fact only once it is released (dpgan.tables.inference.zones): the list below is the
histogram's cells, every quarter-hour offset from UTC−12:00 to UTC+14:00 in both writings and `Z`,
plus one cell for every cell that is not a zoned text timestamp (null, unreadable, naive), so each
row is in exactly one cell. The rule reads the cell alone (dpgan.tables.inference.zones.zone_cell).

A fixed offset ("+01:00") is a `timezone` a schema may give as well as a zone name: sampled values
are written at that offset. The pattern directive `%:z` writes the offset with a colon (`+01:00`;
Python's strftime has it from 3.12 only, so it is written here); strptime's `%z` reads every
writing.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

from dpgan.errors import InputError

COLON_ZONE = "%:z"  # a pattern directive: the offset written with a colon
UTC_LETTER = "Z"
# the public offsets, in minutes east of UTC
OFFSETS = tuple(range(-12 * 60, 14 * 60 + 1, 15))
# the histogram's cells: `Z`, then each offset written `+HH:MM` and `+HHMM`, then every other cell
Z_CELL = 0
NO_ZONE = 1 + 2 * len(OFFSETS)
ZONE_CELLS = NO_ZONE + 1
_OFFSET = re.compile(r"([+-])(\d{2}):(\d{2})")


def writing_of(cell: int) -> tuple[str, str | None]:
    """What a zone cell makes of a `%z` pattern: the directive that replaces `%z` (a literal `Z`,
    `%:z` or `%z`) and the schema's `timezone` (None for `Z`: the values are UTC's wall clock)."""
    if cell == Z_CELL:
        return UTC_LETTER, None
    index, no_colon = divmod(cell - 1, 2)
    return ("%z" if no_colon else COLON_ZONE), offset_name(OFFSETS[index])


def offset_name(minutes: int) -> str:
    """An offset as a schema's `timezone`: "+01:00", "-05:30"."""
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def zone_of(name: str, column: str) -> dt.tzinfo:
    """A schema's `timezone`: a fixed offset ("+01:00") or a zone name ("Europe/Paris"), or one line
    saying what is wrong."""
    match = _OFFSET.fullmatch(str(name))
    if match is not None:
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3))
        if hours <= 23 and minutes <= 59:
            return dt.timezone((-1 if sign == "-" else 1) * dt.timedelta(hours=hours, minutes=minutes))
    try:
        return zoneinfo.ZoneInfo(str(name))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InputError(
            f"column {column!r}: 'timezone' {name!r} is not a known time zone name or an offset such as +01:00"
        ) from None


def has_zone(pattern: str) -> bool:
    """Whether a pattern writes an offset (`%z` or `%:z`)."""
    return "%z" in pattern or COLON_ZONE in pattern


def python_pattern(pattern: str) -> str:
    """The pattern as Python's strptime reads it (its `%z` reads `+01:00` too)."""
    return pattern.replace(COLON_ZONE, "%z")


def with_colon(text: str) -> str:
    """`+0100` at the end of a written value as `+01:00` (how `%:z` is written)."""
    return re.sub(r"([+-]\d{2})(\d{2})$", r"\1:\2", text)


__all__ = [
    "COLON_ZONE", "NO_ZONE", "OFFSETS", "UTC_LETTER", "ZONE_CELLS", "Z_CELL", "has_zone", "offset_name",
    "python_pattern", "with_colon", "writing_of", "zone_of",
]  # fmt: skip
