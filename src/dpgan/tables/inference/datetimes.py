"""Dates and times found with DP on the CSV-only path: the kind, the format and the range.

The class histogram (dpgan.tables.inference.column_kinds) has, besides null / whole / fractional /
text, one cell per public temporal cell of dpgan.tables.schema.datetimes (each public format, the
ambiguous slash dates, typed dates and time stamps). A cell's class is a rule of that cell alone,
so every row still lands in exactly one cell of the column's histogram: sensitivity 1, one Gaussian
at the class histogram's σ, the same ledger entry as before (its note says how many cells). The
temporal cells' noise is drawn from a child of the fit's generator (`Generator.spawn`, which leaves
the parent's stream where it was), so a table without dates draws exactly the noise it drew before.

Everything below is post-processing of those noisy counts
(dpgan.tables.inference.temporal_kinds.choose_temporal):
- the column is temporal when its best format's score (its cell; a slash pair's or the typed values'
  three cells) clears BEST_SIGMAS noise stds and holds at least TEMPORAL_SHARE of the non-null cells
  (the sum of every temporal cell would carry the noise of all of them);
- its kind and format: the best format's (report noisy max on the Gaussian release); a slash pair
  is read in the order whose own cells (those the other order cannot read) count more, month first
  on a tie: a cell never names the order; typed values are a timestamp when time stamps clear both
  their noise and STAMP_SHARE of the typed cells (a column of midnights is a date);
- a zone: zoned cells are learned in UTC; typed ones are written back in UTC, text ones in the zone
  writing their domain release chooses (dpgan.tables.inference.zones), else in UTC.

The range is the second release, the domain histogram: the column's values on a public calendar
grid (month starts from 1800 to 2200, or quarter hours of the day), summed to the resolution that N̂
and σ allow (TYPICAL_MONTHS), at the domain release's σ (sensitivity 1: each row in one bin; the same ledger entry
as a numeric column's grid). Its bins above the noise give the range between the DP quantiles, as
for numbers (dpgan.tables.inference.numeric.quantile_range). Like every domain histogram it has a
public null cell: the rows that hold no value of the kind (missing, unreadable, a time in a date
column: what conform makes null). Each row is still in exactly one cell, so the sensitivity stays 1
and the null count comes free; dpgan.tables.inference.infer.null_count combines it with the class
release's by inverse variance (noise ≈ σ, where the class count alone carries 2σ·√5 over five
cells). Its noise is drawn from a child of the fit's generator, so every later release draws what
it drew before. A timestamp written with a zone (`%z`) splits that Gaussian with a histogram of its
zone writings (dpgan.tables.inference.zones), so it is sampled in its own zone and writing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.privacy.mechanisms import bin_index, noisy_counts
from dpgan.tables.inference.categorical import Decision
from dpgan.tables.inference.domain import NUMERIC_BIN_SIGMAS
from dpgan.tables.inference.numeric import _without_isolated_noise, quantile_range
from dpgan.tables.inference.temporal_kinds import TemporalChoice, child_generator, key_format, parse_key
from dpgan.tables.inference.zones import (
    choose_zone,
    release_zones,
    split_noise,
    zone_counts,
    zoned_format,
    zoned_text,
)
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.datetimes import DATE, SECONDS_PER_DAY, TIME, TIMESTAMP, column_values

# the public calendar grid: month starts over GRID_YEARS; a time of day's: quarter hours
GRID_YEARS = (1800, 2200)
MONTH_STEPS = (1, 3, 12, 120)  # months a bin, finest first
QUARTER_HOUR = 900
TIME_STEPS = (1, 4, 12)  # quarter hours a bin, finest first
# the resolution: the finest whose bins would each clear NUMERIC_BIN_SIGMAS noise stds if N̂ rows
# filled TYPICAL_MONTHS months (dates) or TYPICAL_QUARTER_HOURS of the day evenly
TYPICAL_MONTHS = 120
TYPICAL_QUARTER_HOURS = 48
# bins are also chosen a year or a decade (an hour, four hours) at a time: every bin of such a group
# whose summed count clears the same bar for a sum (births, 6,000 rows over 20 years at ε = 1, show
# only by the decade; with month bins alone its range came out three months wide)
GROUP_LEVELS = {TIME: (4, 16), DATE: (12, 120), TIMESTAMP: (12, 120)}
COVERAGE = 0.8
MAX_TEMPORAL_BINS = 16
# where no bin shows above the noise: a wide public default range
DEFAULT_RANGE = {DATE: ("1900-01-01", "2100-01-01"), TIMESTAMP: ("1900-01-01", "2100-01-01")}


# ---------------------------------------------------------------- the domain release


def _month_starts() -> np.ndarray:
    starts = pd.date_range(f"{GRID_YEARS[0]}-01-01", f"{GRID_YEARS[1]}-01-01", freq="MS")
    return ((starts - pd.Timestamp("1970-01-01")) // pd.Timedelta(days=1)).to_numpy(dtype=np.float64)


def calendar_edges(kind: str, step: int = 1) -> np.ndarray:
    """The public grid's edges in the kind's units: every `step` months (dates, timestamps) or
    `step` quarter hours (times of day)."""
    if kind == TIME:
        return np.arange(0, SECONDS_PER_DAY + 1, QUARTER_HOUR * step, dtype=np.float64)
    days = _month_starts()[::step]
    return days * SECONDS_PER_DAY if kind == TIMESTAMP else days


@dataclass
class CalendarCounts:
    """A temporal column's counts on its kind's finest grid (and its exact extent: non-private path
    only), and its null cell: the rows that hold no value of the kind (with its noise std once
    released; None: exact); a zoned text timestamp's zone counts too (dpgan.tables.inference.zones)."""

    kind: str
    bins: np.ndarray
    low: float = math.nan
    high: float = math.nan
    step: int = 1  # months or quarter hours a bin (after the release's coarsening)
    nulls: float = 0.0
    null_noise: float | None = None  # also the grid's noise once released
    zones: np.ndarray | None = None  # a zoned text timestamp's: the count of each zone cell
    zone_noise: float | None = None


