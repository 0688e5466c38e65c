"""DCGAN-style convolutional critic and generator for images (units of shape (C, H, W)).

No BatchNorm anywhere: in the critic it would couple the images of a batch (per-image clipping
would no longer bound a record's influence), and in the generator it would make each fake image
depend on the batch it was drawn in. The critic uses GroupNorm (per image) or nothing; the
generator GroupNorm. Both halve/double the spatial size with 4×4, stride-2 convolutions while
the size stays even and above 7 (28 → 14 → 7, 32 → 16 → 8 → 4), so the two mirror each other.

Conditioning (optional) is a one-hot class vector (B, K): the critic adds a projection term
⟨embed(y), f(x)⟩ to its score (Miyato and Koyama's projection discriminator), the generator
reads [z, y]. A record's label belongs to its own privacy unit.
"""

from __future__ import annotations

import torch
from torch import nn


def halvings(size: int) -> int:
    """How many stride-2 stages an image side gets: halve while even and larger than 7."""
    count = 0
    while size % 2 == 0 and size > 7:
        size //= 2
        count += 1
    return count


def _stages(image_shape: tuple[int, int, int]) -> tuple[int, int, int]:
    _, height, width = image_shape
    stages = min(halvings(height), halvings(width))
    if stages == 0:
        raise ValueError(f"image sides must be even and at least 8 to downsample, got {height}×{width}")
    return stages, height >> stages, width >> stages


def _norm(kind: str, channels: int) -> nn.Module:
    if kind == "group":
        return nn.GroupNorm(min(8, channels), channels)
    if kind == "none":
        return nn.Identity()
    raise ValueError(f"norm must be 'group' or 'none', got {kind!r}")


# the label projection's regions per side: None = every activation of the last stage
PROJECTION_GRIDS: dict[str, int | None] = {"full": None, "grid": 3, "pooled": 1}


class ConvCritic(nn.Module):
    """Images (B, C, H, W) [+ one-hot (B, K)] → one score per image.

    Stage k has `width`·2^k channels; the first stage is not normalised (DCGAN's habit), the
    others get `norm` ("group": GroupNorm, per image; "none"). `features` are the flattened
    activations of the last stage (the penultimate activations).

    `projection="full"` embeds the label against every activation of the last stage (K·C·h·w
    weights: on 28×28 at width 16 that is 15,680 of the critic's 25,800); `"grid"` against their
    means over a 3×3 grid of regions (K·C·9 weights: where a label's strokes are, coarsely);
    `"pooled"` against their spatial means (K·C weights). Under DP-SGD every weight gets the same
    noise while the clipped signal is shared by all, so the weights a term does not need dilute
    the signal; too few, and the critic cannot tell one label's shapes from another's.
    """

    def __init__(
        self,
        image_shape: tuple[int, int, int],
        width: int = 32,
        *,
        num_classes: int = 0,
        norm: str = "group",
        projection: str = "full",
    ) -> None:
        super().__init__()
        stages, height, width_out = _stages(image_shape)
        layers: list[nn.Module] = []
        channels = image_shape[0]
        for k in range(stages):
            out = width * 2**k
            layers.append(nn.Conv2d(channels, out, 4, stride=2, padding=1))
            if k > 0:
                layers.append(_norm(norm, out))
            layers.append(nn.LeakyReLU(0.2))
            channels = out
        self.body = nn.Sequential(*layers)
        self.feature_dim = channels * height * width_out
        self.out = nn.Linear(self.feature_dim, 1)
        self.num_classes = num_classes
        if projection not in PROJECTION_GRIDS:
            raise ValueError(f"projection must be one of {tuple(PROJECTION_GRIDS)}, got {projection!r}")
        self.grid = PROJECTION_GRIDS[projection]
        embed_dim = self.feature_dim if self.grid is None else channels * self.grid**2
        self.embed = nn.Linear(num_classes, embed_dim, bias=False) if num_classes else None

    def features(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        return self.body(x).flatten(1)

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        maps = self.body(x)
        f = maps.flatten(1)
        score = self.out(f).squeeze(-1)
        if self.embed is not None:
            if labels is None:
                raise ValueError("this critic is conditional: pass a one-hot label (B, num_classes)")
            paired = f if self.grid is None else nn.functional.adaptive_avg_pool2d(maps, self.grid).flatten(1)
            score = score + (self.embed(labels.to(f.dtype)) * paired).sum(-1)
        return score


class ConvGenerator(nn.Module):
    """Noise (B, noise_dim) [+ one-hot (B, K)] → images (B, C, H, W) in (-1, 1) (tanh).

    `upsample=False`: DCGAN's 4×4 stride-2 transposed convolutions. `upsample=True`: each stage
    doubles the size by nearest-neighbour upsampling and a 3×3 convolution, and a last 3×3
    convolution at full size writes the pixels (Odena et al.'s remedy for checkerboard artefacts):
    every output pixel is a smooth function of its neighbours' features, which the noisy critic of
    a DP fit cannot teach by itself. G is post-processing of the critic, so its shape costs no ε.
    """

    def __init__(
        self,
        noise_dim: int,
        image_shape: tuple[int, int, int],
        width: int = 32,
        *,
        num_classes: int = 0,
        upsample: bool = False,
    ) -> None:
        super().__init__()
        stages, height, width_out = _stages(image_shape)
        self.noise_dim, self.num_classes = noise_dim, num_classes
        channels = width * 2 ** (stages - 1)
        self.start = (channels, height, width_out)
        self.project = nn.Sequential(
            nn.Linear(noise_dim + num_classes, channels * height * width_out), nn.LeakyReLU(0.2)
        )
        layers: list[nn.Module] = []
        for k in range(stages - 1, -1, -1):
            if upsample:
                out = width * 2 ** (k - 1) if k > 0 else max(1, width // 2)
                layers += [nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(channels, out, 3, padding=1)]
                layers += [_norm("group", out), nn.LeakyReLU(0.2)]
            else:
                out = image_shape[0] if k == 0 else width * 2 ** (k - 1)
                layers.append(nn.ConvTranspose2d(channels, out, 4, stride=2, padding=1))
                if k > 0:
                    layers += [_norm("group", out), nn.LeakyReLU(0.2)]
            channels = out
        if upsample:
            layers.append(nn.Conv2d(channels, image_shape[0], 3, padding=1))
        self.body = nn.Sequential(*layers)

    def forward(self, z: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        if self.num_classes:
            if labels is None:
                raise ValueError("this generator is conditional: pass a one-hot label (B, num_classes)")
            z = torch.cat([z, labels.to(z.dtype)], dim=1)
        return torch.tanh(self.body(self.project(z).reshape(-1, *self.start)))


__all__ = ["ConvCritic", "ConvGenerator", "halvings"]
