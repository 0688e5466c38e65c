"""The marginals model's cells for a hand schema's numeric columns: cut at DP quantiles.

Why. The statistics model reads a numeric column as its bins (dpgan.tables.codec.discrete) and
draws a value uniformly inside the bin it samples. A hand schema gives public bounds and a bin
count, and its bins are equal on the column's scale: hmda's debt ratios, bounded [0, 5], sit in two
of eight bins, so the model's tables see two values of the column and its rows come back flat
across them (2-way error 0.36 against 0.14 on the DP schema's quantile bins, bench/notes/38). The
DP schema (dpgan.tables.inference.numeric) already cuts its bins at the DP quantiles of its released
grid; a hand schema has no such release, so this module makes one, for the marginals model only
(the GAN learns a position inside each bin and reads no histogram).

The release. Each cut column's values (the conformed cells: inside the bounds, the point masses'
and the nulls' rows left out, as the codec leaves them out of the bins) are counted on GRID_CELLS
public cells, equal on the column's public scale between its public bounds. One row adds 1 to at
most one cell of each column's histogram: k histograms of sensitivity 1, charged as k Gaussian
events at σ (noise std σ per cell; the same as one Gaussian at σ/√k on their L2 sensitivity √k)
before their noise is drawn, at CELLS_SHARE of the ε left after the data releases (the model's own releases then
share the rest). Which columns are cut, their grids and bin counts come from the public schema
alone, so no row decides whether or where the release happens (dpgan.privacy.unit_rule).

Post-processing (free): the noisy cells are read at every dyadic scale (1, 2, 4, … cells summed);
a group counts when its sum clears CELL_SIGMAS noise stds of a sum, and each cell takes its mass
from the finest counting group that holds it (that group's sum less what its finer counting
groups took, when that rest clears the same bar: a wide group's noise, σ√s, would otherwise
spread a few hundred rows over an empty tail), shared among its other cells down the dyadic tree
in proportion to each half's noisy sum; no counting group: no mass. The column's bins
are then cut at the quantiles of that mass inside its support (dpgan.tables.inference.numeric.
quantile_bin_edges, as the DP schema cuts its own), with the support's ends as edges too where
they lie inside the bounds and a short ladder of edges past them (`_cut_at_quantiles` says why),
and written into the schema as public `bin_edges`; a column whose mass is empty keeps the
schema's equal bins. A column the user gave `bin_edges` keeps them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.releases import charge_gaussian
from dpgan.tables.codec.column_transforms import NumericTransform
from dpgan.tables.inference.numeric import quantile_bin_edges
from dpgan.tables.schema.columns import MAX_BINS, ColumnSpec
from dpgan.tables.schema.encoding_hints import DEFAULT_BINS, bin_per_level
from dpgan.tables.schema.table import Schema

CELLS_EVENT = "Gaussian noisy histograms of the numeric columns on a public grid (marginals model's cells)"
# the share of the ε left after the data releases that the cells take (the model's tables the
# rest): set once, not tuned; the validation splits measured the model with it (bench/notes/38,
# "Quantile cells for a hand schema")
CELLS_SHARE = 0.1
GRID_CELLS = 64  # public cells per column, equal on its scale (a power of two: the dyadic scales)
# the support's ends: the cells where the mass reaches these shares (a sliver of mass spread into a far
# cell by a wide group's rest does not stretch it)
SUPPORT_QUANTILES = (0.005, 0.995)
LADDER = 2  # edges past each end of the support, inside the bounds (`_cut_at_quantiles`)
CELL_SIGMAS = 4.0  # a group of s cells counts when its noisy sum clears this many of its noise stds, σ√s


def cut_columns(schema: Schema) -> tuple[str, ...]:
    """The columns whose bins are cut at DP quantiles (public: the schema alone): numeric, coded in
    bins, without the user's `bin_edges`, and neither an integer column short enough for a bin per
    level nor a column whose bins are a unit wide between whole bounds (a bin per level already)."""
    return tuple(spec.name for spec in schema.columns if _cut(spec))


def _cut(spec: ColumnSpec) -> bool:
    if spec.kind not in ("continuous", "integer") or spec.encoding != "bins" or spec.bin_edges:
        return False
    low, high = float(spec.min), float(spec.max)  # type: ignore[arg-type]
    if bin_per_level(spec.kind, low, high):
        return False
    # a bin per unit between whole bounds (hmda's credit scores, 1..6 in 5 bins): the user's levels
    return not (
        spec.scale == "linear" and spec.bins > 1 and low.is_integer() and high.is_integer() and spec.bins == high - low
    )


def grid_edges(spec: ColumnSpec) -> np.ndarray:
    """The GRID_CELLS + 1 public cell edges in the column's units, equal on its scale."""
    return _unit_transform(spec)._unscaled(np.linspace(0.0, 1.0, GRID_CELLS + 1))


