"""Per label, a DP Gaussian copula: the label's marginal by a DP histogram, the DP Gaussian of scores.

A Gaussian in the vectors' own scale puts mass where the data have none when they are skewed or
bounded (water flows near zero with rare peaks, loads that are never negative): its draws clip at
the box and its days look like no real day. A copula keeps the Gaussian for the dependence between
coordinates and takes the values' distribution from the data:

1. each label's values, per channel and pooled over that channel's coordinates, in a DP histogram
   of `bins` equal bins of the public box. Coordinates are channel-last (coordinate j is channel
   j mod C, a series' value columns; C = 1 pools all d). One vector adds d/C counts to each of its
   label's C histograms, so the counts move by at most √(C·(d/C)²) = d/√C in L2 (each channel's
   all in one bin); k vectors per unit move them by k·d/√C; labels in parallel; one Gaussian
   release at σ, noise std σ·Δ. Why per channel: value columns on different public scales have
   different distributions, and one pooled histogram would give every column their blend — and
   it costs less noise (d/√C against d). Negative counts are kept at 0 and each bin gets a public
   floor of `floor`·Δ counts, so the released CDF is strictly increasing;
2. each coordinate mapped through its label's and channel's released CDF to a normal score, clipped to
   [−q, q] (q = Φ⁻¹(0.999)) and scaled into [−1, 1]: a function of the unit and released values;
3. the per-label DP Gaussian (dpgan.statistics.gaussian) of those scores, calibrated so that the
   ledger reaches the whole target;
4. draws mapped back through the inverse CDFs (post-processing).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy.special import ndtr, ndtri

from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.releases import charge_gaussian
from dpgan.statistics.blocks import VectorBlocks, as_blocks
from dpgan.statistics.gaussian import DPGaussian
from dpgan.statistics.mixture import DPGaussianMixture

TAIL = 0.001  # normal scores clipped to the (TAIL, 1 − TAIL) quantiles: q = Φ⁻¹(0.999) ≈ 3.09
HISTOGRAM_EVENT = "the values' histogram per label and channel (a copula's marginal)"


class DPGaussianCopula:
    """Fit on (n, d) vectors in [low, high]^d with labels; sample vectors and labels."""

    def __init__(
        self,
        low: float,
        high: float,
        *,
        bins: int = 32,
        floor: float = 0.5,
        channels: int = 1,
        scores_model: DPGaussian | DPGaussianMixture | None = None,
        **gaussian: object,
    ) -> None:
        if not (isinstance(bins, int) and 2 <= bins <= 4096 and floor > 0):
            raise InputError("the copula needs from 2 to 4,096 bins and a positive floor")
        if not (isinstance(channels, int) and channels >= 1):
            raise InputError("the copula's channels must be a whole number of at least 1")
        self.low, self.high, self.bins, self.floor = float(low), float(high), bins, float(floor)
        self.channels = channels
        # the scores' model in [-1, 1]: a DP Gaussian of the given form, or one made by the caller
        # (a mixture); either charges its own entry, calibrated so the ledger reaches the target
        self.gaussian = scores_model if scores_model is not None else DPGaussian(-1.0, 1.0, **gaussian)  # type: ignore[arg-type]
        self.edges = np.linspace(self.low, self.high, bins + 1)  # the histogram's cells' edges
        self.cdfs: list[np.ndarray] = []  # per label, (channels, bins + 1)
        self.scale = float(ndtri(1.0 - TAIL))

    def fit(
        self,
        values: np.ndarray | VectorBlocks,
        labels: np.ndarray | None,
        n_labels: int,
        rng: np.random.Generator,
        *,
        ledger: PrivacyLedger,
        histogram_target: ShareTarget,
        target: ShareTarget,
        event: str,
        note: str,
        per_unit: int = 1,
    ) -> DPGaussianCopula:
        """The histogram so that the ledger reaches `histogram_target`, then the scores' Gaussian so
        that it reaches `target` (steps 1–3 above). `values` may be VectorBlocks
        (dpgan.statistics.blocks): the histogram's counts add up block by block (one pass, the noise
        after the last block), then the scores' model reads the blocks through the released CDFs."""
        blocks = as_blocks(values, labels)
        d, channels = blocks.dimension, self.channels
        if d % channels:
            raise InputError("the copula's vectors must hold a whole number of values per channel")
        groups = max(1, n_labels)
        delta = d / np.sqrt(channels)  # one vector: d/C counts in each of C histograms (step 1)
        sigma = histogram_target.sigma(1.0, 1, ledger.entries)
        charge_gaussian(ledger, HISTOGRAM_EVENT, sigma, note=self.histogram_note(d, per_unit))
        n_cells = len(self.edges) - 1
        exact = {"counts": np.zeros((groups, channels, n_cells), dtype=np.int64)}
        for block, block_labels in blocks.passes():
            cells = self.cells_of(block)
            for label in range(groups):
                by_channel = cells[block_labels == label].reshape(-1, channels).T  # channel-last coordinates
                for channel, row in enumerate(by_channel):
                    exact["counts"][label, channel] += np.bincount(row, minlength=n_cells)
        counts = blocks.summed(exact)["counts"].astype(np.float64)
        self.cdfs = []
        for label in range(groups):
            noisy = noisy_counts(counts[label].ravel(), sigma * delta * per_unit, rng).reshape(counts[label].shape)
            kept = self.kept_counts(noisy, sigma * delta * per_unit) + self.floor * delta
            cumulative = np.concatenate([np.zeros((channels, 1)), np.cumsum(kept, axis=1)], axis=1)
            self.cdfs.append(cumulative / cumulative[:, -1:])
        scores = blocks.mapped(lambda block, block_labels: (self.scores(block, block_labels), block_labels))
        self.gaussian.fit(
            scores, None, groups, rng, ledger=ledger, target=target, event=event, note=note, per_unit=per_unit,
        )  # fmt: skip
        self.after_releases(rng)
        return self

    def histogram_note(self, d: int, per_unit: int) -> str:
        """The ledger's note for step 1, what runs: the cells released per label and channel and
        the L2 sensitivity, k·d/√C with k vectors per unit (the noise std is σ times it)."""
        k = f"{per_unit}·" if per_unit != 1 else ""
        sensitivity = per_unit * d / np.sqrt(self.channels)
        return (
            f"{len(self.edges) - 1} cells per label and channel ({self.cells_description()}); "
            f"Δ = {k}d/√C = {k}{d}/√{self.channels} = {sensitivity:.4g}"
        )

    def cells_description(self) -> str:
        """What the histogram's cells are, for the ledger's note."""
        return f"{self.bins} equal bins of [{self.low:g}, {self.high:g}]"

    def kept_counts(self, noisy: np.ndarray, noise_std: float) -> np.ndarray:
        """The released counts the CDF is built from (post-processing): negative ones at 0."""
        return np.maximum(noisy, 0.0)

    def cells_of(self, values: np.ndarray) -> np.ndarray:
        """Each value's histogram cell: one of the `bins` equal bins of the box (one cell per value:
        the sensitivity of step 1 holds for any such map)."""
        return np.clip(np.digitize(values, self.edges[1:-1]), 0, self.bins - 1)

    def after_releases(self, rng: np.random.Generator) -> None:
        """Post-processing of both releases once they are made: none for the copula
        (dpgan.statistics.matched tabulates its model's own marginals here)."""

    def _parts(self, labels: np.ndarray) -> Iterator[tuple[tuple[np.ndarray, slice], int, int]]:
        """(rows of a label, columns of a channel) as an index, with that label and channel."""
        for label in range(len(self.cdfs)):
            rows = labels == label
            for channel in range(self.channels):
                yield (rows, slice(channel, None, self.channels)), label, channel

    def scores(self, values: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Each coordinate's normal score under its label's and channel's released CDF, scaled into [-1, 1]."""
        out = np.empty(values.shape, dtype=np.float64)
        for part, label, channel in self._parts(labels):
            quantiles = np.clip(np.interp(values[part], self.edges, self.cdfs[label][channel]), TAIL, 1.0 - TAIL)
            out[part] = ndtri(quantiles) / self.scale
        return out

    def values(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Scores in [-1, 1] back to values in the box through each label's and channel's inverse CDF."""
        out = np.empty(scores.shape, dtype=np.float64)
        for part, label, channel in self._parts(labels):
            out[part] = np.interp(ndtr(scores[part] * self.scale), self.cdfs[label][channel], self.edges)
        return out

    @property
    def shares(self) -> np.ndarray:
        return self.gaussian.shares

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n vectors (n, d) in the box and their label indices."""
        scores, labels = self.gaussian.sample(n, rng)
        return self.values(scores, labels), labels


__all__ = ["HISTOGRAM_EVENT", "TAIL", "DPGaussianCopula"]
