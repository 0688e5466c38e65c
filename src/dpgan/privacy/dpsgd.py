"""Per-example gradients by torch.func and joint clipping: the generic backend of dpgan.privacy.step.

Clipping is over all parameters jointly (one norm per example): clipping each tensor on its
own while accounting once per step would lower the effective noise multiplier. Noise is drawn
in dpgan.privacy.noise only.
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
