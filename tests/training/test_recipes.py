"""Named training recipes (dp-gan, dp-wgan, dp-cgan, dtgan-d, dtgan-g), conditional generation, and the
privacy properties of each recipe's DP path: what is clipped together, what is noised, by how much."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from torch.func import functional_call, grad

from dpgan import Schema, TabularSynthesizer
from dpgan.cli import main
from dpgan.errors import BudgetError, InputError
from dpgan.inspection import inspect_model
from dpgan.models.tabular import TabularCritic
from dpgan.privacy import dpsgd
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.mlp_clipping import FEATURES_KEY, wgan_gp_clipped_sum
from dpgan.privacy.step import GeneratorHookStep
from dpgan.recipes import RECIPES
from dpgan.recipes.recipe import STRATEGY_SIDES
from dpgan.statistics.tables.marginals import MARGINALS_EVENT
from dpgan.statistics.tables.pair_marginals import PAIRS_EVENT, PROBE_EVENT
from dpgan.tables.codec.conditioning import PRIOR_FROM_DP_COUNTS, PRIOR_FROM_SCHEMA
from dpgan.tables.fit.preparation import REPAIR_EVENT
from dpgan.tables.reading.conform import validate_table
from dpgan.tables.settings import TABLE_SETTING_KEYS, TableSettings
from dpgan.training import critic_step as critic_step_module
from dpgan.training import dp_critic, dp_generator
from dpgan.training.config import TrainingConfig
from dpgan.training.dp_generator import shard_of_rows
from dpgan.training.generator_losses import GeneratorObjective, spherical_interpolate
from dpgan.training.strategies import STRATEGIES
from random_critic import random_critic

torch.set_num_threads(1)

EPSILON = 3.0
TINY = {"generator_hidden": (32,), "critic_hidden": (32,), "noise_dim": 8, "batch_size": 128}
DTGAN_G_TINY = {**TINY, "num_discriminators": 3, "batch_size": 32}
TRAINING_EVENT = {
    "dp-gan": "DP-SGD on the critic",
    "dp-wgan": "DP-SGD on the critic",
    "dp-cgan": "DP-SGD on the critic",
    "dtgan-d": "DP-SGD on the critic",
    "dtgan-g": "DP on the generator (dtgan-g)",
}
PRIOR_EVENT = "condition frequencies (income)"
CLASSIFIER_EVENT = "DP-SGD on the auxiliary classifier"
LABEL_EVENT = "DP-SGD on the label model"


def tiny_settings(recipe: str) -> dict:
    return DTGAN_G_TINY if recipe == "dtgan-g" else TINY


def schema_dict(adult_schema: Schema, **changes: dict) -> dict:
    """The Adult schema as a dict, with some columns' entries changed."""
    data = adult_schema.to_dict()
    for column in data["columns"]:
        column.update(changes.get(column["name"], {}))
    return data


# --- fits shared by the tests of this module (each recipe is fitted once) ---------------------------


@pytest.fixture(scope="module")
def recipe_fits(adult_small, adult_schema):
    cache: dict[str, tuple[TabularSynthesizer, dict]] = {}

    def get(recipe: str) -> tuple[TabularSynthesizer, dict]:
        if recipe not in cache:
            synth = TabularSynthesizer(
                recipe=recipe, epsilon=EPSILON, epochs=1, accountant="rdp", seed=0, **tiny_settings(recipe)
            )
            synth.fit(adult_small, schema=adult_schema)
            cache[recipe] = (synth, synth.privacy_report())
        return cache[recipe]

    return get


# --- 1. every recipe end to end -----------------------------------------------------------------------


def expected_events(recipe: str) -> list[str]:
    r = RECIPES[recipe]
    events = ["row count", REPAIR_EVENT]
    if r.conditional:
        events.append(PRIOR_EVENT)  # the bundled schema has no public frequencies
    if r.conditional and r.plugins.get("classifier_loss_weight", 0.0) > 0:
        events.append(CLASSIFIER_EVENT)
    if r.conditional:
        # the bundled schema's target is categorical; the conditional recipes condition on it, so the
        # 2-way anchor does not measure it and the label model is trained with DP-SGD ("auto"); the
        # others read it off the anchor's tables (no event of its own)
        events.append(LABEL_EVENT)
    if r.plugins.get("marginal_anchor", False):
        events.append(MARGINALS_EVENT)
    if r.conditional:
        # the anchor skips the condition (the target): a tree's worth of Adult's other pairs is at
        # most a quarter of them, so a DP probe of every pair chooses which to measure
        events.append(PROBE_EVENT)
    events.append(PAIRS_EVENT)  # the 2-way anchor is on by default for every recipe
    events.append(TRAINING_EVENT[recipe])
    return events


