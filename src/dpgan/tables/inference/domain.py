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
    FINEST_GRID,
    GRID_MANTISSAS,
    bin_index,
    coarse_bins,
    noisy_counts,
    public_numeric_grid,
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

    def edges(self) -> np.ndarray:
        """The public grid `bins` counts on."""
        return public_numeric_grid(self.per_decade)


def domain_counts(series: pd.Series, kind: str) -> DomainCounts:
    if kind == NUMERIC:
        edges = public_numeric_grid()
        cells = classify(series)
        numbers = cells.number[cells.kind == NUMBER]
        counts = np.bincount(bin_index(numbers, edges), minlength=len(edges) - 1).astype(np.float64)
        extent = (float(numbers.min()), float(numbers.max())) if len(numbers) else (math.nan, math.nan)
        wholes = whole_counts(cells.number[cells.whole])
        return DomainCounts(bins=counts, low=extent[0], high=extent[1], wholes=wholes)
    keys = cell_keys(series)
    present = keys[keys != None]  # noqa: E711 (elementwise)
    return DomainCounts(values={str(k): float(c) for k, c in Counter(present.tolist()).items()})


def whole_counts(wholes: np.ndarray) -> dict[int, float]:
    """The count of each whole number (the keys a numeric column's second histogram releases)."""
    values, counts = np.unique(wholes, return_counts=True)
    return {int(v): float(c) for v, c in zip(values, counts)}


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
    cells: no threshold). A numeric column whose values may be released (a finite `threshold`, set
    for σ) and that the class release found integer (`wholes`) gets two histograms at √2σ, the grid
    bins and its whole numbers (each row is in one cell of each: sensitivity 1 each, exactly one
    Gaussian at σ together), the numbers thresholded at the partition-selection threshold for √2σ
    (the column's δ share pays for it); a fractional column keeps the whole σ for its grid. With
    `rows` (N̂), the grid's bins are first summed to the resolution that N̂ and the grid's noise
    allow (`grid_resolution`); without, the finest grid."""
    if counts.bins is not None:
        split_release = counts.wholes is not None and math.isfinite(threshold) and wholes
        grid_noise = SPLIT * sigma if split_release else sigma
        per_decade = FINEST_GRID if rows is None else grid_resolution(rows, grid_noise)
        exact_bins = coarse_bins(counts.bins, per_decade)
        if not split_release:
            return DomainCounts(bins=noisy_counts(exact_bins, sigma, rng), per_decade=per_decade)
        split = grid_noise
        bins = noisy_counts(exact_bins, split, rng)
        public = noisy_counts(np.array([counts.wholes.get(k, 0.0) for k in PUBLIC_WHOLES]), split, rng)
        keys = sorted(k for k in counts.wholes if k not in PUBLIC_WHOLES)
        noisy = noisy_counts(np.array([counts.wholes[k] for k in keys]), split, rng) if keys else np.zeros(0)
        bar = 1.0 + SPLIT * (threshold - 1.0)  # set_union_threshold at √2σ for the same δ
        wholes = {k: float(c) for k, c in zip(PUBLIC_WHOLES, public) if c > NUMERIC_BIN_SIGMAS * split}
        wholes.update({k: float(c) for k, c in zip(keys, noisy) if c > bar})
        return DomainCounts(bins=bins, wholes=wholes, per_decade=per_decade)
    if public_keys is not None:
        listed = [counts.values.get(k, 0.0) for k in public_keys]
        rest = sum(c for k, c in counts.values.items() if k not in set(public_keys))
        noisy = noisy_counts(np.array([*listed, rest]), sigma, rng)
        return DomainCounts(values=dict(zip(public_keys, map(float, noisy[:-1]))), other=float(noisy[-1]))
    return release_values(counts, sigma, threshold, rng)


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
    if second_chance is None or len(kept) >= 2 or not keys or not math.isfinite(threshold):
        return DomainCounts(values=kept)
    combined, released = second_chance(exact, noisy, sigma, per_key_delta)
    return DomainCounts(
        values={k: float(c) for k, c, r in zip(keys, combined, released) if (r or k in kept) and k != OTHER}
    )


def grid_resolution(rows: float, noise: float) -> int:
    """Mantissas a decade for a numeric column's grid release with noise std `noise` on a table of
    about `rows` rows (the noisy N̂): the finest whose bins would each clear NUMERIC_BIN_SIGMAS noise
    stds if the numbers filled TYPICAL_DECADES decades evenly; 1 when none would."""
    for per_decade in sorted(GRID_MANTISSAS, reverse=True):
        if rows / (TYPICAL_DECADES * per_decade) >= NUMERIC_BIN_SIGMAS * noise:
            return per_decade
    return min(GRID_MANTISSAS)
