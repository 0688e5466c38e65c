"""The per-label DP mixture (dpgan.statistics.mixture): its ledger, the modes it finds, the bounds
its Lloyd sums rely on, and the public facts neighbouring sets share."""

from __future__ import annotations

import numpy as np
import pytest

from dpgan.errors import InputError
from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.statistics.bases import low_frequency_basis
from dpgan.statistics.gaussian import clip_rows
from dpgan.statistics.mixture import DPGaussianMixture, nearest, public_kmeans


def _fit(mixture: DPGaussianMixture, values, labels, n_labels, epsilon=1.0, seed=0, per_unit=1):
    ledger = PrivacyLedger(budget=Budget(epsilon, 1e-5, "pld"))
    target = ShareTarget(epsilon, 1e-5, "pld")
    mixture.fit(
        values, labels, n_labels, np.random.default_rng(seed), ledger=ledger, target=target, event="m", note="",
        per_unit=per_unit,
    )  # fmt: skip
    return ledger


def _two_modes(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One label whose vectors are two tight bumps at ±0.6 (a Gaussian puts its mean at 0)."""
    signs = rng.choice([-1.0, 1.0], size=n)
    values = np.clip(signs[:, None] * 0.6 + rng.normal(0, 0.05, (n, 8)), -1, 1)
    return values, signs


def test_the_steering_and_the_cells_together_land_on_epsilon():
    rng = np.random.default_rng(0)
    values, _ = _two_modes(600, rng)
    mixture = DPGaussianMixture(-1.0, 1.0, components=3, iterations=2, steering_scale=3.0)
    ledger = _fit(mixture, values, None, 0, epsilon=2.0)
    steering, cells = ledger.entries
    assert (steering.count, cells.count) == (3 + 2 * 2, 3)
    assert steering.noise_multiplier == pytest.approx(3.0 * cells.noise_multiplier)
    assert ledger.epsilon(1e-5) == pytest.approx(2.0, rel=2e-3)
    # the two entries are one Gaussian at (Σ σ_i⁻²)^(-1/2): the same ε as a single release at that σ
    one = (7 / steering.noise_multiplier**2 + 3 / cells.noise_multiplier**2) ** -0.5
    single = PrivacyLedger(budget=Budget(2.0, 1e-5, "pld"))
    from dpgan.privacy.releases import charge_gaussian

    charge_gaussian(single, "one", one)
    assert single.epsilon(1e-5) == pytest.approx(ledger.epsilon(1e-5), rel=1e-6)


def test_at_a_large_epsilon_the_cells_find_the_modes_one_gaussian_averages():
    rng = np.random.default_rng(1)
    values, signs = _two_modes(4000, rng)
    mixture = DPGaussianMixture(-1.0, 1.0, components=2, iterations=3)
    _fit(mixture, values, None, 0, epsilon=1e4)
    means = np.stack(mixture.cells.means)
    found = sorted(means.mean(axis=1))
    assert found == pytest.approx([-0.6, 0.6], abs=0.02)
    assert mixture.cells.shares == pytest.approx([np.mean(signs < 0), np.mean(signs > 0)], abs=0.02) or (
        mixture.cells.shares == pytest.approx([np.mean(signs > 0), np.mean(signs < 0)], abs=0.02)
    )
    drawn, labels = mixture.sample(3000, np.random.default_rng(2))
    assert labels.max() == 0 and drawn.shape == (3000, 8)
    assert np.mean(np.abs(drawn.mean(axis=1)) < 0.3) < 0.02  # the draws keep the gap between the modes
    assert mixture.start.means[0].mean() == pytest.approx(values.mean(), abs=0.02)  # one Gaussian: between them


def test_labels_keep_their_own_cells():
    rng = np.random.default_rng(3)
    a, _ = _two_modes(2000, rng)
    b = np.clip(rng.normal(-0.2, 0.05, (2000, 8)), -1, 1)
    values, labels = np.vstack([a, b]), np.repeat([0, 1], 2000)
    mixture = DPGaussianMixture(-1.0, 1.0, components=2, iterations=2)
    _fit(mixture, values, labels, 2, epsilon=1e4)
    assert mixture.shares == pytest.approx([0.5, 0.5], abs=0.01)
    assert len(mixture.cells.means) == 4
    for cell in (2, 3):  # label 1's cells sit on its one bump
        if mixture.cells.shares[cell] > 0.05:
            assert mixture.cells.means[cell].mean() == pytest.approx(-0.2, abs=0.03)
    drawn, drawn_labels = mixture.sample(2000, np.random.default_rng(4))
    assert np.abs(drawn[drawn_labels == 1].mean() + 0.2) < 0.03


def test_the_lloyd_sums_are_bounded_by_the_clip_whatever_the_vector():
    rng = np.random.default_rng(5)
    values = rng.choice([-1.0, 1.0], size=(300, 16))  # every vector at the box's corners
    basis = low_frequency_basis((16,), 0.5)
    mixture = DPGaussianMixture(-1.0, 1.0, components=3, basis=basis, clip=0.7)
    _fit(mixture, values, None, 0, epsilon=1.0)
    coefficients = mixture._coefficients(values, np.zeros(300, dtype=np.int64))
    assert np.linalg.norm(coefficients, axis=1).max() <= 0.7 + 1e-9
    assert np.linalg.norm(mixture.centres, axis=-1).max() <= 0.7 + 1e-9
    uncentred = DPGaussianMixture(-1.0, 1.0, components=2)
    _fit(uncentred, values, None, 0)
    assert uncentred._bound(16) == pytest.approx(4.0)  # √16 · 1: the box's radius


def test_neighbouring_sets_get_the_same_public_facts_and_per_unit_scales_the_noise():
    rng = np.random.default_rng(6)
    values = np.clip(rng.normal(0, 0.3, (400, 6)), -1, 1)
    labels = rng.integers(0, 2, 400)
    outcomes = []
    for data, labs in ((values, labels), (np.vstack([values, np.ones((1, 6))]), np.append(labels, 1))):
        mixture = DPGaussianMixture(-1.0, 1.0, components=4, clip=0.9)
        ledger = _fit(mixture, data, labs, 2)
        outcomes.append(
            ([(e.noise_multiplier, e.count) for e in ledger.entries], len(mixture.cells.means), mixture.centres.shape)
        )
    assert outcomes[0] == outcomes[1]
    one, three = DPGaussianMixture(-1.0, 1.0, components=2), DPGaussianMixture(-1.0, 1.0, components=2)
    _fit(one, values, None, 0, seed=2)
    _fit(three, values, None, 0, seed=2, per_unit=3)
    assert three.sigma == pytest.approx(3 * one.sigma) and three.cells.sigma == pytest.approx(3 * one.cells.sigma)


@pytest.mark.parametrize(
    "kwargs", [{"components": 0}, {"components": 2, "iterations": -1}, {"components": 2, "steering_scale": 0.5}]
)
def test_bad_settings_are_one_line(kwargs):
    with pytest.raises(InputError):
        DPGaussianMixture(-1.0, 1.0, **kwargs)


def test_the_public_helpers():
    points = np.array([[0.0, 0.0], [3.0, 4.0], [0.1, 0.0]])
    assert nearest(points, np.array([[0.0, 0.0], [3.0, 4.1]])).tolist() == [0, 1, 0]
    assert np.linalg.norm(clip_rows(points, 1.0), axis=1) == pytest.approx([0.0, 1.0, 0.1])
    draws = np.concatenate([np.full((20, 2), -5.0), np.full((20, 2), 5.0)])
    centres = public_kmeans(draws, 2, np.random.default_rng(0))
    assert sorted(centres[:, 0]) == [-5.0, 5.0]
