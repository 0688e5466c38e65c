"""What each cell of a private column holds, by a public rule applied to that cell alone.

The private path never asks pandas what a column's dtype is: `read_csv` infers dtypes from the
values, so one row with an empty `age` turns an int64 column into float64, and a saved dtype or
an inferred kind would then reveal that row (one bit per column, at ε = ∞). Instead every cell is
classified on its own — null, a finite number (whole or not), an infinity, or text — and a
column's kind is decided from DP counts of those classes (dpgan.tables.inference.infer). Because the
rule reads one cell at a time, adding or removing a row changes one cell's class per column and
nothing else: the counts have sensitivity 1.

Typed inputs (a DataFrame built in Python, a Parquet file) go through the same rule: an int64
column is a column of whole numbers, a float column with NaN a column of numbers and nulls.

A text cell that spells a date, a timestamp or a time of day in one of the public formats, and a
typed date-time value (a datetime64 column's cells), is still a TEXT cell here, and `temporal`
says which public temporal cell it is (dpgan.tables.schema.datetimes.cell_format, again a rule of
that cell alone); the class histogram counts those cells apart (dpgan.tables.inference.datetimes).

Codes: a text cell that is a digit string with a leading zero and more than one character
(`02139`, `007`) is flagged `code` as well as parsed as a number. Nobody writes a quantity with
a leading zero, so such a cell says the column holds codes (zip, ICD, product codes) whose text is
the value; the class histogram counts these cells in a cell of their own
(dpgan.tables.inference.column_kinds), and a column with clearly many of them becomes categorical,
its values kept as text (`02139`, not 2139). The flag reads the cell alone, like every class here.
A column a schema declares numeric still reads `007` as 7: the declaration is the user's.

Codes and dates are disjoint by construction, so one cell never counts in both: a code is an
all-digit NUMBER cell, a temporal cell is a TEXT cell, and every public date/time format has a
separator (`-`, `/`, `.`, `:`, a space or `T`). `02139` is a code; `2021-03-04` is a date; a
separator-free `20210304` is neither (a number, no leading zero).

Speed without changing the rule: a rule of one cell gives equal results on equal cells, so a
column whose cells are all of one kind of Python value (all strings, or a typed numeric or
boolean column: what a Parquet column always is) is grouped by value (`distinct`: pandas'
factorize, in C) and the rule runs once per distinct value, its result copied to every cell of
that value. Mixed object columns, where factorize would treat 1, 1.0 and True as one value
although the rule tells them apart, keep the cell-by-cell loop. Nothing here depends on how
many cells share a value, only on each cell: the grouping is work, not a release.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpgan.tables.schema.codes import leading_zero_codes
from dpgan.tables.schema.datetimes import cell_format

NULL, NUMBER, INFINITE, TEXT = 0, 1, 2, 3
# object columns whose cells factorize can group without merging cells the rules tell apart
_GROUPABLE = frozenset(("string", "empty", "bytes"))
TRUE_WORDS = frozenset(("true", "t", "yes"))
FALSE_WORDS = frozenset(("false", "f", "no"))


@dataclass(frozen=True)
class Cells:
    """The class of every cell of one column, its number (finite NUMBER cells, else NaN), its
    canonical text (TEXT cells, else None) and whether it is a code (a text cell of digits with a
    leading zero: also a NUMBER cell; module docstring)."""

    kind: np.ndarray  # int8: NULL, NUMBER, INFINITE or TEXT
    number: np.ndarray  # float64
    text: np.ndarray  # object
    code: np.ndarray | None = None  # bool; None: no cell is a code (a typed column)
    # int8: each TEXT cell's temporal cell (dpgan.tables.schema.datetimes.cell_format), else -1
    temporal: np.ndarray | None = None

    @property
    def codes(self) -> np.ndarray:
        """The code cells (all False where the column cannot hold any)."""
        return np.zeros(len(self.kind), dtype=bool) if self.code is None else self.code

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


@dataclass(frozen=True)
class Distinct:
    """A column grouped by value: cell i holds `values[codes[i]]`; nulls have code -1."""

    codes: np.ndarray  # intp
    values: np.ndarray  # object: each distinct value as `series.to_numpy(dtype=object)` gives it

    def spread(self, per_value: np.ndarray, null: Any) -> np.ndarray:
        """Every cell's entry of `per_value` (one per distinct value), `null` for the nulls."""
        extended = np.empty(len(per_value) + 1, dtype=per_value.dtype)
        extended[:-1] = per_value
        extended[-1] = null
        return extended[self.codes]  # code -1 picks the last entry


