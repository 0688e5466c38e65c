"""A schema for a table that came without one: public hints first, the rest bought with DP.

Without a schema nothing about a column is public except its name. dpgan makes two Gaussian
releases per column, each a histogram whose cells every row falls into exactly one of
(sensitivity 1 each):
1. the class histogram, four cells: null (missing, empty, an infinity), whole number, fractional
   number, text. Which class a cell is in comes from dpgan.tables.cells, a rule that reads the
   cell alone; pandas' dtypes, which `read_csv` infers from every value, are never read. Four big
   cells are robust to noise, so this release runs at twice the base noise (a quarter of the cost;
   the release and the kind it decides: dpgan.tables.column_kinds);
2. the domain histogram, chosen by the kind that (1) decided: for a numeric column, the bins of a
   public log-scale grid (dpgan.privacy.mechanisms.public_numeric_grid); for any other column, one
   cell per value (its canonical text), released only when its noisy count clears the Gaussian
   partition-selection threshold (the threshold's failure probability is charged to δ).
Everything in the schema is post-processing of those counts and of the noisy row count N̂:
- the kind: numeric when the noisy count of numbers is at least that of text cells, integer unless the
  fractional numbers clearly outweigh both their noise and 2 % of the numbers; boolean when the
  only released values spell true/false; categorical otherwise;
- `nullable`: the cells that will be null (missing; and text, in a numeric column) clear both 3σ
  and 0.5 % of N̂. A column judged complete still gets its few nulls mapped by dpgan.tables.conform (to
  `(other)`, or the row is dropped), counted with DP. The target is never nullable (a public
  rule): a label model or a condition needs every row labelled;
- the numeric range: the heaviest run of grid bins whose noisy mass clears 3 noise standard
  deviations, one bin wider on each side (thin tails fall under the threshold and clamping them
  to a too-narrow range is worse than a wider one); integer ranges are rounded outwards;
- categories: the released values, plus `(other)` for the rest; their noisy counts are the
  column's public `frequencies` (free: they were already released);
- encoding hints (point mass at 0, log scale, bins) from the same counts.
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
from dpgan.privacy.mechanisms import bin_index, noisy_counts, public_numeric_grid, set_union_threshold
from dpgan.tables.cells import NUMBER, cell_keys, classify
from dpgan.tables.column_kinds import (
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
from dpgan.tables.schema import ColumnSpec, Schema, numeric_encoding

OTHER = "(other)"
# a grid bin counts when its noisy mass clears this many noise stds (≈ 0.2 false bins per column of
# 145, which the run rule leaves out unless they touch the data); the range is the heaviest run of
# such bins (gaps of up to RANGE_MAX_GAP bins) widened by RANGE_MARGIN_BINS on each side. Chosen by
# bench/range_rule_probe.py on the bench tables' and Adult's training rows (RESULTS §10): at ε = 1
# it clamps 7.2 % of values on average (3.5σ: 8.3 %; no margin: 10 %), its range is 27 % empty
NUMERIC_BIN_SIGMAS = 3.0
RANGE_MAX_GAP = 2
RANGE_MARGIN_BINS = 1
RANGE_BY_DECADES = False
# a column gets a null slot when its noisy null count clears both NULL_MIN_SIGMAS noise stds
# (dpgan.tables.column_kinds) and this share of N̂
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
    low: float = math.nan
    high: float = math.nan
    other: float | None = None  # with public categories: the count of every other value


def domain_counts(series: pd.Series, kind: str) -> DomainCounts:
    if kind == NUMERIC:
        edges = public_numeric_grid()
        cells = classify(series)
        numbers = cells.number[cells.kind == NUMBER]
        counts = np.bincount(bin_index(numbers, edges), minlength=len(edges) - 1).astype(np.float64)
        extent = (float(numbers.min()), float(numbers.max())) if len(numbers) else (math.nan, math.nan)
        return DomainCounts(bins=counts, low=extent[0], high=extent[1])
    keys = cell_keys(series)
    present = keys[keys != None]  # noqa: E711 (elementwise)
    return DomainCounts(values={str(k): float(c) for k, c in Counter(present.tolist()).items()})


def release_domain(
    counts: DomainCounts,
    sigma: float,
    threshold: float,
    rng: np.random.Generator,
    public_keys: tuple[str, ...] | None = None,
) -> DomainCounts:
    """The Gaussian release: noise on every grid bin (public cells), noise and a threshold on values;
    with `public_keys`, noise on each listed value and on one cell for all the others (all public
    cells: no threshold)."""
    if counts.bins is not None:
        return DomainCounts(bins=noisy_counts(counts.bins, sigma, rng))
    if public_keys is not None:
        listed = [counts.values.get(k, 0.0) for k in public_keys]
        rest = sum(c for k, c in counts.values.items() if k not in set(public_keys))
        noisy = noisy_counts(np.array([*listed, rest]), sigma, rng)
        return DomainCounts(values=dict(zip(public_keys, map(float, noisy[:-1]))), other=float(noisy[-1]))
    keys = sorted(counts.values)
    noisy = noisy_counts(np.array([counts.values[k] for k in keys]), sigma, rng) if keys else np.zeros(0)
    return DomainCounts(values={k: float(c) for k, c in zip(keys, noisy) if c > threshold and k != OTHER})


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
        return _numeric(name, kind, domain, sigma, nullable, hints, exact)
    words = {k.lower() for k in domain.values}
    if words and words <= BOOLEAN_WORDS and hints.kind_of(name) is None:
        return Decision(ColumnSpec(name, "boolean", nullable=nullable))
    return _categorical(name, domain, rows, kind.will_be_null, nullable, sigma)


def _kept_bins(
    counts: np.ndarray,
    sigma: float,
    exact: bool,
    *,
    sigmas: float | None = None,
    margin: int | None = None,
    decades: bool | None = None,
) -> np.ndarray:
    """Indices of the grid bins taken as the column's range (see the module docstring): bins whose
    noisy mass clears `sigmas` noise stds, and (with `decades`) every bin of a decade whose summed
    mass clears the same bar for a sum, since values spread thin over a decade show only together;
    the heaviest run of those (gaps of up to RANGE_MAX_GAP bins), `margin` bins wider on each side.
    The keyword arguments default to the module's constants (bench/range_rule_probe.py varies them)."""
    sigmas = NUMERIC_BIN_SIGMAS if sigmas is None else sigmas
    margin = RANGE_MARGIN_BINS if margin is None else margin
    decades = RANGE_BY_DECADES if decades is None else decades
    if exact:
        return np.nonzero(counts > 0)[0]
    chosen = set(np.nonzero(counts > sigmas * sigma)[0].tolist())
    if decades or not chosen:
        for group in _decades(len(counts)):
            if counts[group].sum() > sigmas * sigma * math.sqrt(len(group)):
                chosen.update(group)
    above = np.array(sorted(chosen), dtype=np.int64)
    if len(above) == 0:
        return above
    runs = np.split(above, np.nonzero(np.diff(above) > RANGE_MAX_GAP + 1)[0] + 1)
    best = max(runs, key=lambda run: float(counts[run].sum()))
    edges = public_numeric_grid()
    low, high = int(best[0]), int(best[-1])
    for _ in range(margin):
        if low > 0 and edges[low] != 0.0:  # a range that starts at 0 stays non-negative
            low -= 1
        if high < len(counts) - 1 and edges[high + 1] != 0.0:  # one that ends at 0 stays non-positive
            high += 1
    return np.arange(low, high + 1)


