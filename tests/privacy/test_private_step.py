"""The private step, black-box: inject the sampler, the noise generator and a recorder.

Properties: a neighbouring batch moves a release by at most its stated sensitivity; the noise is
σ·sensitivity·C in one draw; the divisor is public; the ledger is charged once per release and
never past ε; a ledger's state survives a checkpoint with its open reservations.
"""

from __future__ import annotations

import json
import math

import pytest
import torch

from dpgan.errors import BudgetError, InputError
from dpgan.privacy import dpsgd
from dpgan.privacy.accounting import Budget, LedgerEntry, PrivacyLedger, epsilon_of
from dpgan.privacy.step import MicrobatchClipping, PrivateStep

DIM = 5


class Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(DIM, dtype=torch.float64))
        self.b = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))


def injected(model, grads, max_norm):
    """Backend whose units are their own per-unit gradients (dict of (B, ...) tensors)."""
    return {k: g.sum(dim=0) for k, g in dpsgd.clip_per_example(grads, max_norm).items()}, dpsgd.per_example_norms(grads)


class Fixed:
    def __init__(self, index: torch.Tensor) -> None:
        self.index = index

    def sample(self) -> torch.Tensor:
        return self.index


def step(*, sigma=1.0, steps=10, ledger=None, recorder=None, sampler=None, clipping=None, expected=4.0, max_norm=1.0):
    kwargs = {} if clipping is None else {"clipping": clipping}
    return PrivateStep(
        units=8,
        sample_rate=0.5,
        noise_multiplier=sigma,
        max_norm=max_norm,
        expected_batch_size=expected,
        steps=steps,
        ledger=ledger if ledger is not None else (PrivacyLedger() if sigma > 0 else None),
        label="test step",
        clipped_sum=injected,
        generator=torch.Generator().manual_seed(0),
        sampler=sampler,
        recorder=recorder,
        **kwargs,
    )


