"""The one place DP noise is drawn.

Every private release adds Gaussian noise here, from an explicit generator (invariant 8: OS
entropy unless a seed is asked for): the gradient of a private step and everything clipped with
it (the information loss's feature sums) in one draw, the generator hook's upstream gradient, and
the counts and histograms of dpgan.privacy.mechanisms, and the exponential mechanism's Gumbel
noise. One function per kind of container keeps the draw order fixed, so seeded runs reproduce.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

Tensors = dict[str, torch.Tensor]


def gaussian_like(tensors: Tensors, std: float, generator: torch.Generator) -> Tensors:
    """N(0, std²) for every entry of every tensor, drawn in the dict's order.

    Each draw is `torch.randn(shape)` scaled, also when std = 0 (the non-private control), so a
    run that draws the same shapes in the same order from the same generator gets the same noise
    and the same generator state afterwards."""
    return {name: _gaussian(tensor, std, generator) for name, tensor in tensors.items()}


def add_gaussian(tensors: Tensors, std: float | Mapping[str, float], generator: torch.Generator) -> Tensors:
    """`tensors` + N(0, std²) entrywise (one draw per tensor, in order).

    `std` may be one value or one per tensor (grouped clipping's σ·c_j·√k per group, adaptive
    clipping's count beside the gradient): the same draws, each scaled by its own std."""
    if isinstance(std, Mapping):
        return {name: tensor + _gaussian(tensor, std[name], generator) for name, tensor in tensors.items()}
    noise = gaussian_like(tensors, std, generator)
    return {name: tensor + noise[name] for name, tensor in tensors.items()}


def add_gaussian_tensor(tensor: torch.Tensor, std: float, generator: torch.Generator) -> torch.Tensor:
    """One tensor + N(0, std²) entrywise (dtgan-g's hook on G's output gradient)."""
    return tensor + _gaussian(tensor, std, generator)


def gaussian_array(shape: tuple[int, ...] | int, std: float, rng: np.random.Generator) -> np.ndarray:
    """N(0, std²) as a NumPy array from a NumPy generator (the counts of the mechanisms module)."""
    return rng.normal(0.0, std, size=shape)


def gumbel_array(shape: tuple[int, ...] | int, rng: np.random.Generator) -> np.ndarray:
    """Standard Gumbel(0, 1) draws: argmax(c·u + Gumbel) is the exponential mechanism's sample
    (dpgan.privacy.mechanisms.exponential_mechanism)."""
    return rng.gumbel(0.0, 1.0, size=shape)


def _gaussian(like: torch.Tensor, std: float, generator: torch.Generator) -> torch.Tensor:
    return torch.randn(like.shape, generator=generator, dtype=like.dtype, device=like.device) * std
