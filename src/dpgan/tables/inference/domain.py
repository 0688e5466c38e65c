"""A column's second DP release, the domain histogram, chosen by the kind the first decided
(dpgan.tables.inference.column_kinds): a numeric column's bins of a public grid (and, for an integer
one, its whole numbers: two histograms at √2σ), any other column's values above the
partition-selection threshold; and the exact counts behind it. dpgan.tables.inference.infer has
the argument; its constants are read at each call (bench/range_rule_probe.py varies them).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpgan.privacy.mechanisms import (
    FINE_CELLS,
    FINEST_GRID,
    GRID_MANTISSAS,
    bin_index,
    coarse_bins,
    fine_cell_edges,
    fine_cell_index,
    noisy_counts,
    public_numeric_grid,
    share_noise,
)
from dpgan.tables.inference.column_kinds import NUMERIC
from dpgan.tables.schema.cells import NUMBER, cell_keys, classify

OTHER = "(other)"
# a grid bin counts when its noisy mass clears this many noise stds, and so does every bin of a
# decade whose summed mass clears the same bar for a sum (values spread thin over a decade show only
# together: a money column's tail); the range runs between the RANGE_QUANTILES of that mass once the
# point masses' own counts are taken out of their bins, so a bulk at 0 no longer decides it (it did:
# Adult's capital-gain came out [0, 1]), and a thin tail is clamped by at most a quantile's share
# and one bin more where the next bin clears MARGIN_SIGMAS. Chosen by bench/range_rule_probe.py on
# the train splits of the bench tables and Adult's training file (no test split read), ε = 1,
# 10 draws: 3.5σ / 1σ / (0.5 %, 99.5 %) clamps 3.1 % of values on average (p90 9.3 %) with 18.1 % of
# the range outside the data; 4σ: 3.4 % / 18.9 %; 3σ: 2.6 % / 26 % (the heaviest-run rule it
# replaces: 7.2 % / 27 %, RESULTS §10)
NUMERIC_BIN_SIGMAS = 3.5
# a numeric column's domain release is two Gaussian histograms at √2σ each, the public grid's bins
# and the whole numbers above a threshold (both sensitivity 1: together exactly one Gaussian at σ)
SPLIT = math.sqrt(2.0)
# whole numbers that are released as public cells, with noise and no threshold (so a sentinel code
# shows at a few noise stds, not at the partition-selection bar, ≈ 7σ): 0 and the codes people use
# for "missing" or "top-coded"; kept as point-mass candidates when they clear NUMERIC_BIN_SIGMAS
SENTINELS = (0, -1, -9, -99, -999, -9999, 9, 99, 999, 9999, 99999, 999999, 9999999, 99999999, 999999999)
# small whole numbers are public cells too: flags (0/1), scores (1..6) and counts (0..10) are the
# integer columns that are really levels, and their levels show at NUMERIC_BIN_SIGMAS instead of the
# partition-selection bar (hmda's condominium 0/1 at ε = 1 released only its 0s and became a log range)
SMALL_WHOLES = tuple(range(0, 11))
PUBLIC_WHOLES = tuple(sorted(set(SENTINELS) | set(SMALL_WHOLES)))
# the grid's resolution follows the table's size: the finest (6 bins a decade) whose bins would
# each clear NUMERIC_BIN_SIGMAS noise stds if a column's N̂ numbers filled TYPICAL_DECADES decades
# evenly; else 3 (1, 2, 5) or 1 a decade. N̂ is released and σ public, so the choice is
# post-processing; the coarse histogram is the fine one's bins summed (still sensitivity 1). Without
# it, a table of 791 rows at ε = 1 (σ ≈ 63) found no bin of its money columns above the noise and
# fell back to ±10⁶ (AER CreditCard's share and expenditure)
TYPICAL_DECADES = 2.0
# a numeric column's domain release is split (dpgan.privacy.mechanisms.share_noise: the sub-releases'
# 1/σ² add up to the one Gaussian at σ the ledger charges): FINE_SHARE for a second, finer release over
# the range the first one found (`FineRelease`: a narrow band far from zero, a city's latitudes, gets a
# range at the scale of its spread, not of its magnitude), the rest for the grid, shared evenly with
# the whole numbers in an integer column
FINE_SHARE = 1.0 / 3.0
# the grid's resolution reads the numbers less the public whole numbers that hold this share of
# them (a column of 75 % zeros spreads its other quarter thin: on the grid N̂ would choose, its tail
# showed in no bin, and the range came out [0, 1])
GRID_SPIKE_SHARE = 0.05


@dataclass
class FineRelease:
    """The second, finer release of a numeric column: noisy counts of the public fine cells
    (dpgan.privacy.mechanisms.fine_cell_edges) of the finest-grid bins its first range spans."""

    edges: np.ndarray
    counts: np.ndarray
    noise: float


@dataclass
class DomainCounts:
    """Numeric: counts per grid bin (and the exact extent, non-private path only). Otherwise:
    counts per value."""

    bins: np.ndarray | None = None
    values: dict[str, float] = field(default_factory=dict)
    wholes: dict[int, float] | None = None  # numeric: the count of each whole number
    low: float = math.nan
    high: float = math.nan
    other: float | None = None  # with public categories: the count of every other value
    per_decade: int = FINEST_GRID  # numeric: the resolution of the grid `bins` counts on
    # the rows that are no value here (numeric: not a number; otherwise null): a public cell of every
    # histogram of the release (each row is still in one cell of each: sensitivity 1, free), and its
    # noise std once released (None: exact)
    nulls: float = 0.0
    null_noise: float | None = None
    fine: dict[int, float] | None = None  # numeric, exact: the count in each fine cell that holds numbers
    refine: Callable[[float, float], FineRelease] | None = None  # numeric, released: the fine release, once

    def edges(self) -> np.ndarray:
        """The public grid `bins` counts on."""
        return public_numeric_grid(self.per_decade)


def domain_counts(series: pd.Series, kind: str, weights: np.ndarray | None = None) -> DomainCounts:
    """The exact counts of a column's domain release. With `weights` (one per cell, each unit's
    summing to at most 1: dpgan.entities.inference), each cell counts its weight instead of 1, so
    one unit still moves the histogram by at most 1 (its L2 change is at most its L1 change)."""
    weights = None if weights is None else np.asarray(weights, dtype=np.float64)
    if kind == NUMERIC:
        edges = public_numeric_grid()
        cells = classify(series)
        present = cells.kind == NUMBER
        numbers = cells.number[present]
        mine = None if weights is None else weights[present]
        counts = np.bincount(bin_index(numbers, edges), weights=mine, minlength=len(edges) - 1).astype(np.float64)
        extent = (float(numbers.min()), float(numbers.max())) if len(numbers) else (math.nan, math.nan)
        wholes = whole_counts(cells.number[cells.whole], None if weights is None else weights[cells.whole])
        nulls = float(len(series) - len(numbers)) if weights is None else float(np.sum(weights[~present]))
        return DomainCounts(
            bins=counts, low=extent[0], high=extent[1], wholes=wholes, nulls=nulls, fine=fine_counts(numbers, mine),
        )  # fmt: skip
    keys = cell_keys(series)
    known = keys != None  # noqa: E711 (elementwise)
    present = keys[known]
    if weights is None:
        values = {str(k): float(c) for k, c in Counter(present.tolist()).items()}
        return DomainCounts(values=values, nulls=float(len(keys) - len(present)))
    weighted = pd.Series(weights[known]).groupby(present.astype(str)).sum()
    values = {str(k): float(c) for k, c in weighted.items()}
    return DomainCounts(values=values, nulls=float(np.sum(weights[~known])))


def fine_counts(numbers: np.ndarray, weights: np.ndarray | None = None) -> dict[int, float]:
    """The count (or summed `weights`) of numbers in each public fine cell that holds any (a sparse
    histogram: at most FINE_CELLS per grid bin; sums over record batches add up)."""
    return _summed_by_value(fine_cell_index(numbers), weights)


def whole_counts(wholes: np.ndarray, weights: np.ndarray | None = None) -> dict[int, float]:
    """The count (or summed `weights`) of each whole number (the keys a numeric column's second
    histogram releases)."""
    return _summed_by_value(wholes, weights)


def _summed_by_value(values: np.ndarray, weights: np.ndarray | None) -> dict[int, float]:
    """{value: its count, or its rows' summed `weights`} over the distinct values, in ascending order."""
    distinct, where = np.unique(values, return_inverse=True)
    sums = np.bincount(where.ravel(), weights=weights, minlength=len(distinct))
    return {int(v): float(c) for v, c in zip(distinct, sums)}


def release_domain(
    counts: DomainCounts,
    sigma: float,
    threshold: float,
    rng: np.random.Generator,
    public_keys: tuple[str, ...] | None = None,
    wholes: bool = True,
    rows: float | None = None,
) -> DomainCounts:
    """The Gaussian release: noise on every grid bin (public cells), noise and a threshold on values;
    with `public_keys`, noise on each listed value and on one cell for all the others (all public
    cells: no threshold). Every histogram also has a public cell for the rows that are no value
    (`DomainCounts.nulls`), so each row is in one cell of each (sensitivity 1) and the null count
    comes free with the release. A numeric column whose values may be released (a finite
    `threshold`, set for σ) and that the class release found integer (`wholes`) gets its whole
    numbers as a histogram of their own, thresholded at the partition-selection bar for its noise
    (the column's δ share pays for it); a fractional column's grid keeps their share. With `rows`
    (the column's noisy count of numbers), the Gaussian is split (FINE_SHARE, `share_noise`): the
    whole numbers first, then the grid, its bins summed to the resolution that `rows` less the
    whole numbers' spikes and the grid's noise allow (`grid_resolution`), then, when the caller
    asks with the range the grid found, the fine release (`fine_release`); without `rows`, the
    finest grid and no fine release."""
    if counts.bins is not None:
        split_release = counts.wholes is not None and math.isfinite(threshold) and wholes
        # the fine release where the table is large enough for the finest grid at the whole share: on a
        # smaller one the grid needs all of it (a 791-row table's money columns showed in no bin)
        whole_share = share_noise(sigma, 0.5 if split_release else 1.0)
        fine = rows is not None and counts.fine is not None and grid_resolution(rows, whole_share) == FINEST_GRID
        coarse_share = 1.0 - FINE_SHARE if fine else 1.0
        split = share_noise(sigma, coarse_share / 2.0 if split_release else coarse_share)
        null_cells, released, public = [], None, None
        grid_rows = rows
        if split_release:  # the public whole numbers first: the grid's resolution reads their spikes
            public = noisy_counts(
                np.array([*(counts.wholes.get(k, 0.0) for k in PUBLIC_WHOLES), counts.nulls]), split, rng
            )
            released = {k: float(c) for k, c in zip(PUBLIC_WHOLES, public) if c > NUMERIC_BIN_SIGMAS * split}
            if rows is not None:
                grid_rows = rows - sum(c for c in released.values() if c >= GRID_SPIKE_SHARE * rows)
            null_cells.append(float(public[-1]))
        per_decade = FINEST_GRID if grid_rows is None else grid_resolution(grid_rows, split)
        grid = noisy_counts(np.append(coarse_bins(counts.bins, per_decade), counts.nulls), split, rng)
        null_cells.append(float(grid[-1]))
        # the fine release's own generator, drawn here: its noise does not depend on how many whole
        # numbers the data holds (their draws come next), so neighbouring tables share it
        refine = fine_release(counts.fine, share_noise(sigma, FINE_SHARE), _child(rng)) if fine else None
        if released is not None:
            keys = sorted(k for k in counts.wholes if k not in PUBLIC_WHOLES)
            noisy = noisy_counts(np.array([counts.wholes[k] for k in keys]), split, rng) if keys else np.zeros(0)
            bar = 1.0 + (split / sigma) * (threshold - 1.0)  # set_union_threshold at the split's noise, same δ
            released.update({k: float(c) for k, c in zip(keys, noisy) if c > bar})
        nulls = float(np.mean(null_cells))  # cells of equal noise: their mean, noise std split/√n
        return DomainCounts(
            bins=grid[:-1], wholes=released, per_decade=per_decade, nulls=nulls,
            null_noise=split / math.sqrt(len(null_cells)), refine=refine,
        )  # fmt: skip
    if public_keys is not None:
        listed = [counts.values.get(k, 0.0) for k in public_keys]
        rest = sum(c for k, c in counts.values.items() if k not in set(public_keys))
        noisy = noisy_counts(np.array([*listed, rest, counts.nulls]), sigma, rng)
        return DomainCounts(
            values=dict(zip(public_keys, map(float, noisy[:-2]))), other=float(noisy[-2]), nulls=float(noisy[-1]),
            null_noise=sigma,
        )  # fmt: skip
    return release_values(counts, sigma, threshold, rng)


def _child(rng: np.random.Generator) -> np.random.Generator:
    """A generator seeded by one draw of `rng` (so `rng` moves by one draw whatever the child draws)."""
    return np.random.default_rng(int(rng.integers(0, 2**63 - 1)))


def fine_release(
    fine: dict[int, float], noise: float, rng: np.random.Generator
) -> Callable[[float, float], FineRelease]:
    """The second release of a numeric column, made when called (at most once: its share of the
    column's Gaussian pays for one): noise `noise` on every public fine cell of the finest-grid bins
    that [low, high] spans, empty cells included. Which cells are released depends on [low, high]
    alone, the first release's output (post-processing); each number is in one fine cell, so the
    histogram has sensitivity 1."""
    spent = []

    def release(low: float, high: float) -> FineRelease:
        if spent:
            raise RuntimeError("a column's fine release is made once")
        spent.append(True)
        edges = public_numeric_grid()
        first = int(bin_index(np.array([low]), edges)[0])
        last = max(int(np.searchsorted(edges, high, side="left")) - 1, first)  # the bin ending at `high`
        cell_edges = fine_cell_edges(first, last)
        exact = np.zeros(len(cell_edges) - 1)
        if fine:
            keys = np.fromiter(fine.keys(), dtype=np.int64, count=len(fine)) - first * FINE_CELLS
            inside = (keys >= 0) & (keys < len(exact))
            exact[keys[inside]] = np.fromiter(fine.values(), dtype=np.float64, count=len(fine))[inside]
        return FineRelease(cell_edges, noisy_counts(exact, noise, rng), noise)

    return release


# The target's second chance (dpgan.privacy.partition_selection): `(exact counts of the values
# present, their first noisy counts, the first σ, the per-key δ) -> (combined counts, released)`;
# the caller's closure charges the fresh release to the ledger
SecondChance = Callable[[np.ndarray, np.ndarray, float, float], tuple[np.ndarray, np.ndarray]]


def release_values(
    counts: DomainCounts, sigma: float, threshold: float, rng: np.random.Generator,
    second_chance: SecondChance | None = None, per_key_delta: float = 0.0,
) -> DomainCounts:  # fmt: skip
    """A non-numeric column's values: noise on each value present, kept above `threshold`. With
    `second_chance` (a categorical target's), when that kept fewer than two values and values may be
    released at all (a finite threshold): the values present counted again with fresh noise and
    combined with the first counts (a decision on the first release's output only, never on how many
    values are present); a value the first release kept stays. Without it a binary target whose
    minority class fell below the bar (hmda's "deny = yes", 11 % of 1,429 rows, in about one seed
    of twenty) left the GAN one named class and `(other)`."""
    keys = sorted(counts.values)
    exact = np.array([counts.values[k] for k in keys])
    noisy = noisy_counts(exact, sigma, rng) if keys else np.zeros(0)
    kept = {k: float(c) for k, c in zip(keys, noisy) if c > threshold and k != OTHER}
    nulls = float(noisy_counts(np.array([counts.nulls]), sigma, rng)[0])  # a public cell: no threshold
    if second_chance is None or len(kept) >= 2 or not keys or not math.isfinite(threshold):
        return DomainCounts(values=kept, nulls=nulls, null_noise=sigma)
    combined, released = second_chance(exact, noisy, sigma, per_key_delta)
    values = {k: float(c) for k, c, r in zip(keys, combined, released) if (r or k in kept) and k != OTHER}
    return DomainCounts(values=values, nulls=nulls, null_noise=sigma)


def grid_resolution(rows: float, noise: float) -> int:
    """Mantissas a decade for a numeric column's grid release with noise std `noise` on a table of
    about `rows` rows (the noisy N̂): the finest whose bins would each clear NUMERIC_BIN_SIGMAS noise
    stds if the numbers filled TYPICAL_DECADES decades evenly; 1 when none would."""
    for per_decade in sorted(GRID_MANTISSAS, reverse=True):
        if rows / (TYPICAL_DECADES * per_decade) >= NUMERIC_BIN_SIGMAS * noise:
            return per_decade
    return min(GRID_MANTISSAS)
