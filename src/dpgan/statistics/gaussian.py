"""The per-label DP Gaussian of flat vectors in a public box: series' days, images' pixels.

Each unit's vector x (d numbers in the public box [low, high]^d, so ‖x‖ ≤ R = √d·max(|low|, |high|))
adds to its label's count (L2 sensitivity 1), its sum (R) and a second-moment matrix of its
coefficients z in a public orthonormal basis B (d × m; the identity when none is given):
- uncentred (`clip` None): z = Bᵀx, ‖z‖ ≤ ‖x‖ ≤ R, so Σzzᵀ moves by ‖zzᵀ‖_F = ‖z‖² ≤ R²;
- centred (`clip` c): z = clip_c(Bᵀ(x − μ̂)), centred on the label's mean μ̂ released just before
  (a released value, so z is a function of the unit alone) and scaled to norm at most c, so Σzzᵀ
  moves by at most c². A c well below R cuts the covariance's noise by R²/c², at the cost of
  shrinking the few vectors far from their mean.
Adding or removing one unit changes one label's three statistics only, so the labels compose in
parallel, and the three releases are Gaussian mechanisms at one noise multiplier σ (noise std σ·Δ
each): one ledger entry of three sensitivity-normalised releases, σ calibrated so that the ledger
reaches the target. The sum's release comes first, so the centring is adaptive composition of the
same three Gaussians. When one unit adds k vectors (`per_unit`: an entity's k series), every
sensitivity is k times the vector's (triangle inequality over its vectors, whichever labels they
carry) and so is every noise std; the entry is the same.

The fitted model is each label's noisy mean (clipped into the box) and its coefficient covariance,
whose eigenvalues are shrunk and kept positive; the noisy counts give the label shares. All of that
is post-processing. Two public shrinkage rules (`shrink`): "level" subtracts the noise's expected
spectral norm (2√(2m) times the entries' sd s, an upper bound) from every eigenvalue; "spike"
inverts where a symmetric Gaussian noise moves an isolated eigenvalue ℓ (to λ = ℓ + s²m/ℓ, the
spiked Wigner model's outlier), ℓ = (λ + √(λ² − 4s²m))/2 above the bulk's edge 2s√m and 0 below,
so large variances keep almost all of themselves instead of losing the level.
Sampling draws mean + B·(F·g), g standard normal, clipped into the box.

Optional, the residual's spectrum (`residual_basis` E, d × (d − m), the public complement of B, with
`residual_clip` c_r): a covariance in a small basis leaves the series' quick wiggles out, so its
draws are smoother than real ones (the two-sample test's giveaway). A fourth release at the same σ
gives them back: per label, each vector's residual coefficients r = clip_{c_r}(Eᵀ(x − μ̂)) (centred
on the released mean, so a function of the unit and released values), and the vector of their
squares summed, Σ r∘r, which one vector moves by ‖r∘r‖₂ ≤ ‖r‖₂² ≤ c_r² (noise std σ·c_r²).
Each residual direction's variance is that sum over the noisy count, kept ≥ 0; draws add
E·(√v ∘ g′) (independent directions: a diagonal covariance in E, the spectrum of the wiggles).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.noise import gaussian_array
from dpgan.privacy.releases import charge_gaussian
from dpgan.statistics.blocks import VectorBlocks, as_blocks

MIN_EIGENVALUE = 1e-4  # a floor under the shrunk eigenvalues: every factor stays finite and of full rank
SHRINKS = ("level", "spike")
RELEASES = 3  # Gaussian releases per fit, each at σ times its sensitivity: count, sum, second moments


def clip_rows(rows: np.ndarray, bound: float) -> np.ndarray:
    """Each row scaled to norm at most `bound`."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows * np.minimum(1.0, bound / np.maximum(norms, 1e-12))


