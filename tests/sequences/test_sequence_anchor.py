"""The series' step-statistics anchor (dpgan.sequences.anchor): what it releases, what it charges,
and that its penalty is zero exactly when G's per-label, per-step moments match the released ones."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.sequences.anchor import EVENT, StepStatistics, measure_step_statistics, statistics_penalty
from dpgan.sequences.codec import read_long
from dpgan.sequences.settings import COUNT_EVENT
from dpgan.synthesizers.sequence import SequenceSynthesizer
from test_sequence_synthesizer import FAST, _long, _schema


def _units(n: int = 200, seed: int = 0) -> torch.Tensor:
    series = read_long(_long(n, seed), _schema())
    one_hot = np.eye(2, dtype=np.float32)[series.labels]
    channels = np.concatenate([series.values, np.repeat(one_hot[:, None, :], series.values.shape[1], axis=1)], axis=2)
    return torch.from_numpy(channels[:, None])


def test_a_near_noiseless_release_is_the_per_label_moments():
    units = _units()
    ledger = PrivacyLedger(budget=Budget(1e5, 1e-5))
    stats = measure_step_statistics(
        units, 1, 2, share=ShareTarget(1e5, 1e-5, "pld"), ledger=ledger, rng=np.random.default_rng(0)
    )
    (entry,) = ledger.entries
    assert entry.name == EVENT and entry.count == 3
    labels = units[:, 0, 0, 1:].argmax(dim=1)
    for label in (0, 1):
        rows = units[labels == label, 0, :, :1]
        torch.testing.assert_close(stats.mean[label], rows.mean(dim=0), atol=2e-3, rtol=0)
        torch.testing.assert_close(stats.sd[label], rows.std(dim=0, unbiased=False), atol=2e-2, rtol=0)
    assert abs(float(stats.shares[1]) - float(labels.float().mean())) < 1e-3


def test_the_penalty_is_zero_at_the_released_moments_and_grows_away_from_them():
    units = _units()
    labels = units[:, 0, 0, 1:].argmax(dim=1)
    values = units[:, 0, :, :1]
    mean = torch.stack([values[labels == g].mean(dim=0) for g in (0, 1)])
    sd = torch.stack([values[labels == g].std(dim=0, unbiased=False) for g in (0, 1)])
    shares = torch.tensor([float((labels == g).float().mean()) for g in (0, 1)])
    stats = StepStatistics(shares, mean, sd)
    assert float(statistics_penalty(units, 1, stats)) == pytest.approx(0.0, abs=1e-5)
    shifted = units.clone()
    shifted[..., :1] += 0.2
    assert float(statistics_penalty(shifted, 1, stats)) > 0.03
    swapped = units.clone()
    swapped[..., 1:] = swapped[..., 1:].flip(-1)  # every unit's label exchanged
    assert float(statistics_penalty(swapped, 1, stats)) > 0.01


def test_a_fit_with_the_anchor_charges_it_once_before_training():
    synth = SequenceSynthesizer(epsilon=3.0, seed=0, step_anchor=True, step_anchor_warmup=20, **FAST)
    synth.fit(_long(120), _schema())
    names = [e["name"] for e in synth.privacy_report()["events"]]
    assert names == [COUNT_EVENT, EVENT, "DP-SGD on the critic"]
    assert synth.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)
    with pytest.raises(Exception, match="step_anchor_fraction"):
        SequenceSynthesizer(epsilon=1.0, step_anchor_fraction=0.7)


def test_the_moment_penalty_is_zero_at_the_moments_of_the_rows_and_sees_hour_to_hour_covariance():
    from dpgan.sequences.anchor import moment_penalty

    units = _units()
    day_level = torch.randn(units.shape[0], generator=torch.Generator().manual_seed(0)) * 0.2
    units[..., 0] += day_level[:, None, None]  # busy and quiet days: hours go together
    labels = units[:, 0, 0, 1:].argmax(dim=1)
    flat = units[:, 0, :, 0]
    means = torch.stack([flat[labels == g].mean(dim=0) for g in (0, 1)])
    covariances = torch.stack([torch.cov(flat[labels == g].T, correction=0) for g in (0, 1)])
    shares = torch.tensor([float((labels == g).float().mean()) for g in (0, 1)])
    assert float(moment_penalty(units, 1, shares, means, covariances)) == pytest.approx(0.0, abs=1e-6)
    # the same per-hour means and spreads, but each hour drawn from another day: covariance lost
    shuffled = units.clone()
    for hour in range(units.shape[2]):
        for g in (0, 1):
            rows = torch.nonzero(labels == g)[:, 0]
            shuffled[rows, 0, hour, 0] = units[rows[torch.randperm(len(rows))], 0, hour, 0]
    assert float(moment_penalty(shuffled, 1, shares, means, covariances)) > 1e-3


def test_a_fit_with_the_moment_anchor_charges_the_gaussian_release_once():
    from dpgan.sequences.baseline import EVENT as GAUSSIAN_EVENT

    synth = SequenceSynthesizer(epsilon=3.0, seed=0, moment_anchor=True, step_anchor_warmup=20, **FAST)
    synth.fit(_long(120), _schema())
    names = [e["name"] for e in synth.privacy_report()["events"]]
    assert names == [COUNT_EVENT, GAUSSIAN_EVENT, "DP-SGD on the critic"]
    assert synth.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)
    with pytest.raises(Exception, match="entity"):
        SequenceSynthesizer(epsilon=3.0, seed=0, moment_anchor=True, **FAST).fit(
            _long(60, entities=5), _schema(entity="home")
        )
