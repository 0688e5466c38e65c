"""The per-label DP Gaussian copula (dpgan.statistics.copula): its ledger, the skewed marginal it
keeps where a Gaussian clips, the round trip of its score map, and neighbouring inputs."""

from __future__ import annotations

import numpy as np
import pytest

from dpgan.errors import InputError
from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.statistics.copula import HISTOGRAM_EVENT, DPGaussianCopula
from dpgan.statistics.gaussian import DPGaussian


def _fit(copula: DPGaussianCopula, values, labels, n_labels, epsilon=3.0, seed=0, per_unit=1):
    ledger = PrivacyLedger(budget=Budget(epsilon, 1e-5, "pld"))
    copula.fit(
        values, labels, n_labels, np.random.default_rng(seed), ledger=ledger,
        histogram_target=ShareTarget(0.2 * epsilon, 1e-5, "pld"), target=ShareTarget(epsilon, 1e-5, "pld"),
        event="scores", note="", per_unit=per_unit,
    )  # fmt: skip
    return ledger


def _skewed(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Values near the box's floor with a long right tail (flows, loads), correlated across coordinates."""
    level = rng.exponential(0.15, (n, 1))
    return np.clip(-1.0 + level + rng.exponential(0.05, (n, d)), -1.0, 1.0)


def test_the_histogram_then_the_scores_land_on_epsilon():
    rng = np.random.default_rng(0)
    ledger = _fit(DPGaussianCopula(-1.0, 1.0), _skewed(800, 12, rng), None, 0, epsilon=3.0)
    histogram, scores = ledger.entries
    assert histogram.name == HISTOGRAM_EVENT and histogram.count == 1 and scores.count == 3
    assert ledger.epsilon(1e-5) == pytest.approx(3.0, rel=2e-3)


def test_at_a_large_epsilon_the_skewed_marginal_comes_back_where_a_gaussian_clips():
    rng = np.random.default_rng(1)
    values = _skewed(20000, 8, rng)
    copula = DPGaussianCopula(-1.0, 1.0, bins=64)
    _fit(copula, values, None, 0, epsilon=1e4)
    drawn, _ = copula.sample(20000, np.random.default_rng(2))
    levels = [0.1, 0.5, 0.9, 0.99]
    assert np.quantile(drawn, levels) == pytest.approx(np.quantile(values, levels), abs=0.03)
    gaussian = DPGaussian(-1.0, 1.0)
    ledger = PrivacyLedger(budget=Budget(1e4, 1e-5, "pld"))
    gaussian.fit(values, None, 0, np.random.default_rng(3), ledger=ledger, target=ShareTarget(1e4, 1e-5, "pld"),
                 event="g", note="")  # fmt: skip
    plain, _ = gaussian.sample(20000, np.random.default_rng(2))
    assert np.mean(plain <= -1.0 + 1e-9) > 0.1  # the Gaussian piles its left tail on the box's edge
    assert np.mean(drawn <= -1.0 + 1e-9) < 0.01
    # the dependence survives: coordinates of one vector move together, as in the data (0.90; a
    # Gaussian copula over one pooled marginal gives back a rank dependence, not Pearson's exactly)
    assert np.corrcoef(values[:, 0], values[:, 1])[0, 1] > 0.85
    assert np.corrcoef(drawn[:, 0], drawn[:, 1])[0, 1] > 0.7


def test_scores_lie_in_the_box_and_map_back():
    rng = np.random.default_rng(4)
    values, labels = _skewed(600, 5, rng), rng.integers(0, 2, 600)
    copula = DPGaussianCopula(-1.0, 1.0)
    _fit(copula, values, labels, 2, epsilon=50.0)
    scores = copula.scores(values, labels)
    assert scores.min() >= -1.0 and scores.max() <= 1.0
    inside = (scores > -0.999) & (scores < 0.999)  # away from the clipped tails the map inverts
    np.testing.assert_allclose(copula.values(scores, labels)[inside], values[inside], atol=1e-9)
    for cdf in np.concatenate(copula.cdfs):  # each label's (channels, bins + 1)
        assert cdf[0] == 0.0 and cdf[-1] == pytest.approx(1.0) and np.all(np.diff(cdf) > 0)


def test_neighbouring_sets_get_the_same_public_facts_and_per_unit_scales_the_histogram_noise():
    rng = np.random.default_rng(5)
    values, labels = _skewed(500, 6, rng), rng.integers(0, 3, 500)
    outcomes = []
    for data, labs in ((values, labels), (np.vstack([values, np.ones((1, 6))]), np.append(labels, 2))):
        copula = DPGaussianCopula(-1.0, 1.0)
        ledger = _fit(copula, data, labs, 3)
        outcomes.append(
            ([(e.name, e.noise_multiplier, e.count) for e in ledger.entries], [c.shape for c in copula.cdfs])
        )
    assert outcomes[0] == outcomes[1]
    # the same noise draws at k times the std: with huge noise every bin sits at its floor or far above
    one, three = DPGaussianCopula(-1.0, 1.0), DPGaussianCopula(-1.0, 1.0)
    _fit(one, values, labels, 3, epsilon=0.05, seed=7)
    _fit(three, values, labels, 3, epsilon=0.05, seed=7, per_unit=3)
    assert three.gaussian.sigma == pytest.approx(3 * one.gaussian.sigma)
    assert not np.allclose(one.cdfs[0], three.cdfs[0])


def test_each_channel_gets_its_own_marginal_at_less_noise_than_one_pooled_histogram():
    """Two value columns (channel-last) on different levels: pooled, each column's draws take the
    blend of both; per channel, each keeps its own. The histogram's Δ is d/√C, not d."""
    rng = np.random.default_rng(8)
    low = np.clip(-1.0 + rng.exponential(0.1, (6000, 4)), -1.0, 1.0)  # near the floor
    high = np.clip(1.0 - rng.exponential(0.1, (6000, 4)), -1.0, 1.0)  # near the ceiling
    values = np.stack([low, high], axis=2).reshape(6000, 8)  # (step, column) channel-last
    per_channel, pooled = DPGaussianCopula(-1.0, 1.0, bins=64, channels=2), DPGaussianCopula(-1.0, 1.0, bins=64)
    ledger = _fit(per_channel, values, None, 0, epsilon=1e4)
    _fit(pooled, values, None, 0, epsilon=1e4)
    assert per_channel.cdfs[0].shape == (2, 65) and pooled.cdfs[0].shape == (1, 65)
    assert "Δ = d/√C = 8/√2 = 5.657" in ledger.entries[0].note
    drawn, _ = per_channel.sample(6000, np.random.default_rng(9))
    blend, _ = pooled.sample(6000, np.random.default_rng(9))
    levels = np.linspace(0.02, 0.98, 49)
    for channel, data in ((0, low), (1, high)):
        own = np.abs(np.quantile(drawn[:, channel::2], levels) - np.quantile(data, levels)).max()
        blended = np.abs(np.quantile(blend[:, channel::2], levels) - np.quantile(data, levels)).max()
        assert own < 0.05 and blended > 0.5  # a pooled CDF's tails reach into the other column's values
    scores = per_channel.scores(values, np.zeros(6000, dtype=np.int64))
    inside = np.abs(scores) < 0.999
    np.testing.assert_allclose(
        per_channel.values(scores, np.zeros(6000, dtype=np.int64))[inside], values[inside], atol=1e-9
    )
    with pytest.raises(InputError, match="per channel"):
        _fit(DPGaussianCopula(-1.0, 1.0, channels=3), values, None, 0)


@pytest.mark.parametrize("kwargs", [{"bins": 1}, {"bins": 5000}, {"floor": 0.0}, {"bins": 2.5}])
def test_bad_settings_are_one_line(kwargs):
    with pytest.raises(InputError, match="bins"):
        DPGaussianCopula(-1.0, 1.0, **kwargs)


@pytest.mark.parametrize("channels", [0, 1.5])
def test_bad_channels_are_one_line(channels):
    with pytest.raises(InputError, match="channels"):
        DPGaussianCopula(-1.0, 1.0, channels=channels)


def test_a_mixture_can_model_the_scores_and_the_ledger_still_lands_on_epsilon():
    """A caller-made scores model (a DP mixture) replaces the one Gaussian: the histogram's entry,
    then the mixture's two, together the target."""
    from dpgan.statistics.mixture import DPGaussianMixture

    rng = np.random.default_rng(12)
    values, labels = _skewed(900, 6, rng), rng.integers(0, 2, 900)
    copula = DPGaussianCopula(-1.0, 1.0, scores_model=DPGaussianMixture(-1.0, 1.0, components=2))
    ledger = _fit(copula, values, labels, 2, epsilon=4.0)
    assert [e.name for e in ledger.entries][0] == HISTOGRAM_EVENT and len(ledger.entries) == 3
    assert ledger.epsilon(1e-5) == pytest.approx(4.0, rel=2e-3)
    drawn, drawn_labels = copula.sample(500, np.random.default_rng(13))
    assert drawn.shape == (500, 6) and drawn.min() >= -1.0 and drawn.max() <= 1.0
    assert set(np.unique(drawn_labels)) <= {0, 1} and copula.shares.shape == (2,)


def test_the_histogram_note_says_what_ran_the_entity_factor_included():
    """The ledger's note states the cells released and the Δ the noise used: k·d/√C with k vectors
    per unit (an entity's k series), not d/√C alone (issue 49)."""
    values = _skewed(200, 6, np.random.default_rng(3))
    one = _fit(DPGaussianCopula(-1.0, 1.0, bins=16, channels=3), values, None, 0)
    four = _fit(DPGaussianCopula(-1.0, 1.0, bins=16, channels=3), values, None, 0, per_unit=4)
    assert one.entries[0].note == "16 cells per label and channel (16 equal bins of [-1, 1]); Δ = d/√C = 6/√3 = 3.464"
    assert four.entries[0].note.endswith("Δ = 4·d/√C = 4·6/√3 = 13.86")  # 4 · 6/√3
