"""How close synthetic series are to real ones, and how useful (the evaluation suite's sequence section).

- Nearest real series by dynamic time warping (dtaidistance's C implementation): each synthetic
  series' DTW distance to its nearest real training series, next to the same for held-out real
  series (the floor: what a series of the same population scores). Far above the floor means the
  generator misses the shapes; far below it would mean copies of training series.
- Per time step: mean and 10/50/90 % quantile bands, real against synthetic.
- Autocorrelation at lags 1..T/2 of each value column (mean over series), real against synthetic.
- The distribution of each series' total (a day's volume) per label: Wasserstein distance.
- TSTR of the label: a random forest on the flattened series, trained on synthetic and on real
  training series, tested on held-out real ones (accuracy and macro AUC).
- Membership inference by distance: how well the DTW distance to the nearest synthetic series tells
  training series from held-out ones (ROC AUC; 0.5 is no signal).
- Two-sample scores (dpgan.evaluation.sequences.two_sample): how well a classifier tells held-out
  real series from synthetic ones (|accuracy − 0.5|: 0 is indistinguishable), and next-step
  prediction trained on synthetic series, tested on held-out real ones, against the real floor.
All arrays are (N, T, F) in the data's own units; labels are arrays of category values or None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.stats import wasserstein_distance
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score, roc_auc_score

from dpgan.evaluation.headline import auc_score, component, distance_score, headline, ratio_score
from dpgan.evaluation.sequences.two_sample import discriminative_score, predictive_score

QUANTILES = (0.1, 0.5, 0.9)
MAX_DTW_SERIES = 2000  # series per side; the DTW matrix is n × m


def _as_3d(series: np.ndarray) -> np.ndarray:
    array = np.asarray(series, dtype=np.float64)
    return array[:, :, None] if array.ndim == 2 else array


def _subset(series: np.ndarray, limit: int, rng: np.random.Generator) -> np.ndarray:
    return series if len(series) <= limit else series[np.sort(rng.choice(len(series), limit, replace=False))]


def nearest_dtw(queries: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Each query series' DTW distance to its nearest reference series (dtaidistance, C, exact)."""
    return dtw_matrix(queries, reference).min(axis=1)


