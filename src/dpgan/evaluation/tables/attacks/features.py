"""Stadler et al.'s feature sets: one fixed-length vector summarising a whole synthetic table.

The membership attack model never sees rows, only these summaries, so it learns how the target's
presence in the training set shifts the synthetic data's statistics.
- Naive: per numeric column mean, median and variance (of raw values, never clipped: an outlier
  target must be able to move them); per categorical column the most frequent code, the least
  frequent code present, and the number of distinct codes.
- Correlations: the upper triangle of the correlation matrix of the encoded table.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from dpgan.evaluation.tables.attacks.encoding import AttackEncoder, NumericColumn, numeric_values


def naive_features(frame: pd.DataFrame, encoder: AttackEncoder) -> np.ndarray:
    out: list[float] = []
    for column in encoder.columns:
        if isinstance(column, NumericColumn):
            values = numeric_values(frame[column.name])
            values = values[~np.isnan(values)]
            out += [float(values.mean()), float(np.median(values)), float(values.var())] if len(values) else [0.0] * 3
        else:
            codes = encoder.codes(frame, column.name) + 1  # -1 (unknown) becomes bin 0
            counts = np.bincount(codes, minlength=column.width + 1)
            present = np.flatnonzero(counts)
            if len(present) == 0:
                out += [-1.0, -1.0, 0.0]
                continue
            least = present[np.argmin(counts[present])]
            out += [float(np.argmax(counts) - 1), float(least - 1), float(len(present))]
    return np.asarray(out)


def correlation_features(frame: pd.DataFrame, encoder: AttackEncoder) -> np.ndarray:
    """Pairwise Pearson correlations of the encoded columns; 0 where a column is constant."""
    X = encoder.transform(frame)
    if len(X) < 2:
        return np.zeros(X.shape[1] * (X.shape[1] - 1) // 2)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        corr = np.corrcoef(X, rowvar=False)
    corr = np.atleast_2d(corr)
    upper = corr[np.triu_indices(X.shape[1], k=1)]
    return np.nan_to_num(upper, nan=0.0)


def table_features(frame: pd.DataFrame, encoder: AttackEncoder) -> np.ndarray:
    """Naive and correlation features side by side (the paper's F_Naive and F_Corr)."""
    return np.concatenate([naive_features(frame, encoder), correlation_features(frame, encoder)])
