"""MLP generator and critic for encoded table rows.

Neither network normalises across examples: in the critic that would break per-example
clipping, and in the generator it would make fake rows depend on the batch they came in.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from dpgan.transforms.encoder import SOFTMAX, TANH, OutputSpan


class ResidualBlock(nn.Module):
    """CTGAN-style block (the input is concatenated to the output), with LayerNorm.

    LayerNorm, not BatchNorm: it normalises each row on its own, so generated rows never depend
    on the batch they were drawn in (no train/eval drift at sampling time, no coupling of the
    fakes paired with private records).
    """

    def __init__(self, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_dim, out_dim)
        self.norm = nn.LayerNorm(out_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([F.relu(self.norm(self.fc(x))), x], dim=1)


class TabularGenerator(nn.Module):
    """Noise → encoded row; one head per output span (tanh, or a softmax over categories)."""

    def __init__(
        self,
        noise_dim: int,
        hidden: Sequence[int],
        spans: Sequence[OutputSpan],
        categorical_activation: str = "gumbel",
        tau: float = 0.2,
    ) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        dim = noise_dim
        for width in hidden:
            layers.append(ResidualBlock(dim, width))
            dim += width
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(dim, spans[-1].stop)
        self.noise_dim = noise_dim
        self.spans = list(spans)
        self.categorical_activation = categorical_activation
        self.tau = tau

    def logits(self, z: torch.Tensor) -> torch.Tensor:
        return self.out(self.body(z))

    def forward(self, z: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Training output: what the critic sees for fake rows (Gumbel noise from `generator`)."""
        raw = self.logits(z)
        parts = []
        for span in self.spans:
            block = raw[:, span.start : span.stop]
            if span.activation == TANH:
                parts.append(torch.tanh(block))
            elif self.categorical_activation == "gumbel":
                uniform = torch.rand(block.shape, generator=generator).clamp(1e-10, 1.0 - 1e-7)
                parts.append(torch.softmax((block - torch.log(-torch.log(uniform))) / self.tau, dim=1))
            else:
                parts.append(torch.softmax(block, dim=1))
        return torch.cat(parts, dim=1)

    @torch.no_grad()
    def sample_encoded(self, z: torch.Tensor) -> torch.Tensor:
        """Release output: tanh values and category probabilities (the decoder draws categories)."""
        raw = self.logits(z)
        parts = []
        for span in self.spans:
            block = raw[:, span.start : span.stop]
            parts.append(torch.tanh(block) if span.activation == TANH else torch.softmax(block, dim=1))
        return torch.cat(parts, dim=1)


class TabularCritic(nn.Module):
    """WGAN critic: LeakyReLU MLP, no normalisation across examples."""

    def __init__(self, input_dim: int, hidden: Sequence[int]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        dim = input_dim
        for width in hidden:
            layers += [nn.Linear(dim, width), nn.LeakyReLU(0.2)]
            dim = width
        layers.append(nn.Linear(dim, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


__all__ = ["SOFTMAX", "TabularCritic", "TabularGenerator"]
