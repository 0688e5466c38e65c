"""DP 2-way tables of G's outputs (dpgan.statistics.tables.pair_marginals): what they measure, their
sensitivity, what they cost in the ledger, that the one-product penalty is the per-pair sum, and
that G fitted to them learns a dependence between columns that one-way statistics cannot carry."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import Schema, TabularSynthesizer
from dpgan.cli import build_parser, main
from dpgan.cli.tables import synth_kwargs
from dpgan.errors import InputError
from dpgan.statistics.tables.marginals import marginal_spans
from dpgan.statistics.tables.pair_marginals import (
    PAIRS_EVENT,
    PairAnchor,
    noisy_pair_tables,
    span_pairs,
)
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.reading.conform import validate_table
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.settings import TableSettings
from dpgan.training.config import TrainingConfig
from dpgan.training.fake_rows import build_generator
from dpgan.training.table_anchors import PairAnchorHook, pair_anchor_penalty

torch.set_num_threads(1)

TINY = {"generator_hidden": (32,), "critic_hidden": (32,), "noise_dim": 8}


def _encoded(frame: pd.DataFrame, schema: Schema) -> tuple[torch.Tensor, TableEncoder]:
    data = validate_table(frame, schema)
    encoder = TableEncoder(schema, {c: str(data[c].dtype) for c in data.columns})
    return torch.from_numpy(encoder.encode(data)), encoder


@pytest.fixture(scope="module")
def encoded(adult_small, adult_schema):
    return _encoded(adult_small, adult_schema)


def test_pairs_are_every_two_spans_of_different_columns_without_the_condition(encoded):
    _, encoder = encoded
    spans = marginal_spans(encoder.spans, "income")
    pairs = span_pairs(encoder.spans, "income")
    assert all(a.column != b.column and "income" not in (a.column, b.column) for a, b in pairs)
    same_column = sum(a.column == b.column for i, a in enumerate(spans) for b in spans[i + 1 :])
    assert len(pairs) == len(spans) * (len(spans) - 1) // 2 - same_column
    assert PairAnchor.releases(encoder.spans, "income") == len(pairs) > 0


def test_noise_free_tables_are_the_crosstabs_of_the_rows(adult_small, adult_schema, encoded):
    data, encoder = encoded
    pairs = [(a, b) for a, b in span_pairs(encoder.spans) if (a.column, b.column) == ("sex", "income")]
    assert len(pairs) == 1
    (table,) = noisy_pair_tables(data, pairs, 0.0, np.random.default_rng(0))
    sex = adult_schema["sex"].categories
    income = adult_schema["income"].categories
    expected = pd.crosstab(adult_small["sex"], adult_small["income"]).reindex(index=sex, columns=income)
    np.testing.assert_array_equal(table, expected.fillna(0).to_numpy())


def test_removing_one_row_moves_one_cell_of_each_table_by_one(encoded):
    """The sensitivity the ledger entry assumes: 1 per table, √P over the P tables."""
    data, encoder = encoded
    pairs = span_pairs(encoder.spans)
    rng = np.random.default_rng(0)
    full = noisy_pair_tables(data, pairs, 0.0, rng)
    neighbour = noisy_pair_tables(data[1:], pairs, 0.0, rng)
    differences = [a - b for a, b in zip(full, neighbour)]
    assert all(np.count_nonzero(d) == 1 and d.sum() == 1.0 for d in differences)
    assert np.sqrt(sum(float((d**2).sum()) for d in differences)) == pytest.approx(np.sqrt(len(pairs)))


def test_one_product_penalty_is_the_sum_of_per_pair_squared_distances(encoded):
    data, encoder = encoded
    anchor = PairAnchor.measure(data, encoder.spans, None, 3.0, np.random.default_rng(2))
    G = build_generator(TrainingConfig(**TINY), encoder.spans)
    z = torch.randn(256, TINY["noise_dim"], generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        penalty = float(pair_anchor_penalty(anchor, G, z, None))
        logits = G.logits(z)
        reference = 0.0
        for (a, b), target in zip(anchor.pairs, anchor.targets):
            pa = torch.softmax(logits[:, a.start : a.stop], dim=1)
            pb = torch.softmax(logits[:, b.start : b.stop], dim=1)
            joint = sum(torch.outer(pa[i], pb[i]) for i in range(len(z))) / len(z)
            reference += float(((joint - target) ** 2).sum())
    assert penalty == pytest.approx(reference, rel=1e-4)


def test_warm_start_on_pair_tables_teaches_g_a_dependence_one_way_tables_cannot():
    """Two columns that are always equal: their one-way tables are uniform, so only the 2-way
    table says they agree. After the warm start G's sampled rows agree far above chance."""
    categories = ("a", "b", "c", "d")
    values = np.random.default_rng(0).choice(categories, size=2000)
    frame = pd.DataFrame({"x": values, "y": values})
    schema = Schema(
        [ColumnSpec("x", "categorical", categories=categories), ColumnSpec("y", "categorical", categories=categories)]
    )
    data, encoder = _encoded(frame, schema)
    anchor = PairAnchor.measure(data, encoder.spans, None, 1.0, np.random.default_rng(1))
    torch.manual_seed(0)
    G = build_generator(TrainingConfig(**TINY), encoder.spans)
    draw = torch.Generator().manual_seed(3)

    def inputs():
        return torch.randn(256, TINY["noise_dim"], generator=draw), None

    def agreement() -> float:
        with torch.no_grad():
            logits = G.logits(torch.randn(4000, TINY["noise_dim"], generator=draw))
        (sx, sy) = anchor.pairs[0]
        return float(
            (logits[:, sx.start : sx.stop].argmax(1) == logits[:, sy.start : sy.stop].argmax(1)).float().mean()
        )

    hook = PairAnchorHook(anchor, warmup_steps=400, warmup_lr=5e-3, weight=1.0)
    with torch.no_grad():
        before = float(pair_anchor_penalty(anchor, G, *inputs()))
    hook.warm_start(G, inputs)
    with torch.no_grad():
        assert float(pair_anchor_penalty(anchor, G, *inputs())) < before / 5
    # the argmax rows of a G that uses z: independent columns would agree on about a quarter
    assert agreement() > 0.8


