"""Small pure helpers of the entity statistics model: exact 2-way tables, noisy counts made into
probabilities, and draws from them (post-processing)."""

from __future__ import annotations

import numpy as np


def table(rows: np.ndarray, columns: np.ndarray, n_rows: int, n_columns: int) -> np.ndarray:
    """The 2-way count table of (rows, columns)."""
    flat = np.bincount(rows * n_columns + columns, minlength=n_rows * n_columns)
    return flat.reshape(n_rows, n_columns).astype(np.float64)


def normalised(values: np.ndarray) -> np.ndarray:
    """Each last-axis row divided by its sum; an all-zero row takes the mean of the others (the
    marginal over its condition), and uniform if all are zero."""
    flat = values.reshape(-1, values.shape[-1])
    sums = flat.sum(axis=1, keepdims=True)
    total = flat.sum(axis=0)
    fallback = total / total.sum() if total.sum() > 0 else np.full(flat.shape[1], 1.0 / flat.shape[1])
    out = np.where(sums > 0, flat / np.where(sums > 0, sums, 1.0), fallback)
    return out.reshape(values.shape)


def draw(probabilities: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One cell per row of an (n, cells) array of probabilities (inverse CDF)."""
    probabilities = np.asarray(probabilities)
    if len(probabilities) == 0:
        return np.zeros(0, dtype=np.int64)
    cumulative = np.cumsum(probabilities, axis=-1)
    u = rng.random(len(probabilities))[:, None] * cumulative[:, -1:]
    return np.minimum((u >= cumulative).sum(axis=-1), probabilities.shape[-1] - 1).astype(np.int64)


__all__ = ["draw", "normalised", "table"]
