"""Dates and times from a CSV alone, none silently lost (issue 51): a date, timestamps written with a
zone (`+01:00`, `Z`, `+0530`) and a time of day, each with nulls and a few unreadable cells, come back
in their own format and writing, with nulls at about their rate; a zoned column keeps its offset,
chosen with DP among a public list of zone writings (dpgan.tables.inference.zones), and one row
more (another zone, a null) gives the same choice under the same noise."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dpgan import TabularSynthesizer
from dpgan.errors import InputError
from dpgan.privacy.mechanisms import share_noise
from dpgan.tables.inference.column_kinds import PublicHints, class_counts, decide_kind
from dpgan.tables.inference.datetimes import calendar_counts
from dpgan.tables.inference.infer import infer_schema_private
from dpgan.tables.inference.stream_counts import count_batches
from dpgan.tables.inference.zones import ZONE_SHARE, split_noise, zone_cell, zone_counts
from dpgan.tables.reading.table_io import read_private_table
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.datetimes import write_values
from dpgan.tables.schema.zones import NO_ZONE, OFFSETS, Z_CELL, writing_of

NULL_SHARE = 0.08
BAD = ("n/a?", "2021-02-30", "99:99", "soon")
WRITTEN = {
    "day": r"\d{4}-\d{2}-\d{2}",
    "paris": r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[12]:00",
    "utc": r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z",
    "delhi": r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\+0530",
    "at": r"\d{2}:\d{2}:\d{2}",
}


def table(rows: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Each temporal column NULL_SHARE null and with a few unreadable cells."""
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 365, rows), unit="D")
    stamps = (pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 365 * 86400, rows), unit="s")).tz_localize(
        "UTC"
    )
    times = pd.Timestamp("2000-01-01 09:00") + pd.to_timedelta(rng.integers(0, 12 * 3600, rows), unit="s")

    def holes(text: pd.Index) -> pd.Series:
        column = pd.Series(text, dtype=object)
        column[rng.random(rows) < NULL_SHARE] = None
        column[rng.choice(rows, len(BAD), replace=False)] = BAD
        return column

    paris = stamps.tz_convert("Europe/Paris").strftime("%Y-%m-%dT%H:%M:%S%z")
    return pd.DataFrame(
        {
            "day": holes(days.strftime("%Y-%m-%d")),
            "paris": holes(paris.str.replace(r"(\d\d)(\d\d)$", r"\1:\2", regex=True)),
            "utc": holes(stamps.strftime("%Y-%m-%dT%H:%M:%SZ")),
            "delhi": holes(stamps.tz_convert("Asia/Kolkata").strftime("%Y-%m-%d %H:%M:%S%z")),
            "at": holes(times.strftime("%H:%M:%S")),
            "label": rng.choice(["yes", "no"], rows),
        }
    )


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> tuple[TabularSynthesizer, pd.DataFrame]:
    path = tmp_path_factory.mktemp("zones") / "table.csv"
    table().to_csv(path, index=False)
    synth = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth.fit(read_private_table(path), target="label")
    return synth, synth.sample(1000, seed=1)


def test_every_temporal_column_comes_back_in_its_format_zone_and_null_rate(fitted):
    synth, sample = fitted
    kinds = {c.name: (c.kind, c.format, c.timezone, c.nullable) for c in synth.schema.columns}
    assert kinds["day"] == ("date", "%Y-%m-%d", None, True)
    assert kinds["paris"][:2] == ("timestamp", "%Y-%m-%dT%H:%M:%S%:z") and kinds["paris"][2] in ("+01:00", "+02:00")
    assert kinds["utc"] == ("timestamp", "%Y-%m-%dT%H:%M:%SZ", None, True)
    assert kinds["delhi"] == ("timestamp", "%Y-%m-%d %H:%M:%S%z", "+05:30", True)
    assert kinds["at"] == ("time", "%H:%M:%S", None, True)
    for column, pattern in WRITTEN.items():
        values = sample[column].dropna()
        assert sample[column].dtype == object and all(re.fullmatch(pattern, v) for v in values), column
        assert 0.02 <= sample[column].isna().mean() <= 0.2, column  # 8 % null in, a null slot learned
    # the instants are kept: a Z column read back in UTC lies in the learned range
    utc = pd.to_datetime(sample["utc"].dropna(), format="%Y-%m-%dT%H:%M:%SZ")
    seconds = (utc - pd.Timestamp("1970-01-01")).dt.total_seconds()
    assert seconds.between(synth.schema["utc"].min, synth.schema["utc"].max + 1).all()


def test_a_saved_model_keeps_the_zones(fitted, tmp_path):
    synth, _ = fitted
    synth.save(tmp_path / "model")
    again = TabularSynthesizer.load(tmp_path / "model")
    assert again.sample(50, seed=3).equals(synth.sample(50, seed=3))


