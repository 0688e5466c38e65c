"""The private reads before training: the row count and, without a schema, the column domains.

Each read is a Gaussian noisy count or histogram with sensitivity 1, recorded in the ledger:
- the row count fixes the sampling rate q = L / N̂ and the number of steps (both public after
  release, so they must not use the exact N);
- numeric bounds come from a noisy histogram over a public log-scale grid;
- category lists come from noisy counts with a threshold (Gaussian partition selection), whose
  failure probability is charged as extra δ; rare categories become `OTHER`.
Column names and dtypes are treated as public table structure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.errors import BudgetError, InputError
from dpgan.privacy.accounting import LedgerEntry, epsilon_of
from dpgan.privacy.mechanisms import bin_index, noisy_count, noisy_counts, public_numeric_grid, set_union_threshold
from dpgan.schema import ColumnSpec, Schema, kind_from_dtype, numeric_encoding

OTHER = "(other)"
# a numeric bin is kept when its noisy count clears this many noise standard deviations
NUMERIC_BIN_THRESHOLD_SIGMAS = 4.0


@dataclass(frozen=True)
class PreprocessingPlan:
    """How much of the budget the pre-training reads take, and how it is split."""

    noise_multiplier: float
    threshold_delta: float
    num_events: int
    num_categorical: int


def plan_preprocessing(
    *,
    epsilon: float,
    delta: float,
    fraction: float,
    num_numeric: int,
    num_categorical: int,
    accountant: str,
    threshold_delta_fraction: float = 0.1,
    extra_events: int = 0,
) -> PreprocessingPlan:
    """One σ for every preprocessing event, so that together they alone cost `fraction`·ε.

    `extra_events` are further sensitivity-1 histograms at the same σ (a condition's frequencies).
    """
    if not 0.0 < fraction < 1.0:
        raise InputError("preprocessing_fraction must be in (0, 1)")
    # row count + one histogram per column + extras
    num_events = 1 + num_numeric + num_categorical + extra_events
    threshold_delta = threshold_delta_fraction * delta if num_categorical else 0.0
    per_key = threshold_delta / num_categorical if num_categorical else 0.0
    target = fraction * epsilon

    def cost(sigma: float) -> float:
        entries = [LedgerEntry("pre", sigma, count=num_events)]
        if num_categorical:
            entries.append(LedgerEntry("thr", 1.0, count=0, extra_delta=threshold_delta))
        return epsilon_of(entries, delta, accountant)

    low, high = 0.1, 1.0
    while cost(high) > target:
        low, high = high, high * 2.0
        if high > 1e7:
            raise BudgetError("the privacy budget is too small for the preprocessing reads")
    for _ in range(40):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if cost(mid) > target else (low, mid)
    return PreprocessingPlan(high, per_key * num_categorical, num_events, num_categorical)


def private_row_count(num_rows: int, sigma: float, rng: np.random.Generator) -> tuple[int, LedgerEntry]:
    """N̂ = N + N(0, σ²), at least 1; used for q and the step count."""
    estimate = max(1, int(round(noisy_count(num_rows, sigma, rng))))
    return estimate, LedgerEntry("row count", sigma, note="Gaussian noisy count; sets q = L/N and the steps")


def infer_schema_private(
    frame: pd.DataFrame,
    *,
    plan: PreprocessingPlan,
    rng: np.random.Generator,
    target: str | None = None,
) -> tuple[Schema, list[LedgerEntry]]:
    """Column domains from noisy histograms; returns the schema and the ledger entries it cost."""
    sigma = plan.noise_multiplier
    per_key_delta = plan.threshold_delta / max(plan.num_categorical, 1)
    columns: list[ColumnSpec] = []
    entries: list[LedgerEntry] = []
    for name in frame.columns:
        series = frame[name]
        kind = kind_from_dtype(series)
        nullable = _dtype_allows_nulls(series)
        if kind in ("continuous", "integer"):
            columns.append(_numeric_spec(str(name), kind, series, nullable, sigma, rng))
            entries.append(LedgerEntry(f"bounds of {name}", sigma, note="Gaussian histogram on a public grid"))
        elif kind == "boolean":
            columns.append(ColumnSpec(str(name), "boolean", nullable=nullable))
        else:
            columns.append(_categorical_spec(str(name), series, nullable, sigma, per_key_delta, rng))
            entries.append(
                LedgerEntry(
                    f"categories of {name}",
                    sigma,
                    extra_delta=per_key_delta,
                    note="Gaussian noisy counts, thresholded; rare categories merged into (other)",
                )
            )
    schema = Schema(tuple(columns), target=target, source="learned with DP (in the ledger)")
    return schema, entries


def _dtype_allows_nulls(series: pd.Series) -> bool:
    """Whether nulls can occur follows the dtype (public), not the data: NumPy integer and bool
    columns cannot hold them; floats, objects and pandas' nullable dtypes (Int64, boolean) can."""
    return not (isinstance(series.dtype, np.dtype) and series.dtype.kind in "iub")


def _numeric_spec(
    name: str, kind: str, series: pd.Series, nullable: bool, sigma: float, rng: np.random.Generator
) -> ColumnSpec:
    edges = public_numeric_grid()
    values = pd.to_numeric(series, errors="coerce").dropna().to_numpy(dtype=np.float64)
    values = values[np.isfinite(values)]
    counts = np.bincount(bin_index(values, edges), minlength=len(edges) - 1)
    noisy = noisy_counts(counts, sigma, rng)
    kept = np.nonzero(noisy > NUMERIC_BIN_THRESHOLD_SIGMAS * sigma)[0]
    if len(kept) == 0:
        raise BudgetError(
            f"column {name!r}: too few rows to find its range privately at this budget; give a schema with its bounds"
        )
    low, high = float(edges[kept[0]]), float(edges[kept[-1] + 1])
    if kind == "integer":
        low, high = float(np.floor(low)), float(np.ceil(high))
    # encoding hints from the same noisy histogram (post-processing): the share in the bin that
    # starts at 0 (exact zeros for integers) and the first kept bin above 0
    zero_bin = int(np.searchsorted(edges, 0.0))
    total = float(np.clip(noisy[kept], 0.0, None).sum())
    zero_share = float(max(noisy[zero_bin], 0.0)) / total if zero_bin in kept and total > 0 else 0.0
    positive = [float(edges[i]) for i in kept if edges[i] > 0]
    hints = numeric_encoding(kind, low, high, zero_share, positive[0] if positive else 0.0)
    return ColumnSpec(name, kind, min=low, max=high, nullable=nullable, **hints)


def _categorical_spec(
    name: str, series: pd.Series, nullable: bool, sigma: float, per_key_delta: float, rng: np.random.Generator
) -> ColumnSpec:
    counts = series.dropna().value_counts()
    noisy = noisy_counts(counts.to_numpy(), sigma, rng)
    threshold = set_union_threshold(sigma, per_key_delta)
    kept = sorted((v for v, c in zip(counts.index, noisy) if c > threshold and v != OTHER), key=str)
    return ColumnSpec(name, "categorical", categories=tuple(kept) + (OTHER,), nullable=nullable, other_category=OTHER)
