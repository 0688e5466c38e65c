"""Sampled series streamed to disk a chunk at a time (`SequenceSynthesizer.sample_to`, `dpgan sample`).

Properties: up to one chunk, the file is `sample`'s long table with the same seed, byte for byte (CSV)
or row for row (Parquet); over several chunks, every series keeps its own id (numbered on across the
chunks), has T readings in time order, and an imposed label holds for all of them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.synthesizers import sequence as sequence_module
from dpgan.synthesizers.sequence import SequenceSynthesizer
from dpgan.tables.reading.table_io import write_table

T = 6


@pytest.fixture(scope="module")
def synth() -> SequenceSynthesizer:
    rng = np.random.default_rng(0)
    n = 200
    label = rng.choice(["north", "south"], n)
    flow = np.where(label == "north", 10.0, 25.0)[:, None] + rng.normal(0, 2, (n, T))
    frame = pd.DataFrame(
        {"sid": np.repeat(np.arange(n), T), "hour": np.tile(np.arange(T), n), "flow": flow.ravel(),
         "district": np.repeat(label, T)}
    )  # fmt: skip
    schema = SequenceSchema(
        id="sid", time="hour", length=T, values=(ValueColumn("flow", 0.0, 40.0),), label="district",
        categories=("north", "south"),
    )  # fmt: skip
    return SequenceSynthesizer(epsilon=3.0, seed=0, model="gaussian").fit(frame, schema)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_one_chunk_is_the_sampled_table(synth, tmp_path, suffix):
    path, rows = synth.sample_to(tmp_path / f"s{suffix}", 40, seed=3)
    whole = write_table(synth.sample(40, seed=3), tmp_path / f"whole{suffix}")
    assert rows == 40 * T
    if suffix == ".csv":
        assert path.read_bytes() == whole.read_bytes()
    else:
        pd.testing.assert_frame_equal(pd.read_parquet(path), pd.read_parquet(whole))


def test_chunks_number_their_series_on_and_keep_an_imposed_label(synth, tmp_path, monkeypatch):
    monkeypatch.setattr(sequence_module, "SAMPLE_CHUNK", 7)  # several chunks, the last one short
    path, rows = synth.sample_to(tmp_path / "s.csv", 30, seed=3, label="south")
    table = pd.read_csv(path)
    assert rows == len(table) == 30 * T
    assert table["sid"].tolist() == np.repeat(np.arange(30), T).tolist()
    assert table["hour"].tolist() == np.tile(np.arange(T), 30).tolist()
    assert set(table["district"]) == {"south"} and table["flow"].between(0.0, 40.0).all()
