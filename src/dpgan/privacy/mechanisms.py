"""DP releases outside SGD: Gaussian noisy counts and histograms (sensitivity 1 per record).

Each function only adds noise (drawn by dpgan.privacy.noise); the caller records the matching
`LedgerEntry` in the ledger, which refuses it if it would pass the budget.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from dpgan.privacy.noise import gaussian_array


def noisy_counts(counts: np.ndarray, noise_multiplier: float, rng: np.random.Generator) -> np.ndarray:
    """Counts + N(0, σ²): one record changes one count by 1 (L2 sensitivity 1)."""
    return np.asarray(counts, dtype=np.float64) + gaussian_array(np.shape(counts), noise_multiplier, rng)


def noisy_count(count: int, noise_multiplier: float, rng: np.random.Generator) -> float:
    return float(noisy_counts(np.array([count]), noise_multiplier, rng)[0])


def noisy_indicator_counts(indicators: np.ndarray, noise_multiplier: float, rng: np.random.Generator) -> np.ndarray:
    """Column sums of a (rows × k) 0/1 matrix + N(0, σ²·k) each.

    One row holds at most one 1 per column, so adding or removing it moves the vector of sums by
    at most √k in L2: the noise std is σ·√k and the release costs one Gaussian event at σ.
    """
    indicators = np.asarray(indicators, dtype=np.float64)
    if indicators.ndim != 2 or not np.isin(indicators, (0.0, 1.0)).all():
        raise ValueError("indicators must be a 2-D 0/1 matrix")
    k = indicators.shape[1]
    return indicators.sum(axis=0) + gaussian_array(k, noise_multiplier * np.sqrt(k), rng)


def set_union_threshold(noise_multiplier: float, delta_per_key: float) -> float:
    """Threshold for releasing keys not known in advance (Gaussian partition selection).

    A key that only the added record holds has true count 1; it crosses τ with probability
    P[N(0, σ²) > τ - 1] = δ_key, which the ledger adds to δ as `extra_delta`.
    """
    if not 0.0 < delta_per_key < 1.0:
        raise ValueError("delta_per_key must be in (0, 1)")
    return 1.0 + noise_multiplier * float(norm.isf(delta_per_key))


def public_numeric_grid() -> np.ndarray:
    """Bin edges fixed before seeing data: 0 and ±m·10^k, m in {1,1.5,2,3,5,7}, k in -2..9."""
    mantissas = np.array([1.0, 1.5, 2.0, 3.0, 5.0, 7.0])
    positive = np.sort(np.concatenate([mantissas * 10.0**k for k in range(-2, 10)]))
    return np.concatenate([-positive[::-1], [0.0], positive])


def bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Index of the bin [edges[i], edges[i+1]) holding each value; extremes go to the end bins."""
    return np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
