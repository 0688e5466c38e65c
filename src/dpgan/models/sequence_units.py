"""Networks over privacy units of series: k series of T steps with C channels, shaped (B, k, T, C).

A unit is what one record contributes: one series (k = 1) or, with entity-level privacy, the k
series kept for one entity. The critic scores a unit by the mean of its series' scores, so a unit's
per-example gradient is one clipped quantity whatever k is; the generator makes k series per unit
from independent noise. The channels are the value columns (tanh, scaled to [-1, 1] by public
bounds) followed, for labelled series, by the label's one-hot repeated along time: the label is
part of the data the critic judges, and the generator conditions its LSTM on the label it drew,
so that sampling can also impose a label (conditional generation).

Nothing here normalises across units or series: a unit's score depends on that unit only.
"""

from __future__ import annotations

import torch
from torch import nn

from dpgan.models.recurrent import LSTMCritic, LSTMGenerator

CRITICS = ("mlp", "lstm")


class SeriesUnitGenerator(nn.Module):
    """Noise (B, k·T·d) → units (B, k, T, F + K): F values in (-1, 1) and a label one-hot (K ≥ 2)."""

    def __init__(
        self,
        *,
        length: int,
        n_values: int,
        n_labels: int = 0,
        per_unit: int = 1,
        step_noise: int = 4,
        hidden_size: int = 64,
        num_layers: int = 1,
        tau: float = 0.2,
    ) -> None:
        super().__init__()
        self.length, self.n_values, self.n_labels, self.per_unit = length, n_values, n_labels, per_unit
        self.step_noise, self.tau = step_noise, tau
        self.lstm = LSTMGenerator(step_noise, n_values, hidden_size, num_layers=num_layers, condition_dim=n_labels)
        self.label_head = nn.Linear(length * step_noise, n_labels) if n_labels else None

    @property
    def noise_dim(self) -> int:
        """The flat noise one unit needs (what the training loop draws per unit)."""
        return self.per_unit * self.length * self.step_noise

    def label_logits(self, z: torch.Tensor) -> torch.Tensor:
        """Per series (B·k, T·d) noise → label logits (B·k, K)."""
        assert self.label_head is not None
        return self.label_head(z.reshape(z.shape[0], self.length * self.step_noise))

    def series(self, z: torch.Tensor, labels: torch.Tensor | None) -> torch.Tensor:
        """(n, T, d) noise and label one-hots (n, K) → values (n, T, F)."""
        return self.lstm(z, labels)

    def forward(
        self, z: torch.Tensor, generator: torch.Generator | None = None, condition: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Training output: units the critic sees; labels as Gumbel-softmax draws (noise from `generator`)."""
        batch = z.shape[0]
        steps = z.reshape(batch * self.per_unit, self.length, self.step_noise)
        if not self.n_labels:
            return self.series(steps, None).reshape(batch, self.per_unit, self.length, self.n_values)
        logits = self.label_logits(steps)
        uniform = torch.rand(logits.shape, generator=generator).clamp(1e-10, 1.0 - 1e-7)
        labels = torch.softmax((logits - torch.log(-torch.log(uniform))) / self.tau, dim=1)
        values = self.series(steps, labels)
        channels = torch.cat([values, labels[:, None, :].expand(-1, self.length, -1)], dim=2)
        return channels.reshape(batch, self.per_unit, self.length, self.n_values + self.n_labels)

    @torch.no_grad()
    def sample(
        self, n: int, generator: torch.Generator, labels: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """n series: values (n, T, F) and label codes (n,), drawn from the label head or imposed."""
        steps = torch.randn(n, self.length, self.step_noise, generator=generator)
        if not self.n_labels:
            return self.series(steps, None), None
        if labels is None:
            probabilities = torch.softmax(self.label_logits(steps), dim=1)
            labels = torch.multinomial(probabilities, 1, generator=generator)[:, 0]
        one_hot = torch.nn.functional.one_hot(labels, self.n_labels).to(steps.dtype)
        return self.series(steps, one_hot), labels


class SeriesUnitCritic(nn.Module):
    """Units (B, k, T, C) → one score each: the mean of a series critic over the unit's k series.

    The series critic is an MLP on the flattened series (Frigerio et al.'s choice) or an LSTM."""

    def __init__(self, *, length: int, channels: int, kind: str = "mlp", hidden: tuple[int, ...] = (128, 128)) -> None:
        super().__init__()
        if kind not in CRITICS:
            raise ValueError(f"critic must be one of {CRITICS}")
        self.kind = kind
        if kind == "mlp":
            layers: list[nn.Module] = [nn.Flatten()]
            width = length * channels
            for size in hidden:
                layers += [nn.Linear(width, size), nn.LeakyReLU(0.2)]
                width = size
            layers.append(nn.Linear(width, 1))
            self.series_critic: nn.Module = nn.Sequential(*layers)
        else:
            self.series_critic = LSTMCritic(channels, hidden_size=hidden[0] if hidden else 32)

    def forward(self, units: torch.Tensor) -> torch.Tensor:
        batch, per_unit = units.shape[0], units.shape[1]
        flat = units.reshape(batch * per_unit, *units.shape[2:])
        return self.series_critic(flat).reshape(batch, per_unit).mean(dim=1)


__all__ = ["CRITICS", "SeriesUnitCritic", "SeriesUnitGenerator"]
