"""The data-kind free half of the shadow-model membership attack (Stadler et al.), shared by the
table attack (dpgan.evaluation.tables.attacks.membership) and the series attack
(dpgan.evaluation.sequences.membership): the (without t, with t) training-set positions, the
labelled feature vectors of their synthetic sets, the attack model, and the scores per target.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from dpgan.evaluation.attacks.scoring import roc_summary


def pair_positions(
    n_source: int, size: int, runs: int, rng: np.random.Generator
) -> list[tuple[np.ndarray, np.ndarray]]:
    """`runs` draws of (chosen, keep): `size` distinct positions of the source, and the positions
    within `chosen` that stay when the target replaces one of them at random (the data-kind free
    half of `training_pairs`, shared with the series attack)."""
    pairs = []
    for _ in range(runs):
        chosen = rng.choice(n_source, size, replace=False)
        keep = np.delete(np.arange(size), rng.integers(size))
        pairs.append((chosen, keep))
    return pairs


def labelled(
    pairs: list[tuple[Any, Any]], features: Callable[[Any], list[np.ndarray]]
) -> tuple[np.ndarray, np.ndarray]:
    """Feature vectors of the synthetic sets made from each (without t, with t) training pair, and
    their answers (0: t was out, 1: t was in); any data kind, `features` fits and summarises."""
    rows: list[np.ndarray] = []
    labels: list[int] = []
    for without_target, with_target in pairs:
        for data, label in ((without_target, 0), (with_target, 1)):
            vectors = features(data)
            rows += vectors
            labels += [label] * len(vectors)
    return np.vstack(rows), np.asarray(labels)


def attack_model_probabilities(
    X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, *, trees: int, rng: np.random.Generator
) -> np.ndarray:
    """The attack model (a random forest on the shadow sets' features): P(t was in) for each test set."""
    model = RandomForestClassifier(n_estimators=trees, random_state=int(rng.integers(2**31)), n_jobs=1)
    model.fit(X_train, y_train)
    proba = model.predict_proba(X_test)
    classes = list(model.classes_)
    return proba[:, classes.index(1)] if 1 in classes else np.zeros(len(X_test))


def summarise_targets(per_target: list[tuple[str, np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """(target name, answers, P(in)) per target → the scores of each target, their means, and the
    ROC of the test guesses of all targets pooled (the fields every shadow-model attack reports)."""
    scored = [{"target": name, **_scores(labels, p_in)} for name, labels, p_in in per_target]
    keys = ("accuracy", "tpr", "fpr", "advantage", "p_success", "privacy_gain")
    out: dict[str, Any] = {"skipped": False}
    out.update({key: float(np.mean([t[key] for t in scored])) for key in keys})
    pooled = roc_summary(np.concatenate([t[1] for t in per_target]), np.concatenate([t[2] for t in per_target]))
    out["auc"], out["roc"] = pooled["auc"], pooled["roc"]
    out["per_target"] = scored
    return out


def _scores(labels: np.ndarray, p_in: np.ndarray) -> dict[str, Any]:
    guess = p_in > 0.5
    tpr = float(guess[labels == 1].mean())
    fpr = float(guess[labels == 0].mean())
    p_success = float(np.mean(np.where(labels == 1, p_in, 1.0 - p_in)))
    summary = roc_summary(labels, p_in)
    return {
        "accuracy": float(np.mean(guess == (labels == 1))),
        "tpr": tpr,
        "fpr": fpr,
        "advantage": tpr - fpr,
        "auc": summary["auc"],
        "p_success": p_success,
        "privacy_gain": (1.0 - p_success) / 2.0,  # (P_real − P_fake)/2 with P_real = 1
    }
