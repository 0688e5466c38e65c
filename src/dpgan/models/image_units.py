"""Networks over privacy units of images: one image (C, H, W) and, when labelled, its label.

A unit is stored flat, (B, C·H·W + K): the pixels scaled to [-1, 1] and, for a labelled set, the
label's one-hot. The label is part of the record the critic judges (and clips with it), so the
critic reads both; the gradient penalty interpolates the whole unit, the one-hot included, which a
projection term takes linearly. The generator draws each fake image's label from released label
shares (public or a DP count in the ledger: never the training labels themselves) and makes the
image for that label, so that sampling can impose a label.

Two families:
- "conv" (a DCGAN-style conditional conv GAN, dpgan.models.conv): a conv critic with a projection
  term for the label and GroupNorm or no normalisation (never BatchNorm: it couples the images of a
  batch), a transposed-conv generator;
- "mlp" (DP-CGAN's fully connected networks): an MLP critic on the flat unit, which is exactly the
  tabular critic (so the engine's MLP fast path and the microbatch kernel apply), and an MLP
  generator;
- "gaussian" (no critic of its own): G draws each label's DP Gaussian (dpgan.statistics.gaussian) in a
  public low-frequency basis, its buffers set from the release; the noise is the m coefficients.
Nothing here normalises across units: a unit's score depends on that unit only.
"""

from __future__ import annotations

import torch
from torch import nn

from dpgan.models.conv import ConvCritic, ConvGenerator
from dpgan.models.marginal_map import cdf_at, inverse_cdf, quantile_values, register_marginal, set_marginal
from dpgan.models.tabular import TabularCritic

ARCHITECTURES = ("conv", "mlp", "gaussian")


