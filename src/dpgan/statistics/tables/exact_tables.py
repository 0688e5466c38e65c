"""The exact count tables the "marginals" model's releases read: 1-way, 2-way and (target, a, b).

Every release of the model (dpgan.statistics.tables.tree_marginals, .class_tree) is a function of
exact count tables of the discrete codes: MST's 1-way tables, every pair's 2-way table (the picks'
utilities) and the picked pairs' tables; the class tree's (y, x) tables and every (y, a, b) table.
`ExactTables` gives them from one of two sources:
- `of_codes`: the codes in memory, each table counted when it is asked for (as the model did
  before, so seeded in-memory fits are unchanged, and nothing is held beyond one table);
- `summing`: every table the selection may ask for, zero at first, with blocks of codes added in
  table order (`add`: a streamed fit's conform pass). A table is a sum over rows of one cell each,
  so the blocks' sums are the whole table's counts exactly (int64), whatever the blocks. Under
  torchrun each rank adds its share of the blocks and `summed(rank_sum)` adds the tables over the
  ranks in one collective before any noise (dpgan.statistics.blocks): every rank then holds the
  one-process counts and draws the same noise from the shared seed.
Which tables are held and how many cells they take come from the codec's levels and the target
(public, the schema's); `summing` refuses a set over `max_cells` before any row is added, so the
refusal says nothing about the rows.

Sensitivity: one row adds 1 to exactly one cell of each table (tests/statistics/test_exact_tables.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from dpgan.errors import InputError

Key = tuple[int, ...]  # the variables of one table, in its axis order: (v,), (a, b) or (y, a, b)
# cells held by a summing set (int64: 8 bytes each, so 400 MB); a public cap on the codec's levels
MAX_CELLS = 50_000_000


def structure_keys(levels: tuple[int, ...], target: int | None) -> list[Key]:
    """The tables a fit of the model may read: without a target (MST), every 1-way table and every
    pair (a < b); with one, (y, x) for every feature x and (y, a, b) for every pair of features
    a < b (and y's own 1-way table, read when there is no feature)."""
    d = len(levels)
    if target is None:
        return [(v,) for v in range(d)] + [(a, b) for a in range(d) for b in range(a + 1, d)]
    features = [v for v in range(d) if v != target]
    triples = [(target, a, b) for i, a in enumerate(features) for b in features[i + 1 :]]
    return [(target,)] + [(target, v) for v in features] + triples


def cells(levels: tuple[int, ...], keys: Iterable[Key]) -> int:
    """The number of cells of the tables `keys` (public: the levels)."""
    return sum(int(np.prod([levels[v] for v in key], dtype=np.int64)) for key in keys)


def check_cells(levels: tuple[int, ...], keys: Iterable[Key], max_cells: int = MAX_CELLS) -> None:
    """Refuse in one line (InputError) a set of tables over `max_cells` (public: the levels only)."""
    total = cells(levels, keys)
    if total > max_cells:
        raise InputError(
            f"the marginals model's count tables would hold {total:,} cells, over the {max_cells:,} a "
            "streamed fit holds: give the columns fewer levels (bins, categories) or fit in memory"
        )


def flat_index(codes: np.ndarray, levels: tuple[int, ...], key: Key) -> np.ndarray:
    """Each row's cell of table `key`, in row-major order of its axes."""
    index = codes[:, key[0]]
    for v in key[1:]:
        index = index * levels[v] + codes[:, v]
    return index


class ExactTables:
    """Exact count tables of the discrete codes (module docstring): `counts(key)` is the table of
    the variables `key`, float64 of shape (levels[k] for k in key)."""

    def __init__(self, levels: tuple[int, ...], codes: np.ndarray | None, sums: dict[Key, np.ndarray] | None) -> None:
        self.levels, self._codes, self._sums = tuple(levels), codes, sums

    @classmethod
    def of_codes(cls, codes: np.ndarray, levels: tuple[int, ...]) -> ExactTables:
        """Tables counted on request from the codes in memory (n × d)."""
        return cls(levels, codes, None)

    @classmethod
    def summing(cls, levels: tuple[int, ...], keys: Iterable[Key], max_cells: int = MAX_CELLS) -> ExactTables:
        """Zero tables `keys`, to which blocks of codes are added; refused (InputError) over `max_cells`."""
        keys = list(keys)
        check_cells(levels, keys, max_cells)
        sums = {key: np.zeros(cells(levels, [key]), dtype=np.int64) for key in keys}
        return cls(levels, None, sums)

    def add(self, codes: np.ndarray) -> None:
        """Add a block of rows' codes (n × d) to every table held."""
        if self._sums is None:
            raise RuntimeError("internal error: tables counted from codes in memory take no blocks")
        for key, flat in self._sums.items():
            flat += np.bincount(flat_index(codes, self.levels, key), minlength=flat.size)

    def counts(self, key: Key) -> np.ndarray:
        """The exact count table of the variables `key`."""
        shape = tuple(self.levels[v] for v in key)
        if self._codes is not None:
            flat = np.bincount(flat_index(self._codes, self.levels, key), minlength=int(np.prod(shape)))
        elif self._sums is not None and key in self._sums:
            flat = self._sums[key]
        else:
            raise RuntimeError(f"internal error: no count table of the variables {key}")
        return flat.reshape(shape).astype(np.float64)

    def summed(self, reduce: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]) -> ExactTables:
        """The tables summed by `reduce` (dpgan.statistics.blocks.rank_sum: over torchrun's ranks, one
        collective); tables counted from codes in memory are every rank's whole table already."""
        if self._sums is None:
            return self
        names = {",".join(map(str, key)): key for key in self._sums}
        reduced = reduce({name: self._sums[key] for name, key in names.items()})
        return ExactTables(self.levels, None, {key: reduced[name] for name, key in names.items()})


__all__ = ["MAX_CELLS", "ExactTables", "Key", "cells", "check_cells", "flat_index", "structure_keys"]
