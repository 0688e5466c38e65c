"""The classifier behind the two-sample tests of series and entities: a random forest, cross-validated.

Both tests ask a forest to tell held-out real units from synthetic ones, as many of each, and score
every unit by a model that did not train on it (stratified 5-fold, shuffled with the seed), so a
forest that memorises its training folds gains nothing. One helper, so the two kinds' tests use the
same forest (200 trees, leaves of at least 2) and the same folds for a seed.
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_predict

FOLDS = 5


def cross_validated_forest(
    features: np.ndarray, truth: np.ndarray, *, seed: int, n_jobs: int = 1, probabilities: bool = False
) -> np.ndarray:
    """Each row's out-of-fold prediction: its class (0/1), or with `probabilities` its score for class 1."""
    model = RandomForestClassifier(n_estimators=200, min_samples_leaf=2, random_state=seed, n_jobs=n_jobs)
    folds = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    if probabilities:
        return cross_val_predict(model, features, truth, cv=folds, method="predict_proba")[:, 1]
    return cross_val_predict(model, features, truth, cv=folds)


__all__ = ["FOLDS", "cross_validated_forest"]
