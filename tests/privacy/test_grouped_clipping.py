"""Grouped clipping (dpgan.privacy.grouped_clipping), black-box through the private step.

Properties: one added unit moves each group's pre-noise sum by at most c_j; each group's noise std is
σ·c_j·√k and the release is the clipped sum plus one draw with those stds; the ledger's event is the
Gaussian(σ) that ran; the grouped sum equals a per-unit loop; an empty batch releases pure noise;
bad groupings are refused with one line.
"""

from __future__ import annotations

import math

import pytest
import torch

from dpgan.errors import InputError
from dpgan.models.tabular import TabularCritic
from dpgan.privacy import grad_sample
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.grad_sample.functorch import functorch_per_unit_gradients
from dpgan.privacy.grouped_clipping import GroupedClipping, layer_groups
from dpgan.privacy.mlp_clipping import FEATURES_KEY
from dpgan.privacy.step import PrivateStep
from dpgan.training.config import TrainingConfig
from dpgan.training.critic_step import CriticStepSettings, CriticUnits, critic_clipped_sum

WIDTH, HIDDEN, BETA = 6, (5, 4), 0.5
SETTINGS = CriticStepSettings(
    loss="wgan-gp",
    gp_weight=10.0,
    one_sided_penalty=False,
    interpolation="linear",
    microbatches=0,
    feature_scale=BETA,
    clipping_groups="per-layer",
)


def critic() -> TabularCritic:
    torch.manual_seed(0)
    return TabularCritic(WIDTH, HIDDEN)


def batch(n: int, scale: float = 1.0, seed: int = 0) -> CriticUnits:
    gen = torch.Generator().manual_seed(seed)
    real = scale * torch.randn(n, WIDTH, generator=gen)
    partners = torch.randn(n, WIDTH, generator=gen)
    alpha = torch.rand(n, 1, generator=gen)
    return CriticUnits(real, torch.ones(n), partners, alpha, None, with_features=True)


def grouped_step(*, sigma=1.0, ledger=None, recorder=None, clipping=None, max_norm=1.0, seed=0):
    return PrivateStep(
        units=100,
        sample_rate=0.1,
        noise_multiplier=sigma,
        max_norm=max_norm,
        expected_batch_size=10.0,
        steps=5,
        ledger=ledger if ledger is not None else (PrivacyLedger() if sigma > 0 else None),
        label="grouped",
        clipped_sum=critic_clipped_sum(SETTINGS),
        clipping=clipping if clipping is not None else GroupedClipping(),
        generator=torch.Generator().manual_seed(seed),
        recorder=recorder,
    )


def width(model) -> int:
    return 2 * HIDDEN[-1]


def test_per_layer_groups_pair_each_weight_with_its_bias():
    names = [n for n, _ in critic().named_parameters()]
    assert layer_groups(names) == (
        ("net.0.weight", "net.0.bias"),
        ("net.2.weight", "net.2.bias"),
        ("net.4.weight", "net.4.bias"),
    )


def test_a_neighbouring_batch_moves_each_groups_sum_by_at_most_its_threshold():
    model, base = critic(), batch(5)
    outlier = batch(1, scale=1e4, seed=1)
    neighbour = CriticUnits(
        *(
            torch.cat([a, b])
            for a, b in zip(
                (base.real, base.weight, base.partners, base.alpha),
                (outlier.real, outlier.weight, outlier.partners, outlier.alpha),
            )
        ),
        None,
        with_features=True,
    )
    records: list[dict] = []
    extras = {FEATURES_KEY: width(model)}
    grouped_step(sigma=0.0, recorder=records.append).release(model, base, 5, extras=extras)
    grouped_step(sigma=0.0, recorder=records.append).release(model, neighbour, 6, extras=extras)
    groups = records[0]["groups"]
    assert len(groups.names) == 4 and groups.names[-1] == (FEATURES_KEY,)  # three layers, the features
    assert groups.thresholds == pytest.approx((0.5,) * 4)  # C/√k
    moves = []
    for names, threshold in zip(groups.names, groups.thresholds):
        moved = torch.cat([(records[1]["clipped"][n] - records[0]["clipped"][n]).reshape(-1) for n in names]).norm()
        assert float(moved) <= threshold * (1 + 1e-6)
        moves.append(float(moved) / threshold)
    assert max(moves) > 0.99  # the outlier saturates a group: the bound is attained, not loose


def test_each_groups_noise_is_sigma_times_its_threshold_times_root_k_in_one_draw():
    model = critic()
    records: list[dict] = []
    fractions = (0.2, 0.4, 0.6, 0.1)
    step = grouped_step(sigma=1.5, recorder=records.append, clipping=GroupedClipping(fractions=fractions), max_norm=2.0)
    release = step.release(model, batch(4), 4, extras={FEATURES_KEY: width(model)})
    record = records[0]
    for names, fraction in zip(record["groups"].names, fractions):
        for name in names:
            assert record["noise_std"][name] == pytest.approx(1.5 * fraction * 2.0 * 2.0)  # σ·c_j·√4
    gen = torch.Generator().manual_seed(0)
    for name, clipped in record["clipped"].items():  # features first, then parameters: one draw
        expected = clipped + record["noise_std"][name] * torch.randn(clipped.shape, generator=gen, dtype=clipped.dtype)
        torch.testing.assert_close(release.noisy_sum[name], expected, rtol=0, atol=0)


