"""The noise-layer GAN: the sound feature release (dpgan.privacy.feature_release), its ledger
charge and frozen layers, and the published form's leak through the pre-noise weights."""

from __future__ import annotations

import math

import pytest
import torch
from sklearn.datasets import load_digits

from dpgan.errors import BudgetError, InputError
from dpgan.models.image_units import ImageUnitGenerator
from dpgan.models.noise_layer import NoiseLayerCritic, PreNoiseConv, cross_example_modules
from dpgan.privacy.accounting import Budget, LedgerEntry, PrivacyLedger, epsilon_of
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.feature_release import (
    FEATURE_RELEASE_EVENT,
    NULL,
    FeatureRelease,
    calibrate_feature_release,
    capacity_slots,
    clip_rows,
)
from dpgan.training.config import TrainingConfig
from dpgan.training.noise_layer import PUBLISHED_REASON, train_noise_layer_gan

SHAPE = (1, 8, 8)
LABELS = 10


def digits_units(n: int) -> torch.Tensor:
    """The first n of scikit-learn's 8×8 digits as flat units [pixels in [-1, 1], one-hot]."""
    data = load_digits()
    images = torch.tensor(data.images[:n], dtype=torch.float32).reshape(n, -1) / 8.0 - 1.0
    labels = torch.nn.functional.one_hot(torch.tensor(data.target[:n]), LABELS).float()
    return torch.cat([images, labels], dim=1)


class FixedSampler:
    """Injected sampler: the same index set every pass."""

    def __init__(self, index: list[int] | torch.Tensor) -> None:
        self.index = torch.as_tensor(index, dtype=torch.long)

    def sample(self) -> torch.Tensor:
        return self.index


def pre_map(seed: int = 0) -> PreNoiseConv:
    torch.manual_seed(seed)
    return PreNoiseConv(SHAPE, LABELS, width=8, projection=16, label_scale=3.0)


def release_for(units, sampler, *, capacity, ledger=None, seed=0, recorder=None, passes=4, sigma=1.0, bound=0.5):
    pre = pre_map()
    release = FeatureRelease(
        units=units.shape[0],
        sample_rate=0.5,
        capacity=capacity,
        width=pre.out_dim,
        noise_multiplier=sigma,
        bound=bound,
        passes=passes,
        ledger=ledger if ledger is not None else PrivacyLedger(),
        generator=torch.Generator().manual_seed(seed),
        noise_generator=torch.Generator().manual_seed(seed + 100),
        sampler=sampler,
        recorder=recorder,
    )
    return release, (lambda index: pre(units[index]))


def test_slots_are_clipped_and_always_fill_the_capacity():
    units = digits_units(40)
    records: list[dict] = []
    bound = 0.5
    for n in (0, 3, 8, 25):  # empty, below, at and above capacity
        release, read = release_for(units, FixedSampler(list(range(n))), capacity=8, recorder=records.append)
        out = release.release(read)
        assert out.shape == (8, release.width)
    for record, n in zip(records, (0, 3, 8, 25), strict=True):
        slots, clipped = record["slots"], record["clipped"]
        assert slots.shape == (8,) and int((slots != NULL).sum()) == min(n, 8)
        assert len(set(slots[slots != NULL].tolist())) == min(n, 8)  # distinct units
        assert torch.all(clipped.norm(dim=1) <= bound + 1e-6)
        assert torch.all(clipped[slots == NULL] == 0)
        if n:
            assert float(record["norms"].max()) > bound  # the clip was active, not vacuous


def test_slots_law_is_a_uniform_subset_in_uniform_positions():
    """Algorithm R with random slots: each of n > B_cap units kept with probability B_cap/n, and
    below capacity the null slots fall uniformly over the positions."""
    generator = torch.Generator().manual_seed(3)
    kept, null_at = torch.zeros(6), torch.zeros(4)
    trials = 1500
    for _ in range(trials):
        slots = capacity_slots(torch.arange(6), 4, generator)
        kept[slots] += 1
        null_at += capacity_slots(torch.arange(2), 4, generator) == NULL
    assert torch.allclose(kept / trials, torch.full((6,), 4 / 6), atol=0.05)
    assert torch.allclose(null_at / trials, torch.full((4,), 0.5), atol=0.05)


