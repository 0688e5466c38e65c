"""A numeric column's spec from its released domain histogram (post-processing, free): the grid's
mass above the noise, the range between its quantiles and over thin tails, point masses, levels,
scale and bins. dpgan.tables.inference.infer has the argument; the constants are read at each call
(bench/range_rule_probe.py and bench/csv_only.py --bin-placement vary them).
"""

from __future__ import annotations

import math

import numpy as np

from dpgan.privacy.mechanisms import FINEST_GRID, bin_index
from dpgan.tables.inference.categorical import Decision, levels_as_categories
from dpgan.tables.inference.column_kinds import KindDecision, PublicHints
from dpgan.tables.inference.domain import NUMERIC_BIN_SIGMAS, DomainCounts, FineRelease
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.encoding_hints import DEFAULT_BINS, bin_per_level, numeric_encoding

# a run of such bins set apart from the column's heaviest run by more than ISOLATION_GAP empty bins
# counts only when its sum clears ISOLATED_SIGMAS noise stds (`_without_isolated_noise`)
ISOLATION_GAP = 2
ISOLATED_SIGMAS = 5.0
RANGE_QUANTILES = (0.005, 0.995)
# where a learned numeric column's bins are cut: "equal" on the column's scale, or "quantile", at the
# DP quantiles of the grid's mass (each bin then holds a like share of the rows: post-processing of
# the released grid, free). Chosen on validation splits: on the tuning tables at ε = 1, 3 seeds
# (bench/notes/21, "Bins at DP quantiles") quantile bins moved TSTR AUC by +0.002 on average (no
# gain or loss at 1,400-20,000 rows); on flights' train part ×10 (2,020,660 rows, ε = 3, 2 seeds,
# bench/notes/37) they kept the validation AUC at 0.862 / 0.860 where equal bins fell to 0.852 / 0.852:
# a large table's DP range reaches further into its tails (dep_delay [-20, 126] at 316k rows,
# [-50, 372] at 3.2M), so equal bins grow coarse where the rows are. Read at each call
# (bench/csv_only.py and bench/scale_growth.py --bin-placement compare them).
BIN_PLACEMENT = "quantile"
MARGIN_SIGMAS = 1.0
COARSE_MARGIN_SIGMAS = 2.0  # on a grid coarser than the finest a margin bin is a decade or a third of one
# a released whole number is a point mass (0, and sentinel codes such as 99999 or 9999999) when it
# holds at least POINT_MASS_MIN_SHARE of the numbers and SPIKE_RATIO times the mass per unit of the
# rest of its grid bin (a common age is not a spike; 40 hours a week is); the heaviest are kept
POINT_MASS_MIN_SHARE = 0.005
SPIKE_RATIO = 5.0
MAX_POINT_MASSES = 4
# an integer column whose released whole numbers hold LEVELS_COVERAGE of its numbers, with at most
# MAX_LEVELS of them, is a column of levels: its range is theirs (one bin per level when they are
# close together; categories when they are far apart, e.g. codes 1, 5, 10, 99)
MAX_LEVELS = 16
LEVELS_COVERAGE = 0.985
# the fine release (dpgan.tables.inference.domain.FineRelease) reads its cells at every dyadic scale
# (1, 2, 4, … cells summed): a group counts when its sum clears its noise at a bar that a group of
# pure noise passes with probability FINE_FALSE_RATE over all the groups of its scale; its range is
# used when the counted cells hold FINE_TRUST of the numbers the grid range holds (else the fine
# cells are too thin for this table and ε: a spread column, a small table) and the grid's own bins
# that meet it hold FINE_TRUST of the grid's mass; widened by FINE_MARGIN of its width at each end
# (a thin tail beyond the quantiles)
FINE_FALSE_RATE = 0.01
FINE_TRUST = 0.85
FINE_MARGIN = 0.25


