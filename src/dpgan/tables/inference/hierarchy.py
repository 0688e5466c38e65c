"""A code column's hierarchy releases (one DP histogram per level) and the spec they give.

The argument. The user's hierarchy is public (dpgan.tables.schema.hierarchy). For each level, every
row's value has at most one cell (its prefix, or its parent in the level's mapping), so the level's
histogram has sensitivity 1: one Gaussian release at the column's σ, charged to the ledger with the
schema's other releases (dpgan.tables.fit.preparation.charge_schema, `HIERARCHY_EVENT`). A prefix
level's cells are not known in advance, so they are released like values, above the Gaussian
partition-selection threshold (their failure probability is a share of the schema's threshold δ:
`PublicHints.keyed_histograms` counts them); a mapping level's cells are public, so each gets noise
and no threshold, and is kept when its noisy count clears NULL_MIN_SIGMAS noise stds. Every level
counts all the rows (not only those whose value was not released): whether a row's value is
released depends on the other rows, and counting only those would let one row move many.

Everything after the noise is post-processing of the released counts: the categories are the
released values, then the released cells level by level (`021*`, `0*`), then `(other)`. A cell's
public frequency is the rows that will fall back to it: its noisy count less the noisy counts of
the released values and cells below it that are nearest to it (clipped at 0).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dpgan.privacy.mechanisms import noisy_counts
from dpgan.tables.inference.categorical import Decision, categorical_column
from dpgan.tables.inference.column_kinds import NULL_MIN_SIGMAS
from dpgan.tables.inference.domain import OTHER, DomainCounts, release_values
from dpgan.tables.schema.hierarchy import Hierarchy


def level_counts(values: dict[str, float], hierarchy: Hierarchy, level: int) -> dict[str, float]:
    """The exact count of each of the level's cells (raw keys), from the exact value counts: each
    value's rows in the one cell its chain reaches at that level (none when a mapping lacks it)."""
    counts: dict[str, float] = {}
    for value, count in values.items():
        cell = hierarchy.chain(value)[level]
        if cell is not None and value != OTHER:
            counts[cell] = counts.get(cell, 0.0) + count
    return counts


def release_levels(
    values: dict[str, float], hierarchy: Hierarchy, sigma: float, threshold: float, rng: np.random.Generator
) -> list[dict[str, float]]:
    """Each level's released cells (raw keys) and their noisy counts, level by level from `rng`."""
    released = []
    for level in range(hierarchy.levels):
        exact = level_counts(values, hierarchy, level)
        public = hierarchy.public_cells(level)
        if public is None:
            released.append(release_values(DomainCounts(values=exact), sigma, threshold, rng).values)
            continue
        noisy = noisy_counts(np.array([exact.get(cell, 0.0) for cell in public]), sigma, rng)
        released.append({cell: float(c) for cell, c in zip(public, noisy) if c > NULL_MIN_SIGMAS * sigma})
    return released


def fallback_counts(
    leaves: dict[str, float], levels: list[dict[str, float]], hierarchy: Hierarchy
) -> list[dict[str, float]]:
    """Per level, each released cell's rows that fall back to it: its noisy count less those of the
    released values and cells below whose nearest released ancestor it is (post-processing)."""
    out = [dict(cells) for cells in levels]
    below: list[tuple[int, str, float]] = [(-1, v, c) for v, c in leaves.items()]  # (level, raw key, count)
    below += [(level, k, c) for level, cells in enumerate(levels) for k, c in cells.items()]
    for level, key, count in below:
        for upper, cell in enumerate(hierarchy.chain(key, level + 1), start=level + 1):
            if cell is not None and cell in levels[upper]:
                out[upper][cell] -= max(count, 0.0)
                break
    return [{k: max(c, 0.0) for k, c in cells.items()} for cells in out]


def hierarchical_column(
    name: str,
    domain: DomainCounts,
    levels: list[dict[str, float]],
    hierarchy: Hierarchy,
    *,
    rows: float,
    nulls: float,
    nullable: bool,
    sigma: float,
) -> Decision:
    """The column's spec: its released values, then each level's released cells (named `021*` for a
    prefix), then `(other)` for the rest; the hierarchy kept on the spec, so that conform maps a
    value that is not a category to its nearest ancestor that is."""
    public = domain.other is not None
    leaves = list(domain.values) if public else sorted(domain.values, key=str)
    fallbacks = fallback_counts(domain.values, levels, hierarchy)
    values = dict(domain.values)
    order = list(leaves)
    for cells in fallbacks:
        for key in sorted(cells):
            label = hierarchy.name(key)
            if label not in values and label != OTHER:  # a parent named like a value stays the value
                values[label] = cells[key]
                order.append(label)
    other = None if domain.other is None else max(domain.other - sum(values[k] for k in order[len(leaves) :]), 0.0)
    counts = DomainCounts(values={k: values[k] for k in order}, other=other)
    decision = categorical_column(name, counts, rows, nulls, nullable, sigma, order=order)
    return Decision(replace(decision.spec, hierarchy=hierarchy), decision.note)
