"""Bundled datasets.

The UCI Adult data ships inside the package (see ``data/ATTRIBUTION.md``) so
experiments run offline and reproducibly, without a download step.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["ADULT_COLUMNS", "ADULT_INT_COLUMNS", "adult_schema_path", "load_adult", "load_adult_schema_json"]

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
