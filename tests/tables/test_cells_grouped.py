"""The per-value form of the cell rules (dpgan.tables.schema.cells.per_value / distinct) equals the
cell-by-cell rule on awkward cells: grouping by value is work, never a change of what a cell
becomes. The reference runs with `distinct` switched off (every cell through the loop) and,
for classify, on each cell alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dpgan.tables.schema.cells as cells_module
from dpgan.tables.reading.conform import conform
from dpgan.tables.schema.cells import Cells, cell_keys, classify, distinct
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.table import Schema

AWKWARD = [
    "",
    " ",
    "nan",
    "NaN",
    "-nan",
    "N/A",
    "null",
    "None",
    "inf",
    "-inf",
    "Infinity",
    "-0",
    "0",
    "1e3",
    "  7 ",
    "7",
    "7.0",
    "0x1F",
    "1_000",
    "\u0661\u0662",  # Arabic-Indic digits
    "\uff17",  # fullwidth 7
    "\u00bd",  # vulgar fraction one half
    "True",
    "true",
    "yes",
    "no",
    "1",
    "A",
    " A",
    "A ",
    "\u00a0B\u2003",  # non-breaking and em spaces around a letter
    "\x1fC",  # a control character Python's strip() removes
    None,
    np.nan,
    "A",
    "nan",
    "7",
]
MIXED = [1, 1.0, True, np.True_, "1", "True", False, 0, -0.0, 0.0, 2.5, float("inf"), None, np.nan, b"x", "x", " x"]


def _equal_cells(a: Cells, b: Cells, zero_sign: bool = True) -> None:
    assert np.array_equal(a.kind, b.kind)
    assert a.kind.dtype == b.kind.dtype
    assert np.array_equal(a.number, b.number, equal_nan=True)
    if zero_sign:
        assert np.array_equal(np.signbit(a.number), np.signbit(b.number))
    assert list(a.text) == list(b.text)
    assert [type(t) for t in a.text] == [type(t) for t in b.text]


def _one_by_one(series: pd.Series) -> Cells:
    """Each cell classified alone, as a one-cell object column."""
    parts = [cells_module._classify_cells(pd.Series([v], dtype=object)) for v in series.to_numpy(dtype=object)]
    return Cells(
        np.concatenate([p.kind for p in parts]),
        np.concatenate([p.number for p in parts]),
        np.concatenate([p.text for p in parts]),
    )


def _parquet_frame(tmp_path) -> pd.DataFrame:
    table = pa.table(
        {
            "s": pa.array([v if isinstance(v, str) else None for v in AWKWARD], type=pa.string()),
            "ls": pa.array([v if isinstance(v, str) else None for v in AWKWARD], type=pa.large_string()),
            "d": pa.array([v if isinstance(v, str) else None for v in AWKWARD]).dictionary_encode(),
            "b": pa.array([[True, False, None][i % 3] for i in range(len(AWKWARD))], type=pa.bool_()),
            "i": pa.array([[3, None, -7, 2**62 + 1][i % 4] for i in range(len(AWKWARD))], type=pa.int64()),
            "f": pa.array(
                [[0.5, None, float("nan"), float("inf"), -0.0, 3.0][i % 6] for i in range(len(AWKWARD))],
                type=pa.float64(),
            ),
            "y": pa.array([[b"1", b" x", None][i % 3] for i in range(len(AWKWARD))], type=pa.binary()),
        }
    )
    pq.write_table(table, tmp_path / "t.parquet")
    return pq.ParquetFile(tmp_path / "t.parquet").read().to_pandas()


def _columns(tmp_path) -> dict[str, pd.Series]:
    frame = _parquet_frame(tmp_path)
    columns = {f"parquet {name}": frame[name] for name in frame.columns}
    columns["object strings"] = pd.Series(AWKWARD, dtype=object)
    columns["str dtype"] = pd.Series(AWKWARD, dtype="str")
    columns["mixed objects"] = pd.Series(MIXED, dtype=object)
    columns["nullable Int64"] = pd.Series([1, None, 3, 1], dtype="Int64")
    return columns


@pytest.fixture
def loop_only(monkeypatch):
    """Run a callable with grouping switched off (every cell through the rule's loop)."""

    def run(fn, *args):
        with monkeypatch.context() as patch:
            patch.setattr(cells_module, "distinct", lambda series: None)
            return fn(*args)

    return run


def test_strings_and_parquet_columns_are_grouped_and_mixed_objects_are_not(tmp_path):
    columns = _columns(tmp_path)
    for name in ("object strings", "str dtype", "parquet s", "parquet ls", "parquet i", "parquet f"):
        assert distinct(columns[name]) is not None, name
    assert distinct(columns["mixed objects"]) is None  # 1, 1.0 and True would be merged
    assert distinct(columns["parquet d"]) is None  # categorical dtype: the loop


def test_classify_grouped_equals_the_cell_by_cell_rule(tmp_path, loop_only):
    for series in _columns(tmp_path).values():
        grouped = classify(series)
        _equal_cells(grouped, loop_only(classify, series))
        # pandas' parser gives "-0" the sign of zero by the other cells of the column (an int
        # column parses it as 0, a float one as -0.0): equal numbers, not equal bits
        _equal_cells(grouped, _one_by_one(series), zero_sign=False)


def test_classify_of_awkward_strings_equals_each_cell_alone():
    series = pd.Series(AWKWARD, dtype=object)
    _equal_cells(classify(series), _one_by_one(series), zero_sign=False)
    # a few cells pinned by hand, so both sides cannot drift together
    kinds = dict(zip(AWKWARD, classify(series).kind.tolist()))
    assert kinds[""] == kinds[" "] == kinds["nan"] == kinds["NaN"] == kinds["N/A"] == cells_module.NULL
    assert kinds["inf"] == cells_module.INFINITE
    assert kinds["  7 "] == kinds["-0"] == kinds["1e3"] == cells_module.NUMBER
    assert kinds["0x1F"] == kinds["A"] == kinds["True"] == cells_module.TEXT
    text = dict(zip(AWKWARD, classify(series).text.tolist()))
    assert text[" A"] == text["A "] == "A"


def test_cell_keys_grouped_equals_the_loop(tmp_path, loop_only):
    for name, series in _columns(tmp_path).items():
        grouped = cell_keys(series)
        assert list(grouped) == list(loop_only(cell_keys, series)), name
        assert list(grouped) == list(cell_keys(series, classify(series))), name
    keys = cell_keys(pd.Series([3, None, 3], dtype="Int64"))
    assert list(keys) == ["3", None, "3"]


@pytest.mark.parametrize("nullable", [False, True])
@pytest.mark.parametrize("other", [None, "(other)"])
def test_conform_grouped_equals_the_loop(tmp_path, loop_only, nullable, other):
    columns = _columns(tmp_path)
    frame = pd.DataFrame(
        {
            "cat": columns["object strings"],
            "cat_str": columns["str dtype"],
            "cat_mixed": pd.Series((MIXED * 3)[: len(AWKWARD)], dtype=object),
            "flag": columns["object strings"],
            "flag_pq": columns["parquet b"],
            "num": columns["str dtype"],
            "whole": columns["parquet i"],
        }
    )
    schema = Schema(
        (
            ColumnSpec(
                "cat",
                "categorical",
                categories=("A", "7", 1, "True", "(other)"),
                nullable=nullable,
                other_category=other,
            ),
            ColumnSpec("cat_str", "categorical", categories=("A", 7.0, "nan"), nullable=nullable),
            ColumnSpec(
                "cat_mixed",
                "categorical",
                categories=(1, "x", "True", "(other)"),
                nullable=nullable,
                other_category=other,
            ),
            ColumnSpec("flag", "boolean", nullable=nullable),
            ColumnSpec("flag_pq", "boolean", nullable=nullable),
            ColumnSpec("num", "continuous", min=-5.0, max=500.0, nullable=nullable),
            ColumnSpec("whole", "integer", min=-10, max=10, nullable=True),
        )
    )
    grouped = conform(frame, schema)
    looped = loop_only(conform, frame, schema)
    assert np.array_equal(grouped.repairs, looped.repairs)
    assert grouped.frame.shape == looped.frame.shape
    for column in grouped.frame.columns:
        a, b = grouped.frame[column].tolist(), looped.frame[column].tolist()
        assert [type(v) for v in a] == [type(v) for v in b], column
        assert all((x == y) or (pd.isna(x) and pd.isna(y)) for x, y in zip(a, b)), column
    assert grouped.repairs.any()  # the awkward cells do need repairs: the comparison is not vacuous
