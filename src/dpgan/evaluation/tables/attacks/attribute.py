"""Attribute inference, Stadler et al.'s MLE-AI: can a model fitted on the synthetic data infer a
sensitive column of the records it was trained on better than that of unseen records?

A linear model (least squares with a Gaussian residual for a numeric column, logistic regression
for a categorical one) is fitted on the synthetic table and predicts the sensitive value of real
training records (members) and of holdout records (non-members). Inferring a value well for
everybody is population-level inference, not a breach; the breach is the difference
Adv = P(correct | member) − P(correct | non-member). The same model fitted on the real training
table gives the raw-data baseline, and privacy gain PG = Adv_raw − Adv_syn: ≈ Adv_raw when the
synthetic data hides the members, ≈ 0 when it leaks them as much as the raw table would.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, LogisticRegression

from dpgan.errors import InputError
from dpgan.evaluation.attacks.config import AttackConfig
from dpgan.evaluation.attacks.progress import Progress
from dpgan.evaluation.attacks.scoring import membership_scores
from dpgan.evaluation.tables.attacks.dcr import sample_rows
from dpgan.evaluation.tables.attacks.encoding import AttackEncoder, NumericColumn, numeric_values


def choose_sensitive(encoder: AttackEncoder, target: str | None, requested: str | None) -> str:
    """The requested column, else the first numeric column that is not the target, else the target."""
    if requested is not None:
        if requested not in encoder.names:
            raise InputError(f"sensitive column {requested!r} is not a column of the tables")
        return requested
    for column in encoder.columns:
        if isinstance(column, NumericColumn) and column.name != target:
            return column.name
    if target is not None and target in encoder.names:
        return target
    return encoder.names[0]


class _NumericMLE:
    """Least squares of the sensitive value on the others; residual σ from the fitted table."""

    def __init__(self, tolerance: float) -> None:
        self.tolerance = tolerance  # in the column's units
        self.model = LinearRegression()
        self.sigma = 1.0

    def fit(self, X: np.ndarray, y: np.ndarray) -> "_NumericMLE":
        keep = ~np.isnan(y)
        X, y = X[keep], y[keep]
        self.model.fit(X, y)
        rss = float(np.sum((y - self.model.predict(X)) ** 2))
        dof = len(y) - X.shape[1] - 1
        variance = rss / dof if dof > 0 else rss / max(len(y), 1)
        # A perfect fit (σ = 0) would make every likelihood 0 or 1; floor σ at a tiny share of the tolerance.
        self.sigma = max(float(np.sqrt(variance)), 1e-6 * self.tolerance)
        return self

    def evaluate(self, X: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
        """P(correct): the Gaussian's mass within ± tolerance of the true value (a probability in
        [0, 1], unlike the density Stadler et al. used, so members and non-members compare directly)."""
        keep = ~np.isnan(y)
        pred = self.model.predict(X[keep])
        y = y[keep]
        p = norm.cdf((y + self.tolerance - pred) / self.sigma) - norm.cdf((y - self.tolerance - pred) / self.sigma)
        return {"p_correct": p, "correct": np.abs(pred - y) <= self.tolerance, "error": np.abs(pred - y)}


class _CategoricalMLE:
    """Multinomial logistic regression; P(correct) is the probability given to the true category."""

    def __init__(self, seed: int) -> None:
        self.model = LogisticRegression(max_iter=1000, random_state=seed)
        self.constant: int | None = None

    def fit(self, X: np.ndarray, y: np.ndarray) -> "_CategoricalMLE":
        classes = np.unique(y)
        if len(classes) < 2:  # a single-class table cannot train a classifier: predict that class
            self.constant = int(classes[0])
            return self
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model.fit(X, y)
        return self

    def evaluate(self, X: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
        if self.constant is not None:
            correct = y == self.constant
            return {"p_correct": correct.astype(float), "correct": correct}
        proba = self.model.predict_proba(X)
        column = {int(c): i for i, c in enumerate(self.model.classes_)}
        p = np.array([proba[r, column[int(v)]] if int(v) in column else 0.0 for r, v in enumerate(y)])
        correct = self.model.classes_[np.argmax(proba, axis=1)] == y
        return {"p_correct": p, "correct": correct}


def attribute_attack(
    real_train: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    encoder: AttackEncoder,
    sensitive: str,
    config: AttackConfig,
    rng: np.random.Generator,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """MLE-AI on `sensitive`: accuracy and P(correct) on members vs non-members, Adv, PG, ROC."""
    stage = "attacks: attribute inference"
    if progress:
        progress(stage, 0, 2)
    features = encoder.without(sensitive)
    column = encoder.column(sensitive)
    n = min(len(real_train), len(holdout), config.attribute_max_rows)
    members, non_members = sample_rows(real_train, n, rng), sample_rows(holdout, n, rng)

    def target_values(frame: pd.DataFrame) -> np.ndarray:
        if isinstance(column, NumericColumn):
            return numeric_values(frame[sensitive])
        return encoder.codes(frame, sensitive)

    def new_model() -> _NumericMLE | _CategoricalMLE:
        if isinstance(column, NumericColumn):
            return _NumericMLE(config.attribute_tolerance * (column.hi - column.lo))
        return _CategoricalMLE(config.seed)

    X_members, y_members = features.transform(members), target_values(members)
    X_non, y_non = features.transform(non_members), target_values(non_members)
    results: dict[str, Any] = {}
    for source, table in (("synthetic", synthetic), ("real", real_train)):
        model = new_model().fit(features.transform(table), target_values(table))
        on_members, on_non = model.evaluate(X_members, y_members), model.evaluate(X_non, y_non)
        results[source] = {
            "members": _summary(on_members),
            "non_members": _summary(on_non),
            "advantage": float(on_members["p_correct"].mean() - on_non["p_correct"].mean()),
        }
        if source == "synthetic":
            roc = membership_scores(on_members["p_correct"], on_non["p_correct"])
        if progress:
            progress(stage, len(results), 2)
    out: dict[str, Any] = {
        "skipped": False,
        "sensitive": sensitive,
        "kind": "numeric" if isinstance(column, NumericColumn) else "categorical",
        "model": "linear regression" if isinstance(column, NumericColumn) else "logistic regression",
        "rows": {"members": n, "non_members": n, "synthetic": len(synthetic)},
        **results,
        "privacy_gain": results["real"]["advantage"] - results["synthetic"]["advantage"],
    }
    if isinstance(column, NumericColumn):
        out["tolerance"] = config.attribute_tolerance * (column.hi - column.lo)
    out.update(roc)
    out["note"] = (
        "advantage = P(correct | member) − P(correct | non-member) for a linear model fitted on the synthetic "
        "(or, as a baseline, the real) training table; privacy_gain = real advantage − synthetic advantage. "
        "Good inference for everybody is population-level, not a leak; only the member/non-member gap is."
    )
    return out


def _summary(result: dict[str, np.ndarray]) -> dict[str, float]:
    out = {"accuracy": float(np.mean(result["correct"])), "p_correct": float(np.mean(result["p_correct"]))}
    if "error" in result:
        out["mae"] = float(np.mean(result["error"]))
    return out
