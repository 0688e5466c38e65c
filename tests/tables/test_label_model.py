"""The label model: DP-trained, charged to the ledger, redraws only the target, saved and loaded
without pickle, and lets an unconditional model sample a chosen target value."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file, save_file

from dpgan import InputError, ModelFileError, TabularSynthesizer
from dpgan.privacy.accounting import epsilon_of
from dpgan.serialization import HASH_KEY, content_hash
from dpgan.statistics.tables.pair_marginals import PAIRS_EVENT, PROBE_EVENT
from dpgan.tables.fit.preparation import REPAIR_EVENT
from dpgan.tables.sampling.label_model import LabelModel, label_span
from dpgan.training.aux_classifier import AuxClassifier


@pytest.fixture(scope="module")
def fitted(adult_small, adult_schema) -> TabularSynthesizer:
    """conftest's tiny model, with the label model trained by DP-SGD (what this file tests; the
    default reads it off the 2-way tables: tests/tables/test_table_label_model.py)."""
    synth = TabularSynthesizer(
        epsilon=3.0, delta=1e-5, epochs=1, batch_size=64, accountant="rdp", seed=0, label_model_kind="dp-sgd"
    )
    return synth.fit(adult_small, schema=adult_schema)


def linear_label_model(encoder, bias: tuple[float, float], weights: dict[int, tuple[float, float]] | None = None):
    """A hand-set linear classifier of income: logits = bias + Σ weights[slot]·x[slot] (slots of
    the encoded row without the income one-hot)."""
    start, stop = label_span(encoder, "income")
    classifier = AuxClassifier(encoder.width - (stop - start), stop - start, ())
    layer = classifier.net[0]
    with torch.no_grad():
        layer.weight.zero_()
        layer.bias.copy_(torch.tensor(bias))
        for slot, (w0, w1) in (weights or {}).items():
            layer.weight[:, slot] = torch.tensor([w0, w1])
    classifier.eval()
    return LabelModel("income", start, stop, (), classifier)


def feature_slot(encoder, column: str, category: str) -> int:
    """Index of a category's one-hot slot in the encoded row with the income span removed."""
    span = next(s for s in encoder.spans if s.column == column)
    transform = next(t for t in encoder.transforms if t.spec.name == column)
    slot = span.start + list(transform.spec.categories).index(category)
    income_start, income_stop = label_span(encoder, "income")
    return slot - (income_stop - income_start) if slot >= income_stop else slot


def test_label_model_is_trained_with_dp_on_its_share_and_recorded(fitted):
    events = fitted.privacy_report()["events"]
    assert [e["name"] for e in events] == [
        "row count",
        REPAIR_EVENT,
        "DP-SGD on the label model",
        PAIRS_EVENT,
        "DP-SGD on the critic",
    ]
    assert fitted.training["label_model"] == "income"
    label = events[2]
    cfg = fitted.settings
    rows = fitted.training["estimated_rows"]
    batch = min(cfg.label_model_batch_size, rows)
    assert label["sampling_rate"] == pytest.approx(batch / rows)
    assert label["count"] == math.ceil(cfg.label_model_epochs * rows / batch)
    # σ is calibrated so that the ledger up to here spends (preprocessing + label) fraction of ε
    spent = epsilon_of(fitted.ledger.entries[:3], fitted.delta, fitted.accountant)
    share = (0.01 + cfg.label_model_budget_fraction) * fitted.epsilon
    assert share * 0.97 <= spent <= share * (1 + 1e-6)
    assert fitted.privacy_report()["epsilon"] <= fitted.epsilon


def test_no_label_model_when_switched_off_or_without_a_target(adult_small, adult_schema):
    off = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, accountant="rdp", seed=0, label_model=False)
    off.fit(adult_small, schema=adult_schema)
    no_target = adult_schema.to_dict()
    no_target.pop("target")
    untargeted = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, accountant="rdp", seed=0)
    untargeted.fit(adult_small, schema=no_target)
    for synth in (off, untargeted):
        # without a target a tree's worth of Adult's pairs is under a quarter of them: a probe chooses
        probe = [PROBE_EVENT] if synth is untargeted else []
        assert [e["name"] for e in synth.privacy_report()["events"]] == [
            "row count",
            REPAIR_EVENT,
            *probe,
            PAIRS_EVENT,
            "DP-SGD on the critic",
        ]
        assert synth.label_model is None and synth.training["label_model"] is None


def test_redraw_changes_only_the_target_and_follows_the_probabilities(fitted, adult_small):
    encoder = fitted.encoder
    frame = adult_small.iloc[:500].reset_index(drop=True)
    always_high, _ = linear_label_model(encoder, (-30.0, 30.0)).redraw(frame, encoder, np.random.default_rng(0))
    assert (always_high["income"] == ">50K").all()
    assert always_high["income"].dtype == frame["income"].dtype
    pd.testing.assert_frame_equal(always_high.drop(columns="income"), frame.drop(columns="income"))
    rows = pd.concat([frame] * 8, ignore_index=True)  # 4,000 rows: P(>50K) = 0.3 within 0.03
    mixed, codes = linear_label_model(encoder, (0.0, math.log(0.3 / 0.7))).redraw(
        rows, encoder, np.random.default_rng(1)
    )
    assert abs((mixed["income"] == ">50K").mean() - 0.3) < 0.03
    assert np.array_equal(codes == 1, (mixed["income"] == ">50K").to_numpy())