def calendar_counts(series: pd.Series, key: str, weights: np.ndarray | None = None) -> CalendarCounts:
    """The exact counts of the column's values on the finest public grid (one bin per row; with
    `weights`, each row its weight: see dpgan.tables.inference.domain.domain_counts)."""
    kind, day_first = parse_key(key)
    values = column_values(series, kind, day_first)
    finite = np.isfinite(values)
    row_weights = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=np.float64)
    nulls = float(np.sum(row_weights[~finite]))
    counts = counts_of_values(values[finite], kind, None if weights is None else weights[finite], nulls=nulls)
    if zoned_text(key_format(key)):
        counts.zones = zone_counts(series, weights)
    return counts


def counts_of_values(
    values: np.ndarray, kind: str, weights: np.ndarray | None = None, nulls: float = 0.0
) -> CalendarCounts:
    """The grid counts of a column's readable `values` (finite; each its weight when given), with the
    count of its other rows."""
    edges = calendar_edges(kind)
    counts = np.bincount(bin_index(values, edges), weights=weights, minlength=len(edges) - 1).astype(np.float64)
    extent = (float(values.min()), float(values.max())) if len(values) else (math.nan, math.nan)
    return CalendarCounts(kind, counts, *extent, nulls=nulls)


def release_calendar(counts: CalendarCounts, sigma: float, rng: np.random.Generator, rows: float) -> CalendarCounts:
    """The Gaussian release of the grid, its bins first summed to the resolution N̂ and σ allow
    (public facts: the coarse histogram still has sensitivity 1), and of its null cell (from a child
    of `rng`: the grid's draws, and every later release's, are those drawn before it had one). With
    zone counts, the Gaussian is split between the grid and the zones (`split_noise`)."""
    zones, zone_noise = None, None
    if counts.zones is not None:
        sigma, zone_noise = split_noise(sigma)
        zones = release_zones(counts.zones, zone_noise, rng)
    steps, typical = (TIME_STEPS, TYPICAL_QUARTER_HOURS) if counts.kind == TIME else (MONTH_STEPS, TYPICAL_MONTHS)
    step = next((s for s in steps if rows / (typical / s) >= NUMERIC_BIN_SIGMAS * sigma), steps[-1])
    coarse = np.add.reduceat(counts.bins, np.arange(0, len(counts.bins), step))
    bins = noisy_counts(coarse, sigma, rng)
    nulls = float(noisy_counts(np.array([counts.nulls]), sigma, child_generator(rng))[0])
    return CalendarCounts(counts.kind, bins, step=step, nulls=nulls, null_noise=sigma, zones=zones,
                          zone_noise=zone_noise)  # fmt: skip


