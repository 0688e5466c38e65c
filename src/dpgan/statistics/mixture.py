"""Per label, a mixture of K DP Gaussians: the modes one Gaussian per label averages away.

A label's units are often several kinds (sandals and boots among shoes, weekdays and weekends among
a meter's days); one Gaussian puts its mean between them and its variance across them. The mixture
splits each label into K cells by DP Lloyd steps and releases each cell's DP Gaussian:

1. each label's DP Gaussian (dpgan.statistics.gaussian: count, sum, second moments) — the start;
2. K starting centres per label: k-means on draws from that Gaussian (post-processing of step 1:
   the Gaussian's principal directions, no data read);
3. `iterations` DP Lloyd steps on the units' coefficients z = clip_c(Bᵀ(x − μ̂)) (centred on the
   label's released mean μ̂ and clipped to norm c, so z is a function of the unit and of released
   values alone): each unit goes to its label's nearest centre, and each cell's count (Δ 1) and sum
   of z (Δ c) are released; the centres become the noisy means. A unit is in one cell, so adding or
   removing it moves one cell's count by 1 and one cell's sum by at most c: two Gaussians at σ;
4. the final cells (nearest centre again) and each cell's DP Gaussian (step 1's three releases, with
   L·K groups in parallel).

Every release is a Gaussian mechanism (noise std σ·Δ), each built on values released before it
(adaptive composition): steps 1–3, which only steer, at `steering_scale`·σ (one ledger entry of
3 + 2·iterations sensitivity-normalised releases), step 4 at σ (one entry of three). Unsampled
Gaussians compose exactly into one, so σ is set for the two entries to equal one Gaussian release
calibrated to the target. With `per_unit` k (an entity's k
vectors, whichever cells they fall in) every Δ is k times the vector's, and so is every noise std.
Cells' weights are their noisy counts (negative ones kept at 0); a label's share is its cells' sum.
"""

from __future__ import annotations

import numpy as np

from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.noise import gaussian_array
from dpgan.privacy.releases import charge_gaussian
from dpgan.statistics.blocks import VectorBlocks, as_blocks
from dpgan.statistics.gaussian import RELEASES, DPGaussian, clip_rows

STARTING_DRAWS = 50  # draws per centre from the label's Gaussian for the public k-means start
STARTING_ROUNDS = 20  # k-means rounds on those draws (no data read)


