"""A DP multivariate Gaussian of flattened series, per label: the simple baseline a GAN must beat.

Each series, scaled to [-1, 1] by the public bounds and flattened to d = T·F numbers x, adds to its
label's count (sensitivity 1), sum Σx (L2 sensitivity ‖x‖ ≤ √d) and second-moment matrix Σxxᵀ
(Frobenius sensitivity ‖x‖² ≤ d). Adding or removing one series changes one label's three
statistics only, so the labels compose in parallel, and the three releases are Gaussian mechanisms
at one noise multiplier σ (noise σ·Δ each): one ledger entry of three sensitivity-normalised
releases, σ calibrated so that it spends ε. With an entity as the unit, one unit adds its k series
(`per_unit`, drawn with replacement from an entity that owns fewer): the count vector moves by at
most k in L2, the labels' sums by at most k√d together (the triangle inequality over the unit's
series, whichever labels they carry) and the second moments by at most k·d, so every Δ is k times
the series' one and so is every noise std; the entry is the same. The fitted model is each
label's noisy mean and covariance (its eigenvalues shrunk by the noise's expected spectral norm, a
public number, and kept positive: post-processing) and the noisy label shares; sampling draws
Gaussians and clips them into the public bounds.
"""

from __future__ import annotations

import numpy as np

from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.noise import gaussian_array
from dpgan.privacy.releases import charge_gaussian
from dpgan.sequences.codec import SeriesSet

EVENT = "Gaussian mean and covariance of flattened series per label"
MIN_EIGENVALUE = 1e-4


class DPGaussianSeries:
    """Fit on a SeriesSet (scaled values, labels); sample scaled series and labels."""

    def __init__(self, epsilon: float, delta: float, accountant: str = "pld") -> None:
        self.epsilon, self.delta, self.accountant = epsilon, delta, accountant
        self.ledger = PrivacyLedger(budget=Budget(epsilon, delta, accountant))
        self.means: list[np.ndarray] = []
        self.factors: list[np.ndarray] = []
        self.shares = np.ones(1)

    def fit(
        self,
        series: SeriesSet,
        n_labels: int,
        rng: np.random.Generator,
        *,
        ledger: PrivacyLedger | None = None,
        share: ShareTarget | None = None,
        per_unit: int = 1,
    ) -> DPGaussianSeries:
        """All of ε on its own ledger, or (as a GAN's anchor) the `share` of another `ledger`;
        `per_unit`: the series each unit adds (k with an entity unit: every noise std times k)."""
        if per_unit < 1:
            raise ValueError("per_unit is the number of series a unit adds, at least 1")
        n, length, features = series.values.shape
        d = length * features
        flat = series.values.reshape(n, d).astype(np.float64)
        labels = series.labels if series.labels is not None else np.zeros(n, dtype=np.int64)
        groups = max(1, n_labels)
        ledger = ledger if ledger is not None else self.ledger
        target = share if share is not None else ShareTarget(self.epsilon, self.delta, self.accountant)
        sigma = target.sigma(1.0, 3, ledger.entries)
        note = "per label: count (Δ 1), sum (Δ √d), second moments (Δ d); labels in parallel"
        if per_unit > 1:
            note = (
                f"per label: count, sum, second moments; a unit's {per_unit} series move them by {per_unit}·(1, √d, d)"
            )
        charge_gaussian(ledger, EVENT, sigma, count=3, note=note)
        sigma = sigma * per_unit  # the noise std per unit of sensitivity: k series per unit
        counts = noisy_counts(np.bincount(labels, minlength=groups).astype(np.float64), sigma, rng)
        self.shares = np.maximum(counts, 0.0) / max(np.maximum(counts, 0.0).sum(), 1e-12)
        self.means, self.factors = [], []
        for label in range(groups):
            rows = flat[labels == label]
            total = rows.sum(axis=0) + gaussian_array(d, sigma * np.sqrt(d), rng)
            noise = gaussian_array((d, d), sigma * d, rng)
            second = rows.T @ rows + (noise + noise.T) / np.sqrt(2.0)  # symmetric, same per-entry variance
            count = max(float(counts[label]), 1.0)
            mean = np.clip(total / count, -1.0, 1.0)
            covariance = second / count - np.outer(mean, mean)
            values, vectors = np.linalg.eigh((covariance + covariance.T) / 2.0)
            # the noise's own spectrum reaches about 2√d times its entries' sd (σd/n̂, and √2 more on the
            # diagonal): eigenvalues are shrunk by that public level, so noise does not pass for variance
            level = 2.0 * np.sqrt(2.0 * d) * sigma * d / count
            self.means.append(mean)
            self.factors.append(vectors * np.sqrt(np.maximum(values - level, MIN_EIGENVALUE)))
        self.shape = (length, features)
        return self

    def covariances(self) -> list[np.ndarray]:
        """Each label's shrunk covariance (factor · factorᵀ)."""
        return [f @ f.T for f in self.factors]

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n scaled series (n, T, F) in [-1, 1] and their label indices."""
        labels = rng.choice(len(self.shares), size=n, p=self.shares if self.shares.sum() > 0 else None)
        d = self.shape[0] * self.shape[1]
        out = np.empty((n, d))
        for label in range(len(self.shares)):
            rows = labels == label
            out[rows] = self.means[label] + rng.standard_normal((int(rows.sum()), d)) @ self.factors[label].T
        return np.clip(out, -1.0, 1.0).reshape(n, *self.shape).astype(np.float32), labels


__all__ = ["DPGaussianSeries"]