def dtw_matrix(queries: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """DTW distances, queries × reference series."""
    from dtaidistance import dtw, dtw_ndim

    queries, reference = _as_3d(queries), _as_3d(reference)
    stacked = np.ascontiguousarray(np.concatenate([queries, reference]), dtype=np.double)
    n, m = len(queries), len(reference)
    block = ((0, n), (n, n + m))
    if stacked.shape[2] == 1:
        matrix = dtw.distance_matrix_fast(stacked[:, :, 0], block=block, compact=False)
    else:
        matrix = dtw_ndim.distance_matrix_fast(stacked, block=block)
    return np.asarray(matrix[:n, n:], dtype=np.float64)


def step_bands(series: np.ndarray) -> dict[str, list[list[float]]]:
    """Per time step and value column: the mean and the QUANTILES."""
    array = _as_3d(series)
    out = {"mean": array.mean(axis=0).T.tolist()}
    for q in QUANTILES:
        out[f"q{int(q * 100)}"] = np.quantile(array, q, axis=0).T.tolist()
    return out


def autocorrelation(series: np.ndarray, max_lag: int | None = None) -> np.ndarray:
    """(F, lags): the mean over series of each value column's lag-k autocorrelation, k = 1..max_lag."""
    array = _as_3d(series)
    length = array.shape[1]
    max_lag = max_lag or max(1, length // 2)
    centred = array - array.mean(axis=1, keepdims=True)
    variance = (centred**2).sum(axis=1)  # (N, F)
    out = np.zeros((array.shape[2], max_lag))
    for lag in range(1, max_lag + 1):
        cross = (centred[:, lag:, :] * centred[:, :-lag, :]).sum(axis=1)
        ratio = np.divide(cross, variance, out=np.zeros_like(cross), where=variance > 0)
        out[:, lag - 1] = ratio.mean(axis=0)
    return out


def label_tstr(
    synthetic: np.ndarray,
    synthetic_labels: np.ndarray,
    real: np.ndarray,
    real_labels: np.ndarray,
    test: np.ndarray,
    test_labels: np.ndarray,
    seed: int = 0,
) -> dict[str, dict[str, float | None]]:
    """Accuracy and macro one-vs-rest AUC of a random forest on flattened series, trained on
    synthetic (tstr) and on real training series (trtr), tested on held-out real ones."""
    # a DP generator may draw a public label that no real series holds: the model's columns cover
    # every label seen, and the AUC is taken over the labels the test set holds (rows renormalised)
    classes = sorted(set(map(str, real_labels)) | set(map(str, test_labels)) | set(map(str, synthetic_labels)))
    held = [classes.index(c) for c in sorted(set(map(str, test_labels)))]
    out: dict[str, dict[str, float | None]] = {"accuracy": {}, "roc_auc": {}}
    for key, (X, y) in {"tstr": (synthetic, synthetic_labels), "trtr": (real, real_labels)}.items():
        y = np.asarray(y).astype(str)
        if len(set(y)) == 0:
            out["accuracy"][key], out["roc_auc"][key] = None, None
            continue
        # one class: the constant predictor of it (AUC 0.5), as the tables' TSTR scores it
        model = (
            DummyClassifier(strategy="most_frequent")
            if len(set(y)) < 2
            else RandomForestClassifier(n_estimators=200, random_state=seed, n_jobs=1)
        )
        model.fit(_as_3d(X).reshape(len(X), -1), y)
        flat = _as_3d(test).reshape(len(test), -1)
        truth = np.asarray(test_labels).astype(str)
        out["accuracy"][key] = float(accuracy_score(truth, model.predict(flat)))
        probabilities = np.zeros((len(test), len(classes)))
        probabilities[:, [classes.index(c) for c in model.classes_]] = model.predict_proba(flat)
        probabilities = probabilities[:, held]
        totals = probabilities.sum(axis=1, keepdims=True)
        probabilities = np.where(totals > 0, probabilities / np.where(totals > 0, totals, 1.0), 1.0 / len(held))
        if len(held) < 2:
            out["roc_auc"][key] = None  # one class in the test set: no ranking to score
        elif len(held) == 2:
            out["roc_auc"][key] = float(roc_auc_score(truth == classes[held[1]], probabilities[:, 1]))
        else:
            labels = [classes[i] for i in held]
            out["roc_auc"][key] = float(roc_auc_score(truth, probabilities, multi_class="ovr", labels=labels))
    return out


def distance_membership_auc(members: np.ndarray, non_members: np.ndarray, synthetic: np.ndarray) -> float:
    """A distance attack on series (as dp-GAN's and the tabular attack suite's): score each candidate
    by minus its DTW distance to the nearest synthetic series, and report the ROC AUC of telling
    training members from held-out non-members (0.5: the synthetic series say nothing of who was in)."""
    scores = -nearest_dtw(np.concatenate([_as_3d(members), _as_3d(non_members)]), synthetic)
    truth = np.r_[np.ones(len(members)), np.zeros(len(non_members))]
    return float(roc_auc_score(truth, scores))


def evaluate_sequences(
    real: np.ndarray,
    synthetic: np.ndarray,
    test: np.ndarray,
    *,
    real_labels: np.ndarray | None = None,
    synthetic_labels: np.ndarray | None = None,
    test_labels: np.ndarray | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Every measure of the module docstring, as plain numbers and lists (JSON-ready)."""
    real, synthetic, test = _as_3d(real), _as_3d(synthetic), _as_3d(test)
    if real.shape[1:] != synthetic.shape[1:] or real.shape[1:] != test.shape[1:]:
        raise ValueError("real, synthetic and test series must have the same length and columns")
    rng = np.random.default_rng(seed)
    reference = _subset(real, MAX_DTW_SERIES, rng)
    to_train = nearest_dtw(_subset(synthetic, MAX_DTW_SERIES, rng), reference)
    floor = nearest_dtw(_subset(test, MAX_DTW_SERIES, rng), reference)
    real_acf, synthetic_acf = autocorrelation(real), autocorrelation(synthetic)
    out: dict[str, Any] = {
        "dtw_nearest": {
            "synthetic_mean": float(to_train.mean()),
            "synthetic_median": float(np.median(to_train)),
            "heldout_mean": float(floor.mean()),
            "heldout_median": float(np.median(floor)),
            "ratio_to_floor": float(to_train.mean() / floor.mean()) if floor.mean() > 0 else None,
        },
        "bands": {"real": step_bands(real), "synthetic": step_bands(synthetic)},
        "autocorrelation": {"real": real_acf.tolist(), "synthetic": synthetic_acf.tolist()},
        "autocorrelation_mae": float(np.abs(real_acf - synthetic_acf).mean()),
        "mean_profile_mae": float(np.abs(real.mean(axis=0) - synthetic.mean(axis=0)).mean()),
    }
    totals: dict[str, float] = {}
    groups = [(None, slice(None), slice(None))]
    if real_labels is not None and synthetic_labels is not None:
        labels = sorted(set(map(str, real_labels)))
        groups = [
            (c, np.asarray(real_labels).astype(str) == c, np.asarray(synthetic_labels).astype(str) == c) for c in labels
        ]
    for name, in_real, in_synthetic in groups:
        a, b = real[in_real].sum(axis=1)[:, 0], synthetic[in_synthetic].sum(axis=1)[:, 0]
        totals["all" if name is None else name] = (
            float(wasserstein_distance(a, b)) if len(a) and len(b) else float("nan")
        )
    out["total_wd"] = totals
    members = _subset(real, min(len(test), MAX_DTW_SERIES), rng)
    out["membership_auc"] = distance_membership_auc(
        members, _subset(test, MAX_DTW_SERIES, rng), synthetic[:MAX_DTW_SERIES]
    )
    out["discriminative"] = discriminative_score(test, synthetic, seed)
    out["predictive"] = predictive_score(synthetic, real, test)
    if real_labels is not None and synthetic_labels is not None and test_labels is not None:
        out["label_tstr"] = label_tstr(synthetic, synthetic_labels, real, real_labels, test, test_labels, seed)
    out["headline"] = sequence_headline(real, synthetic, test, out)
    return out


__all__ = [
    "autocorrelation",
    "distance_membership_auc",
    "dtw_matrix",
    "evaluate_sequences",
    "label_tstr",
    "nearest_dtw",
    "step_bands",
]


def sequence_headline(
    real: np.ndarray, synthetic: np.ndarray, test: np.ndarray, metrics: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Series: from `evaluate_sequences`' metrics and the (N, T, F) arrays (for the held-out side)."""
    dtw = metrics["dtw_nearest"]
    scale = float(np.mean(real.std(axis=(0, 1)))) if real.size else 0.0
    real_mean = real.mean(axis=0)
    real_acf = autocorrelation(real)
    parts = [
        component(
            "shape (DTW)",
            ratio_score(dtw["heldout_mean"], dtw["synthetic_mean"]),
            1.0,
            "mean DTW distance of held-out real series to their nearest training series over that of the "
            "synthetic series (capped at 1); real: 1 by definition",
        ),
        component(
            "mean profile",
            distance_score(float(np.abs(real_mean - synthetic.mean(axis=0)).mean()), scale),
            distance_score(float(np.abs(real_mean - test.mean(axis=0)).mean()), scale),
            "1 − MAE of the per-step mean against the training series, over the values' standard deviation",
        ),
        component(
            "autocorrelation",
            distance_score(float(np.abs(real_acf - autocorrelation(synthetic)).mean())),
            distance_score(float(np.abs(real_acf - autocorrelation(test)).mean())),
            "1 − MAE of the autocorrelations at lags 1..T/2 against the training series",
        ),
    ]
    if "label_tstr" in metrics:
        auc = metrics["label_tstr"]["roc_auc"]
        parts.append(
            component(
                "label utility (TSTR)",
                auc_score(auc.get("tstr")),
                auc_score(auc.get("trtr")),
                "ROC AUC of a random forest trained on synthetic (real: on real) series, tested on held-out "
                "series; (AUC − 0.5) / 0.5",
            )
        )
    return headline(parts)