def mass_bins(counts: np.ndarray, sigma: float, edges: np.ndarray, rest: np.ndarray | None = None) -> np.ndarray:
    """The grid bins' mass taken as the column's (see the module docstring): a bin whose noisy count
    clears `sigmas` noise stds, or one of a decade whose summed count clears the same bar for a sum,
    keeps its count (`rest`: the count with the point masses' taken out, when given) less one noise
    std (clipped at 0, so the empty bins of a chosen decade add little noise to the tails); every
    other bin is taken as empty. The bar is NUMERIC_BIN_SIGMAS (read at each call: the range
    probe varies it)."""
    chosen = counts > NUMERIC_BIN_SIGMAS * sigma
    for group in _decades(edges):
        if counts[group].sum() > NUMERIC_BIN_SIGMAS * sigma * math.sqrt(len(group)):
            chosen[group] = True
    chosen = _without_isolated_noise(chosen, counts, sigma, mirrored=True)
    kept = counts if rest is None else rest
    return np.where(chosen, np.clip(kept - sigma, 0.0, None), 0.0)


def _without_isolated_noise(chosen: np.ndarray, counts: np.ndarray, sigma: float, mirrored: bool = False) -> np.ndarray:
    """`chosen` less its runs that lie apart from the heaviest run (more than ISOLATION_GAP bins
    from any other chosen bin) unless they clear ISOLATED_SIGMAS noise stds of a sum: the grid has
    about 150 bins, so a column's pure-noise bins clear NUMERIC_BIN_SIGMAS somewhere with
    probability about 3 %, and one such bin decades away took NYC flights' arr_time (1..2,400) to
    [−7·10⁷, 3,000] at ε = 1. A value that far from the rest is a whole number (a sentinel code:
    released and kept by its own histogram) or holds enough rows to clear the higher bar.
    `mirrored`: the bins are the public grid's, symmetric about 0, and runs on either side of 0 are
    apart by the bins between their magnitudes (`_joined_across_zero`), not by the bins between them."""
    index = np.nonzero(chosen)[0]
    if len(index) < 2:
        return chosen
    runs = np.split(index, np.nonzero(np.diff(index) > ISOLATION_GAP + 1)[0] + 1)
    if mirrored:
        runs = _joined_across_zero(runs, len(chosen))
    sums = [float(counts[run].sum()) for run in runs]
    heaviest = int(np.argmax(sums))
    kept = chosen.copy()
    for i, (run, total) in enumerate(zip(runs, sums)):
        if i != heaviest and total <= ISOLATED_SIGMAS * sigma * math.sqrt(len(run)):
            kept[run] = False
    return kept


def _joined_across_zero(runs: list[np.ndarray], bins: int) -> list[np.ndarray]:
    """Runs of the public grid (`bins` bins, bin i the mirror image of bin bins−1−i) joined when
    their magnitudes lie within ISOLATION_GAP bins of each other, whatever their signs. Why: between
    −1 and 0.1 the log grid has nine bins, each of a sliver of the line, so a column on both sides
    of 0 (a standardised score: Chile's statusquo, −1.8..1.6, half its rows below 0) came out as two
    runs, and at ε = 1 the lighter half failed the isolated run's bar and was cut off in 8 of 20
    draws ([0.1, 2] or [−10, −0.1]). Noise at the magnitudes of the data, on the other side of 0,
    widens a range by at most its own width; the far-off noise the rule is for stays apart."""
    half = bins // 2
    spans = []
    for run in runs:
        magnitude = np.where(run >= half, run, bins - 1 - run)  # a bin's mirror image on the positive side
        spans.append((int(magnitude.min()), int(magnitude.max())))
    group = list(range(len(runs)))  # each run's group: the lowest index of the runs joined to it

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            (low_i, high_i), (low_j, high_j) = spans[i], spans[j]
            if max(low_i, low_j) - min(high_i, high_j) <= ISOLATION_GAP + 1:
                group[max(root(i), root(j))] = min(root(i), root(j))
    joined: dict[int, list[np.ndarray]] = {}
    for i, run in enumerate(runs):
        joined.setdefault(root(i), []).append(run)
    return [np.sort(np.concatenate(parts)) for parts in joined.values()]