def test_fit_with_the_pair_anchor_charges_one_entry_of_p_releases(adult_small, adult_schema):
    synth = TabularSynthesizer(
        epsilon=2.0, epochs=1, seed=0, pair_anchor=True, pair_warmup_steps=5, batch_size=64, label_model=False,
        pair_selection=False, **TINY,
    )  # fmt: skip
    synth.fit(adult_small, schema=adult_schema)
    report = synth.privacy_report()
    events = {e["name"]: e for e in report["events"]}
    entry = events[PAIRS_EVENT]
    assert entry["count"] == PairAnchor.releases(synth.encoder.spans, None)
    names = [e["name"] for e in report["events"]]
    assert names.index(PAIRS_EVENT) < len(names) - 1  # measured before the GAN's steps
    # calibrated to reach 0.3 of ε together with what came before (composition is sub-additive)
    assert 0.1 * 2.0 < entry["epsilon_alone"] < 0.45 * 2.0
    assert report["epsilon"] <= 2.0 * (1 + 1e-9)
    assert synth.settings.to_dict()["pair_anchor"] is True


def test_without_the_pair_anchor_nothing_is_measured_and_the_config_omits_it(adult_small, adult_schema):
    synth = TabularSynthesizer(epsilon=2.0, epochs=1, seed=0, pair_anchor=False, batch_size=64, **TINY)
    synth.fit(adult_small.iloc[:300], schema=adult_schema)
    assert PAIRS_EVENT not in {e["name"] for e in synth.privacy_report()["events"]}
    saved = synth.settings.to_dict()
    assert not any(key.startswith("pair_") for key in saved)
    assert TableSettings.from_dict(saved).pair_anchor is False  # an old model's config loads as it was fitted
    assert TableSettings.from_dict(TableSettings().to_dict()).pair_anchor is True


def test_the_warm_start_is_never_longer_than_the_fit(adult_small, adult_schema):
    synth = TabularSynthesizer(epsilon=2.0, epochs=1, seed=0, batch_size=64, label_model=False, **TINY)
    synth.fit(adult_small, schema=adult_schema)
    assert PAIRS_EVENT in {e["name"] for e in synth.privacy_report()["events"]}  # on by default
    anchor = PairAnchor([], [])
    defaults = TableSettings()
    knobs = (defaults.pair_warmup_steps, defaults.pair_weight)
    capped = PairAnchorHook.from_config(anchor, TrainingConfig(), *knobs, max_warmup_steps=12)
    assert (
        capped.warmup_steps == 12 and PairAnchorHook.from_config(anchor, TrainingConfig(), *knobs).warmup_steps == 300
    )


@pytest.mark.parametrize(
    "settings",
    [{"pair_budget_fraction": 0.0}, {"pair_budget_fraction": 0.95}, {"pair_weight": -1.0}, {"pair_warmup_steps": -1}],
)
def test_bad_pair_settings_are_refused(settings):
    with pytest.raises(InputError):
        TableSettings(pair_anchor=True, **settings).check()


def test_cli_pair_anchor_flag_reaches_the_config(tmp_path, capsys):
    parser = build_parser()
    default = TabularSynthesizer(**synth_kwargs(parser.parse_args(["fit", "t.csv", "--epsilon", "1", "--out", "m"])))
    assert (default.settings.pair_anchor, default.settings.pair_budget_fraction) == (True, 0.3)
    args = parser.parse_args(["fit", "t.csv", "--epsilon", "1", "--out", "m", "--no-pair-anchor"])
    assert TabularSynthesizer(**synth_kwargs(args)).settings.pair_anchor is False
    args = parser.parse_args(["fit", "t.csv", "--epsilon", "1", "--out", "m", "--pair-anchor"])
    on = TabularSynthesizer(**synth_kwargs(args)).settings
    assert (on.pair_anchor, on.pair_budget_fraction) == (True, 0.3)
    args = parser.parse_args(["fit", "t.csv", "--epsilon", "1", "--out", "m", "--pair-budget-fraction", "0.5"])
    assert TabularSynthesizer(**synth_kwargs(args)).settings.pair_budget_fraction == 0.5
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n")
    assert main(["fit", str(table), "--epsilon", "1", "--out", str(tmp_path / "m"), "--pair-budget-fraction", "2"]) != 0
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "pair_budget_fraction" in err and not (tmp_path / "m").exists()