def test_expected_events_table_matches_the_recipes():
    """Guards the helper above: dp-gan/dp-wgan unconditional, the DTGANs have the classifier."""
    assert expected_events("dp-gan") == ["row count", REPAIR_EVENT, PAIRS_EVENT, "DP-SGD on the critic"]
    assert expected_events("dp-cgan") == [
        "row count",
        REPAIR_EVENT,
        PRIOR_EVENT,
        LABEL_EVENT,
        PROBE_EVENT,
        PAIRS_EVENT,
        "DP-SGD on the critic",
    ]
    assert expected_events("dtgan-d") == [
        "row count",
        REPAIR_EVENT,
        PRIOR_EVENT,
        CLASSIFIER_EVENT,
        LABEL_EVENT,
        PROBE_EVENT,
        PAIRS_EVENT,
        "DP-SGD on the critic",
    ]
    assert expected_events("dtgan-g")[-6:] == [
        CLASSIFIER_EVENT,
        LABEL_EVENT,
        MARGINALS_EVENT,
        PROBE_EVENT,
        PAIRS_EVENT,
        "DP on the generator (dtgan-g)",
    ]


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_recipe_fits_samples_reports_and_round_trips(recipe, recipe_fits, adult_schema, tmp_path):
    synth, report = recipe_fits(recipe)
    # the recipe's settings were used, with the test's network overrides on top
    for key, value in RECIPES[recipe].overrides.items():
        if key not in tiny_settings(recipe) and key != "epochs":  # epochs=1 is the test's
            assert getattr(synth.config, key) == value, key
    assert synth.config.epochs == 1.0
    for key, value in tiny_settings(recipe).items():
        assert getattr(synth.config, key) == value, key

    sample = synth.sample(120, seed=1)
    assert list(sample.columns) == adult_schema.names and len(sample) == 120
    validate_table(sample, adult_schema)

    assert report["epsilon"] <= EPSILON
    assert report["epsilon"] > 0.8 * EPSILON  # σ is calibrated to land on ε
    assert report["recipe"] == recipe and report["training"]["recipe"] == recipe
    names = [e["name"] for e in report["events"]]
    assert names == expected_events(recipe)
    training = report["events"][-1]
    assert training["count"] == synth.training["steps"] > 0
    if recipe == "dtgan-g":
        assert training["sampling_rate"] == pytest.approx(1.0 / DTGAN_G_TINY["num_discriminators"])
        # never the Poisson add/remove model: that is only a lower bound for a shard step
        assert training["sampling"] == "one-of-shards"
    else:
        assert training["sampling"] == "poisson"
        rows = synth.training["estimated_rows"]
        # the expected batch is the batch size, capped at max_sample_rate of the noisy row count
        expected = min(TINY["batch_size"], synth.config.max_sample_rate * rows, rows)
        assert training["sampling_rate"] == pytest.approx(expected / rows)
    if RECIPES[recipe].conditional:
        assert synth.training["condition"] == "income"
        assert synth.training["condition_prior_source"] == PRIOR_FROM_DP_COUNTS
    else:
        assert synth.condition is None and synth.training["condition"] is None

    path = synth.save(tmp_path / "model")
    loaded = TabularSynthesizer.load(path)
    assert loaded.recipe.name == recipe
    assert loaded.config == synth.config
    assert loaded.condition == synth.condition
    pd.testing.assert_frame_equal(synth.sample(60, seed=7), loaded.sample(60, seed=7))
    if synth.condition is not None:
        pd.testing.assert_frame_equal(
            synth.sample(30, seed=3, conditions={"income": ">50K"}),
            loaded.sample(30, seed=3, conditions={"income": ">50K"}),
        )
    inspected = inspect_model(path)
    assert inspected["recipe"] == recipe
    assert [e["name"] for e in inspected["events"]] == names
    assert inspected["epsilon"] == pytest.approx(report["epsilon"])


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_auxiliary_classifier_only_for_recipes_with_a_classifier_loss(recipe, recipe_fits):
    synth, report = recipe_fits(recipe)
    has_classifier = CLASSIFIER_EVENT in [e["name"] for e in report["events"]]
    assert has_classifier == (synth.settings.classifier_loss_weight > 0 and synth.condition is not None)
    assert has_classifier == (recipe in ("dtgan-d", "dtgan-g"))


def test_classifier_is_trained_only_when_its_loss_has_weight(adult_small, adult_schema):
    """dtgan-d with classifier_loss_weight=0 trains no classifier and spends nothing on one: every
    DP-SGD release is charged by the private step, so a classifier trained would be in the ledger
    (the default dtgan-d fit of `recipe_fits` has the event: test_recipe_fits_samples_reports_...)."""
    synth = TabularSynthesizer(
        recipe="dtgan-d",
        epsilon=EPSILON,
        epochs=1,
        accountant="rdp",
        seed=0,
        classifier_loss_weight=0.0,
        label_model=False,  # the label model trains a classifier of its own
        **TINY,
    )
    synth.fit(adult_small.iloc[:300], schema=adult_schema)
    names = [e.name for e in synth.ledger.entries]
    assert CLASSIFIER_EVENT not in names and names[-1] == "DP-SGD on the critic"
    assert not any(
        e.name.startswith("DP-SGD on the") and e is not synth.ledger.entries[-1] for e in synth.ledger.entries
    )


def test_dp_wgan_critic_weights_stay_within_the_clip(recipe_fits):
    synth, _ = recipe_fits("dp-wgan")
    clip = synth.config.weight_clip
    assert clip == 0.05
    params = [p.detach() for p in synth.critic_for_evaluation.parameters()]
    assert params
    assert all(float(p.abs().max()) <= clip + 1e-9 for p in params)
    assert any(float(p.abs().max()) == pytest.approx(clip) for p in params)  # the clip binds somewhere


def test_dtgan_g_saves_no_critic_tensors(recipe_fits, tmp_path):
    from safetensors.torch import load_file

    synth, _ = recipe_fits("dtgan-g")
    path = synth.save(tmp_path / "model")
    tensors = load_file(str(path / "generator.safetensors"))
    state = synth.generator.state_dict()
    assert set(tensors) == set(state) | {"label_model." + k for k in synth.label_model.classifier.state_dict()}
    assert all(tuple(tensors[k].shape) == tuple(state[k].shape) for k in state)
    critic_shapes = {tuple(p.shape) for p in synth.critic_for_evaluation.parameters()}
    assert (1, synth.config.critic_hidden[-1]) in critic_shapes  # the critic's head...
    assert (1, synth.config.critic_hidden[-1]) not in {tuple(t.shape) for t in tensors.values()}  # ...is not saved
    meta = json.loads((path / "model.json").read_text())
    assert not any("shard" in k or "critic" in k for k in meta)


# --- 2. conditional generation ----------------------------------------------------------------------


@pytest.mark.parametrize("recipe", ["dp-cgan", "dtgan-d", "dtgan-g"])
@pytest.mark.parametrize("value", [">50K", "<=50K"])
def test_conditions_fix_the_value_of_every_sampled_row(recipe, value, recipe_fits):
    synth, _ = recipe_fits(recipe)
    sample = synth.sample(300, seed=2, conditions={"income": value})
    assert len(sample) == 300 and set(sample["income"]) == {value}


def test_bad_conditions_are_refused(recipe_fits):
    conditional, _ = recipe_fits("dp-cgan")
    with pytest.raises(InputError, match="not a value"):
        conditional.sample(10, conditions={"income": "rich"})
    with pytest.raises(InputError, match="cannot condition on"):
        conditional.sample(10, conditions={"sex": "Male"})
    with pytest.raises(InputError, match="cannot condition on"):
        conditional.sample(10, conditions={"income": ">50K", "sex": "Male"})
    unconditional, _ = recipe_fits("dp-gan")  # its label model takes the target, nothing else
    with pytest.raises(InputError, match="not conditional"):
        unconditional.sample(10, conditions={"sex": "Male"})