def quantile_range(
    mass: np.ndarray, counts: np.ndarray, sigma: float, edges: np.ndarray, coarse: bool = False
) -> tuple[float, float] | None:
    """The grid edges around the RANGE_QUANTILES of the bins' mass: the low edge of the bin where the
    lower one falls, the high edge of the bin where the upper one does (None without mass). With
    the noisy `counts` (σ > 0), each end then moves out over every run of bins beyond it whose summed count
    clears NUMERIC_BIN_SIGMAS noise stds of a sum (a tail too thin for any bin or decade alone), and
    by one bin more where the next bin's count clears MARGIN_SIGMAS noise stds (COARSE_MARGIN_SIGMAS
    on a `coarse` grid, where one bin more is a decade more: at 1σ, 16 % of pure noise took
    Sacramento's longitudes to [-10⁴, -100]). The constants are read at each call (the range probe
    varies them)."""
    total = float(mass.sum())
    if total <= 0.0:
        return None
    cumulative = np.cumsum(mass) / total
    first = int(np.searchsorted(cumulative, RANGE_QUANTILES[0], side="right"))
    last = int(np.searchsorted(cumulative, RANGE_QUANTILES[1], side="left"))
    first, last = min(first, len(mass) - 1), min(max(last, first), len(mass) - 1)
    if sigma > 0:
        decade = int(np.sum((edges >= 1.0) & (edges < 10.0)))  # the grid's bins a decade
        last += _tail(counts[last + 1 :], sigma, decade)
        first -= _tail(counts[:first][::-1], sigma, decade)
        # one bin more where the next one shows some mass (a thin tail's first bin; an empty one: 16 %)
        bar = (COARSE_MARGIN_SIGMAS if coarse else MARGIN_SIGMAS) * sigma
        first -= int(first > 0 and counts[first - 1] > bar)
        last += int(last < len(counts) - 1 and counts[last + 1] > bar)
    return float(edges[first]), float(edges[last + 1])


def _tail(counts: np.ndarray, sigma: float, max_run: int) -> int:
    """How many of `counts` (outward from a range's end) the range takes: run after run, the
    shortest run of at most `max_run` bins (a decade's) from the current end whose own sum clears
    NUMERIC_BIN_SIGMAS·σ·√(its bins), until none does. Each run must clear on its own and be short:
    a sum that ran on from the end would carry the end's real mass S across up to
    (S / (NUMERIC_BIN_SIGMAS·σ))² bins of pure noise, and runs of any length tested at every end
    find some noise run that clears in a few percent of columns (NYC flights' arr_delay, −68..767,
    came out [−5·10⁹, 500] at ε = 1)."""
    taken, bar = 0, NUMERIC_BIN_SIGMAS * sigma
    while taken < len(counts):
        rest = counts[taken : taken + max_run]
        clears = np.cumsum(rest) > bar * np.sqrt(np.arange(1, len(rest) + 1))
        if not clears.any():
            break
        taken += int(np.argmax(clears)) + 1
    return taken


def fine_range(release: FineRelease, expected: float, masses: dict[int, float]) -> tuple[float, float] | None:
    """The RANGE_QUANTILES of the fine release's mass, widened by FINE_MARGIN of its width at each end
    (post-processing of the release; None when its counted cells hold less than FINE_TRUST of
    `expected`, the numbers the grid's range holds less the point masses). The point masses'
    released counts are taken out of their cells first, as on the grid."""
    counts = release.counts.copy()
    for value, count in masses.items():
        if release.edges[0] <= value < release.edges[-1]:
            counts[bin_of(value, release.edges)] -= count
    chosen = _without_isolated_noise(_dyadic_chosen(counts, release.noise), counts, release.noise)
    if not chosen.any() or float(counts[chosen].sum()) < FINE_TRUST * expected:
        return None
    mass = np.where(chosen, np.clip(counts, 0.0, None), 0.0)
    cumulative = np.cumsum(mass) / float(mass.sum())
    first = int(np.searchsorted(cumulative, RANGE_QUANTILES[0], side="right"))
    last = max(int(np.searchsorted(cumulative, RANGE_QUANTILES[1], side="left")), first)
    low, high = float(release.edges[first]), float(release.edges[min(last, len(mass) - 1) + 1])
    margin = FINE_MARGIN * (high - low)
    return max(low - margin, float(release.edges[0])), min(high + margin, float(release.edges[-1]))


