"""What each cell of a private column holds, by a public rule applied to that cell alone.

The private path never asks pandas what a column's dtype is: `read_csv` infers dtypes from the
values, so one row with an empty `age` turns an int64 column into float64, and a saved dtype or
an inferred kind would then reveal that row (one bit per column, at ε = ∞). Instead every cell is
classified on its own — null, a finite number (whole or not), an infinity, or text — and a
column's kind is decided from DP counts of those classes (dpgan.schema_inference). Because the
rule reads one cell at a time, adding or removing a row changes one cell's class per column and
nothing else: the counts have sensitivity 1.

Typed inputs (a DataFrame built in Python, a Parquet file) go through the same rule: an int64
column is a column of whole numbers, a float column with NaN a column of numbers and nulls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

NULL, NUMBER, INFINITE, TEXT = 0, 1, 2, 3
TRUE_WORDS = frozenset(("true", "t", "yes"))
FALSE_WORDS = frozenset(("false", "f", "no"))


@dataclass(frozen=True)
class Cells:
    """The class of every cell of one column, its number (finite NUMBER cells, else NaN) and its
    canonical text (TEXT cells, else None)."""

    kind: np.ndarray  # int8: NULL, NUMBER, INFINITE or TEXT
    number: np.ndarray  # float64
    text: np.ndarray  # object

    @property
    def whole(self) -> np.ndarray:
        """NUMBER cells holding a whole number (3, 3.0, "3")."""
        with np.errstate(invalid="ignore"):
            return (self.kind == NUMBER) & (self.number == np.round(self.number))


def canonical_text(value: Any) -> str:
    """The text a category is matched by: booleans as True/False, whole numbers without a
    decimal point (so a CSV's "1" matches a schema's 1 and a typed 1.0), strings stripped."""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if np.isfinite(value) and float(value).is_integer() else repr(float(value))
    return str(value).strip()


def boolean_value(value: Any) -> bool | None:
    """True/False for a cell that spells a boolean (True, "yes", 1, "0", ...), else None."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer, float, np.floating)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS or word == "1":
            return True
        if word in FALSE_WORDS or word == "0":
            return False
    return None


def classify(series: pd.Series) -> Cells:
    """Classify every cell of `series` by itself (see the module docstring)."""
    n = len(series)
    kind = np.full(n, TEXT, dtype=np.int8)
    number = np.full(n, np.nan)
    text = np.full(n, None, dtype=object)
    if pd.api.types.is_bool_dtype(series.dtype):
        values = series.to_numpy(dtype=object)
        null = pd.isna(values)
        kind[null] = NULL
        text[~null] = ["True" if v else "False" for v in values[~null]]
        return Cells(kind, number, text)
    if pd.api.types.is_numeric_dtype(series.dtype):
        parsed = series.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        values = series.to_numpy(dtype=object)
        is_bool = np.fromiter((isinstance(v, (bool, np.bool_)) for v in values), dtype=bool, count=n)
        stripped = pd.Series(values, dtype=object)
        stripped[is_bool] = None
        stripped = stripped.map(lambda v: v.strip() if isinstance(v, str) else v)
        blank = stripped.map(lambda v: isinstance(v, str) and v == "").to_numpy(dtype=bool)
        parsed = pd.to_numeric(stripped.where(~blank, None), errors="coerce").to_numpy(dtype=np.float64)
        null = (pd.isna(values) | blank) & ~is_bool
        not_numeric = np.isnan(parsed) & ~null
        kind[null] = NULL
        text[not_numeric] = [canonical_text(v) for v in values[not_numeric]]
        # a NaN that came from the text "nan" is a null, not a word
        words = np.array([t.lower() if isinstance(t, str) else "" for t in text], dtype=object)
        nan_words = not_numeric & np.isin(words, ["nan", "-nan", "na", "n/a", "null", "none"])
        kind[nan_words] = NULL
        text[nan_words] = None
        numeric = ~null & ~not_numeric
        kind[numeric & np.isfinite(parsed)] = NUMBER
        kind[numeric & np.isinf(parsed)] = INFINITE
        number[numeric & np.isfinite(parsed)] = parsed[numeric & np.isfinite(parsed)]
        return Cells(kind, number, text)
    finite = np.isfinite(parsed)
    kind[np.isnan(parsed)] = NULL
    kind[np.isinf(parsed)] = INFINITE
    kind[finite] = NUMBER
    number[finite] = parsed[finite]
    return Cells(kind, number, text)


def cell_keys(series: pd.Series) -> np.ndarray:
    """Every non-null cell's canonical text (numbers included): the keys of a column declared
    categorical, where "1" and "A" are both categories. Nulls are None."""
    values = series.to_numpy(dtype=object)
    keys = np.full(len(values), None, dtype=object)
    present = classify(series).kind != NULL
    keys[present] = [canonical_text(v) for v in values[present]]
    return keys