@pytest.mark.parametrize(("sampled", "bound_factor"), [(5, 1.0), (8, 2.0), (12, 2.0)])
def test_one_added_unit_changes_at_most_one_slot(sampled, bound_factor):
    """D' = D ∪ {x}, x appended last: with the same sampling and noise generators the pre-noise
    slots differ in at most one slot, by ≤ R below capacity (null → h(x)) and ≤ 2R at it; the
    released vectors differ by exactly that (the noise draws are the same)."""
    units = digits_units(20)
    x = torch.cat([torch.ones(64), torch.nn.functional.one_hot(torch.tensor(7), LABELS).float()])
    neighbour = torch.cat([units, x[None]])
    bound, capacity = 0.5, 8
    recorded: list[dict] = []
    out_d, out_d1 = (
        release.release(read)
        for release, read in (
            release_for(data, FixedSampler(index), capacity=capacity, recorder=recorded.append, bound=bound)
            for data, index in ((units, list(range(sampled))), (neighbour, [*range(sampled), 20]))
        )
    )
    before, after = recorded[0]["clipped"], recorded[1]["clipped"]
    changed = (before - after).norm(dim=1)
    assert int((changed > 0).sum()) == 1
    assert float(changed.max()) <= bound_factor * bound + 1e-6
    assert torch.allclose(out_d1 - out_d, after - before, atol=1e-5)
    if sampled < capacity:  # the changed slot was empty in D
        assert recorded[0]["slots"][changed > 0].item() == NULL


def test_ledger_gets_one_entry_charged_per_pass_at_half_sigma():
    units = digits_units(30)
    ledger = PrivacyLedger()
    release, read = release_for(units, FixedSampler([0, 1, 2]), capacity=4, ledger=ledger, passes=3, sigma=1.4)
    assert ledger.entries[0].count == 0  # reserved, nothing charged before a pass runs
    for done in range(1, 4):
        release.release(read)
        assert len(ledger.entries) == 1 and ledger.entries[0].count == done
    entry = ledger.entries[0]
    assert entry.name == FEATURE_RELEASE_EVENT
    assert entry.noise_multiplier == pytest.approx(0.7) and entry.sampling_rate == 0.5
    with pytest.raises(BudgetError):
        release.release(read)  # past the reservation
    with pytest.raises(BudgetError):  # a budget too small refuses the reservation up front
        release_for(units, FixedSampler([0]), capacity=4, ledger=PrivacyLedger(budget=Budget(0.1, 1e-5)), passes=50)


def test_calibration_returns_the_layer_sigma_whose_half_is_charged():
    budget = calibrate_feature_release(sample_rate=0.1, passes=40, budget=FitBudget(2.0, 1e-5))
    charged = LedgerEntry("x", budget.noise_multiplier / 2, sampling_rate=0.1, count=40)
    assert epsilon_of([charged], 1e-5, "pld") <= 2.0
    looser = LedgerEntry("x", 0.97 * budget.noise_multiplier / 2, sampling_rate=0.1, count=40)
    assert epsilon_of([looser], 1e-5, "pld") > 2.0  # the smallest such σ, not any
    fixed = FitBudget(2.0, 1e-5, noise_multiplier=budget.noise_multiplier)
    steps = calibrate_feature_release(sample_rate=0.1, passes=10_000, budget=fixed)
    assert 40 <= steps.steps < 60


def fit(units, *, certified, steps=6, ledger=None, sigma=1.0, seed=0, critic=None, noise_seed=None, sampler=None):
    torch.manual_seed(seed)
    G = ImageUnitGenerator(SHAPE, LABELS, noise_dim=8, width=8)
    critic = critic or NoiseLayerCritic.build(SHAPE, LABELS, width=8, projection=16, hidden=(16,))
    config = TrainingConfig(noise_dim=8, n_critic=2, loss="wgan-gp")
    return train_noise_layer_gan(
        units,
        config,
        G=G,
        critic=critic,
        certified=certified,
        sample_rate=0.2,
        capacity=16,
        noise_multiplier=sigma,
        activation_bound=1.0,
        steps=steps,
        generator=torch.Generator().manual_seed(1),
        noise_generator=None if noise_seed is None else torch.Generator().manual_seed(noise_seed),
        ledger=ledger,
        sampler=sampler,
    )


def test_certified_fit_freezes_the_pre_noise_layers_and_charges_every_pass():
    units = digits_units(80)
    torch.manual_seed(0)
    critic = NoiseLayerCritic.build(SHAPE, LABELS, width=8, projection=16, hidden=(16,))
    frozen = {k: v.clone() for k, v in critic.pre.state_dict().items()}
    head = {k: v.clone() for k, v in critic.head.state_dict().items()}
    ledger = PrivacyLedger()
    result = fit(units, certified=True, steps=6, ledger=ledger, critic=critic)
    assert result.certified and result.steps == 6
    for name, value in critic.pre.state_dict().items():
        assert torch.equal(value, frozen[name])  # bitwise
    assert all(p.grad is None and not p.requires_grad for p in critic.pre.parameters())
    assert any(not torch.equal(v, head[k]) for k, v in critic.head.state_dict().items())  # the head trains
    [entry] = ledger.entries
    assert entry.count == 6 and entry.noise_multiplier == 0.5 and entry.sampling_rate == 0.2
    images, codes = result.generator.sample(12, torch.Generator().manual_seed(5))
    assert images.shape == (12, *SHAPE) and torch.isfinite(images).all() and codes.shape == (12,)
    assert math.isfinite(ledger.epsilon(1e-5))