def _dyadic_chosen(counts: np.ndarray, noise: float) -> np.ndarray:
    """The cells in a group of 1, 2, 4, … consecutive cells whose cells not yet counted sum past
    their noise (σ·√cells) at the bar a pure-noise group passes with probability FINE_FALSE_RATE /
    (the groups of that size), the smallest sizes first: a narrow band shows in single cells, a thin
    spread in wider groups, and a wide group around a band already counted does not count again."""
    from scipy.stats import norm  # here, not at the top: sampling a saved model never reads a release

    chosen = np.zeros(len(counts), dtype=bool)
    size = 1
    while size <= len(counts):
        pad = -len(counts) % size
        left = np.concatenate([np.where(chosen, 0.0, counts), np.zeros(pad)]).reshape(-1, size)
        cells = np.concatenate([~chosen, np.zeros(pad, dtype=bool)]).reshape(-1, size).sum(axis=1)
        bar = noise * np.sqrt(np.maximum(cells, 1)) * float(norm.isf(FINE_FALSE_RATE / len(cells)))
        chosen |= np.repeat((left.sum(axis=1) > bar) & (cells > 0), size)[: len(counts)]
        size *= 2
    return chosen


def bin_of(value: float, edges: np.ndarray) -> int:
    """The index of the grid bin (of `edges`) that holds `value`."""
    return int(bin_index(np.array([float(value)]), edges)[0])


def _decades(edges: np.ndarray) -> list[list[int]]:
    """Consecutive grid bins grouped by the sign and decade of their edge nearer to 0."""
    groups: dict[tuple[float, int], list[int]] = {}
    for i in range(len(edges) - 1):
        near = min(abs(edges[i]), abs(edges[i + 1]))
        key = (float(np.sign(edges[i] + edges[i + 1])), int(math.floor(math.log10(near))) if near > 0 else -99)
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def point_masses(
    wholes: dict[int, float], numbers: float, bins: np.ndarray, integer: bool, edges: np.ndarray
) -> dict[int, float]:
    """The released whole numbers that are spikes (the module's constants), the heaviest
    MAX_POINT_MASSES of them, with their counts; `bins`: the grid's noisy counts, whose bin around a
    value (less the value's own count) and its two neighbours give the mass per unit (per integer)
    beside it, the largest of the three (`edges`: the grid `bins` count on)."""
    heavy = []
    for value, count in wholes.items():
        if count < POINT_MASS_MIN_SHARE * numbers:
            continue
        index = bin_of(value, edges)
        beside = max(float(bins[index]) - count, 0.0) / _units(edges, index, integer)
        for side in (index - 1, index + 1):  # a bin only partly inside the column's support: its neighbours
            if 0 <= side < len(bins):
                beside = max(beside, max(float(bins[side]), 0.0) / _units(edges, side, integer))
        if count >= SPIKE_RATIO * max(beside, 1.0):
            heavy.append((count, value))
    return {value: count for count, value in sorted(heavy, reverse=True)[:MAX_POINT_MASSES]}


def _positive_quantile(mass: np.ndarray, share: float, edges: np.ndarray) -> float | None:
    """The high edge of the grid bin where `share` of the positive bins' mass is reached (None without)."""
    positive = np.where(edges[:-1] >= 0.0, mass, 0.0)
    total = float(positive.sum())
    if total <= 0.0:
        return None
    index = int(np.searchsorted(np.cumsum(positive) / total, share, side="left"))
    return float(edges[min(index, len(mass) - 1) + 1])