def test_dp_prior_is_a_distribution_recorded_in_the_ledger(recipe_fits):
    synth, report = recipe_fits("dp-cgan")
    condition = synth.condition
    assert condition is not None and condition.column == "income"
    assert condition.categories == ("<=50K", ">50K")
    assert condition.prior_source == PRIOR_FROM_DP_COUNTS
    assert sum(condition.prior) == pytest.approx(1.0) and min(condition.prior) > 0
    event = next(e for e in report["events"] if e["name"] == PRIOR_EVENT)
    assert event["sampling_rate"] == 1.0 and event["count"] == 1
    # the same σ as the other preprocessing reads
    assert event["noise_multiplier"] == pytest.approx(synth.training["preprocessing_noise_multiplier"])


def test_public_frequencies_cost_nothing_and_become_the_prior(adult_small, adult_schema):
    schema = Schema.from_dict(schema_dict(adult_schema, income={"frequencies": [3, 1]}))
    # without the label model, which would redraw income from its classifier instead of the prior
    synth = TabularSynthesizer(
        recipe="dp-cgan", epsilon=EPSILON, epochs=1, accountant="rdp", seed=0, label_model=False, **TINY
    )
    synth.fit(adult_small, schema=schema)
    names = [e.name for e in synth.ledger.entries]
    assert names == ["row count", REPAIR_EVENT, PROBE_EVENT, PAIRS_EVENT, "DP-SGD on the critic"]
    assert synth.condition.prior_source == PRIOR_FROM_SCHEMA
    assert synth.training["condition_prior_source"] == PRIOR_FROM_SCHEMA
    torch.testing.assert_close(synth.condition.probabilities(), torch.tensor([0.75, 0.25], dtype=torch.float64))
    # default sampling follows the prior (the condition is imposed, so the share is exact in law)
    share = float((synth.sample(2000, seed=0)["income"] == ">50K").mean())
    assert abs(share - 0.25) < 0.05


def test_condition_on_another_column_with_an_unconditional_recipe(adult_small, adult_schema, tmp_path):
    synth = TabularSynthesizer(
        recipe="dp-gan", condition="sex", epsilon=EPSILON, epochs=1, accountant="rdp", seed=0, **TINY
    )
    synth.fit(adult_small.iloc[:300], schema=adult_schema)
    assert synth.condition is not None and synth.condition.column == "sex"
    assert [e.name for e in synth.ledger.entries] == [
        "row count",
        REPAIR_EVENT,
        "condition frequencies (sex)",
        PAIRS_EVENT,  # the label model (income) is read off the 2-way tables: no event of its own
        "DP-SGD on the critic",
    ]
    assert set(synth.sample(100, seed=0, conditions={"sex": "Female"})["sex"]) == {"Female"}
    with pytest.raises(InputError, match="cannot condition on"):
        synth.sample(10, conditions={"race": "White"})
    # the generator's condition and the label model's target together
    both = synth.sample(40, seed=0, conditions={"sex": "Female", "income": ">50K"})
    assert len(both) == 40 and set(both["sex"]) == {"Female"} and set(both["income"]) == {">50K"}
    loaded = TabularSynthesizer.load(synth.save(tmp_path / "m"))
    assert set(loaded.sample(50, seed=1, conditions={"sex": "Male"})["sex"]) == {"Male"}


@pytest.mark.parametrize(
    "recipe, condition, changes, message",
    [
        ("dp-gan", "fnlwgt", {}, "categorical"),
        ("dp-gan", "age", {}, "categorical"),
        ("dp-cgan", "no-such-column", {}, "not in the table"),
        ("dp-gan", "workclass", {"workclass": {"nullable": True}}, "nullable"),
        ("dp-cgan", None, {"income": {"nullable": True}}, "nullable"),
    ],
)
def test_bad_condition_columns_are_refused_before_training(
    recipe, condition, changes, message, adult_small, adult_schema, monkeypatch
):
    import dpgan.training.strategies as strategies

    monkeypatch.setattr(strategies, "train_dp_critic", lambda *a, **k: pytest.fail("trained"))
    schema = Schema.from_dict(schema_dict(adult_schema, **changes))
    synth = TabularSynthesizer(recipe=recipe, condition=condition, accountant="rdp", seed=0, **TINY)
    with pytest.raises(InputError, match=message):
        synth.fit(adult_small, schema=schema)


@pytest.mark.parametrize("recipe", ["dp-cgan", "dtgan-d", "dtgan-g"])
def test_conditional_recipe_without_target_or_condition_is_refused(recipe, adult_small, adult_schema):
    data = schema_dict(adult_schema)
    del data["target"]
    synth = TabularSynthesizer(recipe=recipe, accountant="rdp", seed=0, **tiny_settings(recipe))
    with pytest.raises(InputError, match="condition"):
        synth.fit(adult_small, schema=Schema.from_dict(data))


def test_condition_must_be_a_column_name():
    with pytest.raises(InputError):
        TabularSynthesizer(recipe="dp-cgan", condition=3)  # type: ignore[arg-type]


# --- 3. DP-path properties of the critic-side recipes ------------------------------------------------


@pytest.fixture(scope="module")
def encoded(encode_adult):
    """200 encoded Adult rows, their spans, and the income condition (public prior)."""
    return encode_adult(200)


def tiny_config(**changes) -> TrainingConfig:
    base = {
        "batch_size": 32,
        "noise_dim": 8,
        "generator_hidden": (16,),
        "critic_hidden": (16,),
        "ema_decay": 0.0,
        "n_critic": 2,
    }
    return TrainingConfig(**{**base, **changes})