def nearest(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Index of each point's nearest centre (squared Euclidean)."""
    distances = (points**2).sum(1)[:, None] - 2.0 * points @ centres.T + (centres**2).sum(1)[None, :]
    return distances.argmin(axis=1)


def public_kmeans(draws: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k centres of public draws: farthest-point start, then Lloyd rounds (no privacy at stake)."""
    centres = [draws[rng.integers(len(draws))]]
    for _ in range(1, k):
        gaps = ((draws[:, None, :] - np.stack(centres)[None]) ** 2).sum(-1).min(axis=1)
        centres.append(draws[int(gaps.argmax())])
    out = np.stack(centres)
    for _ in range(STARTING_ROUNDS):
        cells = nearest(draws, out)
        for cell in range(k):
            if (cells == cell).any():
                out[cell] = draws[cells == cell].mean(axis=0)
    return out


class DPGaussianMixture:
    """Fit on (n, d) vectors in [low, high]^d with labels; sample vectors, labels and cells."""

    def __init__(
        self,
        low: float,
        high: float,
        *,
        components: int,
        iterations: int = 2,
        steering_scale: float = 3.0,
        basis: np.ndarray | None = None,
        clip: float | None = None,
        shrink: str = "level",
    ) -> None:
        if components < 1 or iterations < 0:
            raise InputError("a mixture needs at least one component and no negative number of Lloyd steps")
        if not steering_scale >= 1.0:
            raise InputError("the mixture's steering noise scale must be at least 1")
        self.components, self.iterations, self.steering_scale = int(components), int(iterations), float(steering_scale)
        self.start = DPGaussian(low, high, basis=basis, clip=clip, shrink=shrink)
        self.cells = DPGaussian(low, high, basis=basis, clip=clip, shrink=shrink)
        self.sigma = 0.0

    def fit(
        self,
        values: np.ndarray | VectorBlocks,
        labels: np.ndarray | None,
        n_labels: int,
        rng: np.random.Generator,
        *,
        ledger: PrivacyLedger,
        target: ShareTarget,
        event: str,
        note: str,
        per_unit: int = 1,
    ) -> DPGaussianMixture:
        """Charge the two entries (steering at `steering_scale`·σ, cells at σ, together `target`),
        then run the four steps above. `values` may be VectorBlocks (dpgan.statistics.blocks): the
        start and the cells read twice each, every Lloyd step once, each pass summing per-unit
        terms with the noise after the last block, so the releases are those of one array."""
        steering = RELEASES + 2 * self.iterations  # the start's and the Lloyd steps' releases
        one = target.sigma(1.0, 1, ledger.entries)  # one Gaussian that reaches the target
        # Gaussians compose exactly: n releases at σ_i are one at (Σ σ_i⁻²)^(-1/2), so the cells' σ
        # and the steering releases' σ·s together equal that one release
        sigma = float(one * np.sqrt(RELEASES + steering / self.steering_scale**2))
        charge_gaussian(ledger, event, sigma * self.steering_scale, count=steering, note=note + " (start, Lloyd steps)")
        charge_gaussian(ledger, event, sigma, count=RELEASES, note=note + " (cells)")
        self.sigma = sigma * self.steering_scale * per_unit
        blocks = as_blocks(values, labels)
        groups, k = max(1, n_labels), self.components
        self.start.release(blocks, None, groups, rng, sigma=sigma * self.steering_scale, per_unit=per_unit)
        bound = self._bound(blocks.dimension)
        centres = self._starting_centres(groups, bound, rng)
        for _ in range(self.iterations):
            centres = self._lloyd_step(blocks, centres, bound, rng)
        fixed = centres  # the cells' centres: released values, fixed before the cells' passes

        def cells(values: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return values, labels * k + self._assign(self._coefficients(values, labels), labels, fixed)

        self.cells.release(blocks.mapped(cells), None, groups * k, rng, sigma=sigma, per_unit=per_unit)
        self.centres = centres
        return self

    def _bound(self, d: int) -> float:
        """c: the coefficients' clip (the box's radius when the Gaussian is uncentred)."""
        return self.start.clip if self.start.clip is not None else self.start.radius(d)

    def _coefficients(self, values: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """z = clip_c(Bᵀ(x − μ̂_label)): a function of the unit and the released means."""
        means = np.stack(self.start.means)
        projected = self.start.project(values.astype(np.float64) - means[labels])
        return clip_rows(projected, self._bound(values.shape[1]))

    def _starting_centres(self, groups: int, bound: float, rng: np.random.Generator) -> np.ndarray:
        """(groups, K, m) centres: k-means on each label's released Gaussian's draws (centred)."""
        out = []
        for factor in self.start.coefficient_factors:
            draws = clip_rows(
                rng.standard_normal((STARTING_DRAWS * self.components, factor.shape[1])) @ factor.T, bound
            )
            out.append(public_kmeans(draws, self.components, rng))
        return np.stack(out)

    def _assign(self, coefficients: np.ndarray, labels: np.ndarray, centres: np.ndarray) -> np.ndarray:
        """Each unit's nearest centre among its own label's K."""
        cells = np.zeros(len(coefficients), dtype=np.int64)
        for label in range(centres.shape[0]):
            rows = labels == label
            if rows.any():
                cells[rows] = nearest(coefficients[rows], centres[label])
        return cells

    def _lloyd_step(
        self, blocks: VectorBlocks, centres: np.ndarray, bound: float, rng: np.random.Generator
    ) -> np.ndarray:
        """One DP Lloyd step over one pass: noisy counts (Δ 1) and noisy sums of z (Δ c) per cell, at σ."""
        groups, k, m = centres.shape
        exact = {"counts": np.zeros(groups * k, dtype=np.int64), "sums": np.zeros((groups * k, m))}
        for values, labels in blocks.passes():
            coefficients = self._coefficients(values, labels)
            cells = labels * k + self._assign(coefficients, labels, centres)
            exact["counts"] += np.bincount(cells, minlength=groups * k)
            np.add.at(exact["sums"], cells, coefficients)
        exact = blocks.summed(exact)
        counts = noisy_counts(exact["counts"].astype(np.float64), self.sigma, rng)
        sums = exact["sums"] + gaussian_array((groups * k, m), self.sigma * bound, rng)
        moved = centres.reshape(groups * k, m).copy()
        kept = counts >= 1.0  # a cell the noise empties keeps its centre
        moved[kept] = clip_rows(sums[kept] / counts[kept, None], bound)
        return moved.reshape(groups, k, m)

    @property
    def shares(self) -> np.ndarray:
        """Each label's share: its cells' weights summed."""
        return self.cells.shares.reshape(-1, self.components).sum(axis=1)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n vectors (n, d) in the box and their label indices (a cell drawn by its weight)."""
        values, cells = self.cells.sample(n, rng)
        return values, cells // self.components


__all__ = ["DPGaussianMixture", "nearest", "public_kmeans"]
