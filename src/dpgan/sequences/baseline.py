"""The DP Gaussian of flattened series, per label: the default series model and the base of
"gaussian+gan" (dpgan.statistics.gaussian holds the mechanism every kind shares).

Each series, scaled to [-1, 1] by the public bounds and flattened to d = T·F numbers x, adds to its
label's count (sensitivity 1), sum Σx (L2 sensitivity ‖x‖ ≤ √d) and second-moment matrix Σxxᵀ
(Frobenius sensitivity ‖x‖² ≤ d): the uncentred form in the identity basis. With an entity as the
unit, one unit adds its k series (`per_unit`, drawn with replacement from an entity that owns fewer),
so every Δ and every noise std is k times the series' one; the entry is the same. Sampling draws
Gaussians and clips them into the public bounds. Optional, from public settings alone: a basis of the
steps' low DCT frequencies (`basis_fraction`) and centred coefficients clipped to a share of √d
(`clip_fraction`: Δ c² instead of d) and the eigenvalue `shrink`, the forms the image model uses.
"""

from __future__ import annotations

import numpy as np

from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget, ShareTarget
from dpgan.sequences.codec import SeriesSet
from dpgan.statistics.bases import high_frequency_basis, low_frequency_basis
from dpgan.statistics.blocks import VectorBlocks
from dpgan.statistics.gaussian import MIN_EIGENVALUE, DPGaussian

EVENT = "Gaussian mean and covariance of flattened series per label"


def series_form(
    length: int, features: int, basis_fraction: float | None, clip_fraction: float | None
) -> tuple[np.ndarray | None, float | None]:
    """The public basis (the steps' low DCT frequencies, channel-last) and clip c (a share of √d)
    from the settings' shares; None where a share is unset."""
    basis = None
    if basis_fraction is not None:
        basis = low_frequency_basis((length,), basis_fraction, channels=features, channels_last=True)
    clip = None if clip_fraction is None else clip_fraction * np.sqrt(length * features)
    return basis, clip


# The Gaussian's public form from the settings: basis share, clip share, shrink, residual clip share
GaussianForm = tuple[float | None, float | None, str, float | None]
PLAIN_FORM: GaussianForm = (None, None, "level", None)


def gaussian_arguments(length: int, features: int, form: GaussianForm) -> dict:
    """DPGaussian's keyword arguments for a form: the basis and clip (`series_form`), the shrink,
    and with a residual share r the basis' complement (the steps' high DCT frequencies) and the
    residual's clip r·√d."""
    basis_fraction, clip_fraction, shrink, residual_fraction = form
    basis, clip = series_form(length, features, basis_fraction, clip_fraction)
    arguments: dict = {"basis": basis, "clip": clip, "shrink": shrink}
    if residual_fraction is not None:
        if basis_fraction is None:
            raise InputError("the Gaussian's residual needs a basis: the residual is what the basis leaves out")
        arguments["residual_basis"] = high_frequency_basis(
            (length,), basis_fraction, channels=features, channels_last=True
        )
        arguments["residual_clip"] = residual_fraction * np.sqrt(length * features)
    return arguments


def square_factors(gaussian: DPGaussian) -> list[np.ndarray]:
    """(d, d) factors: a basis' d × m factor padded with zero columns (the same Gaussian)."""
    out = []
    for factor in gaussian.factors:
        padded = np.zeros((factor.shape[0], factor.shape[0]))
        padded[:, : factor.shape[1]] = factor
        out.append(padded)
    return out


class DPGaussianSeries:
    """Fit on a SeriesSet (scaled values, labels); sample scaled series and labels."""

    def __init__(
        self,
        budget: FitBudget,
        *,
        basis_fraction: float | None = None,
        clip_fraction: float | None = None,
        shrink: str = "level",
        residual_fraction: float | None = None,
    ) -> None:
        self.budget = budget
        self.form: GaussianForm = (basis_fraction, clip_fraction, shrink, residual_fraction)
        self.ledger = PrivacyLedger(budget=budget.ledger_budget())  # its own, when no ledger is given
        self.gaussian = DPGaussian(-1.0, 1.0)
        self.shape = (0, 0)

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
        n, length, features = series.values.shape
        values = series.values.reshape(n, length * features)
        return self.fit_vectors(
            values, series.labels, n_labels, rng, shape=(length, features), ledger=ledger, share=share,
            per_unit=per_unit,
        )  # fmt: skip

    def fit_vectors(
        self,
        values: np.ndarray | VectorBlocks,
        labels: np.ndarray | None,
        n_labels: int,
        rng: np.random.Generator,
        *,
        shape: tuple[int, int],
        ledger: PrivacyLedger | None = None,
        share: ShareTarget | None = None,
        per_unit: int = 1,
    ) -> DPGaussianSeries:
        """`fit` on the series flattened to T·F values (`shape` = (T, F)), held in memory or read in
        blocks (dpgan.statistics.blocks: a file's series, whose labels travel in the blocks)."""
        length, features = shape
        arguments = gaussian_arguments(length, features, self.form)
        basis, clip = arguments["basis"], arguments["clip"]
        self.gaussian = DPGaussian(-1.0, 1.0, **arguments)
        second = "second moments (Δ d)"
        if clip is not None:
            second = f"centred coefficients' second moments (Δ c², c = {clip:.3g})"
        if basis is not None:
            second += f" in {basis.shape[1]} low frequencies"
        if "residual_clip" in arguments:
            second += f", the residual's spectrum (Δ c_r², c_r = {arguments['residual_clip']:.3g})"
        note = f"per label: count (Δ 1), sum (Δ √d), {second}; labels in parallel"
        if per_unit > 1:
            note = (
                f"per label: count, sum, second moments; a unit's {per_unit} series move them by {per_unit}·(1, √d, d)"
            )
            if clip is not None:
                note = f"per label: count, sum, {second}; a unit's {per_unit} series: every Δ × {per_unit}"
        self.gaussian.fit(
            values,
            labels,
            n_labels,
            rng,
            ledger=ledger if ledger is not None else self.ledger,
            target=share if share is not None else self.budget.whole_target(),
            event=EVENT,
            note=note,
            per_unit=per_unit,
        )
        self.shape = (length, features)
        return self

    @property
    def means(self) -> list[np.ndarray]:
        return self.gaussian.means

    @property
    def factors(self) -> list[np.ndarray]:
        """(d, d) factors, as the series generator's base holds them (`square_factors`)."""
        return square_factors(self.gaussian)

    @property
    def shares(self) -> np.ndarray:
        return self.gaussian.shares

    def covariances(self) -> list[np.ndarray]:
        """Each label's shrunk covariance (factor · factorᵀ)."""
        return self.gaussian.covariances()

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n scaled series (n, T, F) in [-1, 1] and their label indices."""
        values, labels = self.gaussian.sample(n, rng)
        return values.reshape(n, *self.shape).astype(np.float32), labels


__all__ = [
    "MIN_EIGENVALUE",
    "PLAIN_FORM",
    "DPGaussianSeries",
    "GaussianForm",
    "gaussian_arguments",
    "series_form",
    "square_factors",
]
