"""A schema for a table that came without one: public hints first, the rest bought with DP.

Without a schema nothing about a column is public except its name. dpgan makes two Gaussian
releases per column, each a histogram whose cells every row falls into exactly one of
(sensitivity 1 each):
1. the class histogram, five cells: null (missing, empty, an infinity), whole number, fractional
   number, text, code (a digit string with a leading zero, `02139`). Which class a cell is in comes
   from dpgan.tables.schema.cells, a rule that reads the cell alone; pandas' dtypes, which
   `read_csv` infers from every value, are never read. Five big cells are robust to noise, so
   this release runs at twice the base noise (a quarter of the cost; the release and the kind it
   decides: dpgan.tables.inference.column_kinds);
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
A date, timestamp or time-of-day column (the class histogram's temporal cells decide it, and its
format) takes, as its domain histogram, the bins of a public calendar grid instead: one Gaussian
at σ, sensitivity 1, the same ledger entry (dpgan.tables.inference.datetimes).
Everything in the schema is post-processing of those counts and of the noisy row count N̂:
- the kind: numeric when the noisy count of numbers is at least that of text cells, integer unless the
  fractional numbers clearly outweigh both their noise and 2 % of the numbers; boolean when the
  only released values spell true/false; categorical otherwise;
- `nullable`: the cells that will be null (missing; text, in a numeric column; anything but a
  date or time, in a temporal one), counted by the class release and by the domain histogram's
  null cell and combined by inverse variance (`null_count`), clear both 2σ of that count's noise
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
  a wide numeric column's bins are cut at the DP quantiles of its grid mass (`quantile_bin_edges`,
  BIN_PLACEMENT "quantile"), so each holds a like share of the rows however far the range reaches.
The user's public hints replace parts of this for free: `target`, columns declared categorical
(every value is then a category, numbers included), a column's public list of `categories` (its
values are then counted without a threshold: a minority label survives any noise level), and
numeric `bounds`. A code column's public `hierarchies` entry (dpgan.tables.inference.hierarchy) adds
one release per level, so that a value too rare to release falls back to its released parent
rather than to `(other)`.

`infer_schema_without_privacy` reads the same things exactly (no noise, exact min/max) behind the
explicit opt-out; it drops text columns that are nearly unique per row (identifiers), whose values
would otherwise be copied into model.json, unless told to keep them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.privacy.mechanisms import inverse_variance_mean, set_union_threshold
from dpgan.tables.inference.categorical import NULL_MIN_SHARE, NULL_SLOT_SIGMAS, Decision, categorical_column
from dpgan.tables.inference.column_kinds import (
    CLASS_HISTOGRAM_SCALE,
    NUMERIC,
    ClassCounts,
    KindDecision,
    PublicHints,
    class_counts,
    decide_kind,
    release_classes,
)
from dpgan.tables.inference.datetimes import CalendarCounts, calendar_counts, release_calendar, temporal_column
from dpgan.tables.inference.domain import DomainCounts, SecondChance, domain_counts, release_domain, release_values
from dpgan.tables.inference.hierarchy import hierarchical_column, release_levels
from dpgan.tables.inference.numeric import numeric_column
from dpgan.tables.inference.temporal_kinds import is_temporal_key
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.hierarchy import Hierarchy
from dpgan.tables.schema.table import Schema

BOOLEAN_WORDS = frozenset(("true", "false"))
# without DP: a text column with this share of distinct values (and more than IDENTIFIER_MIN) is an identifier
IDENTIFIER_SHARE = 0.5
IDENTIFIER_MIN = 50
SOURCE_DP = "learned with DP (in the ledger)"
SOURCE_NOT_PRIVATE = "data (not private)"


def decide_column(
    name: str,
    kind: KindDecision,
    domain: DomainCounts | CalendarCounts,
    *,
    sigma: float,
    rows: float,
    hints: PublicHints,
    exact: bool = False,
) -> Decision:
    """The column's spec from its released (or, `exact`, true) counts: post-processing only.
    `sigma` is the domain release's noise multiplier."""
    nulls, noise = null_count(kind, domain, exact)
    null_threshold = 0.0 if exact else max(NULL_SLOT_SIGMAS * noise, NULL_MIN_SHARE * rows)
    nullable = bool(nulls > null_threshold) and name != hints.target
    if kind.temporal is not None:
        assert isinstance(domain, CalendarCounts)
        return temporal_column(name, kind.temporal, domain, sigma, nullable, exact, kind.numbers)
    assert isinstance(domain, DomainCounts)
    if kind.kind == NUMERIC:
        return numeric_column(name, kind, domain, sigma, nullable, hints, exact, rows)
    words = {k.lower() for k in domain.values}
    if words and words <= BOOLEAN_WORDS and hints.kind_of(name) is None:
        return Decision(ColumnSpec(name, "boolean", nullable=nullable))
    return categorical_column(name, domain, rows, nulls, nullable, sigma, target=name == hints.target)


