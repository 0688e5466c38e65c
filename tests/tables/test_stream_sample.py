"""Streaming a sample to a file (TabularSynthesizer.sample_to, table_io.write_chunks, CLI sample).

The properties: for a seed the file holds exactly the rows of the in-memory `sample` (same
rows, same order; CSV byte for byte), across several generation chunks, for a model with a
condition column and a label model (the saved fixture); a failure part-way leaves no file and no
temporary file; bad destinations are refused in one line before any row is drawn.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpgan.tables.sampling.rows as sampling
from dpgan import TabularSynthesizer
from dpgan.cli import main
from dpgan.errors import InputError
from dpgan.tables.codec.geo import region_points
from dpgan.tables.reading.table_io import write_chunks, write_table
from dpgan.tables.sampling.rows import TableSampler

SAVED = Path(__file__).parents[1] / "fixtures" / "saved-model-format-2"  # condition: sex; label model: income


@pytest.fixture()
def small_chunks(monkeypatch):
    """Chunks of 7 rows, so a few dozen rows span several chunks (and the last one is short)."""
    monkeypatch.setattr(sampling, "SAMPLE_CHUNK", 7)


@pytest.fixture(scope="module")
def conditional() -> TabularSynthesizer:
    synth = TabularSynthesizer.load(SAVED)
    assert synth.condition is not None and synth.label_model is not None
    return synth


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(
    "conditions",
    [None, {"sex": "Female"}, {"sex": "Female", "income": ">50K"}],  # plain; generator condition; rejection
)
def test_streamed_csv_is_the_in_memory_sample_byte_for_byte(small_chunks, conditional, conditions, tmp_path):
    expected = write_table(conditional.sample(30, seed=5, conditions=conditions), tmp_path / "whole.csv")
    streamed = conditional.sample_to(tmp_path / "streamed.csv", 30, seed=5, conditions=conditions)
    assert streamed.read_bytes() == expected.read_bytes()
    assert len(pd.read_csv(streamed)) == 30
    if conditions:
        frame = pd.read_csv(streamed)
        assert all(set(frame[column]) == {value} for column, value in conditions.items())
    assert listing(tmp_path) == ["streamed.csv", "whole.csv"]  # no temporary file left behind


def test_streamed_parquet_reads_back_as_the_in_memory_sample(small_chunks, conditional, tmp_path):
    frame = conditional.sample(30, seed=2, conditions={"income": ">50K"})
    path = conditional.sample_to(tmp_path / "rows.parquet", 30, seed=2, conditions={"income": ">50K"})
    pd.testing.assert_frame_equal(pd.read_parquet(path), pd.read_parquet(write_table(frame, tmp_path / "w.parquet")))
    import pyarrow.parquet as pq

    assert pq.ParquetFile(path).num_row_groups > 1  # really written chunk by chunk


def test_a_different_seed_streams_different_rows(conditional, tmp_path):
    one = conditional.sample_to(tmp_path / "a.csv", 20, seed=1).read_bytes()
    two = conditional.sample_to(tmp_path / "b.csv", 20, seed=2).read_bytes()
    assert one != two


def test_region_points_stream_as_the_whole_frame_gets_them(small_chunks, tmp_path):
    """One region column: its points, drawn chunk by chunk from one stream, are the points the
    whole frame gets at once (as before streaming), and each lies in its row's public box."""
    synth = TabularSynthesizer.load(SAVED)
    race = synth.schema["race"]
    boxes = tuple((c, i, i + 0.5, -i, -i + 0.25) for i, c in enumerate(race.categories))
    columns = tuple(replace(c, boxes=boxes) if c.name == "race" else c for c in synth.schema.columns)
    synth.schema = replace(synth.schema, columns=columns)
    frame = synth.sample(30, seed=8, region_points=["race"])
    whole = region_points(synth.sample(30, seed=8), synth.schema, "race", np.random.default_rng([8, 1]))
    pd.testing.assert_frame_equal(frame, whole)
    slot = frame["race"].map({c: i for i, c in enumerate(race.categories)})
    assert frame["race_latitude"].between(slot, slot + 0.5).all()
    path = synth.sample_to(tmp_path / "p.csv", 30, seed=8, region_points=["race"])
    assert path.read_bytes() == write_table(frame, tmp_path / "w.csv").read_bytes()