def test_certified_fit_refuses_batchnorm_and_missing_ledger():
    units = digits_units(20)
    critic = NoiseLayerCritic.build(SHAPE, LABELS, width=8, projection=16, hidden=(16,))
    with pytest.raises(InputError):
        fit(units, certified=True, ledger=None, critic=critic)
    critic.pre.body.insert(1, torch.nn.BatchNorm2d(8))
    assert cross_example_modules(critic.pre) == ["body.1"]
    with pytest.raises(InputError, match="BatchNorm"):
        fit(units, certified=True, ledger=PrivacyLedger(), critic=critic)


def test_published_fit_claims_nothing_and_trains_the_pre_noise_layers():
    units = digits_units(80)
    torch.manual_seed(0)
    critic = NoiseLayerCritic.build(SHAPE, LABELS, width=8, projection=16, hidden=(16,))
    w1 = critic.pre.first_conv.weight.detach().clone()
    ledger = PrivacyLedger()
    result = fit(units, certified=False, steps=6, ledger=ledger, critic=critic)
    assert not result.certified and result.reason == PUBLISHED_REASON
    assert ledger.entries == []
    assert not torch.equal(critic.pre.first_conv.weight, w1)
    images, _ = result.generator.sample(12, torch.Generator().manual_seed(5))
    assert torch.isfinite(images).all()


def canary_unit() -> torch.Tensor:
    """A ±1 checkerboard labelled 3: nothing like a digit."""
    rows, cols = torch.meshgrid(torch.arange(8), torch.arange(8), indexing="ij")
    board = ((rows + cols) % 2 * 2 - 1).float().flatten()
    return torch.cat([board, torch.nn.functional.one_hot(torch.tensor(3), LABELS).float()])


def w1_updates(units: torch.Tensor, certified: bool, trials: range) -> torch.Tensor:
    """ΔW₁ of 6-step fits at q = 1 that differ only in the noise layer's noise (the randomness
    the published claim rests on): same init, same G draws, one noise seed per trial."""
    out = []
    for trial in trials:
        torch.manual_seed(0)
        critic = NoiseLayerCritic.build(SHAPE, LABELS, width=8, projection=32, hidden=(32,))
        w1 = critic.pre.first_conv.weight.detach().clone()
        ledger = PrivacyLedger() if certified else None
        fit(units, certified=certified, steps=6, ledger=ledger, sigma=4.0, critic=critic, noise_seed=1000 + trial,
            sampler=FixedSampler(range(len(units))))  # fmt: skip
        out.append((critic.pre.first_conv.weight.detach() - w1).flatten())
    return torch.stack(out)


def test_published_form_leaks_a_canary_into_w1_through_the_noise():
    """The audit of §2 (vi), white-box on W₁: worlds OUT (8 digits) and IN (+ a checkerboard
    canary). The direction between the worlds' mean ΔW₁ is fitted on 10 trials each and the
    10 held-out trials of each world are separated by it without error, although every trial
    redraws the noise layer's noise (σ = 4). In the sound form W₁ is bitwise the same in both."""
    out_world = digits_units(8)
    in_world = torch.cat([out_world, canary_unit()[None]])
    outs, ins = w1_updates(out_world, False, range(20)), w1_updates(in_world, False, range(20))
    direction = ins[:10].mean(0) - outs[:10].mean(0)
    middle = (ins[:10].mean(0) + outs[:10].mean(0)) / 2
    score_out, score_in = (outs[10:] - middle) @ direction, (ins[10:] - middle) @ direction
    assert float(score_out.max()) < float(score_in.min())
    assert float(direction.norm()) > 0.5 * float(outs.std(0).norm())  # the gap is of the noise's size
    sound_out, sound_in = w1_updates(out_world, True, range(2)), w1_updates(in_world, True, range(2))
    assert torch.count_nonzero(sound_out) == 0 and torch.count_nonzero(sound_in) == 0


def test_clip_rows_keeps_short_rows_and_shortens_long_ones():
    h = torch.tensor([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    clipped = clip_rows(h, 1.0)
    assert torch.allclose(clipped, torch.tensor([[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]]))
