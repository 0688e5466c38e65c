"""Per label, the DP Gaussian (or mixture) of the values themselves, its draws matched to a DP histogram.

The copula (dpgan.statistics.copula) fits its Gaussian to normal scores and maps draws back through
the released CDFs: every value then has the data's distribution, but on Fashion-MNIST a student
trained on its images scores below one trained on the plain mixture's (bench/notes/27). Matching
keeps the Gaussian of the values, whose class structure students learn, and takes only the values'
distribution from the histogram (bench/notes/29). The same two releases, on the same ledger, with
the same sensitivities:

1. each label's values in a DP histogram, per channel, as the copula releases it (its step 1), with
   the box's two ends as cells of their own: a value exactly at an end (an image's black or white)
   counts there, any other in its equal bin. Still one cell per value, so the same Δ d/√C (k·d/√C
   for k vectors per unit); the released CDF holds each end's share as an atom;
2. the per-label DP Gaussian (or mixture) of the vectors themselves in the box, calibrated so that the
   ledger reaches the whole target (its own Δ, as without a histogram);

and post-processing of those two releases only, no data read:

3. the model's own marginal per label and channel, pooled over the coordinates, tabulated on
   SOURCE_BINS equal bins of the box from about `draws` of its draws per label (a label the model draws too
   rarely takes the pooled draws of all labels). Draws clip at the box's ends, so each end holds an
   atom; the table puts an end at the middle of its atom's quantiles, as ranks with ties would;
4. each drawn value → its quantile under 3 → the released CDF's inverse (2's histogram): a monotone
   map per label and channel, so a drawn vector keeps the order of its values and takes the data's
   distribution of them (an image's background goes back to the data's black instead of speckle).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpgan.statistics.copula import DPGaussianCopula
from dpgan.statistics.gaussian import DPGaussian
from dpgan.statistics.mixture import DPGaussianMixture

SOURCE_BINS = 256  # the model's own marginal, tabulated on this many equal bins of the box
DRAWS = 1000  # the model's draws per label that tabulate it
MIN_DRAWS = 50  # fewer of a label's draws than this: its table is the pooled draws' (a public rule)


def tabulated_cdf(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The CDF (len(edges),) of `values` in [edges[0], edges[-1]] at the equal bins' edges, each end's
    atom counted half at that end (step 3); with no values, the uniform CDF."""
    values = values.ravel()
    if values.size == 0:
        return np.linspace(0.0, 1.0, len(edges))
    low, high = edges[0], edges[-1]
    at_low, at_high = float(np.mean(values <= low)), float(np.mean(values >= high))
    inner = values[(values > low) & (values < high)]
    shares = np.histogram(inner, bins=edges)[0] / values.size
    cdf = at_low + np.concatenate([[0.0], np.cumsum(shares)])
    cdf[0], cdf[-1] = at_low / 2.0, 1.0 - at_high / 2.0
    return cdf


class DPMatchedMarginals(DPGaussianCopula):
    """Fit on (n, d) vectors in [low, high]^d with labels; sample vectors and labels (module docstring)."""

    def __init__(
        self,
        low: float,
        high: float,
        *,
        model: DPGaussian | DPGaussianMixture | None = None,
        gaussian: dict[str, Any] | None = None,
        source_bins: int = SOURCE_BINS,
        draws: int = DRAWS,
        threshold: float = 0.0,
        **copula: Any,
    ) -> None:
        """`model`: the values' Gaussian or mixture (else a DPGaussian of the `gaussian` form);
        `copula`: the histogram's bins, floor and channels, as DPGaussianCopula takes them."""
        model = model if model is not None else DPGaussian(low, high, **(gaussian or {}))
        super().__init__(low, high, scores_model=model, **copula)
        # step 1's cells: the box's two ends as cells of their own (atoms), then the equal bins
        self.edges = np.concatenate([[self.low], np.linspace(self.low, self.high, self.bins + 1), [self.high]])
        self.source_edges = np.linspace(self.low, self.high, source_bins + 1)
        self.draws, self.threshold = draws, float(threshold)
        self.source_cdfs: list[np.ndarray] = []  # per label, (channels, source_bins + 1)

    def after_releases(self, rng: np.random.Generator) -> None:
        """The model's own marginals from its draws, with the fit's generator (step 3)."""
        groups = len(self.cdfs)
        drawn, labels = self.gaussian.sample(self.draws * groups, rng)
        self.source_cdfs = []
        for label in range(groups):
            rows = drawn[labels == label]
            rows = rows if len(rows) >= MIN_DRAWS else drawn
            self.source_cdfs.append(
                np.stack([tabulated_cdf(rows[:, c :: self.channels], self.source_edges) for c in range(self.channels)])
            )

    def cells_description(self) -> str:
        """Step 1's cells: the box's two ends, then its equal bins."""
        return f"the box's ends {self.low:g} and {self.high:g} as cells of their own, then {self.bins} equal bins"

    def kept_counts(self, noisy: np.ndarray, noise_std: float) -> np.ndarray:
        """Counts below `threshold` noise sds read as empty (post-processing): matching trusts the
        released marginal, so the noise left in a label's empty bins would become drawn values."""
        return np.where(noisy >= max(self.threshold * noise_std, 0.0), noisy, 0.0)

    def cells_of(self, values: np.ndarray) -> np.ndarray:
        """A value at the box's low end: cell 0; at its high end: the last cell; else 1 + its equal
        bin. Still one cell per value (the copula's Δ); the released CDF then holds each end's
        share as an atom, so a drawn pixel can be exactly the data's black or white."""
        inner = np.clip(np.digitize(values, self.edges[2:-2]), 0, self.bins - 1) + 1
        return np.where(values <= self.low, 0, np.where(values >= self.high, self.bins + 1, inner))

    def scores(self, values: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """The model sees the values themselves (step 2)."""
        return values

    def values(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """The model's draws in the box → values with the released marginals (step 4)."""
        out = np.empty(scores.shape, dtype=np.float64)
        for part, label, channel in self._parts(labels):
            quantiles = np.interp(scores[part], self.source_edges, self.source_cdfs[label][channel])
            out[part] = np.interp(quantiles, self.cdfs[label][channel], self.edges)
        return out


__all__ = ["DRAWS", "MIN_DRAWS", "SOURCE_BINS", "DPMatchedMarginals", "tabulated_cdf"]
