"""The noise-layer critic (Triastcyn & Faltings 2018): pre-noise layers, [noise layer], head.

The critic is split where the noise layer sits: `PreNoiseConv` maps a flat image unit
(B, C·H·W + K) to an activation vector (its image through stride-2 convolutions, optionally a
linear projection, then the unit's label one-hot concatenated), and `NoiseHead` scores a (noisy)
activation vector. The noise layer itself (per-row clip to R and Gaussian noise) is not a module
here: it is a privacy mechanism, drawn in dpgan.privacy.feature_release, and the training loop
(dpgan.training.noise_layer) puts it between the two parts.

Why the label goes in before the noise: it is part of the private record, so it must be inside
the clipped vector; fed to the head beside the noisy vector it would reach the critic raw.
Why no BatchNorm: the sound form needs a per-unit map (a unit's activation depends on that unit
only); GroupNorm acts per image and is allowed. `cross_example_modules` lists what breaks it.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

from dpgan.models.conv import halvings

NORMS = ("none", "group")


class PreNoiseConv(nn.Module):
    """Flat units (B, C·H·W + K) → activations (B, out_dim): conv stages, [projection], [one-hot].

    Stage k has `width`·2^k channels, a 4×4 stride-2 convolution and LeakyReLU (GroupNorm after
    the first stage with norm="group"); `stages` defaults to halving while the side stays even
    and above 7. `projection` > 0 adds Linear(flattened, projection) + LeakyReLU: a short vector
    keeps more signal per coordinate under the noise layer's isotropic noise. The label one-hot,
    times `label_scale`, is concatenated last."""

    def __init__(
        self,
        image_shape: tuple[int, int, int],
        n_labels: int = 0,
        *,
        width: int = 16,
        stages: int | None = None,
        projection: int = 0,
        norm: str = "none",
        label_scale: float = 1.0,
    ) -> None:
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        channels, height, side = (int(v) for v in image_shape)
        self.image_shape, self.n_labels, self.label_scale = (channels, height, side), n_labels, label_scale
        self.pixels = channels * height * side
        count = min(halvings(height), halvings(side)) if stages is None else stages
        if count < 1:
            raise ValueError(f"image sides must be even and at least 8, got {height}×{side}")
        layers: list[nn.Module] = []
        for k in range(count):
            out = width * 2**k
            layers.append(nn.Conv2d(channels, out, 4, stride=2, padding=1))
            if k > 0 and norm == "group":
                layers.append(nn.GroupNorm(min(8, out), out))
            layers.append(nn.LeakyReLU(0.2))
            channels, height, side = out, height // 2, side // 2
        layers.append(nn.Flatten(1))
        flat = channels * height * side
        if projection > 0:
            layers += [nn.Linear(flat, projection), nn.LeakyReLU(0.2)]
            flat = projection
        self.body = nn.Sequential(*layers)
        self.out_dim = flat + n_labels

    @property
    def first_conv(self) -> nn.Conv2d:
        """W₁: the layer a raw-input canary writes into when this part is trained (the audit's target)."""
        return next(m for m in self.body if isinstance(m, nn.Conv2d))

    def forward(self, units: torch.Tensor) -> torch.Tensor:
        images = units[:, : self.pixels].reshape(-1, *self.image_shape)
        h = self.body(images)
        if not self.n_labels:
            return h
        return torch.cat([h, self.label_scale * units[:, self.pixels :].to(h.dtype)], dim=1)


class NoiseHead(nn.Module):
    """Noisy activations (B, in_dim) → one score each: an MLP with LeakyReLU (no normalisation)."""

    def __init__(self, in_dim: int, hidden: tuple[int, ...] = (128,)) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = in_dim
        for size in hidden:
            layers += [nn.Linear(width, size), nn.LeakyReLU(0.2)]
            width = size
        layers.append(nn.Linear(width, 1))
        self.body = nn.Sequential(*layers)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.body(h).squeeze(-1)


class NoiseLayerCritic(nn.Module):
    """The two parts of the critic, kept apart so that the loop can put the noise layer between
    them (and freeze `pre` in the sound form). Its forward is the head on given activations."""

    def __init__(self, pre: PreNoiseConv, head: NoiseHead) -> None:
        super().__init__()
        self.pre, self.head = pre, head

    @classmethod
    def build(
        cls,
        image_shape: tuple[int, int, int],
        n_labels: int = 0,
        *,
        width: int = 16,
        projection: int = 64,
        hidden: tuple[int, ...] = (128,),
        norm: str = "none",
    ) -> NoiseLayerCritic:
        pre = PreNoiseConv(image_shape, n_labels, width=width, projection=projection, norm=norm)
        return cls(pre, NoiseHead(pre.out_dim, hidden))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.head(h)


def cross_example_modules(module: nn.Module) -> list[str]:
    """Names of submodules that mix the examples of a batch (BatchNorm and its kin)."""
    return [name for name, m in module.named_modules() if isinstance(m, _BatchNorm)]


def freeze(module: nn.Module) -> None:
    """No gradient may reach `module` again: parameters stop requiring grad, eval mode."""
    for p in module.parameters():
        p.requires_grad_(False)
    module.eval()


__all__ = ["NORMS", "NoiseHead", "NoiseLayerCritic", "PreNoiseConv", "cross_example_modules", "freeze"]
