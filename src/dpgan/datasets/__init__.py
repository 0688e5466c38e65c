"""Bundled datasets.

The UCI Adult table, the BWDF water-district inflows and the UCR ItalyPowerDemand series ship
inside the package (see ``data/ATTRIBUTION.md``) so experiments run offline and reproducibly,
without a download step. The two time-series sets are long tables (one row per series and hour);
``bench/data_prep/`` holds the scripts that built them from their published files.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_INT_COLUMNS",
    "ITALY_POWER_DEMAND_COLUMNS",
    "WATER_DISTRICTS_COLUMNS",
    "adult_schema_path",
    "load_adult",
    "load_adult_schema_json",
    "load_italy_power_demand",
    "load_water_districts",
]

ADULT_COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
ADULT_INT_COLUMNS: tuple[str, ...] = (
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
)

WATER_DISTRICTS_COLUMNS: tuple[str, ...] = ("district", "day", "hour", "inflow")
ITALY_POWER_DEMAND_COLUMNS: tuple[str, ...] = ("series", "hour", "demand", "label", "split")


def _data_file(name: str) -> Traversable:
    # importlib.resources (not __file__) so it also works from a zip/wheel install.
    return resources.files(__name__).joinpath("data", name)


def _read_adult_csv(name: str) -> pd.DataFrame:
    """Read one bundled gzip CSV with fixed dtypes.

    ``na_filter=False`` keeps '?' (and any other token) as a literal category
    string, never NaN, so the schema's category lists stay exhaustive.
    """
    dtypes: dict[str, Any] = {c: ("int64" if c in ADULT_INT_COLUMNS else object) for c in ADULT_COLUMNS}
    with _data_file(name).open("rb") as fh:
        df = pd.read_csv(fh, compression="gzip", dtype=dtypes, na_filter=False)
    if tuple(df.columns) != ADULT_COLUMNS:
        raise ValueError(f"unexpected columns in {name}: {list(df.columns)}")
    for col in df.columns:
        if df[col].dtype == object:
            df[col] = df[col].str.strip()
    return df


def load_adult() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the UCI Adult (train, test) split: 32,561 and 16,281 rows.

    Uses the original split so results are comparable with the literature.
    Integer columns are int64; all other columns are object-dtype strings, with
    unknowns kept as the category "?". Test labels are normalised to
    "<=50K"/">50K" (the raw file has a trailing '.').
    """
    return _read_adult_csv("adult.data.gz"), _read_adult_csv("adult.test.gz")


def adult_schema_path() -> Traversable:
    """Location of the bundled public schema (``adult-schema.json``).

    Returned as a Traversable so it works for zipped installs too; use
    ``importlib.resources.as_file`` if a real filesystem path is needed.
    """
    return _data_file("adult-schema.json")


def load_adult_schema_json() -> dict[str, Any]:
    """Parse the bundled schema: public bounds/categories, not read from data.

    Keeping metadata public (from UCI documentation) means using it costs no
    privacy budget.
    """
    return json.loads(adult_schema_path().read_text(encoding="utf-8"))


def _read_long_csv(name: str, columns: tuple[str, ...], dtypes: dict[str, Any]) -> pd.DataFrame:
    """Read one bundled gzip long table with fixed dtypes and check its header.

    Fixed dtypes (not pandas' guesses) so a day such as "2021-01-02" stays a string and every
    caller sees the same types whatever the pandas version's inference does.
    """
    with _data_file(name).open("rb") as fh:
        df = pd.read_csv(fh, compression="gzip", dtype=dtypes, na_filter=False)
    if tuple(df.columns) != columns:
        raise ValueError(f"unexpected columns in {name}: {list(df.columns)}")
    return df


def load_water_districts() -> pd.DataFrame:
    """Hourly inflow to 10 district metered areas of a northern Italian city, 2021-01 to 2023-03.

    The BWDF data of Alvisi et al. (2025), CC BY 4.0. A long table with one row per district,
    local day and hour, 6,888 complete district-days x 24 = 165,312 rows:

    - ``district`` (str): "DMA 1" .. "DMA 10", the names in the source workbook;
    - ``day`` (str): the local (Europe/Rome) date, ISO "YYYY-MM-DD";
    - ``hour`` (int64): 0..23, the reading's position in the local day;
    - ``inflow`` (float64): mean inflow over that hour in litres per second, the source values
      (multiples of 0.0025 L/s).

    Only complete district-days are kept: every (district, day) has each hour 0..23 exactly
    once and no missing value. The 23- and 25-hour days of the DST changes and the
    district-days with gaps in the source are left out (counts in ``data/ATTRIBUTION.md``), so
    the table is ready for a fixed-length (24-step) sequence model keyed by (district, day).
    """
    dtypes: dict[str, Any] = {"district": str, "day": str, "hour": "int64", "inflow": "float64"}
    return _read_long_csv("water-districts.csv.gz", WATER_DISTRICTS_COLUMNS, dtypes)


def load_italy_power_demand() -> pd.DataFrame:
    """The UCR ItalyPowerDemand set: 67 train + 1,029 test days of 24 hourly demand values.

    A long table, 1,096 x 24 = 26,304 rows:

    - ``series`` (int64): 0..66 are the train series, 67..1095 the test series, in file order;
    - ``hour`` (int64): 0..23;
    - ``demand`` (float64): the archive's values, z-normalised per series (mean 0, sd 1);
    - ``label`` (int64): the archive's class, 1 = October to March, 2 = April to September;
    - ``split`` (str): "train" or "test", the archive's split, kept so results compare with
      the classification literature.

    Tiny and complete (no gaps), which makes it the quick test set for sequence models.
    """
    dtypes: dict[str, Any] = {"series": "int64", "hour": "int64", "demand": "float64", "label": "int64", "split": str}
    return _read_long_csv("italy-power-demand.csv.gz", ITALY_POWER_DEMAND_COLUMNS, dtypes)
