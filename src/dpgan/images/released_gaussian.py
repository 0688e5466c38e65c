"""The "gaussian" image recipe's released model: each class's DP Gaussian (or mixture, copula,
matched marginals) as arrays that sample, with no network.

The release is dpgan.images.gaussian's (`release_image_gaussian`; the mechanisms and their
sensitivities in dpgan.statistics). The model holds what it released, as float32 arrays: the label
shares (the released tally's, or the public prior), each cell's mean (pixels) and coefficient factor
(m × m) in the public basis (pixels × m, a function of the shape), a mixture's cell weights per
class, and a copula's or the matched marginals' CDFs. Its files hold those arrays alone
(statistics.safetensors) and model.json its public form.

A draw is mean + basis · (factor · z) for z standard normal (n, m), and one more normal whose CDF
picks the cell among a mixture's K, clipped to [-1, 1]; then, with a copula, each pixel's score
through its class's inverse CDF, or, with matched marginals, each pixel's quantile under the
Gaussian's own marginal through the released one. Sampling draws the noise and the labels exactly
as the generator that held these arrays before did (so seeded samples are unchanged). The same
model is the teacher of a GAN's warm start (dpgan.images.gaussian.GaussianWarmStartHook).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from dpgan.model import check_arrays
from dpgan.models.marginal_map import cdf_at, inverse_cdf, quantile_values
from dpgan.statistics.copula import DPGaussianCopula
from dpgan.statistics.matched import DPMatchedMarginals
from dpgan.statistics.mixture import DPGaussianMixture

ARRAYS = ("label_shares", "means", "factors", "basis", "cell_weights", "marginal_cdfs", "marginal_scale", "source")


def _tensor(array: Any) -> torch.Tensor:
    return torch.tensor(np.asarray(array), dtype=torch.float32)


class ReleasedImageGaussian:
    """Per class (and cell): the released arrays, and draws from them."""

    def __init__(
        self, *, shape: tuple[int, int, int], n_labels: int, components: int, arrays: dict[str, torch.Tensor]
    ) -> None:
        self.shape, self.n_labels, self.components = tuple(shape), n_labels, components
        self.arrays = dict(arrays)
        self.coefficients = int(arrays["factors"].shape[-1])
        self.marginal_bins = 0 if "marginal_cdfs" not in arrays else int(arrays["marginal_cdfs"].shape[-1]) - 1
        self.source_bins = 0 if "source" not in arrays else int(arrays["source"].shape[-1]) - 1
        self._public_edges()

    def _public_edges(self) -> None:
        """The histograms' cell edges: public, from the bins alone (with matched marginals an empty
        cell at each end first: dpgan.statistics.matched)."""
        self.edges = self.source_edges = None
        if self.source_bins:
            edges = torch.linspace(-1.0, 1.0, self.marginal_bins - 1)
            self.edges = torch.cat([edges[:1], edges, edges[-1:]])
            self.source_edges = torch.linspace(-1.0, 1.0, self.source_bins + 1)
        elif self.marginal_bins:
            self.edges = torch.linspace(-1.0, 1.0, self.marginal_bins + 1)

    def __getattr__(self, name: str) -> torch.Tensor:
        arrays = self.__dict__.get("arrays", {})
        if name in arrays:
            return arrays[name]
        raise AttributeError(name)

    # ------------------------------------------------------------------ release
    @classmethod
    def from_release(
        cls, model: Any, basis: np.ndarray, *, shape: tuple[int, int, int], n_labels: int, shares: torch.Tensor
    ) -> ReleasedImageGaussian:
        """The arrays of a release (dpgan.images.gaussian.release_image_gaussian): each cell's mean
        and factor, a mixture's cell weights within each class, a copula's CDFs; `shares` the labels'."""
        arrays: dict[str, torch.Tensor] = {"label_shares": shares / shares.sum()}
        if isinstance(model, DPGaussianCopula):
            arrays["marginal_cdfs"] = _tensor(np.stack(model.cdfs)).reshape(max(1, n_labels), -1)
            arrays["marginal_scale"] = torch.tensor(model.scale, dtype=torch.float32)
            if isinstance(model, DPMatchedMarginals):
                arrays["source"] = _tensor(np.stack(model.source_cdfs)).reshape(max(1, n_labels), -1)
            model = model.gaussian
        gaussian, components = model, 1
        if isinstance(model, DPGaussianMixture):
            gaussian, components = model.cells, model.components
            weights = _tensor(gaussian.shares.reshape(-1, components))
            arrays["cell_weights"] = weights / weights.sum(dim=1, keepdim=True).clamp_min(1e-12)
        arrays |= {
            "means": _tensor(np.stack(gaussian.means)),
            "factors": _tensor(np.stack(gaussian.coefficient_factors)),
            "basis": _tensor(basis),
        }
        return cls(shape=shape, n_labels=n_labels, components=components, arrays=arrays)

    # ------------------------------------------------------------------ sample
    @property
    def noise_size(self) -> int:
        """The noise a draw takes: the m coefficients, and one coordinate for the cell with K > 1."""
        return self.coefficients + (1 if self.components > 1 else 0)

    @torch.no_grad()
    def sample(
        self, n: int, generator: torch.Generator, labels: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """n images (n, C, H, W) in [-1, 1] and their label codes (drawn from the shares, or imposed)."""
        z = torch.randn(n, self.noise_size, generator=generator, device=generator.device)
        codes = labels
        if codes is None and self.n_labels:
            codes = torch.multinomial(self.label_shares, n, replacement=True, generator=generator)
        return self.draw(z, codes).reshape(-1, *self.shape), codes

    def cells(self, z: torch.Tensor, codes: torch.Tensor) -> torch.Tensor:
        """Each draw's cell: its label's K cells, picked by the last noise coordinate's normal CDF."""
        if self.components == 1:
            return codes
        uniform = torch.special.ndtr(z[:, -1:])
        cumulative = self.cell_weights[codes].cumsum(dim=1)
        picked = (uniform > cumulative[:, :-1]).sum(dim=1)
        return codes * self.components + picked

    def draw(self, z: torch.Tensor, codes: torch.Tensor | None) -> torch.Tensor:
        """Noise (n, noise_size) and label codes (None: one class) → flat images (n, pixels)."""
        codes = codes if codes is not None else torch.zeros(len(z), dtype=torch.long, device=z.device)
        cells = self.cells(z, codes)
        z = z[:, : self.coefficients]
        coefficients = torch.empty_like(z)
        for cell in range(self.factors.shape[0]):  # per cell: n·m² memory never held at once
            rows = cells == cell
            coefficients[rows] = z[rows] @ self.factors[cell].T
        drawn = (self.means[cells] + coefficients @ self.basis.T).clamp(-1.0, 1.0)
        if not self.marginal_bins:
            return drawn
        cdfs = self.marginal_cdfs[codes][:, None, :]
        if self.source_bins:  # each pixel's quantile under the Gaussian's own marginal, then the released one
            quantiles = cdf_at(drawn, self.source[codes], self.source_edges)
            return quantile_values(quantiles[:, None, :], cdfs, self.edges)[:, 0, :]
        return inverse_cdf(drawn[:, None, :], cdfs, self.edges, self.marginal_scale)[:, 0, :]

    def to(self, device: str | torch.device) -> ReleasedImageGaussian:
        """The arrays moved to `device` (a fit on a GPU releases on the CPU: dpgan.devices)."""
        self.arrays = {key: value.to(device) for key, value in self.arrays.items()}
        for key in ("edges", "source_edges"):
            if getattr(self, key) is not None:
                setattr(self, key, getattr(self, key).to(device))
        return self

    # ------------------------------------------------------------------ files
    def form(self) -> dict[str, Any]:
        return {"image_shape": list(self.shape), "n_labels": self.n_labels, "components": self.components}

    def state_dict(self) -> dict[str, torch.Tensor]:
        """What was released (and the public basis it was released in), nothing else."""
        return dict(self.arrays)

    @classmethod
    def from_files(cls, form: dict[str, Any], tensors: dict[str, torch.Tensor]) -> ReleasedImageGaussian:
        """The model from its files, strictly: exactly its arrays, each of its form's shape, finite."""
        shape = tuple(int(s) for s in form["image_shape"])
        n_labels, components = int(form["n_labels"]), int(form["components"])
        if len(shape) != 3 or not 1 <= components <= 32 or n_labels < 0:
            raise ValueError("the statistics' form is not an image model's")
        groups, pixels = max(1, n_labels), math.prod(shape)
        m = int(tensors["factors"].shape[-1]) if "factors" in tensors else 0
        expected: dict[str, tuple[int, ...]] = {
            "label_shares": (groups,), "means": (groups * components, pixels),
            "factors": (groups * components, m, m), "basis": (pixels, m),
        }  # fmt: skip
        if components > 1:
            expected["cell_weights"] = (groups, components)
        for key in ("marginal_cdfs", "source"):
            if key in tensors:
                expected[key] = (groups, int(tensors[key].shape[-1]) if tensors[key].dim() == 2 else -1)
        if "marginal_cdfs" in tensors:
            expected["marginal_scale"] = ()
        if "source" in tensors and "marginal_cdfs" not in tensors:
            raise ValueError("matched marginals need their CDFs")
        if expected.get("marginal_cdfs", (0, 3))[1] < (5 if "source" in tensors else 3):
            raise ValueError("the marginal's CDFs need at least two bins")
        check_arrays(tensors, expected)
        return cls(shape=shape, n_labels=n_labels, components=components, arrays=tensors)  # type: ignore[arg-type]


__all__ = ["ReleasedImageGaussian"]
