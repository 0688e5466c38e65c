"""LSTM generator and critic for fixed-length multivariate series (units of shape (T, F)).

The LSTM is written from primitive ops (one input projection for all steps, then a loop over
time) instead of nn.LSTM: torch.func's vmap has no batching rule for the fused CPU kernel
(aten::mkldnn_rnn_layer) and falls back to a per-unit Python loop, so per-series gradients of
nn.LSTM cost B full passes. `LSTMLayer` keeps nn.LSTM's parameter names, shapes and gate order
(i, f, g, o), so weights copy across (`LSTMLayer.from_lstm`) and the outputs agree.

Nothing here normalises across series: a critic that mixed the series of a batch would break
per-unit clipping, and a generator that did would make each fake series depend on its batch.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class LSTMLayer(nn.Module):
    """One batch-first LSTM layer: (B, T, F) → outputs (B, T, H) and the last (h, c)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.weight_ih_l0 = nn.Parameter(torch.empty(4 * hidden_size, input_size))
        self.weight_hh_l0 = nn.Parameter(torch.empty(4 * hidden_size, hidden_size))
        self.bias_ih_l0 = nn.Parameter(torch.empty(4 * hidden_size))
        self.bias_hh_l0 = nn.Parameter(torch.empty(4 * hidden_size))
        bound = 1.0 / math.sqrt(hidden_size)  # nn.LSTM's initialisation
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    @classmethod
    def from_lstm(cls, lstm: nn.LSTM) -> LSTMLayer:
        """A copy of a one-layer, unidirectional, batch-first nn.LSTM with biases."""
        if lstm.num_layers != 1 or lstm.bidirectional or not lstm.batch_first or not lstm.bias or lstm.proj_size:
            raise ValueError("from_lstm copies a one-layer, unidirectional, batch-first nn.LSTM with biases")
        layer = cls(lstm.input_size, lstm.hidden_size).to(lstm.weight_ih_l0.dtype)
        layer.load_state_dict(lstm.state_dict())
        return layer

    def forward(
        self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        batch = x.shape[0]
        if state is None:
            zeros = x.new_zeros(batch, self.hidden_size)
            h, c = zeros, zeros
        else:
            h, c = state
        # the input's share of every gate for all steps at once: one matmul, not T
        gates_x = x @ self.weight_ih_l0.T + (self.bias_ih_l0 + self.bias_hh_l0)
        outputs = []
        # unbind, not gates_x[:, t]: indexing's backward writes a zero (B, T, 4H) tensor per step
        weight_hh = self.weight_hh_l0.T
        size = self.hidden_size
        for gates_t in gates_x.unbind(1):
            # few ops per step: each one is dispatched B-wide through vmap and three autograd levels
            gates = torch.addmm(gates_t, h, weight_hh)
            i, f, _, o = torch.sigmoid(gates).chunk(4, dim=-1)
            c = f * c + i * torch.tanh(gates[:, 2 * size : 3 * size])
            h = o * torch.tanh(c)
            outputs.append(h)
        return torch.stack(outputs, dim=1), (h, c)


class LSTM(nn.Module):
    """Stacked `LSTMLayer`s (batch first)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError("num_layers must be >= 1")
        sizes = [input_size] + [hidden_size] * num_layers
        self.layers = nn.ModuleList(LSTMLayer(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T, F) → the last layer's outputs (B, T, H) and its last hidden state (B, H)."""
        outputs, (h, _) = self.layers[0](x)
        for layer in self.layers[1:]:
            outputs, (h, _) = layer(outputs)
        return outputs, h


def _with_condition(x: torch.Tensor, condition: torch.Tensor | None, condition_dim: int) -> torch.Tensor:
    """Append a static per-series condition (B, K) to every step's input."""
    if condition_dim == 0:
        return x
    if condition is None:
        raise ValueError("this network is conditional: pass a condition (B, condition_dim)")
    return torch.cat([x, condition.to(x.dtype).unsqueeze(1).expand(-1, x.shape[1], -1)], dim=2)


class LSTMCritic(nn.Module):
    """Series (B, T, F) [+ condition (B, K)] → one score per series.

    The score is a linear read-out of `features`: the last step's hidden state followed by a
    LeakyReLU layer (the penultimate activations the information loss compares).
    """

    def __init__(
        self, n_features: int, hidden_size: int = 32, *, num_layers: int = 1, condition_dim: int = 0, head: int = 32
    ) -> None:
        super().__init__()
        self.condition_dim = condition_dim
        self.lstm = LSTM(n_features + condition_dim, hidden_size, num_layers)
        self.hidden = nn.Linear(hidden_size, head)
        self.act = nn.LeakyReLU(0.2)
        self.out = nn.Linear(head, 1)

    def features(self, x: torch.Tensor, condition: torch.Tensor | None = None) -> torch.Tensor:
        _, last = self.lstm(_with_condition(x, condition, self.condition_dim))
        return self.act(self.hidden(last))

    def forward(self, x: torch.Tensor, condition: torch.Tensor | None = None) -> torch.Tensor:
        return self.out(self.features(x, condition)).squeeze(-1)


class LSTMGenerator(nn.Module):
    """Noise (B, T, noise_dim) [+ condition (B, K)] → series (B, T, F) in (-1, 1) (tanh).

    Per-step noise lets the series vary along time without a learned initial state; the output
    range matches a codec that scales each feature to [-1, 1] by public bounds.
    """

    def __init__(
        self, noise_dim: int, n_features: int, hidden_size: int = 32, *, num_layers: int = 1, condition_dim: int = 0
    ) -> None:
        super().__init__()
        self.noise_dim, self.condition_dim = noise_dim, condition_dim
        self.lstm = LSTM(noise_dim + condition_dim, hidden_size, num_layers)
        self.out = nn.Linear(hidden_size, n_features)

    def pre_activation(self, z: torch.Tensor, condition: torch.Tensor | None = None) -> torch.Tensor:
        """The read-out before tanh (B, T, F): where an offset in tanh's input space is added."""
        outputs, _ = self.lstm(_with_condition(z, condition, self.condition_dim))
        return self.out(outputs)

    def forward(self, z: torch.Tensor, condition: torch.Tensor | None = None) -> torch.Tensor:
        return torch.tanh(self.pre_activation(z, condition))


__all__ = ["LSTM", "LSTMCritic", "LSTMGenerator", "LSTMLayer"]
