"""How many times a streamed fit reads its files: the anchors' counts and the held table come
from the conform pass (dpgan.tables.fit.streamed.ConformPass), not from passes of their own."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from dpgan import ParquetSource, TabularSynthesizer
from dpgan.tables.reading.parquet_source import OpenSource
from parquet_parts import split_to_parquet


def _directory(tmp_path, n: int = 900):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.integers(0, 50, n), "x": rng.normal(size=n), "c": rng.choice(["p", "q", "r"], n)})
    directory = split_to_parquet(frame, tmp_path / "t", (400,))
    return directory


def _fit_counting_reads(monkeypatch, source: ParquetSource) -> tuple[int, TabularSynthesizer]:
    reads = []
    original = OpenSource.batches

    def counted(self, columns=None):
        reads.append(columns)
        return original(self, columns)

    monkeypatch.setattr(OpenSource, "batches", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(epsilon=2.0, seed=3, epochs=1, batch_size=100).fit(source)  # 2-way anchor on
    return len(reads), synth


def test_held_fit_reads_the_files_twice_with_the_anchor_on(monkeypatch, tmp_path):
    reads, synth = _fit_counting_reads(monkeypatch, ParquetSource(_directory(tmp_path), batch_rows=128))
    assert synth.settings.pair_anchor
    assert reads == 2  # the schema's counts, then conform + encode + anchor counts + the held table


def test_blocked_fit_gathers_after_the_two_passes_and_equals_the_held_fit(monkeypatch, tmp_path):
    directory = _directory(tmp_path)
    held_reads, held = _fit_counting_reads(monkeypatch, ParquetSource(directory, batch_rows=128))
    monkeypatch.undo()
    reads, blocked = _fit_counting_reads(monkeypatch, ParquetSource(directory, memory_budget_mb=0.002, batch_rows=128))
    assert reads > held_reads == 2  # the table did not fit: its blocks are gathered in later passes
    assert held.ledger.to_dict() == blocked.ledger.to_dict()
    for a, b in zip(held.generator.state_dict().values(), blocked.generator.state_dict().values()):
        assert np.array_equal(a.numpy(), b.numpy())
