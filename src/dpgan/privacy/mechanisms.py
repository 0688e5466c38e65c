"""DP releases outside SGD: Gaussian noisy counts and histograms (sensitivity 1 per record), and
the exponential mechanism (report-noisy-max with Gumbel noise) for a DP selection.

Each function only adds noise (drawn by dpgan.privacy.noise); the caller records the matching
ledger entry (a Gaussian `LedgerEntry`, or for the exponential mechanism an `EventEntry` of
`dpgan.privacy.events.pure_dp_event`), which the ledger refuses if it would pass the budget.
"""

from __future__ import annotations

import numpy as np

from dpgan.privacy.noise import gaussian_array, gumbel_array


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
    return noisy_indicator_sums(indicators.sum(axis=0), noise_multiplier, rng)


def noisy_indicator_sums(sums: np.ndarray, noise_multiplier: float, rng: np.random.Generator) -> np.ndarray:
    """`noisy_indicator_counts` from the column sums already added up (over record batches: the
    sums of per-batch sums are the table's), the same release and the same draw."""
    sums = np.asarray(sums, dtype=np.float64)
    if sums.ndim != 1:
        raise ValueError("sums must be a 1-D vector")
    k = sums.shape[0]
    return sums + gaussian_array(k, noise_multiplier * np.sqrt(k), rng)


def noisy_stacked_histograms(histograms: np.ndarray, noise_multiplier: float, rng: np.random.Generator) -> np.ndarray:
    """k histograms (a k × bins array) + N(0, σ²·k) in every cell.

    One record adds 1 to at most one cell of each histogram (it falls in one bin of each), so adding
    or removing it moves the stacked vector by at most √k in L2: the noise std is σ·√k and the
    release costs one Gaussian event at σ, whatever k.
    """
    histograms = np.asarray(histograms, dtype=np.float64)
    if histograms.ndim != 2:
        raise ValueError("histograms must be a 2-D array (one histogram per row)")
    k = histograms.shape[0]
    return histograms + gaussian_array(histograms.shape, noise_multiplier * np.sqrt(k), rng)


def set_union_threshold(noise_multiplier: float, delta_per_key: float) -> float:
    """Threshold for releasing keys not known in advance (Gaussian partition selection).

    A key that only the added record holds has true count 1; it crosses τ with probability
    P[N(0, σ²) > τ - 1] = δ_key, which the ledger adds to δ as `extra_delta`.
    """
    if not 0.0 < delta_per_key < 1.0:
        raise ValueError("delta_per_key must be in (0, 1)")
    from scipy.stats import norm  # here, not at the top: sampling a saved model never thresholds

    return 1.0 + noise_multiplier * float(norm.isf(delta_per_key))


# the public grid's mantissas per decade at each resolution; each coarser set is a subset of the
# finest, so a coarse bin is a union of fine bins (dpgan.tables.inference.infer sums them)
GRID_MANTISSAS: dict[int, tuple[float, ...]] = {6: (1.0, 1.5, 2.0, 3.0, 5.0, 7.0), 3: (1.0, 2.0, 5.0), 1: (1.0,)}
FINEST_GRID = 6


def public_numeric_grid(per_decade: int = FINEST_GRID) -> np.ndarray:
    """Bin edges fixed before seeing data: 0 and ±m·10^k, k in -2..9, m in GRID_MANTISSAS[per_decade]
    ({1, 1.5, 2, 3, 5, 7} by default)."""
    mantissas = np.array(GRID_MANTISSAS[per_decade])
    positive = np.sort(np.concatenate([mantissas * 10.0**k for k in range(-2, 10)]))
    return np.concatenate([-positive[::-1], [0.0], positive])


def coarse_bins(fine_counts: np.ndarray, per_decade: int) -> np.ndarray:
    """Counts on the finest grid summed into the bins of the grid with `per_decade` mantissas.

    Every fine bin lies inside one coarse bin (the coarse edges are fine edges; the fine grid's end
    bins, which also hold everything beyond, fall into the coarse end bins), so a row counted once on
    the fine grid is counted once on the coarse one: a histogram of sensitivity 1 still."""
    if per_decade == FINEST_GRID:
        return np.asarray(fine_counts, dtype=np.float64).copy()
    fine, coarse = public_numeric_grid(), public_numeric_grid(per_decade)
    # a fine bin's coarse bin is the one holding its middle (its low edge for the open end bins)
    middles = np.concatenate([[fine[0]], (fine[1:-2] + fine[2:-1]) / 2.0, [fine[-2]]])
    index = bin_index(middles, coarse)
    return np.bincount(index, weights=np.asarray(fine_counts, dtype=np.float64), minlength=len(coarse) - 1)


# a finest-grid bin cut into this many equal sub-cells: the public fine grid of a numeric column's
# second, finer release (dpgan.tables.inference.domain), where the first finds the mass
FINE_CELLS = 1024


