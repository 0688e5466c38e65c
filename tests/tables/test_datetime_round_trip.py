"""A date, a timestamp (naive and zoned) and a time of day through a CSV-only fit and a schema
fit: samples come back in the input's format and dtype, inside the range, never as `(other)`."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dpgan import TabularSynthesizer
from dpgan.tables.reading.table_io import read_private_table
from dpgan.tables.schema.table import Schema

ROWS = 1500
PATTERNS = {
    "day": r"\d{4}-\d{2}-\d{2}",
    "us": r"\d{2}/\d{2}/\d{4}",
    "stamp": r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}",
    "zoned": r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4}",  # CSV-only: its offset; the schema's: UTC
    "at": r"\d{2}:\d{2}",
}
SCHEMA = {
    "columns": [
        {"name": "day", "kind": "date", "min": "2021-01-01", "max": "2021-12-31", "bins": 12},
        {"name": "us", "kind": "date", "min": "2021-01-01", "max": "2021-12-31", "format": "%m/%d/%Y"},
        {"name": "stamp", "kind": "timestamp", "min": "2021-03-01", "max": "2021-04-01", "nullable": True},
        {"name": "zoned", "kind": "timestamp", "min": "2021-03-01", "max": "2021-04-01",
         "format": "%Y-%m-%dT%H:%M:%S%z", "timezone": "UTC"},
        {"name": "at", "kind": "time", "min": "09:00", "max": "21:00", "format": "%H:%M", "resolution": "minute"},
        {"name": "label", "kind": "categorical", "categories": ["no", "yes"]},
    ],
    "target": "label",
}  # fmt: skip


def table(rows: int = ROWS, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 365, rows), unit="D")
    stamps = pd.Timestamp("2021-03-01") + pd.to_timedelta(rng.integers(0, 30 * 86400, rows), unit="s")
    times = pd.Timestamp("2000-01-01 09:00") + pd.to_timedelta(rng.integers(0, 12 * 3600, rows), unit="s")
    stamp_text = pd.Series(stamps.strftime("%Y-%m-%d %H:%M:%S"), dtype=object)
    stamp_text[rng.random(rows) < 0.1] = None
    return pd.DataFrame(
        {
            "day": days.strftime("%Y-%m-%d"),
            "us": days.strftime("%m/%d/%Y"),
            "stamp": stamp_text,
            "zoned": stamps.tz_localize("Europe/Paris", nonexistent="shift_forward", ambiguous="NaT").strftime(
                "%Y-%m-%dT%H:%M:%S%z"
            ),
            "at": times.strftime("%H:%M"),
            "label": rng.choice(["yes", "no"], rows),
        }
    )


def fit(frame: pd.DataFrame, schema: Schema | None = None) -> TabularSynthesizer:
    synth = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth.fit(frame, schema=schema, target="label" if schema is None else None)
    return synth


@pytest.fixture(scope="module")
def csv_only(tmp_path_factory) -> TabularSynthesizer:
    path = tmp_path_factory.mktemp("dates") / "table.csv"
    table().to_csv(path, index=False)
    return fit(read_private_table(path))


@pytest.fixture(scope="module")
def with_schema() -> TabularSynthesizer:
    return fit(table(), Schema.from_dict(SCHEMA))


@pytest.mark.parametrize("which", ["csv_only", "with_schema"])
def test_text_dates_come_back_in_their_format_inside_the_range(which, request):
    synth = request.getfixturevalue(which)
    kinds = {c.name: c.kind for c in synth.schema.columns}
    assert kinds == {"day": "date", "us": "date", "stamp": "timestamp", "zoned": "timestamp", "at": "time",
                     "label": "categorical"}  # fmt: skip
    sample = synth.sample(400, seed=1)
    for column, pattern in PATTERNS.items():
        values = sample[column].dropna()
        assert len(values) > 0 and sample[column].dtype == object
        assert all(re.fullmatch(pattern, v) for v in values), column
        assert "(other)" not in set(values)
    spec = synth.schema["day"]
    days = (pd.to_datetime(sample["day"]) - pd.Timestamp("1970-01-01")).dt.days
    assert days.between(spec.min, spec.max).all()
    times = pd.to_datetime(sample["at"], format="%H:%M")
    seconds = times.dt.hour * 3600 + times.dt.minute * 60
    assert seconds.between(synth.schema["at"].min - 60, synth.schema["at"].max).all()
    assert pd.to_datetime(sample["us"], format="%m/%d/%Y").notna().all()  # month first, as the input


def test_the_schema_fit_keeps_the_declared_range(with_schema):
    sample = with_schema.sample(1000, seed=2)
    stamps = pd.to_datetime(sample["stamp"].dropna())
    assert stamps.min() >= pd.Timestamp("2021-03-01") and stamps.max() <= pd.Timestamp("2021-04-01")


@pytest.mark.parametrize("zone", [None, "Europe/Paris"])
def test_datetime64_in_datetime64_out(zone):
    base = table()
    stamps = pd.to_datetime(base["stamp"])
    frame = pd.DataFrame(
        {
            "day": pd.to_datetime(base["day"]),
            "stamp": stamps
            if zone is None
            else stamps.dt.tz_localize(zone, nonexistent="shift_forward", ambiguous="NaT"),
            "label": base["label"],
        }
    )
    synth = fit(frame)
    sample = synth.sample(300, seed=1)
    assert str(sample["day"].dtype).startswith("datetime64") and sample["day"].dt.tz is None
    assert (sample["day"] == sample["day"].dt.normalize()).all()
    assert str(sample["stamp"].dtype).startswith("datetime64")
    assert (sample["stamp"].dt.tz is None) == (zone is None)  # a zone in, a zone out (UTC)
    schema = Schema.from_dict(
        {
            "columns": [
                {"name": "day", "kind": "date", "min": "2021-01-01", "max": "2022-01-01", "format": "datetime64"},
                {"name": "stamp", "kind": "timestamp", "min": "2021-03-01", "max": "2021-04-01",
                 "format": "datetime64", "nullable": True, **({"timezone": zone} if zone else {})},
                {"name": "label", "kind": "categorical", "categories": ["no", "yes"]},
            ]
        }
    )  # fmt: skip
    typed = fit(frame, schema).sample(300, seed=1)
    assert str(typed["stamp"].dtype).startswith("datetime64") and str(typed["stamp"].dt.tz) == str(zone)


def test_a_saved_model_samples_the_same_dates(csv_only, tmp_path):
    csv_only.save(tmp_path / "model")
    again = TabularSynthesizer.load(tmp_path / "model")
    assert again.sample(50, seed=3).equals(csv_only.sample(50, seed=3))
