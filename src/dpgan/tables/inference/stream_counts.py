"""The exact counts behind a DP schema, gathered over record batches and merged.

dpgan.tables.inference.infer releases, per column, a class histogram and a domain histogram (grid bins
for a numeric column, one count per value otherwise). Every one of those counts is a sum over rows
of a rule applied to one cell (dpgan.tables.schema.cells), so the sum over the batches equals the
sum over the table: counting batch by batch and adding the counters gives the exact counts the
in-memory path computes, and `schema_from_counts` then draws the same noise from the same `rng`.
Counts are integers held as float64; their sums are exact in any order (below 2^53 rows).

Which domain histogram a column needs is decided by its class release (noisy), which comes after
the pass. So the pass keeps all of them: the grid bins of its numbers (145 cells), the count of each
whole number (a numeric column's second histogram) and its value counts. The counters grow with
the distinct values; past `distinct_cap` a column stops counting (that counter is dropped), and if
its released kind needs it the column alone is re-read in a second pass that counts every value or
whole number (`recount_values`, `recount_wholes`). The cap is public and decides only how much work
is done: the counts handed to the release are the exact ones either way. A column with date/time
cells also keeps their counts on the public calendar grids (month starts, read month first and day
first; quarter hours) and of its zone writings (dpgan.tables.inference.zones), whichever its released
kind and format turn out to be.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpgan.privacy.mechanisms import bin_index, public_numeric_grid
from dpgan.tables.inference.column_kinds import (
    CATEGORICAL,
    CLASS_CELLS,
    NUMERIC,
    ClassCounts,
    PublicHints,
    class_counts_of,
)
from dpgan.tables.inference.datetimes import CalendarCounts, calendar_edges, counts_of_values
from dpgan.tables.inference.domain import DomainCounts, fine_counts, whole_counts
from dpgan.tables.inference.temporal_kinds import is_temporal_key, key_format, parse_key, temporal_cell_counts
from dpgan.tables.inference.zones import zone_counts, zoned_text
from dpgan.tables.schema.cells import NULL, NUMBER, Cells, cell_keys, classify
from dpgan.tables.schema.datetimes import CELLS, DATE, TIME, column_values
from dpgan.tables.schema.zones import NO_ZONE, ZONE_CELLS

# the calendar grids a temporal column is counted on: (grid kind, day first)
_CALENDARS = ((DATE, False), (DATE, True), (TIME, False))

DEFAULT_DISTINCT_CAP = 100_000
# with a public list of categories only the listed values are counted, the rest summed under a key
# that cannot be a listed value (release_domain sums every key it was not given)
_REST = "\x00rest"


@dataclass
class ColumnCounter:
    """One column's exact counts so far. `values` is None once the column has passed the cap, or
    for a column declared numeric (its values are never released)."""

    name: str
    listed: tuple[str, ...] | None = None  # the column's public categories, if any
    classes: np.ndarray = field(default_factory=lambda: np.zeros(CLASS_CELLS))
    bins: np.ndarray = field(default_factory=lambda: np.zeros(len(public_numeric_grid()) - 1))
    values: Counter[str] | None = field(default_factory=Counter)
    wholes: Counter[int] | None = field(default_factory=Counter)
    temporal: np.ndarray = field(default_factory=lambda: np.zeros(CELLS))
    calendars: dict[tuple[str, bool], np.ndarray] = field(default_factory=dict)
    zones: np.ndarray = field(default_factory=lambda: np.zeros(ZONE_CELLS))  # each zone writing's count
    fine: Counter[int] = field(default_factory=Counter)  # numbers per public fine cell (at most 1,024 a grid bin)
    not_numbers: float = 0.0  # the cells that are no number (a numeric column's null cell)
    nulls: float = 0.0  # the null cells (any other column's)

    def add(self, series: pd.Series, cap: int) -> None:
        cells = classify(series)  # once per cell: the class, grid and value counts all read it
        self.classes += class_counts_of(cells).as_array()
        temporal = temporal_cell_counts(cells)
        self.temporal += temporal
        if temporal.any():  # a batch without date/time cells adds zeros to every calendar
            for kind, day_first in _CALENDARS:
                values = column_values(series, kind, day_first)
                bins = counts_of_values(values[np.isfinite(values)], kind).bins
                self.calendars[(kind, day_first)] = self.calendars.get((kind, day_first), 0.0) + bins
            self.zones += zone_counts(series)
        else:
            self.zones[NO_ZONE] += len(series)
        numbers = cells.number[cells.kind == NUMBER]
        edges = public_numeric_grid()
        self.bins += np.bincount(bin_index(numbers, edges), minlength=len(edges) - 1)
        self.fine.update(fine_counts(numbers))
        self.not_numbers += float(len(series) - len(numbers))
        self.nulls += float(np.sum(cells.kind == NULL))
        if self.wholes is not None:
            self.wholes.update(whole_counts(cells.number[cells.whole]))
            if len(self.wholes) > cap:
                self.wholes = None  # past the cap: recounted only if the column turns out numeric
        if self.values is None:
            return
        add_values(self.values, series, self.listed, cells)
        if self.listed is None and len(self.values) > cap:
            self.values = None  # past the cap: recounted only if the column turns out categorical

    def class_counts(self) -> ClassCounts:
        temporal = tuple(map(float, self.temporal)) if self.temporal.any() else ()
        return ClassCounts(*map(float, self.classes), temporal)

    def domain(self, kind: str, recount: Callable[[str, bool], Counter]) -> DomainCounts | CalendarCounts:
        """The counts the kind's domain release needs; `recount(name, wholes)` re-reads a column
        past the cap (its whole numbers, or its values)."""
        if is_temporal_key(kind):
            temporal, day_first = parse_key(kind)
            grid = TIME if temporal == TIME else DATE  # a timestamp's months are its dates' months
            empty = np.zeros(len(calendar_edges(grid)) - 1)
            bins = np.array(self.calendars.get((grid, day_first and grid == DATE), empty), dtype=np.float64)
            rows = float(self.classes.sum() + self.temporal.sum())  # each row in one class cell
            zones = self.zones.copy() if zoned_text(key_format(kind)) else None
            return CalendarCounts(temporal, bins, nulls=rows - float(bins.sum()), zones=zones)  # nulls: no value
        if kind == NUMERIC:
            wholes = self.wholes if self.wholes is not None else recount(self.name, True)
            return DomainCounts(
                bins=self.bins.copy(), wholes={int(k): float(c) for k, c in wholes.items()}, nulls=self.not_numbers,
                fine={int(k): float(c) for k, c in self.fine.items()},
            )  # fmt: skip
        values = self.values if self.values is not None else recount(self.name, False)
        return DomainCounts(values={key: float(count) for key, count in values.items()}, nulls=self.nulls)


def add_values(
    counter: Counter[str], series: pd.Series, listed: tuple[str, ...] | None, cells: Cells | None = None
) -> None:
    """Count the non-null cells' canonical texts (the keys dpgan.tables.inference.infer releases);
    `cells`: the column's classes, if the caller has them."""
    keys = cell_keys(series, cells)
    present = keys[keys != None].tolist()  # noqa: E711 (elementwise)
    if listed is None:
        counter.update(present)
        return
    known = set(listed)
    counter.update(key if key in known else _REST for key in present)


