"""Two scores that ask whether synthetic series could pass for real ones (issue 35), after TimeGAN's
discriminative and predictive scores, built on sklearn instead of a post-hoc RNN (fast on a CPU,
deterministic for a seed, and the same model whatever the generator).

- Discriminative score: a classifier is asked to tell held-out real series from synthetic ones
  (equal numbers of each, 5-fold cross-validated so every series is scored once by a model that
  did not train on it). The score is |accuracy − 0.5|: 0 when it cannot tell them apart, 0.5 when
  it always can. Why held-out real series: a generator that copies training series would otherwise
  look perfect, and the score would reward memorising. Why these features: the flattened values
  show each time step's marginal, the first differences show smoothness (a generator that averages
  days makes them too smooth, which nearest-DTW rewards), and per-series summaries (mean, spread,
  range, mean absolute step) show the shape of whole series. A random forest reads all three.
- Predictive score ("train on synthetic, test on real" for dynamics): a ridge regression predicts
  each step from the `window` steps before it, trained on synthetic series and tested on held-out
  real ones; its mean absolute error sits next to the same model trained on real training series
  (the floor). Far above the floor: the synthetic dynamics are not the real ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.linear_model import Ridge

from dpgan.evaluation.two_sample_forest import FOLDS, cross_validated_forest

MAX_SERIES_PER_SIDE = 2000  # the classifier's cost grows with the series; the score's noise shrinks slowly
MAX_WINDOW = 8


def _as_3d(series: np.ndarray) -> np.ndarray:
    array = np.asarray(series, dtype=np.float64)
    return array[:, :, None] if array.ndim == 2 else array


def series_features(series: np.ndarray) -> np.ndarray:
    """(N, features): flattened values, flattened first differences, and per column the series'
    mean, standard deviation, minimum, maximum and mean absolute step (module docstring)."""
    x = _as_3d(series)
    steps = np.diff(x, axis=1)
    summaries = [x.mean(axis=1), x.std(axis=1), x.min(axis=1), x.max(axis=1), np.abs(steps).mean(axis=1)]
    return np.concatenate([x.reshape(len(x), -1), steps.reshape(len(x), -1), *summaries], axis=1)


def discriminative_score(real: np.ndarray, synthetic: np.ndarray, seed: int = 0) -> dict[str, Any]:
    """|accuracy − 0.5| of telling `real` (held-out) from `synthetic` series, cross-validated; with
    the accuracy, the balanced sample size per side, and None where either side has too few series."""
    real, synthetic = _as_3d(real), _as_3d(synthetic)
    if real.shape[1:] != synthetic.shape[1:]:
        raise ValueError("real and synthetic series must have the same length and columns")
    rng = np.random.default_rng(seed)
    size = min(len(real), len(synthetic), MAX_SERIES_PER_SIDE)
    if size < FOLDS:
        return {"score": None, "accuracy": None, "series_per_side": size}
    pick = lambda a: a[np.sort(rng.choice(len(a), size, replace=False))]  # noqa: E731 (a balanced draw)
    features = series_features(np.concatenate([pick(real), pick(synthetic)]))
    truth = np.r_[np.ones(size), np.zeros(size)]
    if not np.isfinite(features).all():  # a synthetic NaN is itself a giveaway: the classifier would see it
        features = np.nan_to_num(features, nan=0.0, posinf=1e12, neginf=-1e12)
    predicted = cross_validated_forest(features, truth, seed=seed)
    accuracy = float((predicted == truth).mean())
    return {"score": abs(accuracy - 0.5), "accuracy": accuracy, "series_per_side": size}


def _windows(series: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (previous `window` steps, next step) pair of every series, flattened over columns."""
    x = _as_3d(series)
    n, length, columns = x.shape
    starts = range(length - window)
    inputs = np.stack([x[:, s : s + window, :].reshape(n, -1) for s in starts], axis=1).reshape(-1, window * columns)
    targets = np.stack([x[:, s + window, :] for s in starts], axis=1).reshape(-1, columns)
    return inputs, targets


def predictive_score(
    synthetic: np.ndarray, real: np.ndarray, test: np.ndarray, window: int | None = None
) -> dict[str, Any]:
    """Mean absolute error of next-step prediction on held-out real series (`test`) by a ridge model
    trained on synthetic series (tstr) and on real training series (trtr, the floor), and their ratio."""
    synthetic, real, test = _as_3d(synthetic), _as_3d(real), _as_3d(test)
    length = test.shape[1]
    window = window if window is not None else max(1, min(MAX_WINDOW, length // 3))
    if length <= window or min(len(synthetic), len(real), len(test)) == 0:
        return {"window": window, "mae_tstr": None, "mae_trtr": None, "ratio": None}
    test_inputs, test_targets = _windows(test, window)
    errors = {}
    for key, train in (("tstr", synthetic), ("trtr", real)):
        inputs, targets = _windows(train, window)
        if not (np.isfinite(inputs).all() and np.isfinite(targets).all()):
            errors[key] = None
            continue
        model = Ridge(alpha=1.0).fit(inputs, targets)
        predicted = model.predict(test_inputs).reshape(test_targets.shape)  # one column comes back flat
        errors[key] = float(np.abs(predicted - test_targets).mean())
    tstr, trtr = errors["tstr"], errors["trtr"]
    ratio = tstr / trtr if tstr is not None and trtr else None
    return {"window": window, "mae_tstr": tstr, "mae_trtr": trtr, "ratio": ratio}


__all__ = ["discriminative_score", "predictive_score", "series_features"]
