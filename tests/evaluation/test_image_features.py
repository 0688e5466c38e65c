"""The Fréchet feature distance (dpgan.evaluation.images.features): the formula against scipy's
general matrix square root and closed forms, its invariances, the held-out floor, and bad input."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.linalg
import torch

from dpgan.errors import InputError
from dpgan.evaluation.images.features import (
    FEATURE_WIDTH,
    FeatureSpace,
    feature_distance,
    fit_feature_space,
    frechet_distance,
)


def textbook_frechet(a: np.ndarray, b: np.ndarray) -> float:
    """The formula as FID papers write it, with scipy's general square root of Σ_a Σ_b."""
    mean = a.mean(axis=0) - b.mean(axis=0)
    cov_a, cov_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    cross = scipy.linalg.sqrtm(cov_a @ cov_b).real
    return float(mean @ mean + np.trace(cov_a + cov_b - 2.0 * cross))


def correlated(n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + rng.normal(size=d)


# ---- the formula ----------------------------------------------------------------------------------


def test_equals_the_textbook_formula_on_well_conditioned_features():
    a, b = correlated(600, 6, 0), correlated(500, 6, 1)
    assert frechet_distance(a, b) == pytest.approx(textbook_frechet(a, b), rel=1e-9)
    assert frechet_distance(a, b) == pytest.approx(frechet_distance(b, a), rel=1e-9)


def test_one_dimension_is_the_squared_gap_in_means_plus_in_standard_deviations():
    rng = np.random.default_rng(2)
    a, b = rng.normal(1.0, 2.0, size=(400, 1)), rng.normal(-0.5, 0.5, size=(300, 1))
    expected = (a.mean() - b.mean()) ** 2 + (a.std(ddof=1) - b.std(ddof=1)) ** 2
    assert frechet_distance(a, b) == pytest.approx(expected, rel=1e-10)


def test_a_shift_of_one_set_adds_its_squared_length_and_a_common_shift_adds_nothing():
    a = correlated(300, 5, 3)
    shift = np.array([1.0, -2.0, 0.5, 0.0, 3.0])
    assert frechet_distance(a, a + shift) == pytest.approx(shift @ shift, rel=1e-9)
    b = correlated(300, 5, 4)
    assert frechet_distance(a + shift, b + shift) == pytest.approx(frechet_distance(a, b), rel=1e-9)


def test_singular_covariances_stay_exact_where_the_general_root_drifts():
    a = correlated(10, 40, 5)  # 10 images, 40 features: rank 9
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-9 * np.trace(np.cov(a, rowvar=False)))
    assert frechet_distance(a, correlated(12, 40, 6)) > 0


@pytest.mark.parametrize(
    "a, b",
    [
        (np.zeros((1, 3)), np.zeros((5, 3))),  # one row: no covariance
        (np.zeros((5, 3)), np.zeros((5, 4))),  # different feature counts
        (np.zeros(5), np.zeros(5)),  # not (n, d)
    ],
)
def test_bad_feature_arrays_get_one_line(a, b):
    with pytest.raises(InputError, match="Fréchet distance needs") as caught:
        frechet_distance(a, b)
    assert "\n" not in str(caught.value)


# ---- the feature space and the floor --------------------------------------------------------------


@pytest.fixture(scope="module")
def digits(digits_unit_split) -> dict[str, np.ndarray]:
    return digits_unit_split


@pytest.fixture(scope="module")
def space(digits) -> FeatureSpace:
    return fit_feature_space(digits["x"], digits["y"], 10, seed=0)


def test_real_images_score_near_the_floor_and_noise_or_one_class_far_above(digits, space):
    rng = np.random.default_rng(1)
    real = feature_distance(space, digits["x"], digits["test_x"], digits["test_y"])
    noise = feature_distance(space, rng.random((400, 1, 8, 8), dtype=np.float32), digits["test_x"], digits["test_y"])
    sevens = feature_distance(space, digits["x"][digits["y"] == 7], digits["test_x"], digits["test_y"])
    assert real["heldout"] == noise["heldout"] > 0  # the same floor, whatever is scored
    assert real["ratio_to_floor"] < 3 and noise["ratio_to_floor"] > 10 and sevens["ratio_to_floor"] > 10
    assert real["feature_net_accuracy"] > 0.8 and real["features"] == FEATURE_WIDTH


def test_sizes_match_across_sides_and_max_images_caps_them(digits, space):
    full = feature_distance(space, digits["x"], digits["test_x"], digits["test_y"])
    assert full["images"] == len(digits["test_x"]) // 2  # the held-out half is the smallest side
    few = feature_distance(space, digits["x"][:50], digits["test_x"], digits["test_y"])
    capped = feature_distance(space, digits["x"], digits["test_x"], digits["test_y"], max_images=64)
    assert few["images"] == 50 and capped["images"] == 64
    assert few["heldout"] > full["heldout"]  # smaller samples: a larger floor, hence the same-size rule


def test_seeded_and_leaves_the_callers_rng_alone(digits, space):
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    again = fit_feature_space(digits["x"][:300], digits["y"][:300], 10, seed=4, epochs=1)
    assert torch.equal(torch.rand(3), before)  # fitting drew nothing from the global generator
    other = fit_feature_space(digits["x"][:300], digits["y"][:300], 10, seed=4, epochs=1)
    args = (digits["x"][:100], digits["test_x"], digits["test_y"])
    assert feature_distance(again, *args, seed=2) == feature_distance(other, *args, seed=2)


def test_bad_input_gets_one_line_without_a_value(digits, space):
    test_x, test_y = digits["test_x"], digits["test_y"]
    cases = [
        (lambda: feature_distance(space, np.zeros((5, 1, 9, 8), np.float32), test_x, test_y), "same shape"),
        (lambda: feature_distance(space, digits["x"] * 255.0, test_x, test_y), "outside [0, 1]"),
        (lambda: feature_distance(space, digits["x"], test_x, test_y[:-1]), "one label per image"),
        (lambda: feature_distance(space, digits["x"], test_x, test_y, max_images=1), "at least 2"),
        (lambda: fit_feature_space(np.zeros((5, 1, 3, 3), np.float32), np.arange(5), 10), "4×4"),
        (lambda: fit_feature_space(digits["x"], digits["y"], 1), "n_classes"),
    ]
    for call, message in cases:
        with pytest.raises(InputError, match=re.escape(message)) as caught:
            call()
        assert "\n" not in str(caught.value) and "255.0" not in str(caught.value)