def distinct(series: pd.Series) -> Distinct | None:
    """The column grouped by value, or None where grouping could merge cells that a rule tells
    apart (an object column of mixed types, or a dtype other than numbers, booleans, strings)."""
    dtype = series.dtype
    typed = pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_string_dtype(dtype)
    if isinstance(dtype, pd.CategoricalDtype):
        return None
    if pd.api.types.is_object_dtype(dtype):
        typed = pd.api.types.infer_dtype(series, skipna=True) in _GROUPABLE
    if not typed:
        return None
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    return Distinct(np.asarray(codes), np.asarray(uniques, dtype=object))


def per_value(series: pd.Series, rule: Callable[[pd.Series], np.ndarray], null: Any) -> np.ndarray:
    """`rule` (a cell-by-cell rule on an object series, one result per cell) on every cell of
    `series`, run once per distinct value where the column can be grouped (module docstring);
    `null` is the rule's result on a null cell."""
    groups = distinct(series)
    if groups is None:
        return rule(pd.Series(series.to_numpy(dtype=object), dtype=object))
    return groups.spread(rule(pd.Series(groups.values, dtype=object)), null)


def classify(series: pd.Series) -> Cells:
    """Classify every cell of `series` by itself (see the module docstring)."""
    if pd.api.types.is_datetime64_any_dtype(series.dtype):  # typed date-times: each cell is one
        series = pd.Series(series.to_numpy(dtype=object), dtype=object).where(series.notna().to_numpy(), None)
    if pd.api.types.is_bool_dtype(series.dtype) or pd.api.types.is_numeric_dtype(series.dtype):
        return _classify_cells(series)  # already whole-column NumPy
    groups = distinct(series)
    if groups is None:
        return _with_temporal(_classify_cells(series), series.to_numpy(dtype=object))
    cells = _with_temporal(_classify_cells(pd.Series(groups.values, dtype=object)), groups.values)
    return Cells(
        groups.spread(cells.kind, NULL),
        groups.spread(cells.number, np.nan),
        groups.spread(cells.text, None),
        code=groups.spread(cells.codes, False),
        temporal=groups.spread(cells.temporal, -1),  # type: ignore[arg-type]
    )


def _with_temporal(cells: Cells, values: np.ndarray) -> Cells:
    """`cells` with the temporal cell of each TEXT cell (`values`: the cells as objects)."""
    temporal = np.full(len(values), -1, dtype=np.int8)
    for row in np.flatnonzero(cells.kind == TEXT):
        temporal[row] = cell_format(values[row])
    return Cells(cells.kind, cells.number, cells.text, code=cells.code, temporal=temporal)


def _classify_cells(series: pd.Series) -> Cells:
    """The rule itself, cell by cell (NumPy on whole typed columns)."""
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
        # a date-time value is text, not a number (to_numeric would read a Timestamp as nanoseconds)
        is_bool |= np.fromiter((_is_moment(v) for v in values), dtype=bool, count=n)
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
        return Cells(kind, number, text, code=(kind == NUMBER) & leading_zero_codes(stripped.to_numpy(dtype=object)))
    finite = np.isfinite(parsed)
    kind[np.isnan(parsed)] = NULL
    kind[np.isinf(parsed)] = INFINITE
    kind[finite] = NUMBER
    number[finite] = parsed[finite]
    return Cells(kind, number, text)


def _is_moment(value: object) -> bool:
    return isinstance(value, (dt.date, np.datetime64)) and not pd.isna(value)


def cell_keys(series: pd.Series, cells: Cells | None = None) -> np.ndarray:
    """Every non-null cell's canonical text (numbers included): the keys of a column declared
    categorical, where "1" and "A" are both categories. Nulls are None. `cells`: the column's
    classes when the caller has them (`classify(series)`)."""
    keys = per_value(series, _canonical_texts, None)
    present = (cells if cells is not None else classify(series)).kind != NULL
    keys[~present] = None
    return keys


def _canonical_texts(series: pd.Series) -> np.ndarray:
    keys = np.empty(len(series), dtype=object)
    keys[:] = [canonical_text(v) for v in series.to_numpy(dtype=object)]
    return keys
