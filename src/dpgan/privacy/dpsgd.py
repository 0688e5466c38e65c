"""DP-SGD pieces as pure functions: per-example gradients, joint clipping, Gaussian noise.

Clipping is over all parameters jointly (one norm per example): clipping each tensor on its
own while accounting once per step would lower the effective noise multiplier.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.func import grad, vmap

Grads = dict[str, torch.Tensor]


def per_example_gradients(record_loss: Callable[..., torch.Tensor], params: Grads, *batched: torch.Tensor) -> Grads:
    """∇θ record_loss(θ, x_i, ...) for every i, via torch.func (handles the GP's double backward)."""
    in_dims = (None,) + (0,) * len(batched)
    return vmap(grad(record_loss), in_dims=in_dims)(params, *batched)


def per_example_norms(grads: Grads) -> torch.Tensor:
    squares = [g.reshape(g.shape[0], -1).pow(2).sum(dim=1) for g in grads.values()]
    return torch.stack(squares, dim=0).sum(dim=0).sqrt()


def clip_per_example(grads: Grads, max_norm: float) -> Grads:
    """Scale each example's whole gradient to L2 norm at most `max_norm`."""
    norms = per_example_norms(grads)
    factors = torch.clamp(max_norm / (norms + 1e-12), max=1.0)
    return {k: g * factors.view(-1, *([1] * (g.dim() - 1))) for k, g in grads.items()}


def add_gaussian_noise(
    summed: Grads, params: Grads, noise_multiplier: float, max_norm: float, generator: torch.Generator
) -> Grads:
    """Σ_i clip(g_i) + N(0, σ²C²I); a name missing from `summed` is an empty batch (sum 0)."""
    out = {}
    std = noise_multiplier * max_norm if noise_multiplier > 0 else 0.0  # σ = 0: non-private baseline
    for name, p in params.items():
        total = summed.get(name, torch.zeros_like(p))
        noise = torch.randn(p.shape, generator=generator, dtype=p.dtype, device=p.device) * std
        out[name] = total + noise
    return out


def private_gradient(
    record_loss: Callable[..., torch.Tensor],
    params: Grads,
    batched: tuple[torch.Tensor, ...],
    *,
    max_norm: float,
    noise_multiplier: float,
    expected_batch_size: float,
    generator: torch.Generator,
) -> Grads:
    """The DP estimate of the mean gradient: (Σ clip(g_i) + noise) / (q·N), never / |batch|."""
    summed: Grads = {}
    if batched[0].shape[0] > 0:
        clipped = clip_per_example(per_example_gradients(record_loss, params, *batched), max_norm)
        summed = {k: g.sum(dim=0) for k, g in clipped.items()}
    summed = add_gaussian_noise(summed, params, noise_multiplier, max_norm, generator)
    return {k: v / expected_batch_size for k, v in summed.items()}
