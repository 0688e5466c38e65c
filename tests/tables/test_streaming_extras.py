"""The marginal and 2-way anchors and the table-read label model on a streamed fit: their counts
summed over batches are the whole table's (bit for bit), so their releases equal the in-memory
ones for a seed; the DP-SGD label model is refused in one line; the default CLI fit runs."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import ParquetSource, TabularSynthesizer
from dpgan.errors import InputError
from dpgan.models.output_spans import OutputSpan
from dpgan.statistics.tables.marginals import MARGINALS_EVENT, MarginalCounts, continued_sums
from dpgan.statistics.tables.pair_marginals import PAIRS_EVENT, PairCounts
from dpgan.tables.fit import plugins as table_plugins
from parquet_parts import split_to_parquet

torch.set_num_threads(1)

SECRET = "zz-secret-value"
TINY = {"generator_hidden": (32,), "critic_hidden": (32,), "noise_dim": 8}


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    c = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "x": rng.normal(size=n) + (c == "a"),  # depends on c: the 2-way tables are not flat
            "c": c,
            "y": np.where(rng.random(n) < 0.7, c == "b", rng.random(n) < 0.5),
        }
    )
    frame["y"] = frame["y"].map({True: "yes", False: "no"})
    frame.loc[::40, "x"] = np.nan
    frame.loc[7, "y"] = SECRET
    return frame


def _split(frame: pd.DataFrame, directory: Path, cuts=(400, 1000)) -> Path:
    return split_to_parquet(frame, directory, cuts)


def test_continued_sums_over_batches_equal_one_sum_bit_for_bit():
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 5, 20_000)
    weights = rng.uniform(-1, 1, 20_000) * 10.0 ** rng.integers(-12, 1, 20_000)  # mixed magnitudes
    whole = continued_sums(np.zeros(5), codes, weights)
    running, naive = np.zeros(5), np.zeros(5)
    for lo, hi in [(0, 3), (3, 7000), (7000, 7001), (7001, 20_000)]:
        running = continued_sums(running, codes[lo:hi], weights[lo:hi])
        naive = naive + np.bincount(codes[lo:hi], weights=weights[lo:hi], minlength=5)
    assert np.array_equal(running, whole)
    assert np.array_equal(whole, np.bincount(codes, weights=weights, minlength=5))  # the in-memory sums
    assert not np.array_equal(naive, whole)  # adding batch totals would not be bit-exact


def _spans() -> list[OutputSpan]:
    # a numeric column: position (tanh) + 3 bins + a null slot; a 3-category column; a 2-category one
    return [
        OutputSpan("tanh", 0, 1, "n"),
        OutputSpan("softmax", 1, 4, "n", value_modes=3),
        OutputSpan("softmax", 5, 3, "k"),
        OutputSpan("softmax", 8, 2, "b"),
    ]


def _encoded(n: int, rng: np.random.Generator) -> torch.Tensor:
    rows = torch.zeros(n, 10)
    rows[:, 0] = torch.from_numpy(rng.uniform(-1, 1, n).astype(np.float32))
    for start, width in [(1, 4), (5, 3), (8, 2)]:
        rows[torch.arange(n), start + torch.from_numpy(rng.integers(0, width, n))] = 1.0
    return rows


def test_anchor_counts_of_batches_equal_the_whole_tables_and_the_crosstabs():
    spans = _spans()
    data = _encoded(3001, np.random.default_rng(1))
    whole_m, whole_p = MarginalCounts.of(data, spans, None), PairCounts.empty(spans, None)
    whole_p.add(data)
    parts_m, parts_p = MarginalCounts.empty(spans, None), PairCounts.empty(spans, None)
    for chunk in torch.split(data, 700):
        parts_m.add(chunk)
        parts_p.add(chunk)
    for a, b in zip(
        whole_m.histograms + whole_m.sums + whole_m.squares, parts_m.histograms + parts_m.sums + parts_m.squares
    ):
        assert np.array_equal(a, b)
    assert all(np.array_equal(a, b) for a, b in zip(whole_p.tables, parts_p.tables))
    # reference values: the (k, b) table is the crosstab; the position sums are per-bin sums
    k, b = data[:, 5:8].argmax(1).numpy(), data[:, 8:10].argmax(1).numpy()
    (index,) = [i for i, (s, t) in enumerate(whole_p.pairs) if (s.column, t.column) == ("k", "b")]
    assert np.array_equal(whole_p.tables[index].reshape(3, 2), pd.crosstab(k, b).to_numpy())
    bins = data[:, 1:5].argmax(1).numpy()
    position = data[:, 0].numpy().astype(np.float64)
    assert np.allclose(whole_m.sums[0], [position[bins == j].sum() for j in range(3)])
    assert whole_m.histograms[0].sum() == 3001
    # one row fewer changes each pair table by one cell by one (sensitivity 1)
    neighbour = PairCounts.empty(spans, None)
    neighbour.add(data[1:])
    assert all(np.abs(a - b).sum() == 1 for a, b in zip(whole_p.tables, neighbour.tables))


@pytest.fixture(scope="module")
def anchored(tmp_path_factory):
    frame = _table(1500, seed=3)
    directory = _split(frame, tmp_path_factory.mktemp("anchored") / "t")
    settings = dict(epsilon=2.0, seed=7, epochs=1, batch_size=150, marginal_anchor=True, pair_warmup_steps=3, **TINY)
    released: list[list] = []
    measure_m, measure_p = table_plugins.measure_anchor, table_plugins.measure_pair_anchor

    def record(measure):
        def wrapped(*args, **kwargs):
            anchor = measure(*args, **kwargs)
            released[-1].append(anchor)
            return anchor

        return wrapped

    fits = []
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        patch.setattr(table_plugins, "measure_anchor", record(measure_m))
        patch.setattr(table_plugins, "measure_pair_anchor", record(measure_p))
        for data in (
            pd.read_parquet(directory),
            ParquetSource(directory, memory_budget_mb=0.005, batch_rows=256),  # blocks: one counting pass
            str(directory),  # held in memory: counted where it is held
        ):
            released.append([])
            fits.append(TabularSynthesizer(**settings).fit(data, target="y"))
    return fits, released


def test_streamed_anchors_release_the_in_memory_values(anchored):
    fits, released = anchored
    memory = fits[0]
    for fit, anchors in zip(fits[1:], released[1:]):
        assert fit.training["streamed"] is True
        assert fit.ledger.to_dict() == memory.ledger.to_dict()
        (marginal, pairs), (marginal_0, pairs_0) = anchors, released[0]
        assert all(torch.equal(a, b) for a, b in zip(marginal.targets, marginal_0.targets))
        for a, b in zip(marginal.positions, marginal_0.positions):
            assert torch.equal(a.mean, b.mean) and torch.equal(a.sd, b.sd) and torch.equal(a.weight, b.weight)
        assert len(pairs.targets) == len(pairs_0.targets) > 0
        assert all(torch.equal(a, b) for a, b in zip(pairs.targets, pairs_0.targets))
        assert pairs.noise_share == pairs_0.noise_share
    names = [entry["name"] for entry in memory.ledger.to_dict()]
    assert MARGINALS_EVENT in names and PAIRS_EVENT in names
    # the other seed's release differs: the equality is not vacuous
    assert not torch.equal(released[1][1].targets[0], _other_seed_pairs())


def _other_seed_pairs() -> torch.Tensor:
    frame = _table(1500, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.MonkeyPatch.context() as patch:
            out = []
            measure = table_plugins.measure_pair_anchor
            patch.setattr(table_plugins, "measure_pair_anchor", lambda *a, **k: out.append(measure(*a, **k)) or out[-1])
            TabularSynthesizer(epsilon=2.0, seed=8, epochs=1, batch_size=150, pair_warmup_steps=1, **TINY).fit(
                frame, target="y"
            )
    return out[0].targets[0]


def test_streamed_label_model_is_read_off_the_same_tables(anchored):
    fits, _ = anchored
    memory = fits[0]
    for fit in fits[1:]:
        assert fit.training["label_model_kind"] == memory.training["label_model_kind"] == "pair-tables"
        assert fit.training["label_model"] == "y"
        # the weights are read off the released tables; the bias is then matched on G's own rows
        weight = fit.label_model.classifier.net[0].weight
        assert torch.equal(weight, memory.label_model.classifier.net[0].weight)
        shares = fit.sample(400)["y"].value_counts(normalize=True)
        assert 0.05 < shares.get("yes", 0.0) < 0.95  # the prior is matched: both labels drawn


def _refused(call) -> str:
    with pytest.raises(InputError) as info:
        call()
    message = str(info.value)
    assert SECRET not in message and "\n" not in message
    return message


def test_dp_sgd_label_model_is_refused_in_one_line(tmp_path):
    directory = _split(_table(300, seed=1), tmp_path / "t", cuts=(100,))
    dp_sgd = TabularSynthesizer(epsilon=1.0, label_model_kind="dp-sgd")
    assert "DP-SGD label model" in _refused(lambda: dp_sgd.fit(str(directory), target="y"))
    no_tables = TabularSynthesizer(epsilon=1.0, pair_anchor=False)  # "auto" then means DP-SGD
    assert "DP-SGD label model" in _refused(lambda: no_tables.fit(str(directory), target="y"))
    assert not list(tmp_path.glob("**/*.json"))


def test_cli_default_fit_of_a_parquet_directory_runs(tmp_path):
    from dpgan.cli import main

    directory = _split(_table(600, seed=4), tmp_path / "t", cuts=(200,))
    out = tmp_path / "model"
    argv = [
        "fit",
        str(directory),
        "--out",
        str(out),
        "--epsilon",
        "2",
        "--epochs",
        "1",
        "--batch-size",
        "150",
        "--quiet",
        "--seed",
        "1",
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*argv, "--target", "y", "--memory-budget-mb", "0.01"]) == 0
    model = TabularSynthesizer.load(out)
    assert model.training["streamed"] is True
    assert model.settings.pair_anchor is True
    assert model.training["label_model_kind"] == "pair-tables"
    assert PAIRS_EVENT in [entry["name"] for entry in model.ledger.to_dict()]
