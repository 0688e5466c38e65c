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
    CELL_KINDS,
    CELLS,
    DATE,
    FORMATS,
    SLASH_PAIRS,
    TIME,
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


def parse_key(key: str) -> tuple[str, bool]:
    """(kind, day_first) of a domain key made by `TemporalChoice.key`."""
    _, kind, fmt = key.split(" ", 2)
    return kind, fmt != TYPED and day_first_of(fmt)


def temporal_cell_counts(cells: Cells) -> np.ndarray:
    """The count of each temporal cell among a column's TEXT cells (exact: released with noise)."""
    if cells.temporal is None:
        return np.zeros(CELLS)
    found = cells.temporal[(cells.kind == TEXT) & (cells.temporal >= 0)]
    return np.bincount(found.astype(np.intp), minlength=CELLS).astype(np.float64)


def release_temporal(counts: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """The temporal cells with Gaussian noise, from a child of `rng` (see the module docstring)."""
    try:
        child = rng.spawn(1)[0]
    except (AttributeError, TypeError, ValueError):  # a generator without a seed sequence
        child = rng
    return noisy_counts(counts, sigma, child)


def choose_temporal(temporal: np.ndarray, others: float, sigma: float) -> TemporalChoice | None:
    """The column's temporal kind and format from its (noisy, σ; exact when σ = 0) temporal cell
    counts and the count of its other non-null cells, or None: post-processing only."""
    if len(temporal) != CELLS:
        return None
    cells = np.clip(np.asarray(temporal, dtype=np.float64), 0.0, None)
    total = float(cells.sum())
    if total <= NOISE_SIGMAS * sigma * math.sqrt(CELLS) or total < TEMPORAL_SHARE * (total + max(others, 0.0)):
        return None
    by_kind = {
        kind: float(sum(cells[i] for i in range(CELLS) if CELL_KINDS[i] == kind)) for kind in (DATE, TIMESTAMP, TIME)
    }
    stamps = sum(1 for k in CELL_KINDS if k == TIMESTAMP)
    if by_kind[TIME] >= max(by_kind[DATE], by_kind[TIMESTAMP]):
        kind = TIME
    elif by_kind[TIMESTAMP] > max(
        STAMP_SHARE * (by_kind[DATE] + by_kind[TIMESTAMP]), NOISE_SIGMAS * sigma * math.sqrt(stamps)
    ):
        kind = TIMESTAMP
    else:
        kind = DATE
    return _format_of(kind, cells)


def _format_of(kind: str, cells: np.ndarray) -> TemporalChoice:
    """The argmax of the kind's formats' scores (a slash pair: its three cells; typed: its three)."""
    scores: dict[str, float] = {}
    paired = {index: pair for pair, indices in enumerate(SLASH_PAIRS) for index in indices}
    for index, fmt in enumerate(FORMATS):
        if fmt.kind != kind:
            continue
        if index in paired:
            month_first, day_first = SLASH_PAIRS[paired[index]]
            if index == day_first:
                continue
            chosen = day_first if cells[day_first] > cells[month_first] else month_first
            scores[FORMATS[chosen].pattern] = float(
                cells[month_first] + cells[day_first] + cells[AMBIGUOUS[paired[index]]]
            )
        else:
            scores[fmt.pattern] = float(cells[index])
    if kind != TIME:
        scores[TYPED] = float(cells[TYPED_DATE] + cells[TYPED_NAIVE] + cells[TYPED_ZONED])
    best = max(scores, key=lambda f: scores[f])  # the first listed on a tie
    zoned = (best == TYPED and cells[TYPED_ZONED] > cells[TYPED_DATE] + cells[TYPED_NAIVE]) or "%z" in best
    return TemporalChoice(kind, best, "UTC" if zoned and kind == TIMESTAMP else None)


__all__ = [
    "TEMPORAL", "TemporalChoice", "choose_temporal", "is_temporal_key", "parse_key", "release_temporal",
    "temporal_cell_counts",
]  # fmt: skip