def quantile_bin_edges(
    mass: np.ndarray, edges: np.ndarray, low: float, high: float, bins: int, integer: bool
) -> tuple[float, ...]:
    """Inner bin edges at the k/bins quantiles (k = 1..bins-1) of the grid's `mass` inside [low, high],
    read off its piecewise-linear distribution function (mass spread evenly inside a grid bin):
    post-processing of the released counts, free. An integer column's edges sit halfway between
    whole numbers. Edges that coincide (mass piled in one grid bin) are merged, so fewer bins may
    come back; none (an empty tuple) without mass inside the range."""
    starts, ends = np.clip(edges[:-1], low, high), np.clip(edges[1:], low, high)
    inside = np.clip(mass, 0.0, None) * (ends - starts) / (edges[1:] - edges[:-1])
    total = float(inside.sum())
    if total <= 0.0 or bins < 2:
        return ()
    cumulative = np.concatenate([[0.0], np.cumsum(inside) / total])
    cuts: list[float] = []
    for share in np.arange(1, bins) / bins:
        index = int(np.searchsorted(cumulative, share, side="left")) - 1
        index = min(max(index, 0), len(inside) - 1)
        within = (share - cumulative[index]) / max(cumulative[index + 1] - cumulative[index], 1e-300)
        cut = float(starts[index] + min(max(within, 0.0), 1.0) * (ends[index] - starts[index]))
        if integer:
            cut = math.ceil(cut) - 0.5  # the values below the cut stay below it
        if low < cut < high and (not cuts or cut - cuts[-1] > 1e-9 * (high - low)):
            cuts.append(cut)
    return tuple(cuts)


def _units(edges: np.ndarray, index: int, integer: bool) -> float:
    """How many values (integers, or units of length) grid bin `index` spans, at least one."""
    low, high = float(edges[index]), float(edges[index + 1])
    return float(max(math.ceil(high) - math.ceil(low), 1)) if integer else max(high - low, 1.0)


def levels_of(wholes: dict[int, float], numbers: float) -> list[int] | None:
    """The column's levels when its released whole numbers are two to MAX_LEVELS and hold nearly all
    its numbers. One released value is not a column of one level: its noisy count can pass the
    coverage test against a noisy count of numbers that came out low (Adult's capital-gain on 600
    rows, 91 % zeros, became the constant range [0, 1]); as a point mass the column keeps a range."""
    if len(wholes) < 2 or len(wholes) > MAX_LEVELS or sum(wholes.values()) < LEVELS_COVERAGE * numbers:
        return None
    return sorted(wholes)


def numeric_column(
    name: str,
    kind: KindDecision,
    domain: DomainCounts,
    sigma: float,
    nullable: bool,
    hints: PublicHints,
    exact: bool,
    rows: float,
) -> Decision:
    """A numeric column's spec: levels, point masses, range and scale from its released counts."""
    assert domain.bins is not None
    edges = domain.edges()
    integer = "integer" if kind.integer else "continuous"
    split = sigma if exact else grid_noise(domain, sigma)  # each histogram's noise
    numbers = max(kind.numbers, 1.0)
    wholes = {value: count for value, count in (domain.wholes or {}).items() if count > 0}
    zero = int(np.searchsorted(edges, 0.0))
    if domain.wholes is None and domain.bins[zero] > NUMERIC_BIN_SIGMAS * split:
        wholes = {0: float(domain.bins[zero])}  # a fractional column: its bin [0, 0.01) stands for 0
    levels = levels_of(wholes, numbers) if integer == "integer" and name not in hints.bounds else None
    masses = {} if levels else point_masses(wholes, numbers, domain.bins, integer == "integer", edges)
    counts = domain.bins.copy()
    for value, count in masses.items():  # the point masses' rows are not the range's
        counts[bin_of(value, edges)] -= count
    # bins are chosen on their whole count (a point mass shows its bin holds data: ccs's 2..6 beside
    # its 1s); the quantiles then read the mass without the point masses' rows
    mass = mass_bins(domain.bins, split, edges, rest=counts) if not exact else np.clip(counts, 0.0, None)
    note = None
    if name in hints.bounds:
        low, high = (float(b) for b in hints.bounds[name])
    elif levels:
        low, high = float(levels[0]), float(levels[-1])
    elif exact:
        low, high = domain.low, domain.high
    else:
        span = quantile_range(mass, counts, split, edges, coarse=domain.per_decade != FINEST_GRID)
        if span is not None and domain.refine is not None:  # the second release, over the range the grid found
            expected = float(mass.sum()) + split * float(np.count_nonzero(mass))  # mass_bins took σ a bin off
            span = refined(span, fine_range(domain.refine(*span), expected, masses), mass, edges)
        if span is None and not wholes:
            # numbers, but too few or too spread out to show above the noise: a wide public default
            low, high = -1e6, 1e6
            note = range_not_found_note(name)
        else:
            # every released whole number is a value the column holds (it cleared the threshold)
            found = [float(v) for v in wholes] + (list(span) if span is not None else [])
            low, high = min(found), max(found)
    if integer == "integer":
        low, high = float(math.floor(low)), float(math.ceil(high))
    if low == high:
        high = low + 1.0
    if levels and len(levels) > 1 and not bin_per_level(integer, low, high):  # too far apart for a bin each
        return levels_as_categories(name, levels, wholes, rows, kind.will_be_null, nullable, split)
    positive = [float(edges[i]) for i in np.nonzero(mass > 0)[0] if edges[i] > 0]
    if exact and domain.low > 0:
        positive = [domain.low]
    smallest = min(positive + [float(v) for v in masses if v > 0], default=0.0)
    typical = None if exact else _positive_quantile(mass, 0.1, edges)
    encoding = numeric_encoding(integer, low, high, tuple(float(v) for v in masses), smallest, typical)
    if BIN_PLACEMENT == "quantile" and not bin_per_level(integer, low, high):
        cuts = quantile_bin_edges(mass, edges, low, high, DEFAULT_BINS, integer == "integer")
        if cuts:
            encoding.update(bins=len(cuts) + 1, bin_edges=cuts)
    return Decision(ColumnSpec(name, integer, min=low, max=high, nullable=nullable, **encoding), note)


