"""A non-numeric column's spec from its released values (post-processing, free): the values, and
`(other)` for what was not released (a feature always, the target only when its rest clears the
noise); and the `Decision` every column's spec comes back in. dpgan.tables.inference.infer has the
argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpgan.tables.inference.column_kinds import NULL_MIN_SIGMAS
from dpgan.tables.inference.domain import OTHER, DomainCounts
from dpgan.tables.schema.columns import ColumnSpec

# a column gets a null slot when its noisy null count (the class and domain releases combined:
# dpgan.tables.inference.infer.null_count) clears both NULL_SLOT_SIGMAS of its noise stds and
# NULL_MIN_SHARE of N̂. Lower than the 3σ of other decisions because the two errors are not alike:
# a slot for a complete column costs an indicator the generator learns to leave at 0 (about 2 % of
# complete columns at 2σ), a missing slot drops every null row of the column from the fit
# (dpgan.tables.reading.conform); bench/notes/35 has the rates
NULL_SLOT_SIGMAS = 2.0
NULL_MIN_SHARE = 0.005


@dataclass(frozen=True)
class Decision:
    """What the counts say about one column."""

    spec: ColumnSpec
    note: str | None = None  # something the user should hear (computed from released numbers only)


def levels_as_categories(
    name: str, levels: list[int], wholes: dict[int, float], rows: float, nulls: float, nullable: bool, sigma: float
) -> Decision:
    """Codes far apart (1, 5, 10, 99): categories in their numeric order, their released counts the
    public frequencies."""
    domain = DomainCounts(values={str(level): wholes[level] for level in levels})
    order = [str(level) for level in levels]  # they hold nearly every row: (other) only if the rest clears its noise
    return categorical_column(name, domain, rows, nulls, nullable, sigma, order=order, target=True)


def categorical_column(
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
    values clears its noise. Otherwise a feature with other than two released values always gets
    `(other)` (its unreleased values, rare or not, keep their rows); the target, or a column with two
    released values (yes/no: a credit table's Records had an `(other)` class made of noise), only
    when N̂ less the released values and nulls clears its noise (which grows with the number of
    released values) or when only one value was released (a rare second class under the threshold:
    `(other)` then stands for it). So two released classes and nothing else get no third class made
    of noise, and a row with an unreleased value is dropped and counted (dpgan.tables.reading.conform)
    unless the column has a null slot."""
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
        strict = target or len(keys) == 2  # a yes/no column: a third class only when its rows clear the noise
        with_other = len(keys) < 2 or not strict or clears  # a label with one class is no label
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
