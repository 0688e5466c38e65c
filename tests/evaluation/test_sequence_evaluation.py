"""The sequence section of the evaluation suite: DTW to the nearest real series (against the
held-out floor), bands, autocorrelation, totals and the label's TSTR, on series whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from dpgan.evaluation.sequences.metrics import autocorrelation, evaluate_sequences, label_tstr, nearest_dtw

T = 24


def _profiles(n: int, seed: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.choice(["a", "b"], n)
    level = np.where(labels == "a", 1.0, 3.0)[:, None]
    return level + np.sin(np.arange(T) / T * 2 * np.pi + shift)[None, :] + rng.normal(0, 0.1, (n, T)), labels


def test_nearest_dtw_is_exact_and_zero_for_copies():
    a = np.array([[0.0, 1.0, 2.0, 1.0], [5.0, 5.0, 5.0, 5.0]])
    b = np.array([[0.0, 0.0, 1.0, 2.0, 1.0][:4], [9.0, 9.0, 9.0, 9.0]])
    distances = nearest_dtw(a, b)
    # a[0] warps onto b[0] (a repeated 0 absorbs the shift) up to the last step: 0 vs 1 → distance 1
    assert distances[0] == pytest.approx(1.0) and distances[1] == pytest.approx(np.sqrt(4 * 16.0))
    assert nearest_dtw(a, a).tolist() == [0.0, 0.0]
    two = np.stack([a, a + 1.0], axis=2)  # multivariate
    assert nearest_dtw(two, two).tolist() == [0.0, 0.0]


def test_autocorrelation_of_a_sine_and_of_noise():
    sine = np.sin(np.arange(T) / T * 2 * np.pi)[None, :].repeat(3, axis=0)
    acf = autocorrelation(sine)
    assert acf.shape == (1, T // 2) and acf[0, 0] > 0.85 and acf[0, T // 2 - 1] < -0.4
    noise = np.random.default_rng(0).normal(size=(500, T))
    assert np.abs(autocorrelation(noise)).max() < 0.1


def test_a_good_generator_sits_at_the_floor_and_a_bad_one_does_not():
    real, real_labels = _profiles(200, 0)
    test, test_labels = _profiles(100, 1)
    good, good_labels = _profiles(200, 2)
    bad, _ = _profiles(200, 3, shift=np.pi)  # the daily cycle upside down
    bad_labels = np.full(200, "a")
    near = evaluate_sequences(
        real, good, test, real_labels=real_labels, synthetic_labels=good_labels, test_labels=test_labels
    )
    far = evaluate_sequences(
        real, bad, test, real_labels=real_labels, synthetic_labels=bad_labels, test_labels=test_labels
    )
    assert near["dtw_nearest"]["ratio_to_floor"] < 1.5 < far["dtw_nearest"]["ratio_to_floor"]
    assert near["autocorrelation_mae"] < 0.05 and near["mean_profile_mae"] < 0.1 < far["mean_profile_mae"]
    assert near["label_tstr"]["accuracy"]["tstr"] > 0.95
    # one synthetic class: scored as the constant predictor of it
    share_a = float(np.mean(np.asarray(test_labels).astype(str) == "a"))
    assert far["label_tstr"]["accuracy"]["tstr"] == pytest.approx(share_a)
    assert far["label_tstr"]["roc_auc"]["tstr"] == pytest.approx(0.5)
    assert set(near["total_wd"]) == {"a", "b"} and near["total_wd"]["a"] < far["total_wd"]["a"]


def test_label_tstr_scores_chance_for_labels_unrelated_to_the_series():
    real, real_labels = _profiles(200, 0)
    test, test_labels = _profiles(200, 1)
    shuffled = np.random.default_rng(5).permutation(real_labels)
    scores = label_tstr(real, shuffled, real, real_labels, test, test_labels)
    assert scores["roc_auc"]["trtr"] > 0.99 and scores["roc_auc"]["tstr"] < 0.65


def test_the_distance_attack_finds_copied_series_and_not_fresh_ones():
    from dpgan.evaluation.sequences.metrics import distance_membership_auc

    members, _ = _profiles(100, 0)
    non_members, _ = _profiles(100, 1)
    fresh, _ = _profiles(300, 2)
    assert distance_membership_auc(members, non_members, members[:80]) > 0.85  # copies of members
    assert abs(distance_membership_auc(members, non_members, fresh) - 0.5) < 0.12


def test_label_tstr_takes_a_synthetic_label_that_no_real_series_holds():
    """A DP generator draws from the public label list, so it may draw a label absent from the real
    training and test series: the score still comes back, over the labels the test set holds."""
    real, real_labels = _profiles(200, 0)
    test, test_labels = _profiles(200, 1)
    synthetic, synthetic_labels = _profiles(200, 2)
    synthetic_labels = synthetic_labels.astype(object)
    synthetic_labels[:20] = "c"  # a public label with no real series: the model learns a third class
    scores = label_tstr(synthetic, synthetic_labels, real, real_labels, test, test_labels)
    assert scores["accuracy"]["tstr"] > 0.85 and scores["roc_auc"]["tstr"] > 0.95
    assert scores["roc_auc"]["trtr"] > 0.99
    three, three_labels = _profiles(300, 3)
    three_labels = three_labels.astype(object)
    three_labels[::3] = "d"  # three labels in the test set, one of them never drawn
    scores = label_tstr(synthetic, synthetic_labels, real, real_labels, three, three_labels)
    assert 0.0 <= scores["roc_auc"]["tstr"] <= 1.0 and scores["accuracy"]["tstr"] < 0.75