def _decades(bins: int) -> list[list[int]]:
    """Consecutive grid bins grouped by the sign and decade of their edge nearer to 0."""
    edges = public_numeric_grid()
    groups: dict[tuple[float, int], list[int]] = {}
    for i in range(bins):
        near = min(abs(edges[i]), abs(edges[i + 1]))
        key = (float(np.sign(edges[i] + edges[i + 1])), int(math.floor(math.log10(near))) if near > 0 else -99)
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _numeric(
    name: str,
    kind: KindDecision,
    domain: DomainCounts,
    sigma: float,
    nullable: bool,
    hints: PublicHints,
    exact: bool,
) -> Decision:
    assert domain.bins is not None
    edges = public_numeric_grid()
    kept = _kept_bins(domain.bins, sigma, exact)
    mass = float(np.clip(domain.bins[kept], 0.0, None).sum())
    integer = "integer" if kind.integer else "continuous"
    note = None
    if name in hints.bounds:
        low, high = (float(b) for b in hints.bounds[name])
    elif len(kept) == 0:
        # numbers, but too few or too spread out to show above the noise: a wide public default
        low, high = -1e6, 1e6
        note = f"column {name!r}: its range could not be found at this budget; give --bounds {name}=LOW:HIGH"
    elif exact:
        low, high = domain.low, domain.high
    else:
        low, high = float(edges[kept[0]]), float(edges[kept[-1] + 1])
    if integer == "integer":
        low, high = float(math.floor(low)), float(math.ceil(high))
    if low == high:
        high = low + 1.0
    zero_bin = int(np.searchsorted(edges, 0.0))
    zero_share = max(float(domain.bins[zero_bin]), 0.0) / mass if zero_bin in kept and mass > 0 else 0.0
    positive = [float(edges[i]) for i in kept if edges[i] > 0]
    if exact and domain.low > 0:
        positive = [domain.low]
    encoding = numeric_encoding(integer, low, high, zero_share, positive[0] if positive else 0.0)
    return Decision(ColumnSpec(name, integer, min=low, max=high, nullable=nullable, **encoding), note)


def _categorical(name: str, domain: DomainCounts, rows: float, nulls: float, nullable: bool, sigma: float) -> Decision:
    """Released values (sorted) and `(other)`. With public categories (`domain.other` set) their
    order is the user's, and `(other)` is added only when its noisy count clears 3σ."""
    public = domain.other is not None
    keys = list(domain.values) if public else sorted(domain.values, key=str)
    note = None
    if not keys:
        note = f"column {name!r}: no value is frequent enough to release at this budget; it is generated as {OTHER!r}"
    known = [max(domain.values[k], 0.0) for k in keys]
    if public:
        rest = max(domain.other or 0.0, 0.0)
        with_other = rest > NULL_MIN_SIGMAS * sigma
    else:
        rest, with_other = max(rows - nulls - sum(known), 0.0), True
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
) -> tuple[Schema, list[str]]:
    """The releases of `infer_schema_private` from exact counts however they were gathered (the
    whole frame, or merged over record batches: dpgan.tables.stream_counts): column by column, the class
    release, then the domain release of the kind it decided, drawing from `rng` in that order. So
    equal exact counts and an equally seeded `rng` give an equal schema."""
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
        domain = release_domain(domain_of(name, kind.kind), sigma, threshold, rng, public_keys)
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
