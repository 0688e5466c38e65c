"""A long Parquet table of series grouped by an external pass (dpgan.sequences.long_parquet): the
in-memory fit's release and ledger whatever the rows' order, the parts and the ranks; one series
more gives the same public facts; an entity column and a missing column are refused in one line."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch.multiprocessing as mp

import series_rank_worker as worker
from dpgan.errors import InputError
from dpgan.sequences.long_parquet import LongParquet
from dpgan.synthesizers import SequenceSynthesizer


def test_buckets_release_the_in_memory_fit(tmp_path):
    frame = worker.long_table()
    memory = SequenceSynthesizer(epsilon=2.0, seed=3).fit(frame, worker.long_schema(), progress=False)
    blocked = worker.fit_long(worker.write_parts(frame, tmp_path / "parts"), 3)
    assert blocked.ledger.to_dict() == memory.ledger.to_dict()
    assert blocked.schema == memory.schema and blocked.training["units"] == memory.training["units"]
    want, got = worker.arrays(memory), worker.arrays(blocked)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6)
    assert list(blocked.sample(2, seed=1).columns) == ["id", "t", "x", "k"]  # a long table back


def test_the_rows_order_and_the_parts_do_not_matter(tmp_path):
    frame = worker.long_table()
    one = worker.fit_long(worker.write_parts(frame, tmp_path / "a", parts=1), 3)
    other = frame.sample(frac=1.0, random_state=9).reset_index(drop=True)
    two = worker.fit_long(worker.write_parts(other, tmp_path / "b", parts=4), 3)
    assert one.ledger.to_dict() == two.ledger.to_dict()
    for key, value in worker.arrays(one).items():
        np.testing.assert_array_equal(worker.arrays(two)[key], value)


def test_one_series_more_gives_the_same_public_facts(tmp_path):
    frame = worker.long_table()
    extra = pd.DataFrame({"id": 10_000, "t": np.arange(8), "x": 1e6, "k": 9})
    facts = []
    for name, table in {"base": frame, "more": pd.concat([extra.iloc[:3], frame, extra.iloc[3:]])}.items():
        synth = worker.fit_long(worker.write_parts(table, tmp_path / name), 3)
        facts.append((synth.ledger.to_dict(), {k: v.shape for k, v in worker.arrays(synth).items()}))
    assert facts[0] == facts[1]


def test_an_entity_column_and_a_missing_column_are_refused_before_reading(tmp_path):
    folder = worker.write_parts(worker.long_table(n=20), tmp_path / "parts")
    entity = dataclasses.replace(worker.long_schema(), entity="k")
    with pytest.raises(InputError, match="fit that table in memory"):
        SequenceSynthesizer(epsilon=2.0).fit(LongParquet.open(folder), entity, progress=False)
    missing = dataclasses.replace(worker.long_schema(), time="hour")
    with pytest.raises(InputError, match="lacks the schema's columns 'hour'"):
        SequenceSynthesizer(epsilon=2.0).fit(LongParquet.open(folder), missing, progress=False)


def test_two_ranks_release_the_one_process_model_and_ledger(tmp_path):
    worker.write_parts(worker.long_table(), tmp_path / "parts")
    single = worker.fit_long(tmp_path / "parts", 3)
    mp.spawn(worker.run_long, args=(2, str(tmp_path / "init"), str(tmp_path)), nprocs=2, join=True)
    for rank in range(2):
        got = np.load(tmp_path / f"long-{rank}.npz")
        assert got["ledger"].item() == repr(single.ledger.to_dict())
        assert got["schema"].item() == repr(single.schema)
        for key, value in worker.arrays(single).items():
            np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-6)


def test_the_cli_fits_a_folder_of_parts(tmp_path):
    from dpgan.cli import main

    folder = worker.write_parts(worker.long_table(), tmp_path / "parts")
    out = tmp_path / "model"
    flags = ["--id-column", "id", "--time-column", "t", "--length", "8", "--label-column", "k"]
    assert main(["fit", str(folder), "--kind", "sequence", "--epsilon", "2", "--out", str(out), *flags]) == 0
    assert (out / "statistics.safetensors").is_file()
