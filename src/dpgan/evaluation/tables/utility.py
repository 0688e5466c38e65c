"""Machine-learning utility of synthetic data: train on synthetic, test on real (TSTR).

`balanced_rf_accuracy` is the dp-GAN paper's protocol (classes balanced in train and test, a
random forest, accuracy on the real test set); `tstr_accuracy` is the plain version.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier


def one_hot_features(
    frame: pd.DataFrame, target: str, columns: pd.Index | None = None
) -> tuple[pd.DataFrame, pd.Series]:
    """One-hot the categoricals; align to `columns` (the training layout) when given."""
    features = frame.drop(columns=[target])
    categorical = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    X = pd.get_dummies(features.astype({c: str for c in categorical}), columns=categorical, dtype=float)
    X = X.fillna(0.0)
    if columns is not None:
        X = X.reindex(columns=columns, fill_value=0.0)
    return X, frame[target].astype(str)


# the balanced test set is one fixed draw: every model is scored on the same rows
BALANCED_TEST_SEED = 20190101


def balance_classes(frame: pd.DataFrame, target: str, rng: np.random.Generator) -> pd.DataFrame:
    """Down-sample every class to the size of the smallest one."""
    groups = [g for _, g in frame.groupby(frame[target].astype(str))]
    smallest = min(len(g) for g in groups)
    parts = [g.iloc[rng.permutation(len(g))[:smallest]] for g in groups]
    return pd.concat(parts).iloc[rng.permutation(smallest * len(groups))]


def _rf_accuracy(train: pd.DataFrame, test: pd.DataFrame, target: str, seed: int, n_jobs: int = 2) -> float | None:
    if train[target].astype(str).nunique() < 2:
        return None  # a single-class training set cannot train a classifier: reported, not crashed on
    X_train, y_train = one_hot_features(train, target)
    X_test, y_test = one_hot_features(test, target, X_train.columns)
    model = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=n_jobs)
    model.fit(X_train, y_train)
    return float((model.predict(X_test) == y_test.to_numpy()).mean())


def tstr_accuracy(
    train: pd.DataFrame, test: pd.DataFrame, target: str, seed: int = 0, *, n_jobs: int = 2
) -> float | None:
    return _rf_accuracy(train, test, target, seed, n_jobs)


def balanced_rf_accuracy(
    train: pd.DataFrame, test: pd.DataFrame, target: str, seed: int = 0, *, n_jobs: int = 2
) -> float | None:
    """dp-GAN protocol: balance both sets, random forest on `train`, accuracy on `test`.

    The balanced test set depends on the test table alone (a fixed draw), so real and synthetic
    training sets are scored on the same rows and their gap is a paired difference; `seed`
    varies only the training subset and the forest.
    """
    if train[target].astype(str).nunique() < 2:
        return None
    balanced_train = balance_classes(train, target, np.random.default_rng(seed))
    balanced_test = balance_classes(test, target, np.random.default_rng(BALANCED_TEST_SEED))
    return _rf_accuracy(balanced_train, balanced_test, target, seed, n_jobs)