class Recorder:
    """The engine's recorder: per release, the clipped sum it noised, the noise std and the divisor."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, record: dict) -> None:
        self.calls.append({**record, "clipped": {k: v.detach().clone() for k, v in record["clipped"].items()}})


class EmptySampler:
    def sample(self) -> torch.Tensor:
        return torch.zeros(0, dtype=torch.long)


def run_critic(
    encoded, config, *, steps=4, sigma=0.7, condition=False, objective=None, recorder=None, sampler=None, ledger=None
):
    data, spans, cond = encoded
    return dp_critic.train_dp_critic(
        data,
        spans,
        config,
        sample_rate=config.batch_size / data.shape[0],
        expected_batch_size=float(config.batch_size),
        noise_multiplier=sigma,
        steps=steps,
        generator=torch.Generator().manual_seed(0),
        ledger=ledger if ledger is not None else (PrivacyLedger() if sigma > 0 else None),
        recorder=recorder,
        sampler=sampler,
        condition=cond if condition else None,
        objective=objective,
    )


CRITIC_CONFIGS = {
    "dp-gan": {},
    "dp-wgan": {k: v for k, v in RECIPES["dp-wgan"].overrides.items()},
    "dp-cgan": {k: v for k, v in RECIPES["dp-cgan"].overrides.items()},
    "dp-cgan-microbatches": {**RECIPES["dp-cgan"].overrides, "microbatches": 4},
    "dtgan-d": dict(RECIPES["dtgan-d"].overrides),
    "dtgan-d-spherical": {**RECIPES["dtgan-d"].overrides, "interpolation": "spherical"},
}


def objective_for(config: TrainingConfig) -> GeneratorObjective:
    return GeneratorObjective(config.loss, info_weight=config.info_loss_weight)


@pytest.mark.parametrize("name", list(CRITIC_CONFIGS))
def test_each_critic_step_is_exactly_one_noised_sum(name, encoded):
    """One release per critic step, noise σ·sensitivity·C, and the ledger's event equals what ran.
    Nothing is noised but the parameters' gradients and, on generator steps with an information
    loss, the feature sums clipped with them: they share the same one draw."""
    recorder, ledger = Recorder(), PrivacyLedger()
    config = tiny_config(**CRITIC_CONFIGS[name])
    conditional = name.startswith(("dp-cgan", "dtgan"))
    result = run_critic(
        encoded,
        config,
        steps=4,
        condition=conditional,
        objective=objective_for(config),
        recorder=recorder,
        ledger=ledger,
    )
    assert result.steps == 4 and len(recorder.calls) == 4
    factor = 2.0 if config.microbatches else 1.0
    assert all(c["noise_std"] == pytest.approx(0.7 * factor * config.max_grad_norm) for c in recorder.calls)
    assert all(c["max_norm"] == config.max_grad_norm for c in recorder.calls)
    names = {n for n, _ in result.critic.named_parameters()}
    for index, call in enumerate(recorder.calls):
        generator_step = (index + 1) % config.n_critic == 0
        features = (
            {FEATURES_KEY} if generator_step and config.info_loss_weight > 0 and not config.microbatches else set()
        )
        assert set(call["clipped"]) == names | features
    (entry,) = ledger.entries
    data = encoded[0]
    assert (entry.name, entry.count, entry.noise_multiplier) == ("DP-SGD on the critic", 4, 0.7)
    assert entry.sampling_rate == pytest.approx(config.batch_size / data.shape[0])
    assert all(torch.isfinite(p).all() for p in result.generator.parameters())


@pytest.mark.parametrize("name", list(CRITIC_CONFIGS))
def test_fake_term_is_outside_the_noised_sum(name, encoded):
    """With an empty Poisson batch the noised sum is zero: the fake term never enters it."""
    recorder = Recorder()
    config = tiny_config(**CRITIC_CONFIGS[name])
    conditional = name.startswith(("dp-cgan", "dtgan"))
    run_critic(
        encoded,
        config,
        steps=3,
        condition=conditional,
        objective=objective_for(config),
        recorder=recorder,
        sampler=EmptySampler(),
    )
    assert len(recorder.calls) == 3
    for call in recorder.calls:
        assert call["units"] == 0
        assert all(float(v.abs().max()) == 0.0 for v in call["clipped"].values())


@pytest.mark.parametrize("name", ["dp-gan", "dp-wgan", "dp-cgan", "dp-cgan-microbatches"])
def test_with_no_noise_and_no_records_the_critic_sees_only_the_fake_term(name, encoded, monkeypatch):
    """σ = 0 and empty batches: the noised part is exactly zero and D's gradient is the fake term's."""
    recorder = Recorder()
    fake_grads: list[dict] = []
    original_fake = dp_critic.fake_term_gradient

    def fake_spy(*args, **kwargs):
        out = original_fake(*args, **kwargs)
        fake_grads.append({k: v.detach().clone() for k, v in out.items()})
        return out

    monkeypatch.setattr(dp_critic, "fake_term_gradient", fake_spy)
    critic_grads: list[dict] = []
    original_make = dp_critic.make_optimizer

    def make_spy(config, params, lr):
        params = list(params)
        optimizer = original_make(config, params, lr)
        if params[-1].shape == (1,):  # the critic's output bias: this is D's optimizer

            def record(opt, args, kwargs):
                critic_grads.append([p.grad.detach().clone() for p in params])

            optimizer.register_step_pre_hook(record)
        return optimizer

    monkeypatch.setattr(dp_critic, "make_optimizer", make_spy)
    config = tiny_config(**CRITIC_CONFIGS[name])
    result = run_critic(
        encoded,
        config,
        steps=3,
        sigma=0.0,
        condition=name.startswith("dp-cgan"),
        recorder=recorder,
        sampler=EmptySampler(),
    )
    assert len(recorder.calls) == len(fake_grads) == len(critic_grads) == 3
    for call in recorder.calls:
        assert call["noise_std"] == 0.0 and all(float(v.abs().max()) == 0.0 for v in call["clipped"].values())
    names = [n for n, _ in result.critic.named_parameters()]
    for fake, seen in zip(fake_grads, critic_grads):
        assert len(seen) == len(names)
        for n, g in zip(names, seen):
            torch.testing.assert_close(g, fake[n], rtol=0, atol=0)


def test_microbatches_double_the_noise_and_per_example_does_not(encoded):
    sigma = 0.9
    for microbatches, factor in ((4, 2.0), (0, 1.0)):
        recorder = Recorder()
        config = tiny_config(**{**RECIPES["dp-cgan"].overrides, "microbatches": microbatches})
        run_critic(encoded, config, steps=2, sigma=sigma, condition=True, recorder=recorder)
        assert [c["noise_std"] for c in recorder.calls] == [pytest.approx(factor * sigma * config.max_grad_norm)] * 2
        divisor = microbatches if microbatches else config.batch_size
        assert [c["divisor"] for c in recorder.calls] == [pytest.approx(divisor)] * 2


def test_training_by_sampling_weights_are_the_prior_ratio(encoded):
    data, _, condition = encoded
    config = tiny_config(training_by_sampling=True)
    weights = dp_critic.importance_weights(condition, config, data)
    ratio = condition.probabilities(True) / condition.probabilities(False)
    codes = condition.codes_of_encoded(data)
    torch.testing.assert_close(weights, ratio[codes].to(data.dtype))
    assert weights.unique().numel() == 2  # both classes occur and are weighted differently
    assert torch.equal(dp_critic.importance_weights(condition, tiny_config(), data), torch.ones(len(data)))
    assert torch.equal(dp_critic.importance_weights(None, config, data), torch.ones(len(data)))


# --- fast clipping: joint features, real weights --------------------------------------------------------

DIM = 6


def make_critic(hidden=(16,), seed=0) -> TabularCritic:
    return random_critic(DIM, hidden, seed)


def make_batch(batch: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    x_real = torch.randn(batch, DIM, generator=gen, dtype=torch.float64)
    x_fake = torch.randn(batch, DIM, generator=gen, dtype=torch.float64)
    alpha = torch.rand(batch, 1, generator=gen, dtype=torch.float64)
    weight = 0.2 + 2.0 * torch.rand(batch, generator=gen, dtype=torch.float64)
    return x_real, x_fake, alpha, weight


def flat_all(summed: dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.cat([summed[k].reshape(-1) for k in sorted(summed)])


@pytest.mark.parametrize("hidden", [(16,), (16, 12)], ids=str)
def test_feature_vector_is_clipped_jointly_with_the_gradient(hidden):
    critic = make_critic(hidden)
    x_real, x_fake, alpha, _ = make_batch(10, seed=1)
    kwargs = {"gp_weight": 10.0, "max_norm": 1e9}
    plain, norms0 = wgan_gp_clipped_sum(critic, x_real, x_fake, alpha, feature_scale=0.0, **kwargs)
    joint, norms = wgan_gp_clipped_sum(critic, x_real, x_fake, alpha, feature_scale=0.1, **kwargs)
    assert FEATURES_KEY not in plain
    with torch.no_grad():
        f = critic.features(x_real)
    features = 0.1 * torch.cat([f, f.pow(2)], dim=1)
    torch.testing.assert_close(norms, torch.sqrt(norms0.pow(2) + features.pow(2).sum(1)))
    assert bool((norms > norms0 + 1e-6).all())
    # unclipped, the extra entry is the plain sum of the features and the gradients are unchanged
    torch.testing.assert_close(joint[FEATURES_KEY], features.sum(0))
    for name in plain:
        torch.testing.assert_close(joint[name], plain[name])
    # clipped, one factor per record scales its gradient and its features alike
    clip = float(norms.median())
    clipped, _ = wgan_gp_clipped_sum(critic, x_real, x_fake, alpha, gp_weight=10.0, max_norm=clip, feature_scale=0.1)
    factors = torch.clamp(clip / (norms + 1e-12), max=1.0)
    torch.testing.assert_close(clipped[FEATURES_KEY], (factors[:, None] * features).sum(0))


@pytest.mark.parametrize("scale", [1.0, 30.0, 1000.0])
def test_neighbouring_batches_move_gradient_and_features_together_by_at_most_c(scale):
    """One extra record (possibly extreme) moves the whole released vector, features included, by ≤ C."""
    critic = make_critic((16, 12), seed=3)
    C = 1.0
    x_real, x_fake, alpha, _ = make_batch(12, seed=4)
    extra = scale * torch.randn(1, DIM, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    kwargs = {"gp_weight": 10.0, "max_norm": C, "feature_scale": 0.5}
    base, _ = wgan_gp_clipped_sum(critic, x_real, x_fake, alpha, **kwargs)
    neighbour, norms = wgan_gp_clipped_sum(
        critic, torch.cat([x_real, extra]), torch.cat([x_fake, x_fake[:1]]), torch.cat([alpha, alpha[:1]]), **kwargs
    )
    assert set(base) == set(neighbour) and FEATURES_KEY in base
    moved = float((flat_all(neighbour) - flat_all(base)).norm())
    assert moved <= C * (1 + 1e-9)
    if scale >= 30.0:
        with torch.no_grad():
            f = critic.features(extra)
        assert float(0.5 * torch.cat([f, f.pow(2)], 1).norm()) > C  # the features alone exceed C...
        assert float(norms[-1]) > C and moved == pytest.approx(C, rel=1e-6)  # ...and are clipped with the gradient


@pytest.mark.parametrize("one_sided", [False, True])
def test_real_weight_matches_the_torch_func_reference(one_sided):
    critic = make_critic((16, 12), seed=6)
    x_real, x_fake, alpha, weight = make_batch(9, seed=7)
    gp = 10.0

    def d_out(params, x):
        return functional_call(critic, params, (x.unsqueeze(0),)).squeeze()

    def record_loss(params, xr, xf, a, w):
        x_hat = a * xr + (1.0 - a) * xf
        g = grad(d_out, argnums=1)(params, x_hat)
        excess = torch.clamp(g.norm() - 1.0, min=0.0) if one_sided else g.norm() - 1.0
        return -w * d_out(params, xr) + gp * excess**2

    params = {k: v.detach() for k, v in critic.named_parameters()}
    per_example = dpsgd.per_example_gradients(record_loss, params, x_real, x_fake, alpha, weight)
    ref_norms = dpsgd.per_example_norms(per_example)
    C = float(ref_norms.median())
    ref = {k: g.sum(0) for k, g in dpsgd.clip_per_example(per_example, C).items()}
    fast, norms = wgan_gp_clipped_sum(
        critic, x_real, x_fake, alpha, gp_weight=gp, max_norm=C, one_sided=one_sided, real_weight=weight
    )
    torch.testing.assert_close(norms, ref_norms, rtol=1e-9, atol=1e-9)
    assert bool((ref_norms > C).any()) and bool((ref_norms < C).any())  # clipping both binds and not
    assert set(fast) == set(ref)
    for k in ref:
        torch.testing.assert_close(fast[k], ref[k], rtol=1e-9, atol=1e-9)
    # a weight of 1 is the unweighted loss
    ones, _ = wgan_gp_clipped_sum(
        critic, x_real, x_fake, alpha, gp_weight=gp, max_norm=C, one_sided=one_sided, real_weight=torch.ones(9)
    )
    unweighted, _ = wgan_gp_clipped_sum(critic, x_real, x_fake, alpha, gp_weight=gp, max_norm=C, one_sided=one_sided)
    for k in ones:
        torch.testing.assert_close(ones[k], unweighted[k])


def test_explicit_interpolate_replaces_the_linear_one():
    critic = make_critic((16,), seed=8)
    x_real, x_fake, alpha, _ = make_batch(7, seed=9)
    linear = alpha * x_real + (1 - alpha) * x_fake
    a, na = wgan_gp_clipped_sum(critic, x_real, x_fake, alpha, gp_weight=10.0, max_norm=1.0)
    b, nb = wgan_gp_clipped_sum(critic, x_real, x_fake, alpha, gp_weight=10.0, max_norm=1.0, x_hat=linear)
    torch.testing.assert_close(na, nb)
    slerp = spherical_interpolate(x_real, x_fake, alpha)
    _, nc = wgan_gp_clipped_sum(critic, x_real, x_fake, alpha, gp_weight=10.0, max_norm=1.0, x_hat=slerp)
    assert not torch.allclose(na, nc)


# --- spherical interpolation ---------------------------------------------------------------------------


def test_spherical_interpolation_end_points_and_norm():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(20, 5, generator=gen, dtype=torch.float64)
    y = torch.randn(20, 5, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(spherical_interpolate(x, y, torch.ones(20, 1, dtype=torch.float64)), x)
    torch.testing.assert_close(spherical_interpolate(x, y, torch.zeros(20, 1, dtype=torch.float64)), y)
    # unit orthogonal rows: the midpoint is on the unit circle (a linear midpoint has norm 1/√2)
    u = torch.eye(5, dtype=torch.float64)
    v = torch.roll(u, 1, dims=1)
    mid = spherical_interpolate(u, v, torch.full((5, 1), 0.5, dtype=torch.float64))
    torch.testing.assert_close(mid.norm(dim=1), torch.ones(5, dtype=torch.float64))
    torch.testing.assert_close(mid, (u + v) / math.sqrt(2.0))
    # every point on the arc between unit rows keeps unit norm
    for a in (0.1, 0.3, 0.9):
        arc = spherical_interpolate(u, v, torch.full((5, 1), a, dtype=torch.float64))
        torch.testing.assert_close(arc.norm(dim=1), torch.ones(5, dtype=torch.float64))


def test_spherical_interpolation_of_parallel_rows_is_linear():
    x = torch.tensor([[2.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 3.0, 0.0]])
    y = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.5, 0.0]])
    for a in (0.0, 0.25, 0.5, 0.8, 1.0):
        alpha = torch.full((3, 1), a)
        out = spherical_interpolate(x, y, alpha)
        assert torch.isfinite(out).all()
        torch.testing.assert_close(out, alpha * x + (1 - alpha) * y, rtol=1e-5, atol=1e-5)


def test_spherical_interpolation_is_row_by_row():
    """Row i of the interpolate depends on x_i and y_i only (the penalty stays a per-record term)."""
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(6, 4, generator=gen), torch.randn(6, 4, generator=gen)
    alpha = torch.rand(6, 1, generator=gen)
    full = spherical_interpolate(x, y, alpha)
    for i in range(6):
        torch.testing.assert_close(spherical_interpolate(x[i : i + 1], y[i : i + 1], alpha[i : i + 1]), full[i : i + 1])


# --- 3b. dtgan-g: DP on the generator ---------------------------------------------------------------------


def hook_step(max_norm: float, sigma: float, batch: int, seed: int = 0, recorder=None) -> GeneratorHookStep:
    return dp_generator.generator_hook_step(
        num_shards=3,
        batch_size=batch,
        noise_multiplier=sigma,
        max_norm=max_norm,
        steps=1,
        ledger=PrivacyLedger() if sigma > 0 else None,
        generator=torch.Generator().manual_seed(seed),
        recorder=recorder,
    )


def test_clip_hook_without_noise_clips_long_rows_and_keeps_short_ones():
    grad_in = torch.tensor([[0.3, 0.4, 0.0], [3.0, 4.0, 0.0], [0.0, 0.0, -10.0], [0.0, 0.0, 0.0]])
    out = hook_step(1.0, 0.0, batch=4).hook()(grad_in)
    torch.testing.assert_close(out[0], grad_in[0], rtol=0, atol=0)
    torch.testing.assert_close(out[3], grad_in[3], rtol=0, atol=0)
    torch.testing.assert_close(out[1], torch.tensor([0.6, 0.8, 0.0]))
    torch.testing.assert_close(out[2], torch.tensor([0.0, 0.0, -1.0]))
    assert bool((out.norm(dim=1) <= 1.0 + 1e-6).all())


def test_clip_hook_noise_is_sigma_times_two_c_root_b():
    sigma, C, B = 0.01, 0.5, 4000
    out = hook_step(C, sigma, batch=B, seed=1).hook()(torch.zeros(B, 10))
    std = sigma * 2 * C * math.sqrt(B)
    assert abs(float(out.std()) - std) < 0.03 * std
    assert abs(float(out.mean())) < 0.03 * std
    again = hook_step(C, sigma, batch=B, seed=1).hook()(torch.zeros(B, 10))
    torch.testing.assert_close(out, again)  # from the given generator only


def test_clip_hook_charges_one_step_and_refuses_past_its_reservation():
    step = hook_step(1.0, 1.0, batch=2)
    step.hook()(torch.ones(2, 3))
    with pytest.raises(BudgetError, match="reserved steps are spent"):
        step.hook()(torch.ones(2, 3))
    with pytest.raises(InputError, match="reserved for 2 rows"):
        hook_step(1.0, 1.0, batch=2).hook()(torch.ones(5, 3))


def test_step_sensitivity_is_two_c_root_b():
    assert GeneratorHookStep.sensitivity(1.0, 64) == pytest.approx(16.0)
    assert GeneratorHookStep.sensitivity(0.5, 9) == pytest.approx(3.0)
    assert GeneratorHookStep.sensitivity(2.0, 1) == pytest.approx(4.0)


def test_shards_are_a_keyed_per_row_hash():
    rows = np.random.default_rng(0).normal(size=(200, 7)).astype(np.float32)
    key = b"k" * 32
    ids = shard_of_rows(rows, 5, key)
    assert ids.shape == (200,) and ids.min() >= 0 and ids.max() < 5
    assert set(ids.tolist()) == set(range(5))
    np.testing.assert_array_equal(ids, shard_of_rows(rows, 5, key))
    assert (shard_of_rows(rows, 5, b"j" * 32) != ids).any()  # the key matters
    # a neighbouring table: every other row keeps its shard
    new_row = np.full((1, 7), 99.0, dtype=np.float32)
    np.testing.assert_array_equal(shard_of_rows(np.vstack([rows, new_row]), 5, key)[:200], ids)
    np.testing.assert_array_equal(shard_of_rows(np.vstack([new_row, rows]), 5, key)[1:], ids)
    np.testing.assert_array_equal(shard_of_rows(np.delete(rows, 17, axis=0), 5, key), np.delete(ids, 17))
    # the shard is a function of the row's content, not of its position
    np.testing.assert_array_equal(shard_of_rows(rows[::-1], 5, key), ids[::-1])


def test_dtgan_g_noise_is_sigma_times_the_step_sensitivity(encoded):
    data, spans, condition = encoded
    recorder, ledger = Recorder(), PrivacyLedger()
    config = tiny_config(**{**RECIPES["dtgan-g"].overrides, "num_discriminators": 3, "batch_size": 16, "n_critic": 1})
    config.ema_decay = 0.0
    objective = GeneratorObjective(config.loss, info_weight=config.info_loss_weight)
    result = dp_generator.train_dp_generator(
        data,
        spans,
        config,
        noise_multiplier=1.3,
        steps=2,
        generator=torch.Generator().manual_seed(0),
        shard_key=b"s" * 32,
        ledger=ledger,
        condition=condition,
        objective=objective,
        recorder=recorder,
    )
    assert result.steps == 2 and len(recorder.calls) == 2
    std = 1.3 * 2.0 * config.max_grad_norm * math.sqrt(16)
    assert [c["noise_std"] for c in recorder.calls] == [pytest.approx(std)] * 2
    (entry,) = ledger.entries
    assert (entry.count, entry.noise_multiplier, entry.sampling) == (2, 1.3, "one-of-shards")
    assert entry.num_shards == 3


# --- 4. command line ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_model(adult_small, adult_schema, tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    data = root / "small.csv"
    adult_small.iloc[:300].to_csv(data, index=False)
    schema = root / "schema.json"
    adult_schema.to_json(schema)
    model = root / "model"
    code = main(
        [
            "fit",
            str(data),
            "--recipe",
            "dp-cgan",
            "--schema",
            str(schema),
            "--epsilon",
            "3",
            "--epochs",
            "1",
            "--seed",
            "0",
            "--accountant",
            "rdp",
            "--out",
            str(model),
            "--quiet",
        ]
    )
    assert code == 0
    return model


def test_cli_fits_a_recipe_and_samples_a_condition(cli_model, tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert (
        main(["sample", str(cli_model), "-n", "50", "--condition", "income=>50K", "--seed", "1", "--out", str(out)])
        == 0
    )
    frame = pd.read_csv(out)
    assert len(frame) == 50 and set(frame["income"]) == {">50K"}
    capsys.readouterr()
    assert main(["inspect", str(cli_model), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["recipe"] == "dp-cgan" and report["training"]["condition"] == "income"
    assert [e["name"] for e in report["events"]] == [
        "row count",
        REPAIR_EVENT,
        PRIOR_EVENT,
        LABEL_EVENT,
        PROBE_EVENT,
        PAIRS_EVENT,
        "DP-SGD on the critic",
    ]
    assert report["epsilon"] <= 3.0


@pytest.mark.parametrize(
    "condition", ["income", "=>50K", "income=rich", "sex=Male"], ids=["no-equals", "no-column", "value", "column"]
)
def test_cli_bad_condition_is_one_line_without_traceback(condition, cli_model, tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["sample", str(cli_model), "-n", "5", "--condition", condition, "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert err.startswith("dpgan: error:") and err.strip().count("\n") == 0 and "Traceback" not in err
    assert not out.exists()


def test_cli_condition_column_with_the_default_recipe(adult_small, adult_schema, tmp_path, capsys):
    data = tmp_path / "small.csv"
    adult_small.iloc[:300].to_csv(data, index=False)
    schema = tmp_path / "schema.json"
    adult_schema.to_json(schema)
    model = tmp_path / "model"
    args = ["fit", str(data), "--schema", str(schema), "--condition-column", "sex", "--epsilon", "3"]
    assert main([*args, "--epochs", "1", "--seed", "0", "--accountant", "rdp", "--out", str(model), "--quiet"]) == 0
    out = tmp_path / "s.csv"
    assert main(["sample", str(model), "-n", "40", "--condition", "sex=Female", "--out", str(out)]) == 0
    assert set(pd.read_csv(out)["sex"]) == {"Female"}
    capsys.readouterr()
    assert main(["inspect", str(model), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["recipe"] == "dp-gan" and report["training"]["condition"] == "sex"
    assert "condition frequencies (sex)" in [e["name"] for e in report["events"]]


def test_cli_rejects_an_unknown_recipe(tmp_path, capsys):
    assert main(["fit", "x.csv", "--recipe", "nope", "--epsilon", "1", "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and err.startswith("dpgan: error:") and err.strip().count("\n") == 0


def test_cli_accepts_every_recipe():
    from dpgan.cli import build_parser

    for name in RECIPES:
        args = build_parser().parse_args(["fit", "x.csv", "--recipe", name, "--epsilon", "1", "--out", "m"])
        assert args.recipe == name


# --- 5. bad settings ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"recipe": "nope"}, "unknown recipe"),
        ({"recipe": 3}, "unknown recipe"),  # (None, as for model=, is a recipe not given: the default)
        ({"loss": "hinge"}, "loss"),
        ({"optimizer": "sgd"}, "optimizer"),
        ({"interpolation": "cubic"}, "interpolation"),
        ({"n_critic": 0}, "n_critic"),
        ({"num_discriminators": 0}, "num_discriminators"),
        ({"microbatches": -1}, "microbatches"),
        ({"recipe": "dtgan-d", "classifier_budget_fraction": 0.6}, "classifier_budget_fraction"),
        ({"recipe": "dtgan-g", "ema_decay": 1.0}, "ema_decay"),
        ({"recipe": "dp-wgan", "no_such_setting": 1}, "unknown setting"),
    ],
)
def test_bad_recipe_settings_are_refused(kwargs, message):
    with pytest.raises(InputError, match=message):
        TabularSynthesizer(**kwargs)


def test_every_recipe_default_config_passes_its_own_check():
    for name, recipe in RECIPES.items():
        config = TabularSynthesizer(recipe=name).config
        config.check()
        for key, value in recipe.overrides.items():
            assert getattr(config, key) == value, (name, key)
        assert TrainingConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
        settings = TabularSynthesizer(recipe=name).settings  # the recipe's plug-ins, on by default
        for key, value in recipe.plugins.items():
            assert getattr(settings, key) == value, (name, key)
        assert TableSettings.from_dict(json.loads(json.dumps(settings.to_dict()))) == settings


def test_a_recipe_is_a_strategy_plugins_and_loop_overrides():
    """Each recipe names a strategy the pipeline knows, on the side its dp_on says; its overrides
    are the loop's settings only and its plug-ins the table kind's (no name in both)."""
    loop_fields = set(TrainingConfig.__dataclass_fields__)
    for recipe in RECIPES.values():
        strategy = STRATEGIES[recipe.strategy]
        assert strategy.name == recipe.strategy and strategy.dp_on == recipe.dp_on
        assert set(recipe.overrides) <= loop_fields and set(recipe.plugins) <= TABLE_SETTING_KEYS
    assert RECIPES["dtgan-g"].dp_on == "generator" and RECIPES["dp-gan"].dp_on == "critic"
    for name, side in STRATEGY_SIDES.items():
        assert STRATEGIES[name].dp_on == side
    with pytest.raises(InputError, match="unknown setting"):
        TabularSynthesizer(recipe="dp-gan", no_such_setting=1)


def refused(config: TrainingConfig) -> bool:
    try:
        config.check()
    except InputError:
        return True
    return False


def test_zero_feature_scale_with_an_information_loss_is_refused():
    """β = 0 would divide the noisy feature sums by zero and turn the generator into NaN."""
    assert refused(tiny_config(**{**CRITIC_CONFIGS["dtgan-d"], "info_feature_scale": 0.0}))


def test_info_loss_with_a_positive_feature_scale_keeps_the_generator_finite(encoded):
    """Control for the test above: the same run with the recipe's β is finite."""
    config = tiny_config(**CRITIC_CONFIGS["dtgan-d"])
    assert config.info_feature_scale > 0 and not refused(config)
    result = run_critic(encoded, config, steps=4, condition=True, objective=objective_for(config))
    assert all(torch.isfinite(p).all() for p in result.generator.parameters())


