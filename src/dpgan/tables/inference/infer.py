"""A schema for a table that came without one: public hints first, the rest bought with DP.

Without a schema nothing about a column is public except its name. dpgan makes two Gaussian
releases per column, each a histogram whose cells every row falls into exactly one of
(sensitivity 1 each):
1. the class histogram, four cells: null (missing, empty, an infinity), whole number, fractional
   number, text. Which class a cell is in comes from dpgan.tables.schema.cells, a rule that reads the
   cell alone; pandas' dtypes, which `read_csv` infers from every value, are never read. Four big
   cells are robust to noise, so this release runs at twice the base noise (a quarter of the cost;
   the release and the kind it decides: dpgan.tables.inference.column_kinds);
2. the domain histogram, chosen by the kind that (1) decided: for a numeric column, the bins of a
   public log-scale grid (dpgan.privacy.mechanisms.public_numeric_grid), 6, 3 or 1 bins a decade as
   N̂ and σ allow (`grid_resolution`: a small table's bins are wider, so they show above the
   noise); for an integer one, two
   histograms at √2σ each instead (sensitivity 1 each: together exactly the privacy of one
   Gaussian at σ, so the ledger entry is the same): the grid's bins and the count of each whole
   number, the PUBLIC_WHOLES (0..10 and sentinel codes: -1, 99999, ...) always, any other only
   when its noisy count clears the Gaussian partition-selection threshold; for any other column,
   one cell per value (its canonical text), released only above that threshold (its failure
   probability is charged to δ).
Everything in the schema is post-processing of those counts and of the noisy row count N̂:
- the kind: numeric when the noisy count of numbers is at least that of text cells, integer unless the
  fractional numbers clearly outweigh both their noise and 2 % of the numbers; boolean when the
  only released values spell true/false; categorical otherwise;
- `nullable`: the cells that will be null (missing; and text, in a numeric column) clear both 3σ
  and 0.5 % of N̂. A column judged complete still gets its few nulls mapped by dpgan.tables.reading.conform (to
  `(other)`, or the row is dropped), counted with DP. The target is never nullable (a public
  rule): a label model or a condition needs every row labelled;
- point masses: released whole numbers holding at least 0.5 % of the numbers and 5 times the mass
  per unit beside them (0, sentinel codes, 40 hours a week; not a common age);
- levels: an integer column whose few (≤ 16) released whole numbers hold 98.5 % of its numbers
  takes their range (one bin per level), or, when they lie far apart, becomes categorical;
- the numeric range: the 0.5 % and 99.5 % quantiles of the grid's mass, the point masses' counts
  taken out of their bins and only bins (or decades of bins) that clear 3.5 noise stds counted,
  then widened over any run of bins beyond each end whose sum clears the same bar, and by one bin
  where the next shows some mass; point masses stay inside; integer ranges are rounded outwards;
- categories: the released values, plus `(other)` (for the target only when the rest of N̂
  clears its noise or one class alone was released: a target with two released classes gets no
  third); their noisy counts are the
  column's public `frequencies` (free: they were already released);
- encoding hints (point masses, log scale when the range spans decades, bins) from the same counts;
  with BIN_PLACEMENT "quantile" a wide numeric column's bins are cut at the DP quantiles of its grid
  mass (`quantile_bin_edges`), so each holds a like share of the rows (measured, not the default).
The user's public hints replace parts of this for free: `target`, columns declared categorical
(every value is then a category, numbers included), a column's public list of `categories` (its
values are then counted without a threshold: a minority label survives any noise level), and
numeric `bounds`.

`infer_schema_without_privacy` reads the same things exactly (no noise, exact min/max) behind the
explicit opt-out; it drops text columns that are nearly unique per row (identifiers), whose values
would otherwise be copied into model.json, unless told to keep them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.privacy.mechanisms import (
    FINEST_GRID,
    GRID_MANTISSAS,
    bin_index,
    coarse_bins,
    noisy_counts,
    public_numeric_grid,
    set_union_threshold,
)
from dpgan.tables.inference.column_kinds import (
    CLASS_HISTOGRAM_SCALE,
    NULL_MIN_SIGMAS,
    NUMERIC,
    ClassCounts,
    KindDecision,
    PublicHints,
    class_counts,
    decide_kind,
    release_classes,
)
from dpgan.tables.schema.cells import NUMBER, cell_keys, classify
from dpgan.tables.schema.table import DEFAULT_BINS, ColumnSpec, Schema, bin_per_level, numeric_encoding

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
# a run of such bins set apart from the column's heaviest run by more than ISOLATION_GAP empty bins
# counts only when its sum clears ISOLATED_SIGMAS noise stds (`_without_isolated_noise`)
ISOLATION_GAP = 2
ISOLATED_SIGMAS = 5.0
RANGE_QUANTILES = (0.005, 0.995)
# where a learned numeric column's bins are cut: "equal" on the column's scale, or "quantile", at the
# DP quantiles of the grid's mass (each bin then holds a like share of the rows). Chosen on the tuning
# tables' validation splits at ε = 1, 3 seeds (bench/notes/21, "Bins at DP quantiles"): quantile bins
# moved TSTR AUC by +0.002 on average (hmda +0.023, chile −0.011) and the per-column marginal
# distances by a median ratio of 1.00 (geometric mean 1.06, worse): no gain, so equal bins stay.
# Read at each call (bench/csv_only.py --bin-placement compares them).
BIN_PLACEMENT = "equal"
MARGIN_SIGMAS = 1.0
COARSE_MARGIN_SIGMAS = 2.0  # on a grid coarser than the finest a margin bin is a decade or a third of one
# a numeric column's domain release is two Gaussian histograms at √2σ each, the public grid's bins
# and the whole numbers above a threshold (both sensitivity 1: together exactly one Gaussian at σ)
SPLIT = math.sqrt(2.0)
# a released whole number is a point mass (0, and sentinel codes such as 99999 or 9999999) when it
# holds at least POINT_MASS_MIN_SHARE of the numbers and SPIKE_RATIO times the mass per unit of the
# rest of its grid bin (a common age is not a spike; 40 hours a week is); the heaviest are kept
POINT_MASS_MIN_SHARE = 0.005
SPIKE_RATIO = 5.0
# whole numbers that are released as public cells, with noise and no threshold (so a sentinel code
# shows at a few noise stds, not at the partition-selection bar, ≈ 7σ): 0 and the codes people use
# for "missing" or "top-coded"; kept as point-mass candidates when they clear NUMERIC_BIN_SIGMAS
SENTINELS = (0, -1, -9, -99, -999, -9999, 9, 99, 999, 9999, 99999, 999999, 9999999, 99999999, 999999999)
# small whole numbers are public cells too: flags (0/1), scores (1..6) and counts (0..10) are the
# integer columns that are really levels, and their levels show at NUMERIC_BIN_SIGMAS instead of the
# partition-selection bar (hmda's condominium 0/1 at ε = 1 released only its 0s and became a log range)
SMALL_WHOLES = tuple(range(0, 11))
PUBLIC_WHOLES = tuple(sorted(set(SENTINELS) | set(SMALL_WHOLES)))
MAX_POINT_MASSES = 4
# the grid's resolution follows the table's size: the finest (6 bins a decade) whose bins would
# each clear NUMERIC_BIN_SIGMAS noise stds if a column's N̂ numbers filled TYPICAL_DECADES decades
# evenly; else 3 (1, 2, 5) or 1 a decade. N̂ is released and σ public, so the choice is
# post-processing; the coarse histogram is the fine one's bins summed (still sensitivity 1). Without
# it, a table of 791 rows at ε = 1 (σ ≈ 63) found no bin of its money columns above the noise and
# fell back to ±10⁶ (AER CreditCard's share and expenditure)
TYPICAL_DECADES = 2.0
# an integer column whose released whole numbers hold LEVELS_COVERAGE of its numbers, with at most
# MAX_LEVELS of them, is a column of levels: its range is theirs (one bin per level when they are
# close together; categories when they are far apart, e.g. codes 1, 5, 10, 99)
MAX_LEVELS = 16
LEVELS_COVERAGE = 0.985
# a column gets a null slot when its noisy null count clears both NULL_MIN_SIGMAS noise stds
# (dpgan.tables.inference.column_kinds) and this share of N̂
NULL_MIN_SHARE = 0.005
BOOLEAN_WORDS = frozenset(("true", "false"))
# without DP: a text column with this share of distinct values (and more than IDENTIFIER_MIN) is an identifier
IDENTIFIER_SHARE = 0.5
IDENTIFIER_MIN = 50
SOURCE_DP = "learned with DP (in the ledger)"
SOURCE_NOT_PRIVATE = "data (not private)"


# ---------------------------------------------------------------- release 1: the class histogram


# ---------------------------------------------------------------- release 2: the domain histogram


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


# ---------------------------------------------------------------- the column's spec


@dataclass(frozen=True)
class Decision:
    """What the counts say about one column."""

    spec: ColumnSpec
    note: str | None = None  # something the user should hear (computed from released numbers only)


def decide_column(
    name: str,
    kind: KindDecision,
    domain: DomainCounts,
    *,
    sigma: float,
    rows: float,
    hints: PublicHints,
    exact: bool = False,
) -> Decision:
    """The column's spec from its released (or, `exact`, true) counts: post-processing only.
    `sigma` is the domain release's noise multiplier."""
    null_threshold = 0.0 if exact else max(NULL_MIN_SIGMAS * kind.null_noise, NULL_MIN_SHARE * rows)
    nullable = bool(kind.will_be_null > null_threshold) and name != hints.target
    if kind.kind == NUMERIC:
        return _numeric(name, kind, domain, sigma, nullable, hints, exact, rows)
    words = {k.lower() for k in domain.values}
    if words and words <= BOOLEAN_WORDS and hints.kind_of(name) is None:
        return Decision(ColumnSpec(name, "boolean", nullable=nullable))
    return _categorical(name, domain, rows, kind.will_be_null, nullable, sigma, target=name == hints.target)


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
    chosen = _without_isolated_noise(chosen, counts, sigma)
    kept = counts if rest is None else rest
    return np.where(chosen, np.clip(kept - sigma, 0.0, None), 0.0)