def temporal_column(
    name: str,
    choice: TemporalChoice,
    counts: CalendarCounts,
    sigma: float,
    nullable: bool,
    exact: bool,
    dates: float = 0.0,
) -> Decision:
    """The column's spec from its released (or, `exact`, true) grid counts and the noisy count of
    its date/time cells (`dates`, from the class release): post-processing only. `sigma` is the
    domain release's; a zoned column's grid has its share's noise (`CalendarCounts.null_noise`)."""
    kind, note = choice.kind, None
    if counts.null_noise is not None:
        sigma = counts.null_noise
    if exact:
        low, high = counts.low, counts.high
        if not math.isfinite(low):
            low, high = _default_range(kind)
    else:
        edges = calendar_edges(kind, counts.step)
        chosen = _without_isolated_noise(_chosen_bins(counts, sigma, dates), counts.bins, sigma)
        mass = np.where(chosen, np.clip(counts.bins - sigma, 0.0, None), 0.0)
        span = quantile_range(mass, counts.bins, sigma, edges)
        if span is None:
            low, high = _default_range(kind)
            note = (
                f"column {name!r}: its {kind}s do not show above the noise at this budget; it gets a wide default range"
            )
        else:
            low, high = span
    if kind == DATE:
        low, high = float(math.floor(low)), float(math.ceil(high))
    if high <= low:
        high = low + (1.0 if kind == DATE else 60.0)
    finest = 30.44 if kind == DATE else 30.44 * SECONDS_PER_DAY if kind == TIMESTAMP else 3600.0
    bins = int(min(MAX_TEMPORAL_BINS, max(1, round((high - low) / finest))))
    zone = None if counts.zones is None else choose_zone(counts.zones, None if exact else counts.zone_noise)
    fmt, timezone = zoned_format(choice, zone)
    spec = ColumnSpec(
        name, kind, min=low, max=high, nullable=nullable, bins=bins,
        format=fmt, timezone=timezone, resolution=choice.resolution,
    )  # fmt: skip
    return Decision(spec, note)


def _chosen_bins(counts: CalendarCounts, sigma: float, dates: float) -> np.ndarray:
    """The bins taken as the column's: those whose noisy count clears NUMERIC_BIN_SIGMAS noise stds
    alone, or, when those hold less than COVERAGE of the column's (noisy) count of `dates`, the bins
    of every group (a year of months, a decade; an hour, four hours of quarter hours) whose sum
    clears the same bar for a sum, the finest grouping that covers them. A finer level is kept when
    it suffices: a chosen decade takes the noise of its empty years too (pizzaplace's one year came
    out 2012..2016 when every level was added together)."""
    chosen = counts.bins > NUMERIC_BIN_SIGMAS * sigma
    if counts.bins[chosen].sum() >= COVERAGE * dates:
        return chosen
    for level in GROUP_LEVELS[counts.kind]:
        size = level // counts.step
        if size < 2:
            continue
        grouped = chosen.copy()
        for start in range(0, len(grouped), size):
            group = counts.bins[start : start + size]
            if group.sum() > NUMERIC_BIN_SIGMAS * sigma * math.sqrt(len(group)):
                grouped[start : start + size] = True
        chosen = grouped
        if counts.bins[chosen].sum() >= COVERAGE * dates:
            break
    return chosen


def _default_range(kind: str) -> tuple[float, float]:
    if kind == TIME:
        return 0.0, float(SECONDS_PER_DAY)
    low, high = (pd.Timestamp(t) for t in DEFAULT_RANGE[kind])
    unit = pd.Timedelta(seconds=1) if kind == TIMESTAMP else pd.Timedelta(days=1)
    epoch = pd.Timestamp("1970-01-01")
    return float((low - epoch) / unit), float((high - epoch) / unit)


__all__ = ["CalendarCounts", "calendar_counts", "calendar_edges", "release_calendar", "temporal_column"]