def _unit_transform(spec: ColumnSpec) -> NumericTransform:
    return NumericTransform(replace(spec, bins=1, bin_edges=(), point_masses=(), nullable=False))


@dataclass
class CellCounts:
    """The exact cell counts of the cut columns, added frame by frame (conformed rows: a streamed
    fit's batches add up to the in-memory table's counts)."""

    schema: Schema
    names: tuple[str, ...]
    counts: dict[str, np.ndarray]

    @classmethod
    def empty(cls, schema: Schema) -> CellCounts:
        names = cut_columns(schema)
        return cls(schema, names, {name: np.zeros(GRID_CELLS, dtype=np.int64) for name in names})

    def add(self, frame: pd.DataFrame) -> None:
        """Count each cut column's in-range values of `frame` (conformed) on its grid."""
        for name in self.names:
            spec = self.schema[name]
            values = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            kept = values[np.isfinite(values)]
            for mass in spec.point_masses:  # a point mass is its own mode, never a bin's value
                kept = kept[kept != float(mass)]
            unit = _unit_transform(spec)._scaled(kept)
            cells = np.minimum(np.floor(unit * GRID_CELLS), GRID_CELLS - 1).astype(np.int64)
            self.counts[name] += np.bincount(cells, minlength=GRID_CELLS)


def counted(schema: Schema, frames: Iterable[pd.DataFrame]) -> CellCounts:
    """The cut columns' exact counts over `frames` (the conformed table, or its batches)."""
    counts = CellCounts.empty(schema)
    for frame in frames:
        counts.add(frame)
    return counts


def dyadic_mass(noisy: np.ndarray, sigma: float) -> np.ndarray:
    """Each cell's mass from its finest counting group (module docstring), ≥ 0; zero where no
    group that holds the cell counts. `noisy` has a power-of-two length."""
    cells = len(noisy)
    mass = np.zeros(cells)
    taken = np.zeros(cells, dtype=bool)
    size = 1
    while size <= cells:
        groups = noisy.reshape(-1, size).sum(axis=1)
        bar = CELL_SIGMAS * sigma * np.sqrt(size)
        for group in np.nonzero(groups > bar)[0]:
            span = slice(group * size, (group + 1) * size)
            free = ~taken[span]
            left = float(groups[group]) - float(mass[span].sum())
            if free.any() and left > bar:  # what the finer groups left clears the bar too
                mass[span] += _spread(left, np.where(free, noisy[span], 0.0), free)
                taken[span] = True
        size *= 2
    return mass


def _spread(amount: float, noisy: np.ndarray, free: np.ndarray) -> np.ndarray:
    """`amount` over the `free` cells, halved down the dyadic tree in proportion to each half's
    noisy sum (clipped at 0; evenly by free cells where both are 0): a wide group's rest lands
    where its cells' counts lean (the rows at 80-95 of an age group spanning 80-110) rather than
    evenly over its empty end. Post-processing of the released cells."""
    out = np.zeros(len(free))
    if amount <= 0 or not free.any():
        return out
    if len(free) == 1:
        out[0] = amount
        return out
    half = len(free) // 2
    weights = np.array([max(float(noisy[:half].sum()), 0.0), max(float(noisy[half:].sum()), 0.0)])
    weights = weights * np.array([free[:half].any(), free[half:].any()])
    if weights.sum() <= 0:
        weights = np.array([free[:half].sum(), free[half:].sum()], dtype=float)
    share = weights / weights.sum()
    out[:half] = _spread(amount * share[0], noisy[:half], free[:half])
    out[half:] = _spread(amount * share[1], noisy[half:], free[half:])
    return out


def released_schema(schema: Schema, noisy: dict[str, np.ndarray], sigma: float) -> Schema:
    """The schema with each cut column's bins at the quantiles of its released mass (post-processing)."""
    columns = []
    for spec in schema.columns:
        if spec.name in noisy:
            spec = _cut_at_quantiles(spec, dyadic_mass(noisy[spec.name], sigma))
        columns.append(spec)
    return replace(schema, columns=tuple(columns))