class Boom:
    """A post-processor that fails on its `after`-th call: an error in the middle of a stream."""

    column = "race"

    def __init__(self, after: int) -> None:
        self.after, self.calls = after, 0

    def redraw(self, frame, encoder, rng):
        self.calls += 1
        if self.calls >= self.after:
            raise RuntimeError("boom")
        return frame, np.zeros(len(frame), dtype=np.int64)

    def code_of(self, value, encoder):
        return 0


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_failure_mid_stream_leaves_no_file_and_keeps_an_old_one(small_chunks, fitted, suffix, tmp_path):
    def sampler(boom: Boom) -> TableSampler:
        return TableSampler(fitted.generator, fitted.encoder, None, fitted.config.noise_dim, [boom])

    boom = Boom(after=3)
    with pytest.raises(RuntimeError, match="boom"):
        write_chunks(sampler(boom).chunks(40, {}, seed=0), tmp_path / f"new{suffix}")
    assert boom.calls == 3 and listing(tmp_path) == []  # two chunks were written, then removed
    old = tmp_path / f"old{suffix}"
    old.write_bytes(b"previous")
    with pytest.raises(RuntimeError, match="boom"):
        write_chunks(sampler(Boom(after=2)).chunks(40, {}, seed=0), old)
    assert listing(tmp_path) == [old.name] and old.read_bytes() == b"previous"


def test_a_value_too_rare_found_mid_stream_leaves_no_file(fitted, tmp_path):
    class Never(Boom):
        def redraw(self, frame, encoder, rng):
            return frame, np.ones(len(frame), dtype=np.int64)  # never slot 0

    sampler = TableSampler(fitted.generator, fitted.encoder, None, fitted.config.noise_dim, [Never(0)])
    with pytest.raises(InputError, match="too rare"):
        write_chunks(sampler.chunks(5, {"race": "x"}, seed=0), tmp_path / "rare.csv")
    assert listing(tmp_path) == []


@pytest.mark.parametrize(
    "name, message",
    [
        ("rows.txt", "must end in .csv or .parquet"),
        ("folder.csv", "is a directory"),
        ("afile/rows.csv", "cannot create the folder"),
    ],
)
def test_bad_destinations_are_one_line_input_errors(fitted, tmp_path, name, message):
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(InputError, match=message) as caught:
        fitted.sample_to(tmp_path / name, 5, seed=0)
    assert "\n" not in str(caught.value)
    assert listing(tmp_path) == ["afile", "folder.csv"]


def test_bad_arguments_are_refused_before_a_file_is_made(fitted, tmp_path):
    with pytest.raises(InputError, match="not a column"):
        fitted.sample_to(tmp_path / "x.csv", 5, conditions={"nope": 1})
    with pytest.raises(InputError):
        fitted.sample_to(tmp_path / "x.csv", 0)
    assert listing(tmp_path) == []


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_cli_sample_streams_a_table_with_the_schema_columns(small_chunks, conditional, suffix, tmp_path, capsys):
    out = tmp_path / f"rows{suffix}"
    assert main(["sample", str(SAVED), "-n", "25", "--seed", "4", "--condition", "sex=Male", "--out", str(out)]) == 0
    assert "wrote 25 rows" in capsys.readouterr().out
    frame = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert list(frame.columns) == conditional.schema.names and len(frame) == 25
    assert set(frame["sex"]) == {"Male"}
    expected = write_table(conditional.sample(25, seed=4, conditions={"sex": "Male"}), tmp_path / f"e{suffix}")
    if suffix == ".csv":
        assert out.read_bytes() == expected.read_bytes()
    else:
        pd.testing.assert_frame_equal(frame, pd.read_parquet(expected))


def test_parquet_column_empty_in_the_first_chunk_takes_values_later(tmp_path):
    import pandas as pd

    from dpgan.tables.reading.table_io import write_chunks

    frames = [pd.DataFrame({"a": [1.0, 2.0], "b": [None, None]}), pd.DataFrame({"a": [3.0], "b": ["x"]})]
    path, rows = write_chunks(iter(frames), tmp_path / "out.parquet")
    back = pd.read_parquet(path)
    assert rows == 3 and back["b"].isna().tolist() == [True, True, False] and back["b"].iloc[2] == "x"
    assert back["a"].tolist() == [1.0, 2.0, 3.0]
