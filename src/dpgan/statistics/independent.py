"""Per label, every coordinate's DP histogram, drawn independently: the plainest statistics model.

Vectors in a public box [low, high]^d with labels (a series' T·F scaled values). Each coordinate's
value falls in one of `bins` equal bins of the box; per label, the d histograms hold d × bins
counts. One vector adds one count to one bin of each of its label's d histograms, so the counts
move by √d in L2; with k vectors per unit (an entity's k series) by at most k·√d (triangle
inequality over its vectors, whichever labels they carry); a label's counts are untouched by the
vectors of another, so the labels compose in parallel. One Gaussian release of all the counts at σ
(noise std σ·Δ), σ calibrated so that the ledger reaches the target: one ledger entry.

Post-processing of the release: negative counts at 0 plus a public floor of `floor`·Δ per bin (so
each coordinate's distribution is proper); each label's share is its noisy counts averaged over its
d histograms (each sums to the label's count); a draw picks its label (or takes the one imposed),
then each coordinate's bin from its label's histogram and a uniform place inside the bin.

It keeps each coordinate's distribution and nothing of how coordinates move together: a baseline,
and the example of a statistics model that a kind adds with one registration (its generic adapter:
dpgan.sequences.statistics_models.VectorSeries). What a kind needs of such a class: `fit`, `sample`
(NumPy), and `arrays` / `from_arrays` for its files.
"""

from __future__ import annotations

import numpy as np

from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.releases import charge_gaussian
from dpgan.statistics.blocks import VectorBlocks, as_blocks

EVENT = "each coordinate's histogram per label (independent marginals)"


class DPIndependentMarginals:
    """Fit on (n, d) vectors in [low, high]^d with labels; sample vectors and labels."""

    def __init__(self, low: float = -1.0, high: float = 1.0, *, bins: int = 32, floor: float = 0.5) -> None:
        if not (isinstance(bins, int) and not isinstance(bins, bool) and 2 <= bins <= 4096 and floor > 0):
            raise InputError("the independent marginals need from 2 to 4,096 bins and a positive floor")
        self.low, self.high, self.bins, self.floor = float(low), float(high), bins, float(floor)
        self.edges = np.linspace(self.low, self.high, bins + 1)
        self.shares = np.ones(1)
        self.probabilities = np.full((1, 0, bins), 1.0 / bins)  # (labels, d, bins)

    def fit(
        self,
        values: np.ndarray | VectorBlocks,
        labels: np.ndarray | None,
        n_labels: int,
        rng: np.random.Generator,
        *,
        ledger: PrivacyLedger,
        target: ShareTarget,
        per_unit: int = 1,
    ) -> DPIndependentMarginals:
        """The one release (the module's argument), calibrated so that the ledger reaches `target`.
        `values` may be VectorBlocks (dpgan.statistics.blocks): the counts add up block by block,
        the noise is drawn once after the last block (and the sum over ranks)."""
        blocks = as_blocks(values, labels)
        d = blocks.dimension
        groups = max(1, n_labels)
        sensitivity = per_unit * np.sqrt(d)
        sigma = target.sigma(1.0, 1, ledger.entries)
        k = f"{per_unit}·" if per_unit != 1 else ""
        note = f"{self.bins} bins per coordinate and label; Δ = {k}√d = {k}√{d} = {sensitivity:.4g}; labels in parallel"
        charge_gaussian(ledger, EVENT, sigma, note=note)
        exact = {"counts": np.zeros((groups, d, self.bins), dtype=np.int64)}
        for block, block_labels in blocks.passes():
            cells = np.clip(np.digitize(block, self.edges[1:-1]), 0, self.bins - 1)
            for label in range(groups):
                rows = cells[block_labels == label]
                for j in range(d):
                    exact["counts"][label, j] += np.bincount(rows[:, j], minlength=self.bins)
        counts = blocks.summed(exact)["counts"].astype(np.float64)
        noisy = noisy_counts(counts.ravel(), sigma * sensitivity, rng).reshape(counts.shape)
        label_counts = np.maximum(noisy.sum(axis=2).mean(axis=1), 0.0)
        self.shares = label_counts / label_counts.sum() if label_counts.sum() > 0 else np.full(groups, 1.0 / groups)
        kept = np.maximum(noisy, 0.0) + self.floor * sensitivity
        self.probabilities = kept / kept.sum(axis=2, keepdims=True)
        return self

    def sample(
        self, n: int, rng: np.random.Generator, labels: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """n vectors (n, d) in the box and their label indices (drawn from the shares, or `labels`)."""
        groups, d, _ = self.probabilities.shape
        codes = rng.choice(groups, size=n, p=self.shares) if labels is None else np.asarray(labels, dtype=np.int64)
        cumulative = np.cumsum(self.probabilities, axis=2)
        uniform = rng.random((n, d))
        chosen = np.empty((n, d), dtype=np.int64)
        for j in range(d):  # n × bins at a time, whatever d is
            chosen[:, j] = (uniform[:, j, None] > cumulative[codes, j, :-1]).sum(axis=1)
        width = (self.high - self.low) / self.bins
        return self.edges[chosen] + rng.random((n, d)) * width, codes

    def arrays(self) -> dict[str, np.ndarray]:
        """What was released (post-processed), and nothing else."""
        return {"shares": self.shares, "probabilities": self.probabilities}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], low: float = -1.0, high: float = 1.0) -> DPIndependentMarginals:
        """The model from its saved arrays, strictly (a missing or misshapen array raises ValueError)."""
        if set(arrays) != {"shares", "probabilities"}:
            raise ValueError(f"arrays {sorted(arrays)} where shares and probabilities were expected")
        shares, probabilities = np.asarray(arrays["shares"], float), np.asarray(arrays["probabilities"], float)
        if probabilities.ndim != 3 or shares.shape != probabilities.shape[:1] or probabilities.shape[2] < 2:
            raise ValueError("the shares and probabilities do not fit together")
        if not (np.all(np.isfinite(probabilities)) and np.all(probabilities >= 0) and np.all(shares >= 0)):
            raise ValueError("the shares and probabilities must be finite and non-negative")
        model = cls(low, high, bins=int(probabilities.shape[2]))
        model.shares = shares / shares.sum()
        model.probabilities = probabilities / probabilities.sum(axis=2, keepdims=True)
        return model


__all__ = ["EVENT", "DPIndependentMarginals"]
