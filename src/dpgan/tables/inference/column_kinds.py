"""A column's kind from the first DP release of a schema inference: the class histogram.

Five cells per column, every row in exactly one (sensitivity 1): null (missing, empty, an
infinity), whole number, fractional number, text, and code (a digit string with a leading zero,
`02139`: dpgan.tables.schema.codes), as dpgan.tables.schema.cells classifies each cell by a rule
that reads the cell alone (pandas' dtypes, inferred from every value, are never read). Big cells
are robust to noise, so this release runs at CLASS_HISTOGRAM_SCALE times the base noise.
Beside those, one cell per public temporal cell (a date, timestamp or time format, typed
date-times: dpgan.tables.inference.datetimes has the argument); a date is counted there, not as
text. A code is an all-digit cell and every temporal format has a separator, so no cell is both
(dpgan.tables.schema.cells): `02139` is a code, `2021-03-04` a date.
The kind is post-processing of the noisy counts and of the user's public hints (`PublicHints`):
categorical when the code cells clear both CODE_MIN_SIGMAS noise stds and CODE_MIN_SHARE of the
non-null cells (a zip column whose leading zeros must survive: its values are then text);
otherwise numeric when the noisy count of numbers (codes included) is at least that of text
cells, integer unless fractional numbers clearly outweigh both their noise and FRACTIONAL_SHARE
of the numbers. The second release
(the domain) and the column's spec: dpgan.tables.inference.infer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.tables.inference.temporal_kinds import (
    TEMPORAL,
    TemporalChoice,
    choose_temporal,
    release_temporal,
    temporal_cell_counts,
)
from dpgan.tables.schema.cells import INFINITE, NULL, NUMBER, TEXT, Cells, classify
from dpgan.tables.schema.datetimes import CELLS
from dpgan.tables.schema.hierarchy import Hierarchy

NUMERIC, CATEGORICAL = "numeric", "categorical"
# a column gets a null slot when its noisy null count clears both NULL_MIN_SIGMAS noise stds and
# NULL_MIN_SHARE of N̂ (dpgan.tables.inference.infer)
NULL_MIN_SIGMAS = 3.0


# the class histogram's noise, in units of the base σ: four large cells need little precision
CLASS_HISTOGRAM_SCALE = 2.0


# a column is numeric when numbers are at least this share of its non-null cells
NUMERIC_SHARE = 0.5


# ... and integer unless fractional numbers exceed this share of the numbers (and their noise)
FRACTIONAL_SHARE = 0.02


# a column is a code column (categorical, its values text) when its digit strings with a leading
# zero clear this many noise stds and this share of the non-null cells: US zip codes start with 0
# in about a tenth of the population's rows, a numeric column written "007" hardly ever
CODE_MIN_SIGMAS = 3.0
CODE_MIN_SHARE = 0.01


@dataclass(frozen=True)
class PublicHints:
    """What the user says about the table without a schema file: free, public facts."""

    target: str | None = None
    categorical: tuple[str, ...] = ()
    bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    # a categorical column's public list of values (a target's labels, a code book): no threshold
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # a code column's public hierarchy (dpgan.tables.schema.hierarchy): one more release per level
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict)

    def check(self, columns: Iterable[str]) -> None:
        names = set(map(str, columns))
        named = [self.target] if self.target is not None else []
        named += list(self.categorical) + list(self.bounds) + list(self.categories) + list(self.hierarchies)
        unknown = sorted({c for c in named if c not in names})
        if unknown:
            raise InputError(f"hints name columns that are not in the table: {', '.join(map(repr, unknown))}")
        if self.target in self.hierarchies:
            raise InputError(f"the target {self.target!r} cannot take a hierarchy: its labels are released as they are")
        both = sorted((set(self.categorical) | set(self.categories) | set(self.hierarchies)) & set(self.bounds))
        if both:
            raise InputError(f"columns cannot be both categorical and bounded: {', '.join(map(repr, both))}")
        for name, values in self.categories.items():
            if not values or len(set(values)) != len(values):
                raise InputError(f"the categories of {name!r} must be a non-empty list without duplicates")
        for name, (low, high) in self.bounds.items():
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise InputError(f"bounds of {name!r} must be finite numbers with low < high")

    def kind_of(self, name: str) -> str | None:
        """The kind the user declared for a column, if any."""
        if name in self.bounds:
            return NUMERIC
        if name in self.categorical or name in self.categories or name in self.hierarchies:
            return CATEGORICAL
        return None

    def releases_keys(self, name: str) -> bool:
        """Whether the column's domain release may publish values not known in advance."""
        return name not in self.bounds and name not in self.categories

    def hierarchy_levels(self, columns: Iterable[str]) -> int:
        """The hierarchy histograms of these columns: one sensitivity-1 release per level."""
        return sum(self.hierarchies[c].levels for c in columns if c in self.hierarchies)

    def keyed_histograms(self, columns: Iterable[str]) -> int:
        """The releases of these columns that publish keys not known in advance (each takes a share of
        the thresholds' δ): the domain histograms of `releases_keys`, and every prefix level."""
        names = list(columns)
        levels = sum(
            self.hierarchies[c].levels for c in names if c in self.hierarchies and self.hierarchies[c].thresholded
        )
        return sum(self.releases_keys(c) for c in names) + levels