@pytest.mark.parametrize("clip", [0.0, -0.01])
def test_non_positive_weight_clip_is_refused(clip):
    """clamp_(-c, c) with c ≤ 0 would set every critic weight to one constant."""
    assert refused(tiny_config(**{**CRITIC_CONFIGS["dp-wgan"], "weight_clip": clip}))


class FixedSampler:
    def sample(self) -> torch.Tensor:
        return torch.arange(40)


def noised_sum_and_gp_free_sum(encoded, microbatches: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One σ=0 release of a two-sided WGAN-GP critic step on rows 0..39: the sum that was noised, and
    the clipped sum of the real term alone (no penalty) on the same critic, rows and microbatches."""
    from dpgan.privacy.microbatch import microbatch_clipped_sum

    data = encoded[0]
    config = tiny_config(gp_weight=10.0, one_sided_penalty=False, microbatches=microbatches)
    settings = critic_step_module.CriticStepSettings.from_config(config)
    critic = TabularCritic(data.shape[1], config.critic_hidden)
    recorder, C = Recorder(), config.max_grad_norm
    gen = torch.Generator().manual_seed(0)
    step = critic_step_module.critic_step(
        settings,
        units=data.shape[0],
        sample_rate=1.0,
        noise_multiplier=0.0,
        max_norm=C,
        expected_batch_size=40.0,
        steps=1,
        ledger=None,
        generator=gen,
        recorder=recorder,
        sampler=FixedSampler(),
    )
    real = data[step.sample()]
    replay = torch.Generator().set_state(gen.get_state())  # the release's own draws: α, then microbatch ids
    critic_step_module.critic_release(
        step, critic, real, torch.ones(40), real.flip(0), settings, max_norm=C, with_features=False, generator=gen
    )
    torch.rand(40, 1, generator=replay)
    if microbatches:
        groups = dp_critic.assign_microbatches(40, microbatches, replay)
        gp_free, _ = microbatch_clipped_sum(critic, real, -torch.ones(40), groups, microbatches, max_norm=C)
    else:
        gp_free, _ = wgan_gp_clipped_sum(critic, real, real, torch.zeros(40, 1), gp_weight=0.0, max_norm=C)
    return flat_all(recorder.calls[0]["clipped"]), flat_all(gp_free)


def test_gradient_penalty_enters_the_per_example_noised_sum(encoded, monkeypatch):
    """Control for the test below: without microbatches the noised sum is not the penalty-free one."""
    noised, gp_free = noised_sum_and_gp_free_sum(encoded, microbatches=0)
    assert not torch.allclose(noised, gp_free)


def test_microbatches_with_a_gradient_penalty_or_info_loss_are_refused():
    """The microbatch path clips the real term's mean gradient only: a penalty would be dropped silently."""
    assert refused(tiny_config(microbatches=4))
    assert refused(tiny_config(loss="bce", microbatches=4, info_loss_weight=1.0))
    assert not refused(tiny_config(loss="bce", microbatches=4))