class ImageUnitCritic(nn.Module):
    """Flat units (B, C·H·W + K) → one score each, by a conv critic with a label projection."""

    def __init__(
        self,
        image_shape: tuple[int, int, int],
        n_labels: int = 0,
        width: int = 32,
        norm: str = "group",
        projection: str = "full",
    ) -> None:
        super().__init__()
        self.image_shape, self.n_labels = tuple(image_shape), n_labels
        self.pixels = int(image_shape[0] * image_shape[1] * image_shape[2])
        self.conv = ConvCritic(self.image_shape, width, num_classes=n_labels, norm=norm, projection=projection)

    def _split(self, units: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        images = units[:, : self.pixels].reshape(-1, *self.image_shape)
        return images, (units[:, self.pixels :] if self.n_labels else None)

    def features(self, units: torch.Tensor) -> torch.Tensor:
        images, _ = self._split(units)
        return self.conv.features(images)

    def forward(self, units: torch.Tensor) -> torch.Tensor:
        images, labels = self._split(units)
        return self.conv(images, labels)


def mlp_critic(image_shape: tuple[int, int, int], n_labels: int, hidden: tuple[int, ...]) -> TabularCritic:
    """DP-CGAN's fully connected discriminator on [pixels, one-hot] (the tabular MLP critic)."""
    return TabularCritic(int(image_shape[0] * image_shape[1] * image_shape[2]) + n_labels, hidden)


class _MLPImages(nn.Module):
    """[z, one-hot] → pixels in (-1, 1): DP-CGAN's fully connected generator."""

    def __init__(self, noise_dim: int, pixels: int, n_labels: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = noise_dim + n_labels
        for size in hidden:
            layers += [nn.Linear(width, size), nn.LeakyReLU(0.2)]
            width = size
        layers += [nn.Linear(width, pixels), nn.Tanh()]
        self.body = nn.Sequential(*layers)
        self.n_labels = n_labels

    def forward(self, z: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        return self.body(z if labels is None else torch.cat([z, labels.to(z.dtype)], dim=1))


class GaussianImages(nn.Module):
    """Images as mean + basis · factor · z per label: z (n, m) standard normal, the buffers a DP
    release set (`set_release`: post-processing of it, saved with the model like weights).

    With K `components` per label (a DP mixture, dpgan.statistics.mixture) each label owns K cells,
    each with its own mean and factor, and `cell_weights` (labels, K); the noise then has one more
    coordinate, whose normal CDF picks the cell by the label's weights, so an image stays a function
    of its noise and label (a seeded draw is reproducible)."""

    def __init__(
        self, pixels: int, coefficients: int, n_labels: int, components: int = 1, marginal_bins: int = 0,
        source_bins: int = 0,
    ) -> None:  # fmt: skip
        super().__init__()
        groups = max(1, n_labels)
        self.components, self.coefficients, self.marginal_bins = components, coefficients, marginal_bins
        self.source_bins = source_bins if marginal_bins else 0
        self.register_buffer("means", torch.zeros(groups * components, pixels))
        self.register_buffer("factors", torch.zeros(groups * components, coefficients, coefficients))
        self.register_buffer("basis", torch.zeros(pixels, coefficients))
        if components > 1:  # a one-Gaussian model keeps the buffers it was saved with before mixtures
            self.register_buffer("cell_weights", torch.full((groups, components), 1.0 / components))
        if marginal_bins:  # a copula: the Gaussian draws normal scores, mapped through each label's CDF
            register_marginal(self, marginal_bins, (groups,), end_atoms=bool(self.source_bins))
        if self.source_bins:  # matched marginals: the Gaussian draws pixels; its own CDF per label maps them
            self.register_buffer("marginal_source_edges", torch.linspace(-1.0, 1.0, source_bins + 1))
            self.register_buffer("marginal_source", torch.linspace(0.0, 1.0, source_bins + 1).repeat(groups, 1))

    @property
    def noise_size(self) -> int:
        """The noise a draw takes: the m coefficients, and one coordinate for the cell with K > 1."""
        return self.coefficients + (1 if self.components > 1 else 0)

    @torch.no_grad()
    def set_release(
        self, means: torch.Tensor, factors: torch.Tensor, basis: torch.Tensor, weights: torch.Tensor | None = None
    ) -> None:
        pairs = [(self.means, means), (self.factors, factors), (self.basis, basis)]
        if self.components > 1:
            if weights is None:
                raise ValueError("a mixture's release needs its cells' weights")
            pairs.append((self.cell_weights, weights / weights.sum(dim=1, keepdim=True).clamp_min(1e-12)))
        for buffer, value in pairs:
            if buffer.shape != value.shape:
                raise ValueError(f"a released Gaussian of shape {tuple(value.shape)} where {tuple(buffer.shape)} fits")
            buffer.copy_(value)

    def set_marginal(self, cdfs: torch.Tensor, scale: float) -> None:
        """A copula's released CDFs (labels, bins + 1), pooled over the pixels, and q, the score
        that [-1, 1] scales to (dpgan.statistics.copula)."""
        set_marginal(self, cdfs, scale)

    @torch.no_grad()
    def set_source(self, cdfs: torch.Tensor) -> None:
        """Matched marginals' table of the Gaussian's own pooled marginal per label (labels,
        source bins + 1) on [-1, 1] (dpgan.statistics.matched, step 3)."""
        if not self.source_bins:
            raise ValueError("this generator was built without matched marginals")
        self.marginal_source.copy_(cdfs.reshape(self.marginal_source.shape))  # type: ignore[operator, union-attr]

    def cells(self, z: torch.Tensor, codes: torch.Tensor) -> torch.Tensor:
        """Each draw's cell: its label's K cells, picked by the last noise coordinate's normal CDF."""
        if self.components == 1:
            return codes
        uniform = torch.special.ndtr(z[:, -1:])
        cumulative = self.cell_weights[codes].cumsum(dim=1)
        picked = (uniform > cumulative[:, :-1]).sum(dim=1)
        return codes * self.components + picked

    def forward(self, z: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        codes = labels.argmax(dim=1) if labels is not None else torch.zeros(len(z), dtype=torch.long, device=z.device)
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
            quantiles = cdf_at(drawn, self.marginal_source[codes], self.marginal_source_edges)
            return quantile_values(quantiles[:, None, :], cdfs, self.marginal_edges)[:, 0, :]
        return inverse_cdf(drawn[:, None, :], cdfs, self.marginal_edges, self.marginal_scale)[:, 0, :]


class ImageUnitGenerator(nn.Module):
    """Noise (B, noise_dim) → flat units (B, C·H·W + K), labels drawn from the `label_shares` buffer.

    The shares are set from a release (`set_label_shares`) and saved with the weights; the training
    loop's `generator` drives the label draws, so a seeded fit is reproducible."""

    def __init__(
        self,
        image_shape: tuple[int, int, int],
        n_labels: int = 0,
        *,
        architecture: str = "conv",
        noise_dim: int = 64,
        width: int = 32,
        hidden: tuple[int, ...] = (256, 512),
        upsample: bool = False,
        components: int = 1,
        marginal_bins: int = 0,
        marginal_source_bins: int = 0,
    ) -> None:
        super().__init__()
        if architecture not in ARCHITECTURES:
            raise ValueError(f"architecture must be one of {ARCHITECTURES}")
        self.image_shape, self.n_labels, self.noise_dim = tuple(image_shape), n_labels, noise_dim
        self.pixels = int(image_shape[0] * image_shape[1] * image_shape[2])
        self.architecture = architecture
        if architecture == "conv":
            self.body: nn.Module = ConvGenerator(
                noise_dim, self.image_shape, width, num_classes=n_labels, upsample=upsample
            )
        elif architecture == "gaussian":  # noise_dim is the basis' size m (and one more with K > 1)
            coefficients = noise_dim - (1 if components > 1 else 0)
            self.body = GaussianImages(
                self.pixels, coefficients, n_labels, components, marginal_bins, marginal_source_bins
            )
        else:
            self.body = _MLPImages(noise_dim, self.pixels, n_labels, hidden)
        self.register_buffer("label_shares", torch.full((max(1, n_labels),), 1.0 / max(1, n_labels)))

    @torch.no_grad()
    def set_label_shares(self, shares: torch.Tensor) -> None:
        """Released label shares (K,), non-negative, not all zero."""
        self.label_shares.copy_(shares / shares.sum())

    def images(self, z: torch.Tensor, codes: torch.Tensor | None) -> torch.Tensor:
        """(n, noise_dim) noise and label codes (n,) → images (n, C, H, W) in (-1, 1)."""
        one_hot = None if codes is None else nn.functional.one_hot(codes, self.n_labels).to(z.dtype)
        return self.body(z, one_hot).reshape(-1, *self.image_shape)

    def draw_codes(self, n: int, generator: torch.Generator | None) -> torch.Tensor | None:
        if not self.n_labels:
            return None
        if n == 0:  # an empty Poisson batch has no GP partners to draw (torch.multinomial refuses n = 0)
            return torch.zeros(0, dtype=torch.long, device=self.label_shares.device)
        return torch.multinomial(self.label_shares, n, replacement=True, generator=generator)

    def forward(
        self, z: torch.Tensor, generator: torch.Generator | None = None, condition: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Training output: flat units [pixels, one-hot] with labels drawn from the shares."""
        codes = self.draw_codes(z.shape[0], generator)
        flat = self.images(z, codes).reshape(z.shape[0], self.pixels)
        if codes is None:
            return flat
        return torch.cat([flat, nn.functional.one_hot(codes, self.n_labels).to(flat.dtype)], dim=1)

    @torch.no_grad()
    def sample(
        self, n: int, generator: torch.Generator, labels: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """n images (n, C, H, W) in (-1, 1) and their label codes (drawn from the shares, or imposed)."""
        z = torch.randn(n, self.noise_dim, generator=generator, device=generator.device)
        codes = labels if labels is not None else self.draw_codes(n, generator)
        return self.images(z, codes), codes


__all__ = ["ARCHITECTURES", "GaussianImages", "ImageUnitCritic", "ImageUnitGenerator", "mlp_critic"]
