"""The temporal cells of the class histogram and what their noisy counts say: whether a column
holds dates or times, which kind, which public format (dpgan.tables.inference.datetimes has the
privacy argument and the range release)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpgan.privacy.mechanisms import noisy_counts
from dpgan.tables.schema.cells import TEXT, Cells
from dpgan.tables.schema.datetimes import (
    AMBIGUOUS,
    CELLS,
    DATE,
    FORMATS,
    SLASH_PAIRS,
    TIMESTAMP,
    TYPED,
    TYPED_DATE,
    TYPED_NAIVE,
    TYPED_ZONED,
    day_first_of,
)

TEMPORAL = "temporal"
# a column is temporal when its temporal cells are at least this share of its non-null cells
TEMPORAL_SHARE = 0.5
# ... and a timestamp (not a date) when time-stamp cells exceed this share of the date-like cells
STAMP_SHARE = 0.02
NOISE_SIGMAS = 3.0
# the best format's score must clear this many of its noise stds (the max of CELLS pure-noise cells
# passes 4σ in about 0.1 % of columns, and must then also outweigh the column's other cells)
BEST_SIGMAS = 4.0


@dataclass(frozen=True)
class TemporalChoice:
    """What the class release says about a temporal column (public once released)."""

    kind: str  # DATE, TIMESTAMP or TIME
    format: str  # a public pattern, or TYPED
    timezone: str | None = None

    @property
    def key(self) -> str:
        """The domain release's key for this column (dpgan.tables.inference.infer's `domain_of`)."""
        return f"{TEMPORAL} {self.kind} {self.format}"

    @property
    def day_first(self) -> bool:
        return self.format != TYPED and day_first_of(self.format)

    @property
    def resolution(self) -> str:
        if self.kind == DATE:
            return "day"
        return "second" if self.format == TYPED or "%S" in self.format else "minute"


def is_temporal_key(key: str) -> bool:
    return key.startswith(TEMPORAL + " ")


def key_format(key: str) -> str:
    """The public format of a domain key made by `TemporalChoice.key`."""
    return key.split(" ", 2)[2]


def parse_key(key: str) -> tuple[str, bool]:
    """(kind, day_first) of a domain key made by `TemporalChoice.key`."""
    _, kind, fmt = key.split(" ", 2)
    return kind, fmt != TYPED and day_first_of(fmt)


def temporal_cell_counts(cells: Cells, weights: np.ndarray | None = None) -> np.ndarray:
    """The count (or summed `weights`) of each temporal cell among a column's TEXT cells (exact:
    released with noise)."""
    if cells.temporal is None:
        return np.zeros(CELLS)
    mask = (cells.kind == TEXT) & (cells.temporal >= 0)
    found, mine = cells.temporal[mask], None if weights is None else weights[mask]
    return np.bincount(found.astype(np.intp), weights=mine, minlength=CELLS).astype(np.float64)


def release_temporal(counts: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """The temporal cells with Gaussian noise, from a child of `rng` (see the module docstring)."""
    return noisy_counts(counts, sigma, child_generator(rng))


def child_generator(rng: np.random.Generator) -> np.random.Generator:
    """A new child of `rng` (`Generator.spawn`: the parent's stream stays where it was, so releases
    added for dates leave the draws of every other release as they were); `rng` itself when it has
    no seed sequence to spawn from."""
    try:
        return rng.spawn(1)[0]
    except (AttributeError, TypeError, ValueError):  # a generator without a seed sequence
        return rng


def choose_temporal(temporal: np.ndarray, others: float, sigma: float) -> TemporalChoice | None:
    """The column's temporal kind and format from its (noisy, σ; exact when σ = 0) temporal cell
    counts and the count of its other non-null cells, or None: post-processing only.

    The test reads the best format's score (one cell, or three for a slash pair or typed values),
    not the sum of all the temporal cells: that sum carries the noise of every cell (σ·√CELLS,
    which at ε = 1 outweighed the 3,400 dates of polls2016), and clipped at 0 it is biased upwards
    (25 cells of pure noise once made a column of numbers "dates")."""
    if len(temporal) != CELLS:
        return None
    scores = _scores(np.asarray(temporal, dtype=np.float64))
    pattern, (score, width, kind) = max(scores.items(), key=lambda item: item[1][0])  # the first listed on a tie
    if score <= BEST_SIGMAS * sigma * math.sqrt(width) or score < TEMPORAL_SHARE * (score + max(others, 0.0)):
        return None
    cells = np.clip(np.asarray(temporal, dtype=np.float64), 0.0, None)
    if pattern == TYPED:  # a typed column of midnights is a date; time stamps beyond their noise make it one
        stamps = cells[TYPED_NAIVE] + cells[TYPED_ZONED]
        kind = TIMESTAMP if stamps > max(STAMP_SHARE * (stamps + cells[TYPED_DATE]), NOISE_SIGMAS * sigma) else DATE
        zoned = cells[TYPED_ZONED] > cells[TYPED_DATE] + cells[TYPED_NAIVE]
    else:
        zoned = "%z" in pattern
    return TemporalChoice(kind, pattern, "UTC" if zoned and kind == TIMESTAMP else None)


def _scores(cells: np.ndarray) -> dict[str, tuple[float, int, str]]:
    """Every public format's score (its noisy count; a slash pair: its two orders and its ambiguous
    cell, under the order whose own count is larger, month first on a tie; typed values: their three
    cells), with how many cells it sums and its kind."""
    scores: dict[str, tuple[float, int, str]] = {}
    paired = {index: pair for pair, indices in enumerate(SLASH_PAIRS) for index in indices}
    for index, fmt in enumerate(FORMATS):
        if index not in paired:
            scores[fmt.pattern] = (float(cells[index]), 1, fmt.kind)
            continue
        month_first, day_first = SLASH_PAIRS[paired[index]]
        if index == month_first:
            chosen = day_first if cells[day_first] > cells[month_first] else month_first
            total = float(cells[month_first] + cells[day_first] + cells[AMBIGUOUS[paired[index]]])
            scores[FORMATS[chosen].pattern] = (total, 3, fmt.kind)
    scores[TYPED] = (float(cells[TYPED_DATE] + cells[TYPED_NAIVE] + cells[TYPED_ZONED]), 3, DATE)
    return scores


__all__ = [
    "TEMPORAL", "TemporalChoice", "child_generator", "choose_temporal", "is_temporal_key", "key_format", "parse_key",
    "release_temporal", "temporal_cell_counts",
]  # fmt: skip
