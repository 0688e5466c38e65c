"""The kind-agnostic DP Gaussian (dpgan.statistics): public bases, sensitivities, the ledger, the
recovery of known moments, and the shrinkage that keeps noise from passing for variance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgan.errors import InputError
from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.statistics.bases import high_frequency_basis, low_frequency_basis, low_frequency_keep
from dpgan.statistics.gaussian import MIN_EIGENVALUE, DPGaussian


def _fit(gaussian: DPGaussian, values, labels, n_labels, epsilon=1.0, seed=0, per_unit=1):
    ledger = PrivacyLedger(budget=Budget(epsilon, 1e-5, "pld"))
    target = ShareTarget(epsilon, 1e-5, "pld")
    gaussian.fit(
        values, labels, n_labels, np.random.default_rng(seed), ledger=ledger, target=target, event="g", note="",
        per_unit=per_unit,
    )  # fmt: skip
    return ledger


@pytest.mark.parametrize("sides,channels", [((28, 28), 1), ((8, 6), 3), ((24,), 2)])
@pytest.mark.parametrize("fraction", [0.2, 0.5, 1.0])
def test_bases_are_orthonormal_and_full_at_fraction_one(sides, channels, fraction):
    for last in (False, True):
        basis = low_frequency_basis(sides, fraction, channels=channels, channels_last=last)
        d = channels * math.prod(sides)
        assert basis.shape[0] == d and 1 <= basis.shape[1] <= d
        np.testing.assert_allclose(basis.T @ basis, np.eye(basis.shape[1]), atol=1e-10)
        if fraction == 1.0:
            assert basis.shape[1] == d


def test_low_frequencies_hold_a_smooth_signal_and_channels_keep_their_layout():
    keep = low_frequency_keep((28, 28), 0.25)
    assert [0, 0] in keep.tolist() and [27, 27] not in keep.tolist() and [0, 13] in keep.tolist()
    assert len(keep) == sum(1 for u in range(28) for v in range(28) if u + v < 14)
    # a constant image per channel lies in the zero frequency of its own channel: fully kept
    image = np.concatenate([np.full(64, 0.3), np.full(64, -0.7)])  # channel-major (C, H, W)
    basis = low_frequency_basis((8, 8), 0.1, channels=2)
    np.testing.assert_allclose(basis @ (basis.T @ image), image, atol=1e-12)
    series = np.stack([np.full(24, 0.3), np.full(24, -0.7)], axis=1).ravel()  # channel-last (T, F)
    basis = low_frequency_basis((24,), 0.05, channels=2, channels_last=True)
    np.testing.assert_allclose(basis @ (basis.T @ series), series, atol=1e-12)
    # a checkerboard is all high frequency, a product of ramps all low: their energy in a quarter basis
    low = low_frequency_basis((8, 8), 0.25)
    board = (np.indices((8, 8)).sum(axis=0) % 2 * 2.0 - 1.0).ravel()
    ramps = np.outer(np.linspace(-1, 1, 8), np.linspace(-1, 1, 8)).ravel()
    assert np.sum((low.T @ board) ** 2) < 0.01 * np.sum(board**2)
    assert np.sum((low.T @ ramps) ** 2) > 0.95 * np.sum(ramps**2)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"low": 1.0, "high": -1.0}, "box"),
        ({"low": -1.0, "high": float("nan")}, "box"),
        ({"low": -1.0, "high": 1.0, "clip": 0.0}, "clip"),
        ({"low": -1.0, "high": 1.0, "clip": float("inf")}, "clip"),
        ({"low": -1.0, "high": 1.0, "basis": np.ones((3, 5))}, "basis"),
    ],
)
def test_bad_settings_are_one_line(kwargs, message):
    with pytest.raises(InputError, match=message):
        DPGaussian(**kwargs)
    with pytest.raises(InputError, match="fraction"):
        low_frequency_basis((8, 8), 0.0)


def test_sensitivities_follow_the_box_and_the_clip():
    assert DPGaussian(-1.0, 1.0).radius(16) == pytest.approx(4.0)
    assert DPGaussian(0.0, 3.0).radius(4) == pytest.approx(6.0)
    assert DPGaussian(-1.0, 1.0).second_sensitivity(16) == pytest.approx(16.0)
    assert DPGaussian(-1.0, 1.0, clip=2.5).second_sensitivity(16) == pytest.approx(6.25)
    coefficients = np.random.default_rng(0).normal(0, 5, (200, 7))
    clipped = DPGaussian(-1.0, 1.0, clip=2.5)._clipped(coefficients)
    assert np.linalg.norm(clipped, axis=1).max() <= 2.5 + 1e-12
    small = coefficients[np.linalg.norm(coefficients, axis=1) < 2.5]
    np.testing.assert_allclose(DPGaussian(-1.0, 1.0, clip=2.5)._clipped(small), small)


def test_one_entry_of_three_releases_lands_on_epsilon_and_per_unit_scales_the_noise():
    rng = np.random.default_rng(1)
    values = np.clip(rng.normal(0, 0.3, (500, 10)), -1, 1)
    ledger = _fit(DPGaussian(-1.0, 1.0), values, None, 0, epsilon=2.0)
    (entry,) = ledger.entries
    assert entry.count == 3 and entry.name == "g"
    assert ledger.epsilon(1e-5) == pytest.approx(2.0, rel=2e-3)
    one, three = DPGaussian(-1.0, 1.0), DPGaussian(-1.0, 1.0)
    _fit(one, values, None, 0, seed=5)
    _fit(three, values, None, 0, seed=5, per_unit=3)
    assert three.sigma == pytest.approx(3 * one.sigma)
    # the same draws at three times the std: each mean's error is three times as large (up to the
    # noisy count it is divided by, which moves by about 1 %)
    ratio = np.abs(three.means[0] - values.mean(0)) / np.abs(one.means[0] - values.mean(0))
    assert np.all((ratio > 2.8) & (ratio < 3.2))


def test_large_epsilon_recovers_class_means_and_the_projected_covariance():
    rng = np.random.default_rng(2)
    basis = low_frequency_basis((16,), 0.5)
    truth = [np.linspace(-0.5, 0.5, 16), np.linspace(0.4, -0.4, 16)]
    labels = np.repeat([0, 1], 20000)
    scale = np.exp(-np.arange(16) / 3.0) * 0.2  # smooth variation: most of it in the low frequencies
    values = np.stack([truth[k] for k in labels]) + rng.normal(0, 1, (40000, 16)) * scale
    values = np.clip(values, -1, 1)
    gaussian = DPGaussian(-1.0, 1.0, basis=basis, clip=3.0)
    _fit(gaussian, values, labels, 2, epsilon=1e4)
    for k in (0, 1):
        np.testing.assert_allclose(gaussian.means[k], values[labels == k].mean(0), atol=2e-3)
        coefficients = (values[labels == k] - values[labels == k].mean(0)) @ basis
        expected = np.cov(coefficients.T, bias=True)
        released = gaussian.coefficient_factors[k] @ gaussian.coefficient_factors[k].T
        assert np.abs(released - expected).max() < 5e-3
    assert gaussian.shares == pytest.approx([0.5, 0.5], abs=1e-3)
    drawn, drawn_labels = gaussian.sample(2000, np.random.default_rng(3))
    assert drawn.shape == (2000, 16) and drawn.min() >= -1 and drawn.max() <= 1
    assert set(np.unique(drawn_labels)) == {0, 1}


@pytest.mark.parametrize("clip", [None, 1.0])
def test_noise_does_not_pass_for_variance(clip):
    # every vector the same: the true covariance is zero, and after the shrink the released factor
    # keeps (almost) nothing of the noise, in the uncentred and the centred form alike
    values = np.tile(np.linspace(-0.3, 0.3, 12), (3000, 1))
    gaussian = DPGaussian(-1.0, 1.0, clip=clip)
    _fit(gaussian, values, None, 0, epsilon=3.0, seed=4)
    variances = np.linalg.eigvalsh(gaussian.covariances()[0])
    assert variances.max() < 0.05 * np.diag(np.cov(np.random.default_rng(0).uniform(-1, 1, (99, 12)).T)).mean()
    assert variances.min() >= MIN_EIGENVALUE * 0.99


def test_neighbouring_sets_get_the_same_public_facts():
    # one vector far out, present or not: the entry, σ and the shapes released are the same
    rng = np.random.default_rng(6)
    values = np.clip(rng.normal(0, 0.2, (300, 9)), -1, 1)
    labels = rng.integers(0, 3, 300)
    basis = low_frequency_basis((3, 3), 0.6)
    outcomes = []
    for data, labs in ((values, labels), (np.vstack([values, np.ones((1, 9))]), np.append(labels, 2))):
        gaussian = DPGaussian(-1.0, 1.0, basis=basis, clip=0.8)
        ledger = _fit(gaussian, data, labs, 3)
        outcomes.append((ledger.entries[0].noise_multiplier, [f.shape for f in gaussian.coefficient_factors]))
    assert outcomes[0] == outcomes[1]


def test_the_spike_rule_gives_back_a_large_variance_the_level_rule_cuts():
    # a rank-one covariance ℓ·vvᵀ plus symmetric noise of entry sd s: the top noisy eigenvalue sits
    # near ℓ + s²m/ℓ; the spike rule inverts that, the level rule subtracts 2√(2m)·s from it
    from dpgan.statistics.gaussian import shrink_eigenvalues

    rng = np.random.default_rng(8)
    m, s, spike = 200, 0.01, 0.6
    v = rng.normal(size=m)
    v /= np.linalg.norm(v)
    noise = rng.normal(0, s, (m, m))
    values = np.linalg.eigvalsh(spike * np.outer(v, v) + (noise + noise.T) / np.sqrt(2))
    by_spike = shrink_eigenvalues(values, s, m, "spike")
    by_level = shrink_eigenvalues(values, s, m, "level")
    assert by_spike[-1] == pytest.approx(spike, rel=0.03)
    assert by_level[-1] < spike - 0.3
    assert np.all(by_spike[:-1] < 0.05 * spike)  # the bulk: (almost) nothing kept
    with pytest.raises(InputError, match="shrink"):
        DPGaussian(-1.0, 1.0, shrink="median")


def _wiggly(n: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """Smooth days (a level and a slow wave) plus quick independent wiggles of sd 0.05."""
    t = np.linspace(0.0, 1.0, length)
    level, phase = rng.normal(0.0, 0.2, (n, 1)), rng.uniform(0.0, 2 * np.pi, (n, 1))
    return np.clip(level + 0.3 * np.sin(2 * np.pi * t + phase) + rng.normal(0.0, 0.05, (n, length)), -1, 1)


def test_high_frequencies_complete_the_low_basis():
    for sides, channels, last in (((24,), 2, True), ((8, 6), 1, False), ((96,), 1, True)):
        low = low_frequency_basis(sides, 0.3, channels=channels, channels_last=last)
        high = high_frequency_basis(sides, 0.3, channels=channels, channels_last=last)
        both = np.hstack([low, high])
        assert both.shape[0] == both.shape[1] == channels * math.prod(sides)
        np.testing.assert_allclose(both.T @ both, np.eye(both.shape[1]), atol=1e-10)
    assert high_frequency_basis((10,), 1.0).shape == (10, 0)


def test_the_residual_spectrum_is_a_fourth_release_and_gives_the_wiggles_back():
    rng = np.random.default_rng(11)
    values, length = _wiggly(6000, 48, rng), 48
    basis, rest = low_frequency_basis((length,), 0.1), high_frequency_basis((length,), 0.1)
    with_rest = DPGaussian(-1.0, 1.0, basis=basis, clip=3.0, residual_basis=rest, residual_clip=1.5)
    ledger = _fit(with_rest, values, None, 0, epsilon=2.0)
    (entry,) = ledger.entries
    assert entry.count == 4 and with_rest.releases == 4
    assert ledger.epsilon(1e-5) == pytest.approx(2.0, rel=2e-3)
    plain = DPGaussian(-1.0, 1.0, basis=basis, clip=3.0)
    _fit(plain, values, None, 0, epsilon=2.0)
    assert plain.releases == 3 and plain.factors[0].shape == (48, basis.shape[1])
    assert with_rest.factors[0].shape == (48, 48)
    # the released spectrum: each high frequency's variance near the wiggles' 0.05² (noise σ·c_r²/n)
    assert np.median(with_rest.residual_variances[0]) == pytest.approx(0.05**2, rel=0.3)
    roughness = lambda x: np.abs(np.diff(x, axis=1)).mean()  # noqa: E731
    drawn, _ = with_rest.sample(6000, np.random.default_rng(12))
    smooth, _ = plain.sample(6000, np.random.default_rng(12))
    assert roughness(drawn) == pytest.approx(roughness(values), rel=0.15)
    assert roughness(smooth) < 0.6 * roughness(values)  # the basis alone leaves the wiggles out


def test_the_residual_noise_is_sigma_times_its_clip_squared_and_per_unit_scales_it():
    """Vectors equal to their label's mean have no residual: the released spectrum is the noise
    alone (kept ≥ 0), whose sd over the count is σ·c_r²/n, k times that for k vectors per unit."""
    values = np.zeros((20000, 128))  # many vectors and a wide c_r: the released mean's error adds ~nothing
    basis, rest = low_frequency_basis((128,), 0.25), high_frequency_basis((128,), 0.25)
    spreads = []
    for per_unit in (1, 3):
        model = DPGaussian(-1.0, 1.0, basis=basis, residual_basis=rest, residual_clip=2.0)
        _fit(model, values, None, 0, epsilon=1.0, seed=3, per_unit=per_unit)
        count = 20000  # the noisy count moves by about σ, far below 1 % here
        expected = model.sigma * 2.0**2 / count
        kept = model.residual_variances[0]
        assert np.mean(kept == 0.0) == pytest.approx(0.5, abs=0.15)  # half the noise is negative
        assert np.sqrt(np.mean(kept[kept > 0] ** 2)) == pytest.approx(expected, rel=0.25)
        spreads.append(model.sigma)
    assert spreads[1] == pytest.approx(3 * spreads[0])


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"residual_clip": 1.0}, "both"),
        ({"residual_basis": np.eye(8)[:, 4:]}, "both"),
        ({"basis": np.eye(8)[:, :4], "residual_basis": np.eye(8)[:, 4:], "residual_clip": 0.0}, "residual clip"),
        ({"residual_basis": np.eye(8)[:, 4:], "residual_clip": 1.0}, "complement"),
        ({"basis": np.eye(6)[:, :3], "residual_basis": np.eye(8)[:, 4:], "residual_clip": 1.0}, "complement"),
    ],
)
def test_bad_residual_settings_are_one_line(kwargs, message):
    with pytest.raises(InputError, match=message):
        DPGaussian(-1.0, 1.0, **kwargs)
