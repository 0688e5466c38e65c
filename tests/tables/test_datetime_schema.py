"""Dates, timestamps and times of day in a schema: the fields round-trip, bad specs get one line,
and the cell rule reads one cell alone."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from dpgan import InputError
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.datetimes import (
    AMBIGUOUS,
    FORMATS,
    TYPED_DATE,
    TYPED_NAIVE,
    TYPED_ZONED,
    cell_format,
    cell_value,
    write_values,
)
from dpgan.tables.schema.table import Schema

SPECS = [
    {"name": "day", "kind": "date", "min": "2020-01-01", "max": "2021-12-31", "bins": 12},
    {"name": "when", "kind": "timestamp", "min": "2021-01-01 00:00:00", "max": "2021-06-30 12:00:00",
     "format": "%Y-%m-%dT%H:%M:%S%z", "timezone": "Europe/Paris", "nullable": True},
    {"name": "typed", "kind": "timestamp", "min": "2021-01-01", "max": "2022-01-01", "format": "datetime64"},
    {"name": "at", "kind": "time", "min": "09:00", "max": "24:00", "format": "%H:%M", "resolution": "minute"},
]  # fmt: skip


def test_temporal_columns_round_trip_through_the_schema_file(tmp_path):
    schema = Schema(tuple(ColumnSpec.from_dict(s) for s in SPECS))
    path = tmp_path / "schema.json"
    schema.to_json(path)
    again = Schema.from_json(path)
    assert again == schema
    written = again.to_dict()["columns"]
    assert written[0]["min"] == "2020-01-01" and written[0]["format"] == "%Y-%m-%d"  # "iso" is the kind's pattern
    assert written[0]["resolution"] == "day"
    assert written[1]["timezone"] == "Europe/Paris" and written[1]["max"] == "2021-06-30 12:00:00"
    assert written[3]["max"] == "24:00:00" and written[3]["min"] == "09:00:00"
    # inside, the bounds are on the linear scale: days, seconds, seconds since midnight
    assert schema["day"].min == (pd.Timestamp("2020-01-01") - pd.Timestamp("1970-01-01")).days
    assert schema["at"].min == 9 * 3600 and schema["at"].max == 86400


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"min": "2020-13-01"}, "ISO text"),
        ({"min": "2022-01-01"}, "earlier than"),
        ({"format": "%H:%M"}, "'format'"),
        ({"format": 7}, "'format'"),
        ({"resolution": "hour"}, "'resolution'"),
        ({"timezone": "UTC"}, "'timezone' applies"),
        ({"point_masses": [0]}, "no point masses"),
        ({"min": None}, "need 'min' and 'max'"),
    ],
)
def test_a_bad_temporal_spec_gets_one_clear_line(change, words):
    spec = {**SPECS[0], **change}
    with pytest.raises(InputError, match=words) as error:
        ColumnSpec.from_dict(spec)
    assert "\n" not in str(error.value)


def test_format_fields_belong_to_temporal_columns_only():
    with pytest.raises(InputError, match="apply to date, timestamp, time"):
        ColumnSpec.from_dict({"name": "x", "kind": "continuous", "min": 0, "max": 1, "format": "iso"})
    with pytest.raises(InputError, match="not a known time zone"):
        ColumnSpec.from_dict({**SPECS[2], "timezone": "Mars/Olympus"})


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("2021-03-07", 0),
        (" 2021-03-07 ", 0),
        ("2021-03-07 21:01:06", 5),
        ("2021-03-07T21:01:06Z", 12),
        ("2021-03-07T21:01:06+02:00", 12),
        ("21:01", 18),
        ("21:01:06", 17),
        ("04/13/2021", 3),  # month first only
        ("13/04/2021", 4),  # day first only
        ("03/04/2021", AMBIGUOUS[0]),  # either order: a cell of its own
        ("2021-02-30", -1),  # not a calendar day
        ("25:01", -1),
        ("20210307", -1),
        ("March 7", -1),
        (7, -1),
        (pd.Timestamp("2021-03-07"), TYPED_DATE),
        (dt.date(2021, 3, 7), TYPED_DATE),
        (pd.Timestamp("2021-03-07 10:00"), TYPED_NAIVE),
        (pd.Timestamp("2021-03-07 10:00", tz="Europe/Paris"), TYPED_ZONED),
    ],
)
def test_each_cell_is_classified_by_itself(cell, expected):
    assert cell_format(cell) == expected


def test_every_public_format_reads_what_it_writes():
    moment = dt.datetime(2021, 3, 27, 21, 1, 6, 500, tzinfo=dt.timezone.utc)
    for index, fmt in enumerate(FORMATS):
        found = cell_format(moment.strftime(fmt.pattern))
        assert found == index or found in AMBIGUOUS, fmt.pattern


def test_a_cell_on_each_scale():
    assert cell_value("1970-01-02", "date") == 1.0
    assert cell_value("1970-01-02 00:00:10", "timestamp") == 86410.0
    assert cell_value("1970-01-01T02:00:00+02:00", "timestamp") == 0.0  # zoned cells in UTC
    assert cell_value("01:00:30", "time") == 3630.0
    assert cell_value("03/04/2021", "date") == cell_value("2021-03-04", "date")
    assert cell_value("03/04/2021", "date", day_first=True) == cell_value("2021-04-03", "date")
    assert np.isnan(cell_value("01:00", "date")) and np.isnan(cell_value("2021-03-04", "time"))


def test_sampled_values_are_written_in_the_format_and_dtype_of_the_spec():
    units = np.array([18693.0, np.nan])
    assert write_values(units, "date", "%d/%m/%Y", None, "day", "d").tolist() == ["07/03/2021", None]
    typed = write_values(units * 86400, "timestamp", "datetime64", "Europe/Paris", "second", "d")
    assert str(typed.dtype).startswith("datetime64") and str(typed.dt.tz) == "Europe/Paris" and typed.isna()[1]
    assert write_values(np.array([3690.0]), "time", "%H:%M", None, "minute", "t").tolist() == ["01:02"]
