"""A float64 critic with weights drawn from an explicit generator (no global seeding), shared by
the clipping tests that compare against torch.func references."""

from __future__ import annotations

import math

import torch

from dpgan.models.tabular import TabularCritic


def random_critic(input_dim: int, hidden: tuple[int, ...], seed: int) -> TabularCritic:
    gen = torch.Generator().manual_seed(seed)
    critic = TabularCritic(input_dim, hidden).double()
    with torch.no_grad():
        for p in critic.parameters():
            fan_in = p.shape[1] if p.dim() == 2 else 4
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) / math.sqrt(fan_in))
    return critic