def new_counters(columns: Iterable[str], hints: PublicHints) -> dict[str, ColumnCounter]:
    counters = {}
    for name in columns:
        # a code hierarchy's levels need every value's count, listed or not
        listed = None if name in hints.hierarchies else hints.categories.get(name)
        counter = ColumnCounter(name, listed=listed)
        if hints.kind_of(name) == NUMERIC:
            counter.values = None  # declared numeric: its domain is the grid, its values never needed
        counters[name] = counter
    return counters


def count_batches(
    batches: Iterable[pd.DataFrame], columns: Iterable[str], hints: PublicHints, cap: int = DEFAULT_DISTINCT_CAP
) -> dict[str, ColumnCounter]:
    """One pass: every column's class counts, grid bins and (up to `cap` distinct) value counts."""
    counters = new_counters(columns, hints)
    for batch in batches:
        for name, counter in counters.items():
            counter.add(batch[name], cap)
    return counters


def recount_wholes(batches: Iterable[pd.DataFrame], name: str) -> Counter[int]:
    """The second pass over one column: the count of each whole number (it was released numeric)."""
    counter: Counter[int] = Counter()
    for batch in batches:
        cells = classify(batch[name])
        counter.update(whole_counts(cells.number[cells.whole]))
    return counter


def recount_values(batches: Iterable[pd.DataFrame], name: str) -> Counter[str]:
    """The second pass over one column: all its value counts (it was released categorical)."""
    counter: Counter[str] = Counter()
    for batch in batches:
        add_values(counter, batch[name], None)
    return counter


__all__ = ["CATEGORICAL", "ColumnCounter", "count_batches", "recount_values", "recount_wholes"]
