"""The marginals model's exact count tables (dpgan.statistics.tables.exact_tables): summed over blocks
they equal the tables counted from the whole array, bit for bit; one row more changes each table by
one cell by 1 (the sensitivity the ledger charges); the set a stream holds is refused over its cap
from the levels alone, in one line."""

from __future__ import annotations

import numpy as np
import pytest

from dpgan.errors import InputError
from dpgan.statistics.tables.exact_tables import ExactTables, cells, structure_keys

LEVELS = (3, 2, 5, 4)


def codes(n: int = 1000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, level, n) for level in LEVELS], axis=1)


@pytest.mark.parametrize("target", [None, 1], ids=["mst", "class-tree"])
def test_blocks_sum_to_the_whole_arrays_tables(target):
    data = codes()
    keys = structure_keys(LEVELS, target)
    summing = ExactTables.summing(LEVELS, keys)
    for start in range(0, len(data), 333):  # uneven blocks, the last one short
        summing.add(data[start : start + 333])
    summing.add(data[:0])  # an empty batch adds nothing
    whole = ExactTables.of_codes(data, LEVELS)
    for key in keys:
        assert summing.counts(key).dtype == np.float64
        np.testing.assert_array_equal(summing.counts(key), whole.counts(key))
        assert summing.counts(key).sum() == len(data)


def test_the_structures_tables_are_the_ones_its_releases_read():
    assert structure_keys(LEVELS, None) == [(0,), (1,), (2,), (3,), (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert structure_keys(LEVELS, 1) == [(1,), (1, 0), (1, 2), (1, 3), (1, 0, 2), (1, 0, 3), (1, 2, 3)]
    assert cells(LEVELS, [(1, 0, 2)]) == 30


@pytest.mark.parametrize("target", [None, 1], ids=["mst", "class-tree"])
def test_one_row_more_changes_each_table_by_one_cell_by_one(target):
    data = codes(300, seed=4)
    odd = np.array([[2, 1, 4, 0]])
    before = ExactTables.of_codes(data, LEVELS)
    after = ExactTables.summing(LEVELS, structure_keys(LEVELS, target))
    after.add(data)
    after.add(odd)
    for key in structure_keys(LEVELS, target):
        change = after.counts(key) - before.counts(key)
        assert np.count_nonzero(change) == 1 and change.sum() == 1.0 and np.abs(change).max() == 1.0


def test_summed_passes_the_tables_through_one_reduce_and_keeps_int_counts():
    data = codes(200)
    summing = ExactTables.summing(LEVELS, structure_keys(LEVELS, None))
    summing.add(data)
    calls = []

    def doubled(sums: dict[str, np.ndarray]) -> dict[str, np.ndarray]:  # two ranks holding the same share
        calls.append(sorted(sums))
        return {name: 2 * value for name, value in sums.items()}

    reduced = summing.summed(doubled)
    assert len(calls) == 1 and len(calls[0]) == len(structure_keys(LEVELS, None))
    np.testing.assert_array_equal(reduced.counts((0, 2)), 2 * summing.counts((0, 2)))
    in_memory = ExactTables.of_codes(data, LEVELS)
    assert in_memory.summed(doubled) is in_memory and len(calls) == 1  # every rank holds the whole table


def test_a_set_over_the_cap_is_refused_in_one_line_before_any_row():
    levels = (2, 3000, 3000)
    with pytest.raises(InputError, match="cells") as caught:
        ExactTables.summing(levels, structure_keys(levels, 0), max_cells=10_000_000)
    assert "\n" not in str(caught.value) and "18,012,002" in str(caught.value)
    ExactTables.summing(levels, structure_keys(levels, None), max_cells=10_000_000)  # 9,006,005 cells: held