def units(n: int, scale: float = 3.0, seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return {
        "w": scale * torch.randn(n, DIM, generator=gen, dtype=torch.float64),
        "b": scale * torch.randn(n, 1, generator=gen, dtype=torch.float64),
    }


def flat(release, model) -> torch.Tensor:
    return torch.cat([g.reshape(-1) for g in release.gradient(model).values()])


def test_a_neighbouring_batch_moves_the_noiseless_sum_by_at_most_c():
    model, base = Linear(), units(6)
    outlier = {"w": 1e6 * torch.ones(1, DIM, dtype=torch.float64), "b": torch.ones(1, 1, dtype=torch.float64)}
    neighbour = {k: torch.cat([v, outlier[k]]) for k, v in base.items()}
    a = step(sigma=0.0, expected=1.0).release(model, base, 6)
    b = step(sigma=0.0, expected=1.0).release(model, neighbour, 7)
    moved = float((flat(a, model) - flat(b, model)).norm())
    assert moved == pytest.approx(1.0, rel=1e-9)  # the outlier's clipped gradient: exactly C


def test_noise_is_sigma_times_sensitivity_times_c_and_the_divisor_is_public():
    records: list[dict] = []
    s = step(sigma=1.5, recorder=records.append, expected=4.0, max_norm=0.5)
    s.release(Linear(), units(3), 3)
    s.release(Linear(), units(9), 9)  # a different realised batch size: the same divisor
    assert [r["noise_std"] for r in records] == [pytest.approx(0.75)] * 2
    assert [r["divisor"] for r in records] == [4.0, 4.0]
    micro: list[dict] = []
    m = step(sigma=1.5, recorder=micro.append, clipping=MicrobatchClipping(3), max_norm=0.5)
    m.release(Linear(), units(3), 3)
    assert micro[0]["noise_std"] == pytest.approx(1.5) and micro[0]["divisor"] == 3.0  # 2σC, ÷ m


def test_the_release_is_the_clipped_sum_plus_one_draw_from_the_given_generator():
    model = Linear()
    records: list[dict] = []
    release = step(sigma=1.0, recorder=records.append).release(model, units(4), 4)
    gen = torch.Generator().manual_seed(0)
    expected = {
        k: (v + torch.randn(v.shape, generator=gen, dtype=v.dtype)) / 4.0 for k, v in records[0]["clipped"].items()
    }
    for name, value in release.gradient(model).items():
        torch.testing.assert_close(value, expected[name], rtol=0, atol=0)


def test_extras_clipped_with_the_gradient_share_its_noise_draw_and_come_first():
    """A vector clipped with the unit (the information loss's features) is noised in the same draw."""
    model = Linear()

    def with_features(model, grads, max_norm):
        sums, norms = injected(model, grads, max_norm)
        return {"features": torch.ones(2, dtype=torch.float64), **sums}, norms

    s = PrivateStep(
        units=8,
        sample_rate=0.5,
        noise_multiplier=1.0,
        max_norm=1.0,
        expected_batch_size=4.0,
        steps=2,
        ledger=PrivacyLedger(),
        label="t",
        clipped_sum=with_features,
        generator=torch.Generator().manual_seed(3),
    )
    empty = s.release(model, None, 0, extras={"features": 2})  # an empty batch still noises the extra
    assert list(empty.noisy_sum)[0] == "features" and empty.extra("features").shape == (2,)
    full = s.release(model, units(2), 2, extras={"features": 2})
    assert set(full.noisy_sum) == {"features", "w", "b"}


def test_each_release_charges_one_reserved_step_and_none_past_it():
    ledger = PrivacyLedger()
    s = step(sigma=1.0, steps=3, ledger=ledger)
    for _ in range(3):
        s.release(Linear(), units(2), 2)
    (entry,) = ledger.entries
    assert (entry.name, entry.count, entry.noise_multiplier, entry.sampling_rate) == ("test step", 3, 1.0, 0.5)
    with pytest.raises(BudgetError, match="reserved steps are spent"):
        s.release(Linear(), units(2), 2)
    assert ledger.entries[0].count == 3


def test_a_step_that_would_pass_the_budget_is_refused_before_any_release():
    ledger = PrivacyLedger(budget=Budget(1.0, 1e-5, "rdp"))
    ledger.add(LedgerEntry("row count", 5.0))
    with pytest.raises(BudgetError, match="past the budget"):
        step(sigma=0.5, steps=1000, ledger=ledger)
    assert [e.name for e in ledger.entries] == ["row count"]  # nothing reserved
    ok = step(sigma=12.0, steps=10, ledger=ledger)
    ok.release(Linear(), units(2), 2)
    # reserved steps count in full: a later addition cannot overtake releases still to come
    spent = epsilon_of(ledger.committed(), 1e-5, "rdp")
    assert spent <= 1.0
    with pytest.raises(BudgetError):
        ledger.add(LedgerEntry("one more read", 0.5))


def test_non_private_control_needs_sigma_zero_and_no_ledger():
    records: list[dict] = []
    step(sigma=0.0, recorder=records.append).release(Linear(), units(2), 2)
    assert records[0]["noise_std"] == 0.0
    with pytest.raises(InputError, match="ledger"):
        PrivateStep(
            units=8,
            sample_rate=0.5,
            noise_multiplier=1.0,
            max_norm=1.0,
            expected_batch_size=4.0,
            steps=1,
            ledger=None,
            label="t",
            clipped_sum=injected,
            generator=torch.Generator(),
        )


def test_the_injected_sampler_decides_the_units():
    s = step(sampler=Fixed(torch.tensor([1, 5])))
    assert s.sample().tolist() == [1, 5]


def test_ledger_state_survives_a_checkpoint_and_goes_on_charging():
    ledger = PrivacyLedger(budget=Budget(3.0, 1e-5, "rdp"))
    ledger.add(LedgerEntry("row count", 20.0))
    s = step(sigma=3.0, steps=5, ledger=ledger)
    s.release(Linear(), units(2), 2)
    state = json.loads(json.dumps(ledger.state_dict()))  # what a checkpoint writes
    resumed = PrivacyLedger.from_state_dict(state)
    assert resumed.entries == ledger.entries and resumed.budget == ledger.budget and resumed.reserved == {1: 5}
    reservation = resumed.reservation(1)
    for _ in range(4):
        reservation.charge()
    with pytest.raises(BudgetError):
        reservation.charge()
    assert resumed.entries[1].count == 5
    assert resumed.epsilon(1e-5, "rdp") <= 3.0
    with pytest.raises(InputError):
        PrivacyLedger.from_state_dict({"entries": [], "reserved": {"3": 1}})


def test_clipping_decay_keeps_the_event_and_scales_the_noise():
    """A schedule C_t fixed in advance: noise σ·C_t, the same Gaussian(σ) event each step."""
    records: list[dict] = []
    ledger = PrivacyLedger()
    s = step(sigma=1.0, steps=2, ledger=ledger, recorder=records.append)
    s.release(Linear(), units(2), 2, max_norm=1.0)
    s.release(Linear(), units(2), 2, max_norm=0.25)
    assert [r["noise_std"] for r in records] == [1.0, 0.25]
    assert ledger.entries[0].noise_multiplier == 1.0 and ledger.entries[0].count == 2
    assert math.isfinite(ledger.epsilon(1e-5, "rdp"))