def learn(frame: pd.DataFrame, seed: int, sigma: float = 60.0):
    schema, _ = infer_schema_private(
        frame, hints=PublicHints(target="label"), noise_multiplier=sigma, threshold_delta=1e-6,
        estimated_rows=float(len(frame)), rng=np.random.default_rng(seed),
    )  # fmt: skip
    return [(c.name, c.kind, c.format, c.timezone, c.min, c.max, c.bins) for c in schema.columns]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "row",
    [
        {"paris": "2021-03-07T21:01:06+05:30", "utc": "2021-03-07T21:01:06+01:00", "delhi": "2021-03-07 21:01:06Z"},
        {"paris": None, "utc": None, "delhi": None},
        {"paris": "2021-03-07T21:01:06+01:07", "utc": "2021-03-07 21:01:06", "delhi": "soon"},
    ],
)
def test_neighbouring_tables_give_the_same_zone(seed, row):
    """One more row in another zone, null, or at an offset off the list: the same format, zone and
    range under the same noise (σ of a default fit at ε = 1)."""
    base = table(seed=seed)
    extra = {c: row.get(c, base[c].iloc[0]) for c in base.columns}
    neighbour = pd.concat([base, pd.DataFrame([extra])], ignore_index=True)
    assert learn(base, seed) == learn(neighbour, seed)


@pytest.mark.parametrize("column", ["paris", "utc", "delhi"])
def test_one_row_moves_the_zone_histogram_by_one_in_one_cell(column):
    base = table(500)
    counts = zone_counts(base[column])
    assert counts.sum() == len(base)  # every row in one cell
    for value in ("2021-03-07T21:01:06+05:30", "2021-03-07T21:01:06Z", None, "word", "2021-03-07 21:01:06"):
        other = zone_counts(pd.concat([base[column], pd.Series([value], dtype=object)], ignore_index=True))
        assert np.abs(other - counts).sum() == 1.0


def test_the_zone_cell_is_read_off_the_cell_alone():
    assert zone_cell("2021-03-07T21:01:06Z") == Z_CELL
    colon, plain = zone_cell("2021-03-07T21:01:06+01:00"), zone_cell("2021-03-07 21:01:06+0100")
    assert writing_of(colon) == ("%:z", "+01:00") and writing_of(plain) == ("%z", "+01:00")
    assert writing_of(zone_cell("2021-03-07T21:01:06-05:30")) == ("%:z", "-05:30")
    for cell in ("2021-03-07T21:01:06+01:07", "2021-03-07 21:01:06", "21:01:06+01:00", "+01:00", None, 3.0):
        assert zone_cell(cell) == NO_ZONE
    assert len({zone_cell(f"2021-03-07T21:01:06{sign}{m // 60:02d}:{m % 60:02d}") for m in range(0, 721, 15)
                for sign in "+-"}) == 2 * 49 - 1  # fmt: skip
    assert min(OFFSETS) == -720 and max(OFFSETS) == 840


def test_the_split_composes_to_the_one_gaussian_of_the_ledger():
    grid, zones = split_noise(7.0)
    assert grid**-2 + zones**-2 == pytest.approx(7.0**-2) and zones == share_noise(7.0, ZONE_SHARE)


def test_streamed_counts_give_the_same_zones():
    frame = table(900)
    frame.loc[:299, "paris"] = None  # a batch without any date
    counters = count_batches((frame.iloc[i : i + 300] for i in range(0, 900, 300)), frame.columns, PublicHints())
    for name in ("paris", "utc", "delhi"):
        key = decide_kind(name, class_counts(frame[name]), sigma=0.0, hints=PublicHints()).domain_key
        streamed, exact = counters[name].domain(key, lambda *_: None), calendar_counts(frame[name], key)
        assert np.array_equal(streamed.zones, exact.zones) and streamed.nulls == exact.nulls


def test_a_schema_may_name_a_fixed_offset_and_the_colon_writing():
    spec = ColumnSpec("t", "timestamp", min="2021-01-01", max="2022-01-01", format="%Y-%m-%dT%H:%M:%S%:z",
                      timezone="-05:30")  # fmt: skip
    written = write_values(np.array([0.0, np.nan]) + spec.min, "timestamp", spec.format, spec.timezone, "second", "t")
    assert written.iloc[0] == "2020-12-31T18:30:00-05:30" and written.iloc[1] is None
    with pytest.raises(InputError, match="must end the format"):
        ColumnSpec("t", "timestamp", min="2021-01-01", max="2022-01-01", format="%:z %Y-%m-%d %H:%M")
    with pytest.raises(InputError, match="offset such as"):
        ColumnSpec("t", "timestamp", min="2021-01-01", max="2022-01-01", format="%Y-%m-%d %H:%M%z", timezone="+1")
