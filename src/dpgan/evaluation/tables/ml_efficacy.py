"""Machine-learning efficacy, DTGAN's protocol: train on synthetic, test on real (TSTR) vs train on real (TRTR).

Four scikit-learn models with default settings (decision tree, random forest, logistic or linear
regression, MLP), one-hot categoricals and min-max scaled numerics. The same feature encoder is
used for both training sets, so the TSTR − TRTR gap measures the data, not the preprocessing:
numerics are scaled by the real training range, one-hot columns cover the categories seen in either
training set, and categories first seen in the test set are ignored (all-zero). A schema learned with
DP lists the values it could release and folds the rest into "(other)": where the synthetic set has
that category, the test rows the TSTR models score read it the same way (a value the synthetic set
never shows becomes "(other)", as dpgan.tables.reading.conform maps a real row into that schema), so a
feature's unreleased minority value counts as what the synthetic data call it. The target is never
mapped: a class the synthesizer could not name is a miss.

Classification reports accuracy, balanced accuracy, F1, ROC AUC and average precision; for a
binary target the positive class is the minority class of the real training set (Adult: ">50K"),
for a multiclass target F1, AUC and AP are macro averages (one-vs-rest). Regression reports R² and MAE.
`diff` is always real − synthetic (TRTR − TSTR). A synthetic set with one class is scored as the
constant predictor of that class (AUC 0.5), not left out.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    balanced_accuracy_score,
    f1_score,
    mean_absolute_error,
    r2_score,
    roc_auc_score,
)
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from threadpoolctl import threadpool_limits

from dpgan.evaluation.tables.fidelity import as_labels, is_numeric_kind
from dpgan.tables.inference.domain import OTHER

CLASSIFICATION_METRICS = ("accuracy", "balanced_accuracy", "f1", "roc_auc", "average_precision")
REGRESSION_METRICS = ("r2", "mae")

# (stage name, done, total): the evaluation's progress callback, shown as a tqdm bar by the CLI.
Progress = Callable[[str, int, int], None]


def classifiers(seed: int, n_jobs: int = 1) -> dict[str, BaseEstimator]:
    """scikit-learn defaults, except iteration caps high enough to converge on Adult-sized data."""
    return {
        "decision_tree": DecisionTreeClassifier(random_state=seed),
        "random_forest": RandomForestClassifier(random_state=seed, n_jobs=n_jobs),
        "logistic_regression": LogisticRegression(max_iter=1000),
        "mlp": MLPClassifier(max_iter=300, random_state=seed),
    }


def regressors(seed: int, n_jobs: int = 1) -> dict[str, BaseEstimator]:
    return {
        "linear_regression": LinearRegression(),
        "decision_tree": DecisionTreeRegressor(random_state=seed),
        "random_forest": RandomForestRegressor(random_state=seed, n_jobs=n_jobs),
        "mlp": MLPRegressor(max_iter=300, random_state=seed),
    }


class FeatureEncoder:
    """One-hot for categoricals, min-max (real training range) for numerics; missing numerics → 0."""

    def __init__(self, kinds: Mapping[str, str], features: Sequence[str]) -> None:
        self.kinds = dict(kinds)
        self.features = list(features)
        self.ranges: dict[str, tuple[float, float]] = {}
        self.categories: dict[str, list[str]] = {}

    def fit(self, real: pd.DataFrame, synthetic: pd.DataFrame) -> "FeatureEncoder":
        for name in self.features:
            if is_numeric_kind(self.kinds[name]):
                values = pd.to_numeric(real[name], errors="coerce")
                lo, hi = float(values.min()), float(values.max())
                lo = 0.0 if not np.isfinite(lo) else lo
                self.ranges[name] = (lo, hi - lo if np.isfinite(hi) and hi > lo else 1.0)
            else:
                seen = pd.concat([as_labels(real[name]), as_labels(synthetic[name])])
                self.categories[name] = sorted(pd.unique(seen))
        return self

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        blocks = []
        for name in self.features:
            if name in self.ranges:
                lo, span = self.ranges[name]
                values = (pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=np.float64) - lo) / span
                blocks.append(np.nan_to_num(values, nan=0.0)[:, None])
            else:
                # −1 for categories unseen in training: an all-zero row, i.e. ignored
                codes = pd.Index(self.categories[name]).get_indexer(as_labels(frame[name]))
                onehot = np.zeros((len(frame), len(self.categories[name])))
                known = codes >= 0
                onehot[np.flatnonzero(known), codes[known]] = 1.0
                blocks.append(onehot)
        return np.hstack(blocks) if blocks else np.zeros((len(frame), 0))


def unlisted_as_other(
    test: pd.DataFrame, synthetic: pd.DataFrame, features: Sequence[str], kinds: Mapping[str, str]
) -> pd.DataFrame:
    """`test` as the synthetic set's schema reads it: in each categorical feature whose synthetic
    values include OTHER, every value the synthetic set never shows becomes OTHER."""
    mapped = test.copy()
    for name in features:
        if is_numeric_kind(kinds[name]):
            continue
        listed = set(as_labels(synthetic[name]))
        if OTHER not in listed:
            continue
        labels = as_labels(test[name])
        mapped[name] = labels.where(labels.isin(listed), OTHER)
    return mapped


def is_classification(kind: str) -> bool:
    return not is_numeric_kind(kind)


def ml_efficacy(
    real_train: pd.DataFrame,
    synthetic: pd.DataFrame,
    test: pd.DataFrame,
    target: str,
    kinds: Mapping[str, str],
    *,
    models: Sequence[str] | None = None,
    seed: int = 0,
    n_jobs: int = 1,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """TSTR and TRTR scores of each model on `test`; see the module docstring for the protocol.

    Returns {"task", "positive_label", "classes", "scores": {model: {metric: {tstr, trtr, diff}}},
    "mean": {metric: {tstr, trtr, diff}} (over models), "notes": [...]}. A synthetic training set
    with one class cannot train a classifier: its TSTR scores are None and a note says why.
    """
    classification = is_classification(kinds[target])
    features = [c for c in real_train.columns if c != target]
    encoder = FeatureEncoder(kinds, features).fit(real_train, synthetic)
    X = {"real": encoder.transform(real_train), "synthetic": encoder.transform(synthetic)}
    X_test = {
        "real": encoder.transform(test),
        "synthetic": encoder.transform(unlisted_as_other(test, synthetic, features, kinds)),
    }
    catalogue = classifiers(seed, n_jobs) if classification else regressors(seed, n_jobs)
    chosen = list(models) if models is not None else list(catalogue)
    unknown = [m for m in chosen if m not in catalogue]
    if unknown:
        raise ValueError(f"unknown models {unknown}; choose from {list(catalogue)}")
    notes: list[str] = []
    out: dict[str, Any] = {"task": "classification" if classification else "regression"}

    if classification:
        y = {"real": as_labels(real_train[target]).to_numpy(), "synthetic": as_labels(synthetic[target]).to_numpy()}
        y_test = as_labels(test[target]).to_numpy()
        counts = pd.Series(y["real"]).value_counts()
        classes = sorted(set(counts.index) | set(y_test))
        positive = str(counts.sort_values(kind="stable").index[0]) if len(classes) == 2 else None
        out.update({"positive_label": positive, "classes": classes})
        metric_names = CLASSIFICATION_METRICS
        for source in ("real", "synthetic"):
            n_classes = len(set(y[source]))
            if n_classes < 2:
                notes.append(
                    f"the {source} training set has a single class ({y[source][0] if len(y[source]) else 'none'}): "
                    "every model trained on it predicts that class, and is scored as such (ROC AUC 0.5)"
                )
    else:
        lo, span = _target_range(real_train[target])
        y = {
            "real": (pd.to_numeric(real_train[target], errors="coerce").to_numpy(dtype=np.float64) - lo) / span,
            "synthetic": (pd.to_numeric(synthetic[target], errors="coerce").to_numpy(dtype=np.float64) - lo) / span,
        }
        y_test = pd.to_numeric(test[target], errors="coerce").to_numpy(dtype=np.float64)
        out.update({"positive_label": None, "classes": None})
        metric_names = REGRESSION_METRICS
        notes.append("the target is numeric: regression models, R² (higher is better) and MAE (lower is better)")

    scores: dict[str, dict[str, dict[str, float | None]]] = {}
    total = 2 * len(chosen)
    # OpenBLAS threads busy-wait: with the cores taken by other work, an MLP on a few hundred rows ran
    # 10x slower with 2 BLAS threads than with 1. n_jobs is the caller's core budget, BLAS included.
    with threadpool_limits(limits=max(1, n_jobs)):
        for step, (name, source) in enumerate((m, s) for m in chosen for s in ("real", "synthetic")):
            if progress is not None:
                progress(f"utility: {name} on {source}", step, total)
            if classification:
                result = _classification_scores(
                    catalogue[name], X[source], y[source], X_test[source], y_test, classes, positive
                )
            else:
                result = _regression_scores(catalogue[name], X[source], y[source], X_test[source], y_test, lo, span)
            key = "trtr" if source == "real" else "tstr"
            for metric in metric_names:
                scores.setdefault(name, {}).setdefault(metric, {})[key] = result.get(metric)
    if progress is not None:
        progress("utility: done", total, total)
    for per_metric in scores.values():
        for entry in per_metric.values():
            entry["diff"] = _diff(entry.get("trtr"), entry.get("tstr"))
    out["scores"] = scores
    out["mean"] = {metric: _mean_entry([scores[m][metric] for m in chosen]) for metric in metric_names}
    out["notes"] = notes
    return out


def _target_range(series: pd.Series) -> tuple[float, float]:
    """Min-max scaling of a numeric target by its real range, so the MLP regressor converges."""
    values = pd.to_numeric(series, errors="coerce")
    lo, hi = float(values.min()), float(values.max())
    return lo, (hi - lo) if hi > lo else 1.0


def _diff(real: float | None, synthetic: float | None) -> float | None:
    return None if real is None or synthetic is None else float(real - synthetic)


def _mean_entry(entries: list[dict[str, float | None]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in ("tstr", "trtr", "diff"):
        values = [e[key] for e in entries if e.get(key) is not None]
        out[key] = float(np.mean(values)) if values and len(values) == len(entries) else None
    return out


def _fit_quietly(model: BaseEstimator, X: np.ndarray, y: np.ndarray) -> BaseEstimator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


def _classification_scores(
    template: BaseEstimator,
    X: np.ndarray,
    y: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    classes: list[str],
    positive: str | None,
) -> dict[str, float | None]:
    if len(set(y)) == 0:
        return {}
    # a training set with one class can only teach "always that class": scored as that constant
    # predictor (AUC 0.5), not left out, which would hide a synthesizer that lost the other labels
    single = DummyClassifier(strategy="most_frequent")
    model = _fit_quietly(single if len(set(y)) < 2 else clone(template), X, y)
    predicted = model.predict(X_test)
    proba = np.zeros((len(X_test), len(classes)))
    index = {c: i for i, c in enumerate(classes)}
    raw = model.predict_proba(X_test)
    for j, c in enumerate(model.classes_):
        if c in index:  # a label only the synthetic set has: its probability mass is a miss
            proba[:, index[c]] = raw[:, j]
    out: dict[str, float | None] = {
        "accuracy": float(accuracy_score(y_test, predicted)),
        # the mean of per-class recalls: a model that predicts the majority class scores 1/classes
        "balanced_accuracy": float(balanced_accuracy_score(y_test, predicted)),
    }
    if positive is not None:
        truth = y_test == positive
        out["f1"] = float(f1_score(truth, predicted == positive, zero_division=0.0))
        scores = proba[:, index[positive]]
        out["roc_auc"] = float(roc_auc_score(truth, scores)) if 0 < truth.sum() < len(truth) else None
        out["average_precision"] = float(average_precision_score(truth, scores)) if truth.any() else None
        return out
    out["f1"] = float(f1_score(y_test, predicted, labels=sorted(set(y_test)), average="macro", zero_division=0.0))
    aucs, aps = [], []
    for c in sorted(set(y_test)):  # macro one-vs-rest over the classes present in the test set
        truth = y_test == c
        if 0 < truth.sum() < len(truth):
            aucs.append(roc_auc_score(truth, proba[:, index[c]]))
            aps.append(average_precision_score(truth, proba[:, index[c]]))
    out["roc_auc"] = float(np.mean(aucs)) if aucs else None
    out["average_precision"] = float(np.mean(aps)) if aps else None
    return out


def _regression_scores(
    template: BaseEstimator,
    X: np.ndarray,
    y: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    lo: float,
    span: float,
) -> dict[str, float | None]:
    keep = np.isfinite(y)
    if keep.sum() < 2:
        return {}
    model = _fit_quietly(clone(template), X[keep], y[keep])
    predicted = model.predict(X_test) * span + lo
    present = np.isfinite(y_test)
    return {
        "r2": float(r2_score(y_test[present], predicted[present])),
        "mae": float(mean_absolute_error(y_test[present], predicted[present])),
    }
