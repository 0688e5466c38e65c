"""No row decides a public fact on the table paths (dpgan.privacy.unit_rule): whether a Parquet
table is streamed, whether parts with differently stored types are read, and whether a table with
no rows is fitted at all."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from dpgan import ParquetSource, TabularSynthesizer
from dpgan.cli import main
from dpgan.errors import DPGanWarning, InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget
from dpgan.tables.fit.preparation import prepare_table
from dpgan.tables.fit.stream_preparation import prepare_stream
from dpgan.tables.inference.column_kinds import PublicHints

SCHEMA = {
    "columns": [
        {"name": "age", "kind": "integer", "min": 0, "max": 100},
        {"name": "c", "kind": "categorical", "categories": ["a", "b", "c"]},
        {"name": "x", "kind": "continuous", "min": -5.0, "max": 5.0},
    ]
}
TINY = {"epsilon": 2.0, "accountant": "rdp", "seed": 0, "epochs": 1, "batch_size": 50, "max_steps": 3}
TINY |= {"generator_hidden": (16,), "critic_hidden": (16,)}


def _clean(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 90, n), "c": rng.choice(["a", "b", "c"], n), "x": rng.normal(size=n)})


def _footer_bytes(path: Path) -> int:
    meta = pq.ParquetFile(path).metadata
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def _quiet_fit(argv: list[str]) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return main(argv)


def test_two_neighbouring_parquet_files_take_the_same_path_and_write_the_same_public_metadata(tmp_path):
    table = _clean(601)
    small, large = tmp_path / "600.parquet", tmp_path / "601.parquet"
    table.iloc[:600].to_parquet(small, index=False)
    table.to_parquet(large, index=False)
    sizes = _footer_bytes(small), _footer_bytes(large)
    assert sizes[0] < sizes[1]
    budget = f"{(sizes[0] + sizes[1]) / 2 / 2**20:.12f}"  # between the two: the old rule streamed one only
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    common = ["--schema", str(schema), "--epsilon", "2", "--epochs", "1", "--batch-size", "100"]
    common += ["--accountant", "rdp", "--no-pair-anchor", "--max-steps", "2", "--quiet", "--seed", "1"]
    common += ["--memory-budget-mb", budget]
    metas = []
    for path in (small, large):
        out = tmp_path / f"model-{path.stem}"
        # --strict is refused on the streamed path: it would refuse one file and fit the other
        assert _quiet_fit(["fit", str(path), "--out", str(out), *common, "--strict"]) == 0
        metas.append(json.loads((out / "model.json").read_text()))
    a, b = metas
    assert "streamed" not in a["training"] and "streamed" not in b["training"]
    assert set(a["training"]) == set(b["training"])
    for key in ("config", "schema", "recipe"):
        assert a[key] == b[key]
    assert [e["name"] for e in a["ledger"]] == [e["name"] for e in b["ledger"]]
    # asking for a stream (a public flag) streams both, and refuses --strict for both
    for path in (small, large):
        out = tmp_path / f"streamed-{path.stem}"
        assert _quiet_fit(["fit", str(path), "--out", str(out), *common, "--stream"]) == 0
        assert json.loads((out / "model.json").read_text())["training"]["streamed"] is True
        refused = tmp_path / f"strict-{path.stem}"
        assert _quiet_fit(["fit", str(path), "--out", str(refused), *common, "--stream", "--strict"]) != 0
        assert not refused.exists()


def _typed_parts(directory: Path) -> pd.DataFrame:
    """Two parts of one table as pandas writes them: `n` int64 in the first, float64 in the second
    (one missing value there): the stored types differ because of one row."""
    directory.mkdir()
    first = pd.DataFrame({"n": np.arange(0, 300, dtype=np.int64), "c": ["a", "b", "c"] * 100})
    second = pd.DataFrame({"n": np.arange(300, 600, dtype=np.float64), "c": ["b", "c", "a"] * 100})
    second.loc[5, "n"] = np.nan
    first.to_parquet(directory / "part0.parquet", index=False)
    second.to_parquet(directory / "part1.parquet", index=False)
    assert (
        pq.read_schema(directory / "part0.parquet").field("n").type
        != pq.read_schema(directory / "part1.parquet").field("n").type
    )
    return pd.concat([first, second], ignore_index=True)


def test_parts_whose_stored_types_differ_are_read_cell_by_cell(tmp_path):
    whole = _typed_parts(tmp_path / "t")
    args = dict(hints=PublicHints(), budget=FitBudget(1.0, 1e-5, "rdp"), fraction=0.25, needs_prior=False)
    memory_ledger, stream_ledger = PrivacyLedger(), PrivacyLedger()
    memory = prepare_table(
        whole,
        schema=None,
        strict=False,
        without_dp=False,
        keep_identifiers=False,
        ledger=memory_ledger,
        rng=np.random.default_rng(3),
        **args,
    )
    source = ParquetSource(tmp_path / "t", batch_rows=128).open()
    assert source.columns == ("n", "c")
    streamed = prepare_stream(source, schema=None, ledger=stream_ledger, rng=np.random.default_rng(3), **args)
    assert streamed.schema.to_dict() == memory.schema.to_dict()
    assert stream_ledger.to_dict() == memory_ledger.to_dict()
    assert (streamed.rows, streamed.repairs, streamed.kept_rows) == (memory.rows, memory.repairs, len(memory.frame))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = TabularSynthesizer(**TINY, pair_anchor=False).fit(str(tmp_path / "t"))
    assert fitted.training["streamed"] is True and len(fitted.sample(5)) == 5


def test_parts_with_other_column_names_are_refused_by_name_only(tmp_path):
    directory = tmp_path / "t"
    directory.mkdir()
    _clean(10).to_parquet(directory / "a.parquet", index=False)
    _clean(10)[["x", "c", "age"]].to_parquet(directory / "b.parquet", index=False)  # the same names, reordered
    assert ParquetSource(directory).open().columns == ("age", "c", "x")
    batches = list(ParquetSource(directory).open().batches())
    assert all(list(b.columns) == ["age", "c", "x"] for b in batches)
    _clean(10).rename(columns={"x": "y"}).to_parquet(directory / "c.parquet", index=False)
    with pytest.raises(InputError, match="different columns") as info:
        ParquetSource(directory).open()
    assert "\n" not in str(info.value)


def _fit_warnings(data, schema) -> tuple[TabularSynthesizer, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = TabularSynthesizer(**TINY, pair_anchor=False).fit(data, schema=schema)
    return fitted, [str(w.message) for w in caught if issubclass(w.category, DPGanWarning)]


@pytest.mark.parametrize("schema", [SCHEMA, None], ids=["public-schema", "dp-schema"])
@pytest.mark.parametrize("rows", [0, 1])
def test_a_table_with_no_rows_fits_like_its_one_row_neighbour(rows, schema, tmp_path):
    """(no rows, one row) differ in one row: both fit, in memory and streamed, with the same ledger
    events; N̂ (≥ 1) carries the row count, and the small-table warning says it is tiny."""
    frame = _clean(rows)
    directory = tmp_path / "t"
    directory.mkdir()
    frame.to_parquet(directory / "part0.parquet", index=False)
    events = []
    for data in (frame, ParquetSource(directory, memory_budget_mb=1e-5, batch_rows=16)):
        fitted, said = _fit_warnings(data, schema)
        assert fitted.training["estimated_rows"] >= 1 and fitted.training["steps"] >= 1
        assert any("noise is likely to swamp" in line for line in said)
        assert list(fitted.sample(4).columns) == ["age", "c", "x"]
        events.append([e.name for e in fitted.ledger.entries])
    assert events[0] == events[1]


def test_a_header_only_csv_fits_from_the_command_line(tmp_path):
    data, schema = tmp_path / "t.csv", tmp_path / "schema.json"
    data.write_text("age,c,x\n")
    schema.write_text(json.dumps(SCHEMA))
    out = tmp_path / "model"
    argv = ["fit", str(data), "--schema", str(schema), "--out", str(out), "--epsilon", "1", "--epochs", "1"]
    assert _quiet_fit([*argv, "--batch-size", "50", "--no-pair-anchor", "--quiet"]) == 0
    assert (out / "model.json").is_file()
    with pytest.raises(InputError, match="no columns"):
        TabularSynthesizer(**TINY).fit(pd.DataFrame(index=range(3)))