def _cut_at_quantiles(spec: ColumnSpec, mass: np.ndarray) -> ColumnSpec:
    """Bins between the quantiles of `mass` inside its support (SUPPORT_QUANTILES), the support's
    ends as edges where they lie inside the bounds, and beyond each such end a short ladder of LADDER
    edges (at 1, 3, … times the width of the bin next to it, on the column's scale). Why: the model draws a value
    uniformly inside its bin, and a tail too thin to clear the bar (flchain's kappa: 5 % of the rows
    past the support's end at 2.8, bounds 0..200) would otherwise be drawn across the whole end bin
    (its synthetic 99th percentile at 94 where the real one is 4.7); on the ladder the model's own
    tables say how far out the tail reaches, to within a bin of growing width."""
    if not mass.any():
        return spec
    # the user's bin count (DEFAULT_BINS for one bin), leaving room for the ends and their ladders
    bins = min(spec.bins if spec.bins > 1 else DEFAULT_BINS, MAX_BINS - 2 * (1 + LADDER))
    low, high = float(spec.min), float(spec.max)  # type: ignore[arg-type]
    integer = spec.kind == "integer"
    edges = grid_edges(spec)
    cumulative = np.cumsum(mass) / float(mass.sum())
    first = int(np.searchsorted(cumulative, SUPPORT_QUANTILES[0], side="right"))
    last = min(int(np.searchsorted(cumulative, SUPPORT_QUANTILES[1], side="left")), len(mass) - 1)
    ends = [_edge(float(edges[first]), integer), _edge(float(edges[last + 1]), integer)]
    start, stop = max(ends[0], low), min(ends[1], high)
    inside = [end for end in ends if low < end < high]
    cuts = quantile_bin_edges(mass, edges, start, stop, max(bins - len(inside), 1), integer) if stop > start else ()
    every = sorted({*inside, *cuts})
    if not every:
        return spec
    every = sorted({*every, *_ladder(spec, every, integer, (ends[0] in inside, ends[1] in inside))})
    return replace(spec, bins=len(every) + 1, bin_edges=tuple(every))


def _ladder(spec: ColumnSpec, inner: list[float], integer: bool, ends: tuple[bool, bool]) -> list[float]:
    """LADDER edges past each outer edge of `inner` that is a support end (`ends`: the first, the
    last), spaced 1, 2, 4, … times the width of the bin next to it on the column's scale, those
    strictly inside the bounds."""
    transform = _unit_transform(spec)
    low, high = float(spec.min), float(spec.max)  # type: ignore[arg-type]
    scaled = transform._scaled(np.array([low, *inner, high]))
    found: list[float] = []
    sides = ((ends[1], scaled[-2], scaled[-2] - scaled[-3], 1.0), (ends[0], scaled[1], scaled[2] - scaled[1], -1.0))
    for is_end, edge, width, sign in sides:
        if not is_end or width <= 0:
            continue
        steps = edge + sign * width * (2.0 ** np.arange(1, LADDER + 1) - 1.0)
        for value in transform._unscaled(steps[(steps > 0.0) & (steps < 1.0)]):
            value = _edge(float(value), integer)
            if low < value < high:
                found.append(value)
    return found


def _edge(value: float, integer: bool) -> float:
    """A support end as a bin edge; an integer column's halfway between whole numbers (the values
    from the end on stay on its side), as quantile_bin_edges places its cuts."""
    return math.ceil(value) - 0.5 if integer else value


def cells_share(fraction: float) -> float:
    """Where the ledger stands after the cells, as a share of ε: `fraction` (the data releases)
    plus CELLS_SHARE of the rest."""
    return fraction + CELLS_SHARE * (1.0 - fraction)


def release_cells(
    counts: CellCounts,
    *,
    budget: FitBudget,
    fraction: float,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> tuple[Schema, float]:
    """The schema with its cut columns at DP quantiles and the share of ε the ledger then reaches.
    No cut column: the schema and `fraction` unchanged, nothing charged, nothing drawn."""
    if not counts.names:
        return counts.schema, fraction
    share = cells_share(fraction)
    k = len(counts.names)
    sigma = budget.at(share).sigma(1.0, k, ledger.entries)
    charge_gaussian(
        ledger, CELLS_EVENT, sigma, count=k, note=f"{k} histograms of {GRID_CELLS} cells; sensitivity 1 each"
    )
    noisy = {name: noisy_counts(counts.counts[name], sigma, rng) for name in counts.names}
    return released_schema(counts.schema, noisy, sigma), share


__all__ = ["CELLS_EVENT", "CELLS_SHARE", "CELL_SIGMAS", "GRID_CELLS", "CellCounts", "cells_share", "counted",
           "cut_columns", "dyadic_mass", "grid_edges", "release_cells", "released_schema"]  # fmt: skip