def grid_noise(domain: DomainCounts, sigma: float) -> float:
    """The noise std of the released grid (dpgan.tables.inference.domain.release_domain's split)."""
    from dpgan.privacy.mechanisms import share_noise
    from dpgan.tables.inference.domain import FINE_SHARE

    share = 1.0 - FINE_SHARE if domain.refine is not None else 1.0
    return share_noise(sigma, share / 2.0 if domain.wholes is not None else share)


def refined(
    span: tuple[float, float], fine: tuple[float, float] | None, mass: np.ndarray, edges: np.ndarray
) -> tuple[float, float]:
    """The grid's range narrowed to the fine release's (never beyond the grid's), unless the grid's
    own mass (`mass` over the bins of `edges`, released) disagrees: the grid bins that meet the fine
    range must hold FINE_TRUST of it. Two releases of one column agree on where its numbers are; a
    fine range inside one grid bin of a column spread over many is the fine release's noise.

    How the fine release alone is fooled: thin mass over many fine cells (churn's tenure, 1,400 rows
    over 12,288 cells at ε = 1) leaves every small group below its bar, while a wide group of pure
    noise clears it now and then (the false rate is per scale, and there are a dozen scales), and its
    sum, the bar itself, is enough for FINE_TRUST: tenure came out [19.7, 21.6] of 0..72. On the
    tuning tables' training rows (5 tables, ε = 1 and 3, seeds 0-4: 440 numeric columns) this check
    took the columns with over 25 % of their values outside the range from 12 to 4 and changed no
    narrow band (bench/notes/35). Post-processing of two released histograms: no privacy cost."""
    if fine is None:
        return span
    low, high = max(span[0], fine[0]), min(span[1], fine[1])
    if not low < high:
        return span
    meets = (edges[1:] > low) & (edges[:-1] < high)
    total = float(mass.sum())
    if total > 0 and float(mass[meets].sum()) < FINE_TRUST * total:
        return span
    return low, high


def range_not_found_note(name: str) -> str:
    """The advice when a column's values do not show above the noise (too few rows, or none at all):
    declare what is public, its kind first, rather than numeric bounds it may not have."""
    return (
        f"column {name!r}: its kind and range do not show above the noise at this budget (few rows, or none); "
        "declare it in a public schema (`dpgan schema DATA --template --out S.json`, then --schema S.json), "
        f"or give --categorical {name} or --bounds {name}=LOW:HIGH"
    )