def test_the_ledger_charges_the_gaussian_event_that_ran():
    ledger, records = PrivacyLedger(), []
    step = grouped_step(
        sigma=1.3, ledger=ledger, recorder=records.append, clipping=GroupedClipping(fractions=(1, 2, 3, 4))
    )
    model = critic()
    for _ in range(3):
        step.release(model, batch(3), 3, extras={FEATURES_KEY: width(model)})
    (entry,) = ledger.entries
    assert (entry.noise_multiplier, entry.sampling_rate, entry.count) == (1.3, 0.1, 3)
    for record in records:  # whitening group j by 1/c_j: sensitivity √k against noise σ_j/c_j
        groups = record["groups"]
        k = len(groups.names)
        for names, threshold in zip(groups.names, groups.thresholds):
            assert record["noise_std"][names[0]] / threshold / math.sqrt(k) == pytest.approx(1.3)


def test_the_grouped_sum_equals_a_per_unit_loop():
    model, units = critic(), batch(7, scale=3.0)
    loss = grad_sample.CriticUnitLoss(
        real=units.real, partners=units.partners, alpha=units.alpha, gp_weight=10.0, feature_scale=BETA
    )
    names = [n for n, _ in model.named_parameters()]
    groups = GroupedClipping(fractions=(0.3, 0.05, 0.2, 0.01)).resolve(names, [FEATURES_KEY], 1.0)
    result = grad_sample.clipped_sum(model, loss, 1.0, groups=groups)
    per_unit = functorch_per_unit_gradients(model, loss)
    with torch.no_grad():
        f = model.features(units.real)
    parts = {**{n: g.reshape(7, -1) for n, g in per_unit.items()}, FEATURES_KEY: BETA * torch.cat([f, f * f], 1)}
    expected = {n: torch.zeros(v.shape[1], dtype=torch.float64) for n, v in parts.items()}
    clipped_any = False
    for i in range(7):
        for group, c in zip(groups.names, groups.thresholds):
            norm = math.sqrt(sum(float(parts[n][i].double().pow(2).sum()) for n in group))
            clipped_any |= norm > c
            for n in group:
                expected[n] += parts[n][i].double() * min(1.0, c / norm)
    assert clipped_any
    for name in names:
        torch.testing.assert_close(result.gradients[name].reshape(-1).double(), expected[name], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(result.features.double(), expected[FEATURES_KEY], rtol=1e-5, atol=1e-5)
    assert result.group_norms.shape == (7, 4)


def test_an_empty_batch_releases_pure_noise_with_each_groups_std():
    model, records = critic(), []
    release = grouped_step(sigma=2.0, recorder=records.append, seed=5).release(
        model, batch(0), 0, extras={FEATURES_KEY: width(model)}
    )
    gen = torch.Generator().manual_seed(5)
    for name, value in release.noisy_sum.items():
        expected = records[0]["noise_std"][name] * torch.randn(value.shape, generator=gen, dtype=value.dtype)
        torch.testing.assert_close(value, expected, rtol=0, atol=0)
        assert records[0]["noise_std"][name] == pytest.approx(2.0)  # σ·(C/√k)·√k = σC


def test_bad_groupings_are_refused():
    model = critic()
    with pytest.raises(InputError, match="exactly once"):  # a layer left out would go unclipped
        grouped_step(clipping=GroupedClipping(groups=(("net.0.weight", "net.0.bias"),))).release(model, batch(2), 2)
    with pytest.raises(InputError, match="shares given"):
        grouped_step(clipping=GroupedClipping(fractions=(1.0,))).release(model, batch(2), 2)
    with pytest.raises(InputError):
        GroupedClipping(groups="per-neuron")
    with pytest.raises(InputError):
        GroupedClipping(fractions=(1.0, 0.0))
    loss = grad_sample.CriticUnitLoss(real=torch.randn(3, WIDTH))
    groups = GroupedClipping().resolve([n for n, _ in model.named_parameters()], [], 1.0)
    with pytest.raises(InputError, match="does not clip parameter groups"):
        grad_sample.clipped_sum(model, loss, 1.0, backend="mlp-ghost", groups=groups)
    with pytest.raises(InputError, match="clipping_groups"):
        TrainingConfig(clipping_groups="per-neuron").check()
    with pytest.raises(InputError, match="microbatches"):
        TrainingConfig(clipping_groups="per-layer", microbatches=4, loss="bce", info_loss_weight=0.0).check()


def test_explicit_groups_may_join_layers():
    model = critic()
    names = [n for n, _ in model.named_parameters()]
    groups = GroupedClipping(groups=(tuple(names[:4]), tuple(names[4:]))).resolve(names, [FEATURES_KEY], 3.0)
    assert groups.names[-1] == (FEATURES_KEY,) and groups.thresholds == pytest.approx((3.0 / math.sqrt(3),) * 3)