def shrink_eigenvalues(values: np.ndarray, entry_sd: float, m: int, rule: str) -> np.ndarray:
    """Noisy eigenvalues → the variances kept (before the floor), for symmetric noise whose
    off-diagonal entries have sd `entry_sd` (a public number: σ·Δ/n̂)."""
    if rule == "level":
        return values - 2.0 * np.sqrt(2.0 * m) * entry_sd
    edge = 2.0 * entry_sd * np.sqrt(m)
    above = values > edge
    kept = np.zeros_like(values)
    kept[above] = (values[above] + np.sqrt(values[above] ** 2 - edge**2)) / 2.0
    return kept


class DPGaussian:
    """Fit on (n, d) vectors in [low, high]^d with labels; sample vectors and labels."""

    def __init__(
        self,
        low: float,
        high: float,
        *,
        basis: np.ndarray | None = None,
        clip: float | None = None,
        shrink: str = "level",
        residual_basis: np.ndarray | None = None,
        residual_clip: float | None = None,
    ):
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise InputError("the DP Gaussian needs a finite public box, low < high")
        if clip is not None and not (math.isfinite(clip) and clip > 0):
            raise InputError("the DP Gaussian's clip must be a positive number")
        if basis is not None and (basis.ndim != 2 or basis.shape[1] > basis.shape[0]):
            raise InputError("the DP Gaussian's basis must be a (d, m) matrix with m ≤ d")
        if shrink not in SHRINKS:
            raise InputError(f"the DP Gaussian's shrink must be one of {', '.join(SHRINKS)}")
        if (residual_basis is None) != (residual_clip is None):
            raise InputError("the DP Gaussian's residual needs both its basis and its clip")
        if residual_clip is not None and not (math.isfinite(residual_clip) and residual_clip > 0):
            raise InputError("the DP Gaussian's residual clip must be a positive number")
        if residual_basis is not None and (basis is None or residual_basis.shape[0] != basis.shape[0]):
            raise InputError("the DP Gaussian's residual basis must complement its basis (same d)")
        self.low, self.high, self.basis, self.clip, self.shrink = float(low), float(high), basis, clip, shrink
        self.residual_basis, self.residual_clip = residual_basis, residual_clip
        self.residual_variances: list[np.ndarray] = []
        self.means: list[np.ndarray] = []
        self.coefficient_factors: list[np.ndarray] = []
        self.shares = np.ones(1)
        self.sigma = 0.0

    def radius(self, d: int) -> float:
        """The largest norm of a vector in the box: the sum's sensitivity."""
        return math.sqrt(d) * max(abs(self.low), abs(self.high))

    def second_sensitivity(self, d: int) -> float:
        """The second-moment matrix's Frobenius sensitivity: c² centred, R² uncentred."""
        return self.clip**2 if self.clip is not None else self.radius(d) ** 2

    @property
    def releases(self) -> int:
        """Gaussian releases per fit at σ: count, sum, second moments, and the residual's spectrum."""
        return RELEASES + (self.residual_basis is not None)

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
    ) -> DPGaussian:
        """Charge one entry (`releases` Gaussians at σ for `target`), then release per label; `values`
        must lie in the box (the kinds' codecs scale into it), `per_unit` is the vectors a unit adds."""
        sigma = target.sigma(1.0, self.releases, ledger.entries)
        charge_gaussian(ledger, event, sigma, count=self.releases, note=note)
        return self.release(values, labels, n_labels, rng, sigma=sigma, per_unit=per_unit)

    def release(
        self,
        values: np.ndarray | VectorBlocks,
        labels: np.ndarray | None,
        n_labels: int,
        rng: np.random.Generator,
        *,
        sigma: float,
        per_unit: int = 1,
    ) -> DPGaussian:
        """The releases at noise multiplier `sigma`, which the caller has charged to its ledger
        (`releases` Gaussians at σ) before this call: `fit` does, and so does a mixture that
        charges its steps in one entry.

        `values` is an (n, d) array with its `labels`, or VectorBlocks read a block at a time
        (dpgan.statistics.blocks): the count, the sum and the second moments are sums of each
        unit's own bounded terms, so they add up block by block (and over ranks) to the one-array
        sums, and the noise is drawn once, after the last block, with the same std: the same
        releases, the same ledger entry. The noise is drawn before the reads in the one-array
        order (count, then per label: sum, second moments, residual), so one block of an array
        gives the one-array fit bit for bit. The centred form reads twice: the second moments are
        centred on the mean released after the first pass."""
        if per_unit < 1:
            raise ValueError("per_unit is the number of vectors a unit adds, at least 1")
        blocks = as_blocks(values, labels)
        d = blocks.dimension
        if self.basis is not None and self.basis.shape[0] != d:
            raise InputError("the DP Gaussian's basis does not match the vectors' length")
        m = d if self.basis is None else self.basis.shape[1]
        groups = max(1, n_labels)
        sigma = sigma * per_unit  # the noise std per unit of sensitivity: k vectors per unit
        self.sigma = sigma
        radius, second_delta = self.radius(d), self.second_sensitivity(d)
        count_noise = gaussian_array(groups, sigma, rng)  # Δ 1; then each label's, in the one-array order
        noise = [self._label_noise(d, m, sigma, radius, second_delta, rng) for _ in range(groups)]
        centred = self.clip is not None or self.residual_basis is not None
        first = {"counts": np.zeros(groups, dtype=np.int64), "sums": np.zeros((groups, d))}
        if not centred:
            first["second"] = np.zeros((groups, m, m))
        for values_block, labels_block in blocks.passes():
            first["counts"] += np.bincount(labels_block, minlength=groups)
            for label in range(groups):
                rows = values_block[labels_block == label]
                first["sums"][label] += rows.sum(axis=0)
                if not centred:
                    coefficients = self.project(rows)
                    first["second"][label] += coefficients.T @ coefficients
        first = blocks.summed(first)
        counts = first["counts"].astype(np.float64) + count_noise
        kept = np.maximum(counts, 0.0)
        self.shares = kept / max(kept.sum(), 1e-12)
        means = [
            np.clip((first["sums"][label] + noise[label]["sums"]) / max(float(counts[label]), 1.0), self.low, self.high)
            for label in range(groups)
        ]
        second = {"second": first["second"]} if not centred else self._centred_sums(blocks, groups, m, means)
        self.means, self.coefficient_factors, self.residual_variances = [], [], []
        for label in range(groups):
            count, mean = max(float(counts[label]), 1.0), means[label]
            centre = self.project(mean[None, :])[0] if self.clip is None else np.zeros(m)
            noisy_second = second["second"][label] + self._second_noise(noise[label]["second"])
            covariance = noisy_second / count - np.outer(centre, centre)
            eigenvalues, vectors = np.linalg.eigh((covariance + covariance.T) / 2.0)
            # the noise's own spectrum reaches about 2√m times its entries' sd (σΔ/n̂, and √2 more on the
            # diagonal): eigenvalues are shrunk by a public rule, so noise does not pass for variance
            shrunk = shrink_eigenvalues(eigenvalues, sigma * second_delta / count, m, self.shrink)
            self.means.append(mean)
            self.coefficient_factors.append(vectors * np.sqrt(np.maximum(shrunk, MIN_EIGENVALUE)))
            if self.residual_basis is not None:
                noisy = second["residual"][label] + noise[label]["residual"]
                self.residual_variances.append(np.maximum(noisy / count, 0.0))
        self.dimension = d
        return self

    def _label_noise(
        self, d: int, m: int, sigma: float, radius: float, second_delta: float, rng: np.random.Generator
    ) -> dict[str, Any]:
        """One label's noise, drawn before any read in the one-array order (its shapes and stds are
        public): the sum's (Δ R), the second moments' (symmetrised, Δ c² or R²) and the residual
        spectrum's (Δ c_r²)."""
        noise: dict[str, Any] = {"sums": gaussian_array(d, sigma * radius, rng)}
        # the m × m draw is made here, in its place in the stream, and dropped: it is made again from
        # the generator's saved state when the sum it belongs to is complete (`_second_noise`), so
        # the fit never holds every label's m × m noise beside every label's m × m sum
        noise["second"] = (type(rng.bit_generator), rng.bit_generator.state, (m, m), sigma * second_delta)
        gaussian_array((m, m), sigma * second_delta, rng)
        if self.residual_basis is not None and self.residual_clip is not None:
            noise["residual"] = gaussian_array(d - m, sigma * self.residual_clip**2, rng)
        return noise

    @staticmethod
    def _second_noise(saved: tuple) -> np.ndarray:
        """A label's second-moment noise, drawn again from the generator's state saved at its place:
        the same numbers as the draw made there (NumPy's Generator keeps no cached normal)."""
        kind, state, shape, std = saved
        replay = np.random.Generator(kind())
        replay.bit_generator.state = state
        draw = gaussian_array(shape, std, replay)
        return (draw + draw.T) / np.sqrt(2.0)  # symmetric, same entry sd

    def _centred_sums(
        self, blocks: VectorBlocks, groups: int, m: int, means: list[np.ndarray]
    ) -> dict[str, np.ndarray]:
        """The second pass: per label, Σ zzᵀ of the centred, clipped coefficients and Σ r∘r of the
        clipped residual (module docstring), each a function of the unit and the released mean."""
        sums = {"second": np.zeros((groups, m, m))}
        if self.residual_basis is not None:
            sums["residual"] = np.zeros((groups, self.residual_basis.shape[1]))
        for values_block, labels_block in blocks.passes():
            for label in range(groups):
                rows = values_block[labels_block == label]
                if self.clip is None:
                    coefficients = self.project(rows)
                else:
                    coefficients = self._clipped(self.project(rows - means[label]))
                sums["second"][label] += coefficients.T @ coefficients
                if self.residual_basis is not None:
                    assert self.residual_clip is not None
                    residual = clip_rows((rows - means[label]) @ self.residual_basis, self.residual_clip)
                    sums["residual"][label] += (residual**2).sum(axis=0)
        return blocks.summed(sums)

    def project(self, rows: np.ndarray) -> np.ndarray:
        """Rows' coefficients in the public basis (the rows themselves without one)."""
        return rows if self.basis is None else rows @ self.basis

    def _clipped(self, coefficients: np.ndarray) -> np.ndarray:
        assert self.clip is not None
        return clip_rows(coefficients, self.clip)

    @property
    def factors(self) -> list[np.ndarray]:
        """Each label's covariance factor in the vectors' own space (d × m: B·F; with a residual,
        d × d: [B·F, E·diag(√v)])."""
        factors = [f if self.basis is None else self.basis @ f for f in self.coefficient_factors]
        if self.residual_basis is None:
            return factors
        return [
            np.hstack([f, self.residual_basis * np.sqrt(v)[None, :]])
            for f, v in zip(factors, self.residual_variances, strict=True)
        ]

    def covariances(self) -> list[np.ndarray]:
        """Each label's shrunk covariance in the vectors' space (factor · factorᵀ)."""
        return [f @ f.T for f in self.factors]

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n vectors (n, d) in the box and their label indices."""
        labels = rng.choice(len(self.shares), size=n, p=self.shares if self.shares.sum() > 0 else None)
        out = np.empty((n, self.dimension))
        factors: Sequence[np.ndarray] = self.factors
        for label in range(len(self.shares)):
            rows = labels == label
            draws = rng.standard_normal((int(rows.sum()), factors[label].shape[1]))
            out[rows] = self.means[label] + draws @ factors[label].T
        return np.clip(out, self.low, self.high), labels


__all__ = ["MIN_EIGENVALUE", "RELEASES", "SHRINKS", "DPGaussian", "clip_rows", "shrink_eigenvalues"]
