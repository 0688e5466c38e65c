"""The label model read off the 2-way anchor's DP tables (naive Bayes; dpgan.tables.sampling.table_label_model).

It must be exactly naive Bayes on the tables it is given, spend nothing (no ledger entry of its
own, the DP-SGD label model's share left to the GAN), draw labels with the prior's shares, refuse
settings it cannot run, and save and load like the DP-SGD model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import Schema, TabularSynthesizer
from dpgan.cli import build_parser
from dpgan.cli.tables import synth_kwargs
from dpgan.errors import InputError
from dpgan.statistics.tables.pair_marginals import PairAnchor, noisy_pair_tables, span_pairs, table_shares
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.sampling.table_label_model import match_prior, naive_bayes_label_model
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.settings import TableSettings

TINY = {"generator_hidden": (32,), "critic_hidden": (32,), "noise_dim": 8}
LABEL_EVENT = "DP-SGD on the label model"


def _table(n: int = 400, seed: int = 0) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    x = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    z = rng.choice(["u", "v"], n)
    y = np.where(rng.random(n) < np.where(x == "a", 0.8, 0.2), "yes", "no")
    schema = Schema(
        (
            ColumnSpec("x", "categorical", categories=("a", "b", "c")),
            ColumnSpec("y", "categorical", categories=("no", "yes")),
            ColumnSpec("z", "categorical", categories=("u", "v")),
        ),
        target="y",
    )
    return pd.DataFrame({"x": x, "y": y, "z": z}), schema


def _exact_anchor(frame: pd.DataFrame, encoder: TableEncoder) -> PairAnchor:
    encoded = torch.from_numpy(encoder.encode(frame))
    pairs = span_pairs(encoder.spans)
    return PairAnchor(pairs, table_shares(noisy_pair_tables(encoded, pairs, 0.0, np.random.default_rng(0))))


def test_noise_free_tables_give_textbook_naive_bayes():
    frame, schema = _table()
    encoder = TableEncoder(schema)
    model = naive_bayes_label_model(_exact_anchor(frame, encoder), encoder, "y")
    assert model is not None and (model.start, model.stop) == (3, 5)
    probabilities = model.probabilities(torch.from_numpy(encoder.encode(frame))).numpy()
    for row in (0, 1, 2):
        x, z = frame.loc[row, "x"], frame.loc[row, "z"]
        scores = []
        for label in ("no", "yes"):
            given = frame[frame["y"] == label]
            prior = len(given) / len(frame)
            scores.append(prior * (given["x"] == x).mean() * (given["z"] == z).mean())
        np.testing.assert_allclose(probabilities[row], np.array(scores) / sum(scores), rtol=1e-4, atol=1e-6)


def test_the_prior_match_makes_the_mean_prediction_the_prior():
    frame, schema = _table()
    encoder = TableEncoder(schema)
    model = naive_bayes_label_model(_exact_anchor(frame, encoder), encoder, "y")
    prior = torch.softmax(model.classifier.net[0].bias.double(), dim=0)
    skewed = frame[frame["x"] == "a"]  # rows that lean to "yes": the raw mean prediction is off the prior
    encoded = torch.from_numpy(encoder.encode(skewed))
    assert abs(float(model.probabilities(encoded).mean(dim=0)[1]) - float(prior[1])) > 0.1
    match_prior(model, encoded)
    np.testing.assert_allclose(model.probabilities(encoded).mean(dim=0).double(), prior, atol=1e-4)


def test_a_fit_spends_nothing_on_it_and_it_reloads(tmp_path):
    frame, schema = _table(600)
    kwargs = {"epsilon": 2.0, "epochs": 1, "batch_size": 64, "seed": 0, **TINY}
    tables = TabularSynthesizer(label_model_kind="pair-tables", pair_warmup_steps=20, **kwargs).fit(frame, schema)
    sgd = TabularSynthesizer(pair_warmup_steps=20, label_model_kind="dp-sgd", **kwargs).fit(frame, schema)
    names = [e["name"] for e in tables.privacy_report()["events"]]
    assert LABEL_EVENT not in names and LABEL_EVENT in [e["name"] for e in sgd.privacy_report()["events"]]
    assert tables.training["label_model"] == "y" and tables.settings.to_dict()["label_model_kind"] == "pair-tables"
    # the quarter of ε the DP-SGD model takes stays with the GAN: less noise per critic step
    assert tables.training["noise_multiplier"] < sgd.training["noise_multiplier"]
    rows = tables.sample(3000, seed=1)
    share = (rows["y"] == "yes").mean()
    assert 0.3 < share < 0.7  # real share: 0.5·0.8 + 0.5·0.2 = 0.5
    tables.save(tmp_path / "m")
    again = TabularSynthesizer.load(tmp_path / "m")
    pd.testing.assert_frame_equal(again.sample(200, seed=4), tables.sample(200, seed=4))


def test_it_needs_the_pair_anchor_and_a_known_kind():
    with pytest.raises(InputError, match="pair_anchor"):
        TableSettings(label_model_kind="pair-tables", pair_anchor=False).check()
    with pytest.raises(InputError, match="label_model_kind"):
        TableSettings(label_model_kind="forest").check()
    TableSettings(label_model_kind="pair-tables", pair_anchor=False, label_model=False).check()
    assert "label_model_kind" not in TableSettings(label_model_kind="dp-sgd").to_dict()  # old models re-save unchanged
    assert TableSettings().label_model_kind == "auto"


def test_a_conditional_target_has_no_tables_and_no_label_model():
    frame, schema = _table()
    encoder = TableEncoder(schema)
    encoded = torch.from_numpy(encoder.encode(frame))
    pairs = span_pairs(encoder.spans, skip_column="y")
    anchor = PairAnchor(pairs, table_shares(noisy_pair_tables(encoded, pairs, 0.0, np.random.default_rng(0))))
    assert naive_bayes_label_model(anchor, encoder, "y") is None


def test_cli_flag_reaches_the_config():
    args = build_parser().parse_args(
        ["fit", "t.csv", "--epsilon", "1", "--out", "m", "--label-model-kind", "pair-tables"]
    )
    assert TabularSynthesizer(**synth_kwargs(args)).settings.label_model_kind == "pair-tables"


def test_auto_reads_the_tables_when_the_anchor_is_on_and_trains_otherwise():
    frame, schema = _table(400)
    kwargs = {"epsilon": 2.0, "epochs": 1, "batch_size": 64, "seed": 0, "label_model_kind": "auto", **TINY}
    with_anchor = TabularSynthesizer(pair_warmup_steps=10, **kwargs).fit(frame, schema)
    without = TabularSynthesizer(pair_anchor=False, **kwargs).fit(frame, schema)
    assert with_anchor.training["label_model_kind"] == "pair-tables"
    assert without.training["label_model_kind"] == "dp-sgd"
    assert LABEL_EVENT in [e["name"] for e in without.privacy_report()["events"]]
    assert TableSettings.from_dict({}).label_model_kind == "dp-sgd"  # a model saved before the option
