"""Adaptive clipping (dpgan.privacy.adaptive_clipping), black-box through the private step and the loop.

Properties: the gradient's σ_Δ and the count's σ_b compose to exactly the ledger's Gaussian(σ)
(dp_accounting's PLD); C moves to the γ-quantile of the units' norms; the count is released only
with noise drawn in the same release; a fit charges exactly T Gaussian(σ) events; bad settings are
refused with one line.
"""

from __future__ import annotations

import math

import dp_accounting
import pytest
import torch
from dp_accounting.pld import pld_privacy_accountant

from dpgan.errors import InputError
from dpgan.privacy import dpsgd
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.adaptive_clipping import AdaptiveClipping
from dpgan.privacy.step import MicrobatchClipping, PrivateStep
from dpgan.training import dp_critic
from dpgan.training.config import TrainingConfig

DIM = 4


class Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(DIM, dtype=torch.float64))


def injected(model, grads, max_norm):
    """Backend whose units are their own per-unit gradients."""
    return {k: g.sum(dim=0) for k, g in dpsgd.clip_per_example(grads, max_norm).items()}, dpsgd.per_example_norms(grads)


def adaptive_step(adaptive, *, sigma=1.0, expected=100.0, max_norm=1.0, recorder=None, ledger=None, seed=0, **kw):
    return PrivateStep(
        units=1000,
        sample_rate=expected / 1000,
        noise_multiplier=sigma,
        max_norm=max_norm,
        expected_batch_size=expected,
        steps=kw.pop("steps", 10),
        ledger=ledger if ledger is not None else PrivacyLedger(),
        label="adaptive",
        clipped_sum=injected,
        generator=torch.Generator().manual_seed(seed),
        recorder=recorder,
        adaptive=adaptive,
        **kw,
    )


