"""A zoned text timestamp column's zone, chosen with DP among a public list (the CSV-only path).

Once the class release has made a column a timestamp written with a zone (a public `%z` format), its
domain release is two histograms instead of one: the calendar grid (dpgan.tables.inference.datetimes)
and the zone histogram, one cell per public zone writing (dpgan.tables.schema.zones: `Z`, and each
quarter-hour offset written `+01:00` or `+0100`) and one for every other cell. Each row is in exactly
one cell of each (sensitivity 1 each), and the Gaussian is split between them
(dpgan.privacy.mechanisms.share_noise: ZONE_SHARE for the zones; their 1/σ² add up to the one
Gaussian at σ the ledger already charges for the column's domain). The zones' noise is drawn from a
child of the fit's generator, so every later release draws what it drew before.

The zone is the noisy argmax (report noisy max) among the writings when it clears ZONE_SIGMAS of
its noise: a column that writes `Z` is sampled with `Z` (UTC), one that writes `+01:00` at that
offset, with the colon. A zone with daylight saving time (Europe/Paris: +01:00 in winter, +02:00 in
summer) comes back at its most frequent offset: the instants are right, the wall clock is that
offset's. Where no writing clears the bar the column is written in UTC (`+0000`), as before. A cell
never names the zone: one row moves one cell by one.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from dpgan.privacy.mechanisms import noisy_counts, share_noise
from dpgan.tables.inference.temporal_kinds import TemporalChoice, child_generator
from dpgan.tables.schema.datetimes import FORMATS, TYPED, cell_format
from dpgan.tables.schema.zones import NO_ZONE, OFFSETS, UTC_LETTER, Z_CELL, ZONE_CELLS, writing_of

# the zones' share of the column's domain Gaussian: one big cell needs little precision (the class
# histogram's argument), and the calendar grid keeps 90 % of it (its noise × 1.054)
ZONE_SHARE = 0.1
# the best writing's noisy count must clear this many noise stds (the max of ZONE_CELLS − 1
# pure-noise cells passes 4σ in under 1 % of columns)
ZONE_SIGMAS = 4.0
_TAIL = re.compile(r"(Z|([+-])(\d{2})(:?)(\d{2}))$")


def zone_cell(value: Any) -> int:
    """The zone cell of one cell: its zone's writing when it is a text timestamp of a public zoned
    format (dpgan.tables.schema.datetimes.FORMATS) at a public offset, else NO_ZONE."""
    if not isinstance(value, str):
        return NO_ZONE
    cell = cell_format(value)
    if cell < 0 or cell >= len(FORMATS) or "%z" not in FORMATS[cell].pattern:
        return NO_ZONE
    match = _TAIL.search(value.strip())
    if match is None:
        return NO_ZONE
    if match.group(1) == UTC_LETTER:
        return Z_CELL
    sign, hours, colon, minutes = match.group(2), int(match.group(3)), match.group(4), int(match.group(5))
    offset = (-1 if sign == "-" else 1) * (hours * 60 + minutes)
    if offset not in OFFSETS:
        return NO_ZONE
    return 1 + 2 * OFFSETS.index(offset) + (0 if colon else 1)


def zoned_text(pattern: str) -> bool:
    """Whether a column of this public format gets the zone histogram (text written with `%z`)."""
    return pattern != TYPED and "%z" in pattern


def zone_counts(series: pd.Series, weights: np.ndarray | None = None) -> np.ndarray:
    """The count of each zone cell in a column (exact: released with noise); once per distinct value.
    With `weights`, each row counts its weight (an entity's events: 1/k each, so one entity moves the
    histogram by at most 1, as in dpgan.tables.inference.domain.domain_counts)."""
    codes, uniques = pd.factorize(pd.Series(series.to_numpy(dtype=object), dtype=object), use_na_sentinel=True)
    cells = np.array([zone_cell(v) for v in uniques], dtype=np.intp)
    row_weights = np.ones(len(codes)) if weights is None else np.asarray(weights, dtype=np.float64)
    known = codes >= 0
    counts = np.bincount(cells[codes[known]], weights=row_weights[known], minlength=ZONE_CELLS).astype(np.float64)
    counts[NO_ZONE] += float(np.sum(row_weights[~known]))
    return counts


def split_noise(sigma: float) -> tuple[float, float]:
    """The calendar grid's noise and the zones' for a zoned column's domain release at σ."""
    return share_noise(sigma, 1.0 - ZONE_SHARE), share_noise(sigma, ZONE_SHARE)


def release_zones(counts: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """The zone histogram with Gaussian noise, from a child of `rng`."""
    return noisy_counts(counts, noise, child_generator(rng))


def choose_zone(counts: np.ndarray, noise: float | None) -> int | None:
    """The zone cell the column is written in: the (noisy) argmax among the writings, when it clears
    ZONE_SIGMAS noise stds (exact, `noise` None: when any cell holds a value); post-processing."""
    writings = np.asarray(counts, dtype=np.float64)[:NO_ZONE]
    best = int(np.argmax(writings))  # the first listed on a tie
    bar = 0.0 if noise is None else ZONE_SIGMAS * noise
    return best if writings[best] > bar else None


def zoned_format(choice: TemporalChoice, cell: int | None) -> tuple[str, str | None]:
    """The column's format and timezone once its zone is chosen (unchanged without one: UTC)."""
    if cell is None:
        return choice.format, choice.timezone
    directive, timezone = writing_of(cell)
    return choice.format.replace("%z", directive), timezone


__all__ = ["ZONE_SHARE", "ZONE_SIGMAS", "choose_zone", "release_zones", "split_noise", "zone_cell", "zone_counts",
           "zoned_format", "zoned_text"]  # fmt: skip