def _without_isolated_noise(chosen: np.ndarray, counts: np.ndarray, sigma: float) -> np.ndarray:
    """`chosen` less its runs that lie apart from the heaviest run (more than ISOLATION_GAP bins
    from any other chosen bin) unless they clear ISOLATED_SIGMAS noise stds of a sum: the grid has
    about 150 bins, so a column's pure-noise bins clear NUMERIC_BIN_SIGMAS somewhere with
    probability about 3 %, and one such bin decades away took NYC flights' arr_time (1..2,400) to
    [−7·10⁷, 3,000] at ε = 1. A value that far from the rest is a whole number (a sentinel code:
    released and kept by its own histogram) or holds enough rows to clear the higher bar."""
    index = np.nonzero(chosen)[0]
    if len(index) < 2:
        return chosen
    runs = np.split(index, np.nonzero(np.diff(index) > ISOLATION_GAP + 1)[0] + 1)
    sums = [float(counts[run].sum()) for run in runs]
    heaviest = int(np.argmax(sums))
    kept = chosen.copy()
    for i, (run, total) in enumerate(zip(runs, sums)):
        if i != heaviest and total <= ISOLATED_SIGMAS * sigma * math.sqrt(len(run)):
            kept[run] = False
    return kept


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


def _numeric(
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
    split = sigma * SPLIT if domain.wholes is not None and not exact else sigma  # each histogram's noise
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
        return _levels_as_categories(name, levels, wholes, rows, kind.will_be_null, nullable, split)
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


def _levels_as_categories(
    name: str, levels: list[int], wholes: dict[int, float], rows: float, nulls: float, nullable: bool, sigma: float
) -> Decision:
    """Codes far apart (1, 5, 10, 99): categories in their numeric order, their released counts the
    public frequencies."""
    domain = DomainCounts(values={str(level): wholes[level] for level in levels})
    order = [str(level) for level in levels]  # they hold nearly every row: (other) only if the rest clears its noise
    return _categorical(name, domain, rows, nulls, nullable, sigma, order=order, target=True)


def _categorical(
    name: str,
    domain: DomainCounts,
    rows: float,
    nulls: float,
    nullable: bool,
    sigma: float,
    order: list[str] | None = None,
    target: bool = False,  # the target, or levels that hold nearly every row: the strict rule for (other)
) -> Decision:
    """Released values (sorted, or in `order`) and `(other)`. With public categories (`domain.other`
    set) their order is the user's, and `(other)` is added only when the released count of the other
    values clears its noise. Otherwise a feature always gets `(other)` (its unreleased values, rare
    or not, keep their rows), and the target only when N̂ less the released values and nulls clears
    its noise (which grows with the number of released values) or when only one value was released
    (a rare second class under the threshold: `(other)` then stands for it): a target with two
    released classes and nothing else gets no third class made of noise, and a row with an unreleased label is
    dropped and counted (dpgan.tables.reading.conform), as a label model could not predict it."""
    public = domain.other is not None
    keys = list(domain.values) if public else (order or sorted(domain.values, key=str))
    note = None
    if not keys:
        note = f"column {name!r}: no value is frequent enough to release at this budget; it is generated as {OTHER!r}"
    known = [max(domain.values[k], 0.0) for k in keys]
    if public:
        rest = max(domain.other or 0.0, 0.0)
        with_other = rest > NULL_MIN_SIGMAS * sigma
    else:
        rest = max(rows - nulls - sum(known), 0.0)
        noise = sigma * math.sqrt(len(keys) + 2.0)  # N̂'s, the nulls' and each released count's
        clears = rest > NULL_MIN_SIGMAS * noise and rest > NULL_MIN_SHARE * rows
        with_other = len(keys) < 2 or not target or clears  # a label with one class is no label
    frequencies = tuple(known) + ((rest,) if with_other else ())
    if sum(frequencies) <= 0:
        frequencies = (1.0,) * len(frequencies)
    spec = ColumnSpec(
        name,
        "categorical",
        categories=tuple(keys) + ((OTHER,) if with_other else ()),
        nullable=nullable,
        other_category=OTHER if with_other else None,
        frequencies=frequencies,
    )
    return Decision(spec, note)


# ---------------------------------------------------------------- the two paths


def infer_schema_private(
    frame: pd.DataFrame,
    *,
    hints: PublicHints,
    noise_multiplier: float,
    threshold_delta: float,
    estimated_rows: float,
    rng: np.random.Generator,
    target_noise_multiplier: float | None = None,
    second_chance: SecondChance | None = None,
) -> tuple[Schema, list[str]]:
    """The schema from two noisy histograms per column, and notes for the user. The caller records
    the ledger: per column one class release at CLASS_HISTOGRAM_SCALE·`noise_multiplier` and one
    domain release at `noise_multiplier` (the target's at `target_noise_multiplier`); extra δ
    `threshold_delta` for the value thresholds (split over the columns that may release values)."""
    hints.check(frame.columns)
    return schema_from_counts(
        [str(c) for c in frame.columns],
        lambda name: class_counts(frame[name]),
        lambda name, kind: domain_counts(frame[name], kind),
        hints=hints,
        noise_multiplier=noise_multiplier,
        threshold_delta=threshold_delta,
        estimated_rows=estimated_rows,
        rng=rng,
        target_noise_multiplier=target_noise_multiplier,
        second_chance=second_chance,
    )


def schema_from_counts(
    names: list[str],
    classes_of: Callable[[str], ClassCounts],
    domain_of: Callable[[str, str], DomainCounts],
    *,
    hints: PublicHints,
    noise_multiplier: float,
    threshold_delta: float,
    estimated_rows: float,
    rng: np.random.Generator,
    target_noise_multiplier: float | None = None,
    second_chance: SecondChance | None = None,
) -> tuple[Schema, list[str]]:
    """The releases of `infer_schema_private` from exact counts however they were gathered (the
    whole frame, or merged over record batches: dpgan.tables.inference.stream_counts): column by column, the class
    release, then the domain release of the kind it decided, drawing from `rng` in that order. So
    equal exact counts and an equally seeded `rng` give an equal schema. `second_chance` releases a
    categorical target's values again when the first release kept fewer than two
    (`release_values`; the caller's closure charges it)."""
    keyed = [c for c in names if hints.releases_keys(c)]
    per_key_delta = threshold_delta / max(len(keyed), 1)
    columns, notes = [], []
    for name in names:
        kind = decide_kind(
            name,
            release_classes(classes_of(name), CLASS_HISTOGRAM_SCALE * noise_multiplier, rng),
            sigma=CLASS_HISTOGRAM_SCALE * noise_multiplier,
            hints=hints,
        )
        sigma = noise_multiplier
        if name == hints.target and target_noise_multiplier is not None:
            sigma = target_noise_multiplier
        threshold = set_union_threshold(sigma, per_key_delta) if hints.releases_keys(name) else math.inf
        public_keys = tuple(hints.categories[name]) if name in hints.categories else None
        exact = domain_of(name, kind.kind)
        if name == hints.target and exact.bins is None and public_keys is None:
            domain = release_values(exact, sigma, threshold, rng, second_chance, per_key_delta)
        else:
            domain = release_domain(exact, sigma, threshold, rng, public_keys, kind.integer, rows=estimated_rows)
        decision = decide_column(name, kind, domain, sigma=sigma, rows=estimated_rows, hints=hints)
        columns.append(decision.spec)
        if decision.note:
            notes.append(decision.note)
    return Schema(tuple(columns), target=hints.target, source=SOURCE_DP), notes


def infer_schema_without_privacy(
    frame: pd.DataFrame, hints: PublicHints | None = None, *, keep_identifiers: bool = False
) -> tuple[Schema, list[str]]:
    """Read the domain off the data. NOT private: the result reveals extremes and rare categories.

    Only behind the explicit `schema_from_data_without_dp` opt-out; every output then says so.
    Text columns with a distinct value in most rows (identifiers) are dropped unless
    `keep_identifiers`; the notes say which.
    """
    if not isinstance(frame, pd.DataFrame) or len(frame) == 0:
        raise InputError("the table is empty: nothing to learn from")
    hints = hints or PublicHints()
    hints.check(frame.columns)
    columns, notes = [], []
    for name in map(str, frame.columns):
        kind = decide_kind(name, class_counts(frame[name]), sigma=0.0, hints=hints)
        domain = domain_counts(frame[name], kind.kind)
        spec = decide_column(name, kind, domain, sigma=0.0, rows=float(len(frame)), hints=hints, exact=True).spec
        distinct = len(domain.values)
        if (
            spec.kind == "categorical"
            and name != hints.target
            and not keep_identifiers
            and distinct > IDENTIFIER_MIN
            and distinct >= IDENTIFIER_SHARE * sum(domain.values.values())
        ):
            notes.append(
                f"column {name!r} has a distinct value in most rows (an identifier?): dropped, because its values "
                "would be copied into the model; keep it with keep_identifiers=True (--keep-identifier-columns)"
            )
            continue
        if spec.kind == "categorical":  # every value seen is a category: nothing needs (other)
            cats = tuple(sorted(domain.values, key=str))
            spec = ColumnSpec(name, "categorical", categories=cats, nullable=spec.nullable)
        columns.append(spec)
    if not columns:
        raise InputError("no column is left to learn from")
    return Schema(tuple(columns), target=hints.target, source=SOURCE_NOT_PRIVATE), notes


def range_not_found_note(name: str) -> str:
    """The advice when a column's values do not show above the noise (too few rows, or none at all):
    declare what is public, its kind first, rather than numeric bounds it may not have."""
    return (
        f"column {name!r}: its kind and range do not show above the noise at this budget (few rows, or none); "
        "declare it in a public schema (`dpgan schema DATA --template --out S.json`, then --schema S.json), "
        f"or give --categorical {name} or --bounds {name}=LOW:HIGH"
    )