def units_with_norms(norms: torch.Tensor, seed: int) -> dict[str, torch.Tensor]:
    direction = torch.randn(len(norms), DIM, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return {"w": direction / direction.norm(dim=1, keepdim=True) * norms.unsqueeze(1)}


def pld_epsilon(event) -> float:
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(event)
    return accountant.get_epsilon(1e-5)


@pytest.mark.parametrize(("sigma", "count_noise"), [(1.1, 0.75), (0.8, 2.0)])
def test_gradient_and_count_noise_compose_to_the_ledgers_gaussian(sigma, count_noise):
    sigma_grad = AdaptiveClipping(0.5, count_noise=count_noise).gradient_multiplier(sigma, 100.0)
    assert sigma_grad > sigma
    # the count has sensitivity ½: its multiplier is σ_b / ½ = 2σ_b
    joint = dp_accounting.ComposedDpEvent(
        [dp_accounting.GaussianDpEvent(sigma_grad), dp_accounting.GaussianDpEvent(2 * count_noise)]
    )
    assert pld_epsilon(joint) == pytest.approx(pld_epsilon(dp_accounting.GaussianDpEvent(sigma)), rel=1e-6)


def test_the_count_noise_defaults_to_a_twentieth_of_the_expected_batch_and_must_leave_room():
    assert AdaptiveClipping(0.5).count_std(300.0) == pytest.approx(15.0)
    with pytest.raises(InputError, match="2σ_b > σ") as error:
        adaptive_step(AdaptiveClipping(0.5), sigma=10.0, expected=100.0)  # σ_b = 5: 2σ_b = σ
    assert "\n" not in str(error.value)
    with pytest.raises(InputError, match="microbatches"):
        adaptive_step(AdaptiveClipping(0.5), clipping=MicrobatchClipping(2))
    for bad in ({"quantile": 0.0}, {"quantile": 1.0}, {"quantile": 0.5, "learning_rate": 0.0}):
        with pytest.raises(InputError):
            AdaptiveClipping(**bad)


def test_the_count_is_released_only_noised_in_the_same_draw_and_moves_c():
    records: list[dict] = []
    step = adaptive_step(AdaptiveClipping(0.3, learning_rate=0.5, count_noise=4.0), sigma=1.0, recorder=records.append)
    norms = torch.tensor([0.5, 0.7, 2.0, 3.0, 0.1], dtype=torch.float64)
    release = step.release(Linear(), units_with_norms(norms, 0), 5)
    record = records[0]
    assert float(record["count"]) == 3 - 2.5  # Σ(1[‖v_i‖ ≤ 1] − ½)
    assert record["count_noise_std"] == 4.0
    sigma_grad = (1.0 - (8.0) ** -2) ** -0.5
    assert record["noise_std"] == pytest.approx(sigma_grad * 1.0)
    gen = torch.Generator().manual_seed(0)
    gradient_noise = torch.randn(DIM, generator=gen, dtype=torch.float64) * record["noise_std"]
    count_noise = float(torch.randn(1, generator=gen, dtype=torch.float64)) * 4.0
    torch.testing.assert_close(release.noisy_sum["w"], record["clipped"]["w"] + gradient_noise, rtol=0, atol=0)
    fraction = (0.5 + count_noise) / 100.0 + 0.5
    assert release.clip_fraction == pytest.approx(fraction, rel=1e-12)
    assert step.max_norm == pytest.approx(math.exp(-0.5 * (fraction - 0.3)), rel=1e-12)
    with pytest.raises(InputError, match="owns its clipping norm"):
        step.release(Linear(), units_with_norms(norms, 1), 5, max_norm=1.0)  # C has moved
    records.clear()
    step.release(Linear(), units_with_norms(norms, 1), 5, max_norm=step.max_norm)
    assert records[0]["max_norm"] == pytest.approx(math.exp(-0.5 * (fraction - 0.3)))


@pytest.mark.parametrize("quantile", [0.3, 0.8])
def test_c_moves_to_the_quantile_of_a_fixed_norm_distribution(quantile):
    # norms ~ Exp(1): the γ-quantile is −ln(1 − γ)
    step = adaptive_step(AdaptiveClipping(quantile, learning_rate=0.2), sigma=0.05, steps=400, max_norm=20.0)
    exponential = torch.distributions.Exponential(torch.tensor(1.0, dtype=torch.float64))
    torch.manual_seed(0)
    history = []
    for t in range(400):
        step.release(Linear(), units_with_norms(exponential.sample((100,)), t), 100)
        history.append(step.max_norm)
    late = sum(history[-100:]) / 100
    assert late == pytest.approx(-math.log(1 - quantile), rel=0.1)
    assert history[0] < 20.0  # it started far above and came down


def adaptive_fit(encoded, ledger, recorder=None, **changes):
    data, spans, _ = encoded
    torch.manual_seed(0)
    settings = {"batch_size": 16, "noise_dim": 8, "generator_hidden": (16,), "critic_hidden": (16,)}
    config = TrainingConfig(**{**settings, "adaptive_clip_quantile": 0.5, "adaptive_clip_lr": 0.5, **changes})
    return dp_critic.train_dp_critic(
        data,
        spans,
        config,
        sample_rate=0.1,
        expected_batch_size=15.0,
        noise_multiplier=1.1,
        steps=6,
        generator=torch.Generator().manual_seed(3),
        ledger=ledger,
        recorder=recorder,
    )


@pytest.fixture(scope="module")
def encoded(adult_small, adult_schema):
    from dpgan.tables.codec.encoder import TableEncoder

    frame = adult_small.iloc[:150]
    encoder = TableEncoder(adult_schema, {c: str(frame[c].dtype) for c in frame.columns})
    return torch.from_numpy(encoder.encode(frame[adult_schema.names])), encoder.spans, None


@pytest.mark.parametrize("groups", ["none", "per-layer"])
def test_a_fit_with_adaptive_clipping_charges_exactly_t_gaussian_events(encoded, groups):
    ledger, records = PrivacyLedger(), []
    adaptive_fit(encoded, ledger, records.append, clipping_groups=groups)
    (entry,) = ledger.entries
    assert (entry.noise_multiplier, entry.sampling_rate, entry.count) == (1.1, 0.1, 6)
    assert "adaptive" in entry.note
    clips = [r["max_norm"] for r in records]
    assert len(set(clips)) == 6 and clips[0] == 1.0  # C moved after every release
    sigma_grad = AdaptiveClipping(0.5).gradient_multiplier(1.1, 15.0)
    assert all(r["count_noise_std"] == pytest.approx(0.75) for r in records)
    for record, clip in zip(records, clips):
        stds = record["noise_std"].values() if isinstance(record["noise_std"], dict) else [record["noise_std"]]
        assert all(std == pytest.approx(sigma_grad * clip) for std in stds)  # per-layer: σ_Δ·(C/√k)·√k


def test_adaptive_clipping_refuses_a_clip_decay_and_bad_settings():
    with pytest.raises(InputError, match="clip_decay"):
        TrainingConfig(adaptive_clip_quantile=0.5, clip_decay=0.99).check()
    for bad in ({"adaptive_clip_quantile": 1.0}, {"adaptive_clip_quantile": -0.1}, {"adaptive_clip_lr": 0.0}):
        with pytest.raises(InputError):
            TrainingConfig(**bad).check()


def test_saved_configs_without_the_new_settings_still_load():
    """Off, the options are left out of the saved config (a model saved before re-saves unchanged:
    tests/test_model_file.py); on, they are all recorded, the rate and count noise included."""
    old = TrainingConfig().to_dict()
    assert not {"clipping_groups", "adaptive_clip_quantile", "adaptive_clip_lr", "adaptive_clip_count_noise"} & set(old)
    assert TrainingConfig.from_dict(old) == TrainingConfig()
    changed = TrainingConfig(clipping_groups="per-layer", adaptive_clip_quantile=0.6)
    saved = changed.to_dict()
    assert (saved["clipping_groups"], saved["adaptive_clip_quantile"], saved["adaptive_clip_lr"]) == (
        "per-layer",
        0.6,
        0.2,
    )
    assert TrainingConfig.from_dict(saved) == changed
