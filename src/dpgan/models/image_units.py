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
  generator.
(The "gaussian" recipe has no network: dpgan.images.released_gaussian.)
Nothing here normalises across units: a unit's score depends on that unit only.
"""

from __future__ import annotations

import torch
from torch import nn

from dpgan.models.conv import ConvCritic, ConvGenerator
from dpgan.models.tabular import TabularCritic

ARCHITECTURES = ("conv", "mlp")


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


__all__ = ["ARCHITECTURES", "ImageUnitCritic", "ImageUnitGenerator", "mlp_critic"]
