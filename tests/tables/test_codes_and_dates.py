"""A cell is a code or a date, never both (dpgan.tables.schema.cells): a code is an all-digit
NUMBER cell with a leading zero, every public date/time format has a separator and is TEXT."""

from __future__ import annotations

import pandas as pd

from dpgan.tables.inference.column_kinds import class_counts
from dpgan.tables.schema.cells import NUMBER, TEXT, classify

CELLS = ["02139", "2021-03-04", "20210304", "007", "03/04/2021", "12:30", "Boston", None]


def test_codes_and_dates_are_disjoint_cells():
    cells = classify(pd.Series(CELLS, dtype=object))
    assert cells.codes.tolist() == [True, False, False, True, False, False, False, False]
    assert (cells.temporal >= 0).tolist() == [False, True, False, False, True, True, False, False]
    assert not (cells.codes & (cells.temporal >= 0)).any()
    assert cells.kind[0] == NUMBER and cells.kind[1] == TEXT


def test_the_class_histogram_counts_each_cell_once():
    counts = class_counts(pd.Series(CELLS, dtype=object))
    assert (counts.code, sum(counts.temporal), counts.whole, counts.text, counts.null) == (2, 3, 1, 1, 1)
    # sensitivity 1: every row in exactly one cell
    assert counts.null + counts.whole + counts.fractional + counts.text + counts.code + sum(counts.temporal) == len(
        CELLS
    )