def test_the_classifier_reads_the_other_columns_in_their_slots(fitted, adult_small):
    """Income follows sex exactly under a classifier that looks only at the 'Male' slot: fails if
    the target's slots are dropped from the wrong place in the row."""
    encoder = fitted.encoder
    male = feature_slot(encoder, "sex", "Male")
    model = linear_label_model(encoder, (20.0, -20.0), {male: (-40.0, 40.0)})
    redrawn, _ = model.redraw(adult_small, encoder, np.random.default_rng(0))
    expected = np.where(adult_small["sex"] == "Male", ">50K", "<=50K")
    assert (redrawn["income"].to_numpy() == expected).all()


def test_the_classifier_never_sees_the_target_it_redraws(fitted, adult_small):
    """A classifier with weights on every slot gives the same probabilities whatever the rows'
    current target: fails if any of the target's slots leak into its input."""
    encoder = fitted.encoder
    model = linear_label_model(encoder, (0.0, 0.0))
    with torch.no_grad():
        model.classifier.net[0].weight.copy_(
            torch.randn(model.classifier.net[0].weight.shape, generator=torch.Generator().manual_seed(0))
        )
    flipped = adult_small.assign(income=np.where(adult_small["income"] == ">50K", "<=50K", ">50K"))
    as_is = model.probabilities(torch.from_numpy(encoder.encode(adult_small)))
    torch.testing.assert_close(as_is, model.probabilities(torch.from_numpy(encoder.encode(flipped))))
    assert float(as_is[:, 1].std()) > 0.05  # the weights do read the other columns


def test_save_load_keeps_the_label_model_and_refuses_half_of_it(fitted, tmp_path):
    path = fitted.save(tmp_path / "model")
    weights = load_file(str(path / "generator.safetensors"))
    label_keys = {k for k in weights if k.startswith("label_model.")}
    assert label_keys == {"label_model." + k for k in fitted.label_model.classifier.state_dict()}
    assert set(weights) - label_keys == set(fitted.generator.state_dict())
    loaded = TabularSynthesizer.load(path)
    pd.testing.assert_frame_equal(fitted.sample(300, seed=4), loaded.sample(300, seed=4))

    save_file({k: v for k, v in weights.items() if k not in label_keys}, str(path / "generator.safetensors"))
    with pytest.raises(ModelFileError, match="content hash"):  # any edit is caught first ...
        TabularSynthesizer.load(path)
    rehash(path)  # ... and a re-signed half model is still refused as inconsistent
    with pytest.raises(ModelFileError, match="inconsistent"):
        TabularSynthesizer.load(path)
    save_file(weights, str(path / "generator.safetensors"))
    meta = json.loads((path / "model.json").read_text())
    meta["label_model"] = None
    (path / "model.json").write_text(json.dumps(meta))
    rehash(path)
    with pytest.raises(ModelFileError, match="inconsistent"):
        TabularSynthesizer.load(path)


def rehash(path) -> None:
    """What a deliberate editor could do: recompute model.json's content hash."""
    meta = json.loads((path / "model.json").read_text())
    meta[HASH_KEY] = content_hash(meta, (path / "generator.safetensors").read_bytes())
    (path / "model.json").write_text(json.dumps(meta))


def test_an_unconditional_model_samples_a_chosen_target_value(fitted):
    synth = copy.deepcopy(fitted)
    assert synth.condition is None
    high = synth.sample(300, seed=2, conditions={"income": ">50K"})
    assert len(high) == 300 and (high["income"] == ">50K").all()
    with pytest.raises(InputError, match="not a value of 'income'"):
        synth.sample(10, conditions={"income": "rich"})
    with pytest.raises(InputError, match="not conditional"):
        synth.sample(10, conditions={"sex": "Male"})
    synth.label_model = linear_label_model(synth.encoder, (30.0, -30.0))  # >50K practically never
    with pytest.raises(InputError, match="too rare"):
        synth.sample(10, seed=0, conditions={"income": ">50K"})


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"label_model_budget_fraction": 0.6}, "label_model_budget_fraction"),
        ({"label_model_budget_fraction": 0.0}, "label_model_budget_fraction"),
        ({"label_model_hidden": (0,)}, "label_model_hidden"),
        ({"label_model_lr": -1.0}, "label_model_lr"),
        ({"label_model_batch_size": 0}, "label_model_batch_size"),
    ],
)
def test_bad_label_model_settings_are_refused(overrides, message):
    with pytest.raises(InputError, match=message):
        TabularSynthesizer(epsilon=1.0, **overrides)
