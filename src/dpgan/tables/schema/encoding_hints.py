"""Encoding hints of a learned numeric domain (point masses, scale, bins) from statistics the caller
already holds, and a column's kind from its dtype (table structure, public): post-processing, free.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

LOG_SCALE_DECADES = 2.5  # a non-negative range spanning this many decades is log-scaled
# ... and so is one whose top is this many decades above its positive values' 10 % quantile
LOG_SPREAD_DECADES = 1.5
DEFAULT_BINS = 8


def bin_per_level(kind: str, low: float, high: float) -> bool:
    """A learned integer column with a short range gets one bin per level (DEFAULT_BINS otherwise)."""
    return kind == "integer" and high - low <= 4 * DEFAULT_BINS


def numeric_encoding(
    kind: str,
    low: float,
    high: float,
    point_masses: tuple[float, ...],
    smallest_positive: float,
    typical_positive: float | None = None,
) -> dict[str, Any]:
    """Encoding hints for a learned numeric domain (`point_masses`, `scale`, `bins`), from
    statistics the caller already holds (DP ones on the private path): post-processing, free.
    `point_masses`: the values that hold a large share of the rows (0, sentinel codes), those inside
    [low, high] kept, integers for an integer column. `typical_positive`: the positive values' 10 %
    quantile, where the caller has one."""
    hints: dict[str, Any] = {"bins": DEFAULT_BINS}
    if bin_per_level(kind, low, high):
        hints["bins"] = max(1, int(high - low))
    masses = tuple(m for m in sorted(set(point_masses)) if low <= m <= high)
    if masses:
        hints["point_masses"] = tuple(int(m) for m in masses) if kind == "integer" else tuple(map(float, masses))
    if low >= 0.0 and smallest_positive > 0 and math.log10(high / smallest_positive) >= LOG_SCALE_DECADES:
        hints["scale"] = "log"
    if low >= 0.0 and typical_positive and math.log10(high / typical_positive) >= LOG_SPREAD_DECADES:
        hints["scale"] = "log"  # most of the mass sits decades below the top: a heavy tail
    return hints


def kind_from_dtype(series: pd.Series) -> str:
    """The column's kind from its dtype: dtypes are table structure, treated as public."""
    if pd.api.types.is_bool_dtype(series):
        return "boolean"
    if pd.api.types.is_integer_dtype(series):
        return "integer"
    if pd.api.types.is_float_dtype(series):
        non_null = series.dropna()
        if len(non_null) and bool(np.all(non_null == np.round(non_null))) and str(series.dtype) != "float64":
            return "integer"
        return "continuous"
    return "categorical"
