"""MLP generator and critic for encoded table rows.

Neither network normalises across examples: in the critic that would break per-example
clipping, and in the generator it would make fake rows depend on the batch they came in.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from dpgan.models.output_spans import SOFTMAX, TANH, OutputSpan, position_bin_pairs


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
    """Noise → encoded row; one head per output span (tanh, or a softmax over categories).

    With `condition_slice` (start, stop) of a categorical column's one-hot, the generator also
    reads a condition one-hot c and its output carries c in that slot exactly: the condition is
    imposed, not merely encouraged, so `sample(conditions=...)` returns the requested value.
    """

    def __init__(
        self,
        noise_dim: int,
        hidden: Sequence[int],
        spans: Sequence[OutputSpan],
        categorical_activation: str = "gumbel",
        tau: float = 0.2,
        condition_slice: tuple[int, int] | None = None,
    ) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        self.condition_slice = condition_slice
        dim = noise_dim + (condition_slice[1] - condition_slice[0] if condition_slice else 0)
        for width in hidden:
            layers.append(ResidualBlock(dim, width))
            dim += width
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(dim, spans[-1].stop)
        self.noise_dim = noise_dim
        self.spans = list(spans)
        self.categorical_activation = categorical_activation
        self.tau = tau

    def logits(self, z: torch.Tensor, condition: torch.Tensor | None = None) -> torch.Tensor:
        if self.condition_slice is not None:
            if condition is None:
                raise ValueError("this generator is conditional: pass a condition one-hot")
            z = torch.cat([z, condition], dim=1)
        return self.out(self.body(z))

    def _impose(self, rows: torch.Tensor, condition: torch.Tensor | None) -> torch.Tensor:
        if self.condition_slice is None:
            return rows
        start, stop = self.condition_slice
        return torch.cat([rows[:, :start], condition.to(rows.dtype), rows[:, stop:]], dim=1)  # type: ignore[union-attr]

    def forward(
        self,
        z: torch.Tensor,
        generator: torch.Generator | None = None,
        condition: torch.Tensor | None = None,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Training output: what the critic sees for fake rows (Gumbel noise from `generator`).

        With `rows`, only those rows of the batch are computed, but the Gumbel noise is still drawn
        for the whole batch (and indexed): `generator` advances exactly as without `rows` and each
        computed row equals its row of the whole batch's output (up to float rounding) (a data-parallel rank's share of
        a fake batch, dpgan.privacy.distributed)."""
        whole = z.shape[0]
        if rows is not None:
            z = z[rows]
            condition = None if condition is None else condition[rows]
        raw = self.logits(z, condition)
        parts = []
        for span in self.spans:
            block = raw[:, span.start : span.stop]
            if span.activation == TANH:
                parts.append(torch.tanh(block))
            elif self.categorical_activation == "gumbel":
                uniform = torch.rand((whole, block.shape[1]), generator=generator, device=block.device).clamp(
                    1e-10, 1.0 - 1e-7
                )
                if rows is not None:
                    uniform = uniform[rows]
                parts.append(torch.softmax((block - torch.log(-torch.log(uniform))) / self.tau, dim=1))
            else:
                parts.append(torch.softmax(block, dim=1))
        return self._impose(torch.cat(self._gate_values_by_mode(parts), dim=1), condition)

    def _gate_values_by_mode(self, parts: list[torch.Tensor]) -> list[torch.Tensor]:
        """A numeric value times the probability that the row is in a bin: real rows at a point
        mass or null carry 0 as value, so the critic judges a generated value only where the row has one."""
        for value, mode in position_bin_pairs(self.spans):
            parts[value] = parts[value] * parts[mode][:, : self.spans[mode].value_modes].sum(dim=1, keepdim=True)
        return parts

    @torch.no_grad()
    def sample_encoded(self, z: torch.Tensor, condition: torch.Tensor | None = None) -> torch.Tensor:
        """Release output: tanh values and category probabilities (the decoder draws categories)."""
        raw = self.logits(z, condition)
        parts = []
        for span in self.spans:
            block = raw[:, span.start : span.stop]
            parts.append(torch.tanh(block) if span.activation == TANH else torch.softmax(block, dim=1))
        return self._impose(torch.cat(parts, dim=1), condition)


def leaky_mlp(input_dim: int, hidden: Sequence[int], output_dim: int) -> nn.Sequential:
    """Linear/LeakyReLU(0.2) layers ending in Linear: the shape fast per-example clipping needs,
    with nothing that mixes rows."""
    layers: list[nn.Module] = []
    dim = input_dim
    for width in hidden:
        layers += [nn.Linear(dim, width), nn.LeakyReLU(0.2)]
        dim = width
    layers.append(nn.Linear(dim, output_dim))
    return nn.Sequential(*layers)


class TabularCritic(nn.Module):
    """WGAN critic: LeakyReLU MLP, no normalisation across examples."""

    def __init__(self, input_dim: int, hidden: Sequence[int]) -> None:
        super().__init__()
        self.net = leaky_mlp(input_dim, hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate activations (what the information loss compares)."""
        return self.net[:-1](x)


__all__ = ["SOFTMAX", "TabularCritic", "TabularGenerator"]