@dataclass(frozen=True)
class ClassCounts:
    """null, whole numbers, fractional numbers, text, codes (exact, or noisy once released); a
    code is counted in `code` only, not among the whole numbers; then the temporal cells (text
    excludes them)."""

    null: float
    whole: float
    fractional: float
    text: float
    code: float = 0.0
    temporal: tuple[float, ...] = ()  # () stands for all zeros

    @property
    def numbers(self) -> float:
        return self.whole + self.fractional

    def as_array(self) -> np.ndarray:
        return np.array([self.null, self.whole, self.fractional, self.text, self.code], dtype=np.float64)


CLASS_CELLS = len(ClassCounts(0.0, 0.0, 0.0, 0.0).as_array())


def class_counts(series: pd.Series, weights: np.ndarray | None = None) -> ClassCounts:
    return class_counts_of(classify(series), weights)


def class_counts_of(cells: Cells, weights: np.ndarray | None = None) -> ClassCounts:
    """The class counts of a column already classified (so a pass classifies each cell once). With
    `weights` (one per cell), each cell counts its weight instead of 1: a unit whose cells' weights
    sum to at most 1 (an entity's events: dpgan.entities.inference) moves the histogram by at most 1."""
    whole, codes = cells.whole, cells.codes
    temporal = temporal_cell_counts(cells, weights)

    def total(mask: np.ndarray) -> float:
        return float(np.sum(mask)) if weights is None else float(np.sum(weights[mask]))

    return ClassCounts(
        total((cells.kind == NULL) | (cells.kind == INFINITE)),
        total(whole & ~codes),
        total((cells.kind == NUMBER) & ~whole),
        total(cells.kind == TEXT) - float(temporal.sum()),
        total(codes),
        tuple(map(float, temporal)) if temporal.any() else (),
    )


def release_classes(counts: ClassCounts, sigma: float, rng: np.random.Generator) -> ClassCounts:
    """The histogram with Gaussian noise: the five classes from `rng` (as before dates were counted),
    the temporal cells from a child of it (dpgan.tables.inference.datetimes)."""
    exact = np.array(counts.temporal) if counts.temporal else np.zeros(CELLS)  # every cell, whatever the data
    temporal = release_temporal(exact, sigma, rng)
    return ClassCounts(*noisy_counts(counts.as_array(), sigma, rng), tuple(map(float, temporal)))


@dataclass(frozen=True)
class KindDecision:
    kind: str  # NUMERIC or CATEGORICAL (booleans are told apart by the domain release)
    integer: bool
    will_be_null: float  # cells that end up null: missing, and text in a numeric column
    null_noise: float = 0.0  # the noise std of `will_be_null`
    numbers: float = 0.0  # the (noisy) count of number cells: the share a value's count is measured against
    temporal: TemporalChoice | None = None  # kind TEMPORAL: its kind and format

    @property
    def domain_key(self) -> str:
        """Which domain histogram the column's second release counts (`domain_of`'s key)."""
        return self.temporal.key if self.temporal is not None else self.kind


def decide_kind(name: str, counts: ClassCounts, *, sigma: float, hints: PublicHints) -> KindDecision:
    """The kind from the class counts (noisy: post-processing; σ is their noise, 0 if exact)."""
    declared = hints.kind_of(name)
    codes = max(counts.code, 0.0)
    numbers, text = max(counts.numbers, 0.0) + codes, max(counts.text, 0.0)
    temporal = None if declared is not None else choose_temporal(np.array(counts.temporal), numbers + text, sigma)
    if temporal is not None:  # cells of no temporal format become null
        others = max(counts.null, 0.0) + numbers + text  # five noisy class cells
        return KindDecision(TEMPORAL, False, others, sigma * math.sqrt(5.0), float(sum(counts.temporal)), temporal)
    dates = max(float(sum(counts.temporal)), 0.0)
    if dates > NULL_MIN_SIGMAS * sigma * math.sqrt(max(len(counts.temporal), 1)):
        text += dates  # dates among words: text for the kind (noise alone rarely clears the bar)
    if declared is not None:
        kind = declared
    elif codes > max(CODE_MIN_SIGMAS * sigma, CODE_MIN_SHARE * (numbers + text)):
        kind = CATEGORICAL  # codes: every value is kept as its text (`02139`)
    elif numbers > 0 and numbers >= NUMERIC_SHARE * (numbers + text):
        kind = NUMERIC  # at least half of the non-null cells (both counts carry the same noise)
    else:
        kind = CATEGORICAL
    if sigma == 0.0:  # exact counts: integer only if no number has a fraction
        integer = bool(counts.fractional == 0)
    else:
        integer = bool(counts.fractional <= max(FRACTIONAL_SHARE * numbers, NULL_MIN_SIGMAS * sigma))
    null = max(counts.null, 0.0)
    if kind == NUMERIC:  # text in a numeric column becomes null
        return KindDecision(kind, integer, float(null + text), sigma * math.sqrt(2.0), numbers)
    return KindDecision(kind, integer, float(null), sigma, numbers)


__all__ = ["CATEGORICAL", "CLASS_CELLS", "CLASS_HISTOGRAM_SCALE", "CODE_MIN_SHARE", "CODE_MIN_SIGMAS",
           "FRACTIONAL_SHARE", "NULL_MIN_SIGMAS", "NUMERIC", "NUMERIC_SHARE", "ClassCounts", "KindDecision",
           "PublicHints", "class_counts", "class_counts_of", "decide_kind", "release_classes"]  # fmt: skip
