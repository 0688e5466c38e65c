"""Fitting from Parquet in record batches: the same releases as in memory, Poisson batches, bad input."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from dpgan import ParquetSource, TabularSynthesizer
from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.block_sampling import BlockPoissonSampler, poisson_subset
from dpgan.privacy.calibration import FitBudget
from dpgan.tables.fit.preparation import prepare_table
from dpgan.tables.fit.stream_preparation import prepare_stream
from dpgan.tables.inference.column_kinds import PublicHints
from dpgan.training.row_source import BlockRows
from parquet_parts import split_to_parquet

SECRET = "zz-secret-value"


def _table(n: int = 2400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "x": rng.normal(size=n),
            "c": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
            "code": [f"k{i % 700}" for i in range(n)],  # many distinct values: passes a small cap
        }
    )
    frame.loc[::40, "x"] = np.nan
    frame.loc[7, "c"] = SECRET
    return frame


def _split(frame: pd.DataFrame, directory: Path, cuts=(700, 1500)) -> Path:
    return split_to_parquet(frame, directory, cuts)


def test_streamed_schema_and_ledger_equal_the_in_memory_ones(tmp_path):
    directory = _split(_table(), tmp_path / "t")
    memory = pd.read_parquet(directory)
    args = dict(hints=PublicHints(), budget=FitBudget(1.0, 1e-5, "rdp"), fraction=0.25, needs_prior=False)
    ledger_a, ledger_b = PrivacyLedger(), PrivacyLedger()
    a = prepare_table(
        memory,
        schema=None,
        strict=False,
        without_dp=False,
        keep_identifiers=False,
        ledger=ledger_a,
        rng=np.random.default_rng(11),
        **args,
    )
    source = ParquetSource(directory, batch_rows=333).open()
    b = prepare_stream(source, schema=None, ledger=ledger_b, rng=np.random.default_rng(11), distinct_cap=50, **args)
    assert b.schema.to_dict() == a.schema.to_dict()
    assert ledger_b.to_dict() == ledger_a.to_dict()
    assert (b.rows, b.repairs, b.kept_rows) == (a.rows, a.repairs, len(a.frame))
    assert "code" in b.recounted  # the cap changed the work (a second pass), not the output
    assert "age" in b.recounted  # a numeric column's whole numbers past the cap: recounted the same way
    # another seed gives another schema release: the equality above is not vacuous
    c = prepare_stream(
        source, schema=None, ledger=PrivacyLedger(), rng=np.random.default_rng(12), distinct_cap=50, **args
    )
    assert c.rows != a.rows


def test_block_sampler_is_a_seeded_two_stage_poisson_draw():
    n, q = 500, 0.04
    sampler = BlockPoissonSampler(n, q, np.random.default_rng(5))
    sampler.ahead(60)  # prefetching changes nothing that sample() returns
    drawn = [sampler.sample().numpy() for _ in range(30)]
    reference = np.random.default_rng(5)
    for batch in drawn:
        size = reference.binomial(n, q)
        expected = np.sort(reference.choice(n, size=size, replace=False)) if size else np.zeros(0, dtype=np.int64)
        assert np.array_equal(batch, expected)


def test_block_sampler_matches_poisson_in_distribution():
    n, q, steps = 200, 0.05, 4000
    rng = np.random.default_rng(1)
    sizes = np.empty(steps)
    hits = np.zeros(n)
    for t in range(steps):
        batch = poisson_subset(n, q, rng)
        assert len(np.unique(batch)) == len(batch)
        sizes[t] = len(batch)
        hits[batch] += 1
    # batch sizes: Binomial(n, q) by a chi-square goodness-of-fit on the central sizes
    values = np.arange(3, 18)
    observed = np.array([(sizes == v).sum() for v in values] + [((sizes < 3) | (sizes > 17)).sum()])
    pmf = stats.binom.pmf(values, n, q)
    expected = np.append(pmf, 1 - pmf.sum()) * steps
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    # every row's inclusion frequency is q (each row's count is Binomial(steps, q))
    assert abs(hits.mean() / steps - q) < 0.002
    assert stats.chisquare(hits, np.full(n, hits.mean())).pvalue > 1e-3


def test_block_rows_serve_exactly_the_sampled_rows():
    data = torch.arange(300, dtype=torch.float32).reshape(100, 3)
    passes = []

    def gather(index):
        passes.append(len(index))
        return data[torch.from_numpy(index)]

    rows = BlockRows(100, 3, BlockPoissonSampler(100, 0.1, np.random.default_rng(2)), gather, block_rows=25)
    reference = BlockPoissonSampler(100, 0.1, np.random.default_rng(2))
    for _ in range(40):
        index = rows.sampler.sample()
        assert torch.equal(index, reference.sample())
        assert torch.equal(rows.rows(index), data[index])
    assert 5 < len(passes) < 40 and max(passes) <= 25 + 20  # several steps per block, blocks near the budget


@pytest.fixture(scope="module")
def fits(tmp_path_factory):
    directory = _split(_table(1500, seed=3), tmp_path_factory.mktemp("fit") / "t", cuts=(400, 1000))
    settings = dict(epsilon=2.0, seed=7, epochs=1, batch_size=150, pair_anchor=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = TabularSynthesizer(**settings).fit(pd.read_parquet(directory))
        small = TabularSynthesizer(**settings).fit(ParquetSource(directory, memory_budget_mb=0.005, batch_rows=256))
        large = TabularSynthesizer(**settings).fit(str(directory))
    return memory, small, large


def test_streamed_fit_charges_the_in_memory_ledger(fits):
    memory, small, large = fits
    assert small.ledger.to_dict() == memory.ledger.to_dict()
    assert small.training["steps"] == memory.training["steps"] > 1
    assert small.schema.to_dict() == memory.schema.to_dict()


def test_memory_budget_changes_work_not_the_model(fits):
    _, small, large = fits
    for a, b in zip(small.generator.state_dict().values(), large.generator.state_dict().values()):
        assert torch.equal(a, b)
    assert len(small.sample(20)) == 20


def _refused(call) -> str:
    with pytest.raises(InputError) as info:
        call()
    message = str(info.value)
    assert SECRET not in message and "\n" not in message
    return message


def test_bad_inputs_are_one_line_refusals(tmp_path):
    fit = TabularSynthesizer(epsilon=1.0, pair_anchor=False).fit
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no .parquet" in _refused(lambda: fit(str(empty)))
    # a table with no rows is not refused: tests/tables/test_stream_unit_rule.py
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "a.parquet").write_text(f"not parquet {SECRET}")
    assert "cannot read" in _refused(lambda: fit(str(broken)))
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    _table().iloc[:10].to_parquet(mixed / "a.parquet", index=False)
    _table().iloc[:10].drop(columns="x").to_parquet(mixed / "b.parquet", index=False)
    assert "different columns" in _refused(lambda: fit(str(mixed)))
    good = _split(_table(), tmp_path / "good")
    dp_sgd = TabularSynthesizer(epsilon=1.0, label_model_kind="dp-sgd")
    assert "DP-SGD label model" in _refused(lambda: dp_sgd.fit(str(good), target="c"))
    assert "select_checkpoints" in _refused(
        lambda: TabularSynthesizer(epsilon=1.0, select_checkpoints=3).fit(str(good))
    )
    assert "not found" in _refused(lambda: fit(str(tmp_path / "missing.parquet")))
    assert not list(tmp_path.glob("**/*.json"))  # nothing written


def test_cli_fits_a_directory_of_parquet_files(tmp_path, capsys):
    from dpgan.cli import main

    directory = _split(_table(900, seed=4), tmp_path / "t", cuts=(300, 600))
    out = tmp_path / "model"
    argv = ["fit", str(directory), "--out", str(out), "--epsilon", "2", "--epochs", "1", "--batch-size", "150"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*argv, "--no-pair-anchor", "--memory-budget-mb", "0.01", "--quiet", "--seed", "1"]) == 0
    assert (out / "model.json").is_file()
    assert TabularSynthesizer.load(out).training["streamed"] is True
    # refused before anything is written: the DP-SGD label model reads the whole table
    refused = ["--target", "c", "--label-model-kind", "dp-sgd", "--quiet"]
    assert main([*argv[:3], str(tmp_path / "other"), *argv[4:], *refused]) != 0
    assert "DP-SGD label model" in capsys.readouterr().err and not (tmp_path / "other").exists()


def test_a_pandas_index_stored_in_the_file_is_not_a_column(tmp_path):
    """pandas writes a non-default index (e.g. after sampling rows) as a column named in the file's
    metadata: the stream reads the data columns only, as pd.read_parquet does (the index, often a
    row identifier, is never learned from)."""
    frame = _table(600).sample(500, random_state=0)  # a shuffled, non-range index
    path = tmp_path / "sampled.parquet"
    frame.to_parquet(path)
    import pyarrow.parquet as pq

    assert "__index_level_0__" in pq.read_schema(path).names  # the file does hold it
    opened = ParquetSource(path).open()
    assert opened.columns == tuple(frame.columns)
    assert list(next(opened.batches()).columns) == list(frame.columns)