def fine_cell_index(values: np.ndarray, cells: int = FINE_CELLS) -> np.ndarray:
    """The fine cell of each value: its finest-grid bin times `cells` plus its equal sub-cell inside
    that bin (the open end bins' values beyond the grid go to their bin's last or first sub-cell). A
    public partition of the line, fixed before any data is seen: every value is in exactly one cell,
    so a histogram over any set of these cells has sensitivity 1."""
    values = np.asarray(values, dtype=np.float64)
    edges = public_numeric_grid()
    index = bin_index(values, edges)
    low, high = edges[index], edges[index + 1]
    sub = np.floor((values - low) / (high - low) * cells)
    return index.astype(np.int64) * cells + np.clip(sub, 0, cells - 1).astype(np.int64)


def fine_cell_edges(first_bin: int, last_bin: int, cells: int = FINE_CELLS) -> np.ndarray:
    """The edges of the fine cells of finest-grid bins `first_bin`..`last_bin` (inclusive): each bin's
    `cells` equal sub-cells, so cell k of the result is fine cell `first_bin·cells + k`."""
    edges = public_numeric_grid()
    parts = [np.linspace(edges[i], edges[i + 1], cells + 1)[:-1] for i in range(first_bin, last_bin + 1)]
    return np.concatenate([*parts, [edges[last_bin + 1]]])


def share_noise(noise_multiplier: float, share: float) -> float:
    """The noise std of a sub-release given `share` of a Gaussian release at σ: σ/√share. Sub-releases
    (each of sensitivity 1) whose shares sum to 1 compose exactly to one Gaussian at σ (their 1/σ²
    add), so the ledger entry of the release they split stays the same."""
    if not 0.0 < share <= 1.0:
        raise ValueError("share must be in (0, 1]")
    return float(noise_multiplier / np.sqrt(share))


def inverse_variance_mean(
    first: np.ndarray, first_sigma: float, second: np.ndarray, second_sigma: float
) -> tuple[np.ndarray, float]:
    """Two unbiased Gaussian releases of the same counts, combined by inverse variance: the mean and
    its noise std (1/σ² adds). Post-processing of the two releases."""
    weights = np.array([first_sigma**-2, second_sigma**-2])
    combined = (weights[0] * np.asarray(first, dtype=np.float64) + weights[1] * np.asarray(second)) / weights.sum()
    return combined, float(weights.sum() ** -0.5)


def bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Index of the bin [edges[i], edges[i+1]) holding each value; extremes go to the end bins."""
    return np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)


def _exponential_logits(utilities: np.ndarray, epsilon: float, score_range: float) -> np.ndarray:
    utilities = np.asarray(utilities, dtype=np.float64)
    if utilities.ndim != 1 or utilities.size == 0 or not np.isfinite(utilities).all():
        raise ValueError("utilities must be a non-empty 1-D array of finite numbers")
    if not (epsilon > 0 and np.isfinite(epsilon) and score_range > 0 and np.isfinite(score_range)):
        raise ValueError("epsilon and score_range must be positive and finite")
    return (epsilon / score_range) * utilities


def exponential_probabilities(utilities: np.ndarray, epsilon: float, score_range: float) -> np.ndarray:
    """P(k) ∝ exp(ε·u_k / R): the law `exponential_mechanism` samples from (for tests and reports).

    Why ε/R and not ε/(2Δ). Adding or removing one record moves every candidate's utility by an
    amount d_k that lies in ONE interval [a, a + R] shared by all candidates (a utility that sums a
    per-record score in [a, a + R]). Then log P_D(k) − log P_D'(k) = c·d_k − log(Z_D / Z_D'), and
    both terms lie in [c·a, c·(a + R)], so the privacy loss is at most c·R: c = ε/R gives ε-DP. A
    utility of sensitivity Δ without a shared interval has R = 2Δ: the textbook ε/(2Δ)."""
    logits = _exponential_logits(utilities, epsilon, score_range)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def exponential_mechanism(utilities: np.ndarray, epsilon: float, score_range: float, rng: np.random.Generator) -> int:
    """One index drawn with P(k) ∝ exp(ε·u_k / R) (`exponential_probabilities` has the ε-DP
    argument), as report-noisy-max with Gumbel noise: argmax_k (c·u_k + G_k), G_k ~ Gumbel(0, 1)
    i.i.d., has exactly that law. ε-DP whatever the number of candidates; record it in the ledger
    as `EventEntry(..., pure_dp_event(epsilon))`."""
    logits = _exponential_logits(utilities, epsilon, score_range)
    return int(np.argmax(logits + gumbel_array(logits.shape, rng)))


def exponential_top(
    utilities: np.ndarray, epsilon: float, score_range: float, count: int, rng: np.random.Generator
) -> list[int]:
    """`count` distinct indices by `count` rounds of the exponential mechanism, each at ε/count among
    the candidates not yet chosen: ε-DP by sequential composition (the ledger records `count`
    pure releases at ε/count, which dp-accounting composes to at most ε)."""
    utilities = np.asarray(utilities, dtype=np.float64)
    if not 1 <= count <= utilities.size:
        raise ValueError("count must be between 1 and the number of candidates")
    left = list(range(utilities.size))
    chosen: list[int] = []
    for _ in range(count):
        pick = exponential_mechanism(utilities[left], epsilon / count, score_range, rng)
        chosen.append(left.pop(pick))
    return chosen
