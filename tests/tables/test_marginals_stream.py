"""The tables' "marginals" model fitted from Parquet read in record batches: its count tables summed
in the conform pass give the in-memory fit's releases (ledger, released tables, sampled rows) for the
same seed; neighbouring streams give the same public facts; a schema whose tables pass the cap on
cells is refused in one line before anything is written."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest
import torch

from dpgan import InputError, ParquetSource, Schema, TabularSynthesizer
from dpgan.cli import main
from parquet_parts import split_to_parquet
from test_marginals_model import SCHEMA, table

torch.set_num_threads(1)
CUTS = (400, 1000)  # three files; batches of 256 rows cut across them


def fit(data, schema: dict | None, target: str | None, seed: int = 3) -> TabularSynthesizer:
    if schema is not None and target is None:
        schema = {key: value for key, value in schema.items() if key != "target"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(model="marginals", epsilon=1.0, seed=seed)
        return synth.fit(data, None if schema is None else Schema.from_dict(schema), target=target)


def tables(synth: TabularSynthesizer) -> dict[str, torch.Tensor]:
    return {key: value.clone() for key, value in synth.generator.state_dict().items()}


@pytest.fixture(scope="module")
def directory(tmp_path_factory) -> Path:
    return split_to_parquet(table(1500), tmp_path_factory.mktemp("stream") / "t", CUTS)


@pytest.mark.parametrize(
    ("schema", "target"),
    [(SCHEMA, "label"), (None, "label"), (SCHEMA, None), (None, None)],
    ids=["class-tree-schema", "class-tree-csv-only", "mst-schema", "mst-csv-only"],
)
def test_a_streamed_fit_releases_what_the_in_memory_fit_releases(directory, schema, target):
    memory = fit(pd.read_parquet(directory), schema, target)
    streamed = fit(ParquetSource(directory, batch_rows=256), schema, target)
    assert streamed.training["streamed"] is True and "streamed" not in memory.training
    assert streamed.ledger.to_dict() == memory.ledger.to_dict()
    assert streamed.training["marginals"] == memory.training["marginals"]
    released = tables(memory)
    assert tables(streamed).keys() == released.keys()
    for key, value in tables(streamed).items():
        assert torch.equal(value, released[key]), key
    pd.testing.assert_frame_equal(streamed.sample(300, seed=5), memory.sample(300, seed=5))
    # another seed releases other tables: the equality above is not vacuous
    other = tables(fit(ParquetSource(directory, batch_rows=256), schema, target, seed=4))
    assert any(not torch.equal(value, released[key]) for key, value in other.items())


def test_neighbouring_streams_give_the_same_public_facts(tmp_path):
    """One row more (an odd one, in the last file) changes no public fact of a streamed fit."""
    frame = table(1500)
    odd = pd.DataFrame({"group": ["zz"], "amount": [1e9], "age": [200.0], "label": ["yes"]})
    facts = []
    for name, data in (("a", frame), ("b", pd.concat([frame, odd], ignore_index=True))):
        synth = fit(ParquetSource(split_to_parquet(data, tmp_path / name, CUTS), batch_rows=256), SCHEMA, "label")
        record = synth.training["marginals"]
        entries = [(e["name"], e["count"]) for e in synth.privacy_report()["events"]]
        facts.append((record["levels"], len(record["edges"]), entries, synth.privacy_report()["epsilon"]))
    assert facts[0][:3] == facts[1][:3]
    assert facts[0][3] == pytest.approx(facts[1][3])


def wide_schema() -> dict:
    """Two columns of 8,000 public categories: MST's one pair table alone has 64 million cells."""
    return {
        "columns": [
            {"name": "a", "kind": "categorical", "categories": [f"a{i}" for i in range(8000)]},
            {"name": "b", "kind": "categorical", "categories": [f"b{i}" for i in range(8000)]},
        ]
    }


def test_tables_over_the_cap_are_refused_in_one_line_before_anything_is_written(tmp_path, capsys):
    data = split_to_parquet(pd.DataFrame({"a": ["a1", "a2"] * 50, "b": ["b3"] * 100}), tmp_path / "t", (50,))
    with pytest.raises(InputError, match="cells") as caught:
        fit(str(data), wide_schema(), None)
    assert "\n" not in str(caught.value)
    schema = tmp_path / "schema.json"
    Schema.from_dict(wide_schema()).to_json(schema)
    out = tmp_path / "m"
    argv = ["fit", str(data), "--schema", str(schema), "--model", "marginals", "--epsilon", "1", "--out", str(out)]
    assert main([*argv, "--quiet"]) != 0
    err = capsys.readouterr().err.strip()
    assert "cells" in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_command_line_fits_a_parquet_directory_with_a_target(directory, tmp_path):
    out = tmp_path / "m"
    argv = ["fit", str(directory), "--model", "marginals", "--target", "label", "--epsilon", "1", "--seed", "0"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*argv, "--out", str(out), "--quiet"]) == 0
    loaded = TabularSynthesizer.load(out)
    assert loaded.training["streamed"] is True and loaded.training["marginals"]["target"] is not None
    assert len(loaded.sample(50, seed=1)) == 50