def null_count(kind: KindDecision, domain: DomainCounts | CalendarCounts, exact: bool) -> tuple[float, float]:
    """The column's null rows and their noise std: the class release's count and the domain
    release's null cell (`DomainCounts.nulls`, `CalendarCounts.nulls`), combined by inverse variance
    (post-processing of two releases). The domain's cell has less noise than the class histogram's
    (2σ, and √2 more for a numeric column's null and text cells, √5 for a temporal column's null,
    number, text and code cells): together they find a column 8.5 % null at ε = 1 on 3,340 rows,
    which the class count alone (noise ≈ 208 rows, bar ≈ 620) learned as complete; a date column
    alike (its class count's noise ≈ 330 rows, bar ≈ 1,000 at 3σ)."""
    if exact or domain.null_noise is None or kind.null_noise <= 0.0:
        return kind.will_be_null, kind.null_noise
    combined, noise = inverse_variance_mean(
        np.array([kind.will_be_null]), kind.null_noise, np.array([domain.nulls]), domain.null_noise
    )
    return float(combined[0]), noise


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
        lambda name, key: column_domain(frame[name], key),
        hints=hints,
        noise_multiplier=noise_multiplier,
        threshold_delta=threshold_delta,
        estimated_rows=estimated_rows,
        rng=rng,
        target_noise_multiplier=target_noise_multiplier,
        second_chance=second_chance,
    )


def column_domain(series: pd.Series, key: str, weights: np.ndarray | None = None) -> DomainCounts | CalendarCounts:
    """The exact counts of a column's domain release: `key` is its KindDecision's domain_key; with
    `weights`, each row counts its weight (a unit's rows summing to at most 1)."""
    return calendar_counts(series, key, weights) if is_temporal_key(key) else domain_counts(series, key, weights)


def schema_from_counts(
    names: list[str],
    classes_of: Callable[[str], ClassCounts],
    domain_of: Callable[[str, str], DomainCounts | CalendarCounts],
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
    per_key_delta = threshold_delta / max(hints.keyed_histograms(names), 1)
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
        exact = domain_of(name, kind.domain_key)
        if isinstance(exact, CalendarCounts):
            domain: DomainCounts | CalendarCounts = release_calendar(exact, sigma, rng, estimated_rows)
        elif name == hints.target and exact.bins is None and public_keys is None:
            domain = release_values(exact, sigma, threshold, rng, second_chance, per_key_delta)
        else:
            numbers = max(kind.numbers, 1.0)  # the grid's resolution reads the column's numbers, not N̂
            domain = release_domain(exact, sigma, threshold, rng, public_keys, kind.integer, rows=numbers)
        decision = decide_column(name, kind, domain, sigma=sigma, rows=estimated_rows, hints=hints)
        if name in hints.hierarchies:  # one more release per level (dpgan.tables.inference.hierarchy)
            decision = code_hierarchy_column(name, kind, exact, domain, hints.hierarchies[name], sigma,
                                             per_key_delta, estimated_rows, decision.spec.nullable, rng)  # fmt: skip
        columns.append(decision.spec)
        if decision.note:
            notes.append(decision.note)
    return Schema(tuple(columns), target=hints.target, source=SOURCE_DP), notes


def code_hierarchy_column(
    name: str,
    kind: KindDecision,
    exact: DomainCounts,
    domain: DomainCounts,
    hierarchy: Hierarchy,
    sigma: float,
    per_key_delta: float,
    rows: float,
    nullable: bool,
    rng: np.random.Generator,
) -> Decision:
    """A code column with a public hierarchy: its levels released from the exact value counts, then
    its spec from the released values and cells (dpgan.tables.inference.hierarchy)."""
    threshold = set_union_threshold(sigma, per_key_delta) if hierarchy.thresholded else math.inf
    levels = release_levels(exact.values, hierarchy, sigma, threshold, rng)
    return hierarchical_column(
        name, domain, levels, hierarchy, rows=rows, nulls=kind.will_be_null, nullable=nullable, sigma=sigma
    )


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
        domain = column_domain(frame[name], kind.domain_key)
        spec = decide_column(name, kind, domain, sigma=0.0, rows=float(len(frame)), hints=hints, exact=True).spec
        distinct = len(domain.values) if isinstance(domain, DomainCounts) else 0
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
            spec = ColumnSpec(name, "categorical", categories=cats, nullable=spec.nullable,
                              hierarchy=hints.hierarchies.get(name))  # fmt: skip
        columns.append(spec)
    if not columns:
        raise InputError("no column is left to learn from")
    return Schema(tuple(columns), target=hints.target, source=SOURCE_NOT_PRIVATE), notes
