"""The two-sample scores of synthetic series (dpgan.evaluation.sequences.two_sample): series from
the real process score near 0 (indistinguishable) and predict the real next step as well as real
training series do; averaged days and white noise are told apart and predict badly."""

from __future__ import annotations

import numpy as np
import pytest

from dpgan.evaluation.sequences.two_sample import discriminative_score, predictive_score, series_features

LENGTH = 24


def days(n: int, seed: int) -> np.ndarray:
    """(n, 24, 1): a daily cycle of random amplitude and phase, an AR(1) wobble, noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(LENGTH)
    amplitude, phase = rng.uniform(0.5, 2.0, (n, 1)), rng.uniform(0, 2 * np.pi, (n, 1))
    wobble = np.zeros((n, LENGTH))
    for step in range(1, LENGTH):
        wobble[:, step] = 0.8 * wobble[:, step - 1] + rng.normal(0, 0.3, n)
    return (amplitude * np.sin(2 * np.pi * t / LENGTH + phase) + wobble)[:, :, None]


def test_series_from_the_real_process_are_indistinguishable_and_averaged_days_are_not():
    real, synthetic = days(300, 0), days(300, 1)
    same = discriminative_score(real, synthetic, seed=0)
    assert same["series_per_side"] == 300 and same["score"] < 0.1
    averaged = np.repeat(synthetic.mean(axis=0, keepdims=True), 300, axis=0) + np.random.default_rng(2).normal(
        0, 0.05, synthetic.shape
    )
    assert discriminative_score(real, averaged, seed=0)["score"] > 0.4
    assert 0.0 <= same["accuracy"] <= 1.0 and same["score"] == pytest.approx(abs(same["accuracy"] - 0.5))


def test_the_discriminative_score_refuses_mismatched_shapes_and_needs_a_few_series():
    with pytest.raises(ValueError, match="same length"):
        discriminative_score(days(10, 0), days(10, 1)[:, :12])
    assert discriminative_score(days(3, 0), days(50, 1))["score"] is None


def test_next_step_prediction_from_real_like_series_reaches_the_floor_and_noise_does_not():
    train, test = days(300, 0), days(200, 3)
    good = predictive_score(days(300, 1), train, test)
    assert good["window"] == 8 and good["ratio"] < 1.1
    noise = np.random.default_rng(4).permuted(days(300, 1), axis=1)  # each series' values in random order
    bad = predictive_score(noise, train, test)
    assert bad["mae_trtr"] == pytest.approx(good["mae_trtr"]) and bad["ratio"] > 1.5


def test_features_hold_values_steps_and_summaries():
    x = days(5, 0)
    assert series_features(x).shape == (5, LENGTH + (LENGTH - 1) + 5)
