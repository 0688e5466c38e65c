"""The entity GAN's generator (DoppelGANger's shape) and critic, over the vectors of encoding.py.

Generator: an attribute generator (the tables' MLP generator, dpgan.models.tabular, with a softmax
head per parent column and a tanh head for the count, first time and span), then an LSTM
(dpgan.models.recurrent, vmap-friendly) that reads, at each of k steps, its own noise and the
generated attributes, and emits the step's event columns (a softmax each) and its time gap
(sigmoid). The present flags (DoppelGANger's generation flag: 1…1 then 0…0, the first 0 ends the
entity) come from the attribute generator's count bin: present_t = Σ_b p_b·[min(lower edge_b, k) > t]
with p the count bins' (Gumbel-)softmax, so the number of events and the count are one quantity and
cannot disagree. (Measured first: flags
of their own, present_t = Π_{s ≤ t} sigmoid(logit_s), ended most generated planes before k while
nearly every real plane fills its k: KS of events per plane 0.36 at ε = 3, bench/notes/36-entities.md.)
A step's cells and gap are multiplied by its flag, so a generated entity past its end is zeros, as a
real one is.

Critic: an MLP over the whole vector (the tables' critic), as DoppelGANger's discriminator is over
the attributes and the flattened features; a unit's score depends on that unit only (no layer
mixes units), so its per-example gradient, the gradient penalty's included, is the entity's alone.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from dpgan.entities.gan.encoding import EntityLayout
from dpgan.models.recurrent import LSTM
from dpgan.models.tabular import TabularCritic, TabularGenerator


class EntityGenerator(nn.Module):
    """Noise (B, noise + k·step_noise) → entity vectors (B, width) in the layout's order."""

    def __init__(
        self,
        layout: EntityLayout,
        *,
        noise: int = 64,
        hidden: tuple[int, ...] = (256, 256),
        event_hidden: int = 64,
        step_noise: int = 4,
        tau: float = 0.2,
    ) -> None:
        super().__init__()
        self.layout, self.attribute_noise, self.step_noise, self.tau = layout, noise, step_noise, tau
        self.attributes = TabularGenerator(noise, hidden, layout.attribute_spans(), "gumbel", tau)
        self.lstm = LSTM(step_noise + layout.attribute_width, event_hidden)
        self.out = nn.Linear(event_hidden, layout.step_width - 1)  # cells and gap; the flag comes from the count
        # [min(lower edge_b, k) > t]: which steps each count bin fills (public: from k alone)
        filled = np.minimum(layout.edges[:-1], layout.k)[:, None] > np.arange(layout.k)[None, :]
        self.register_buffer("filled", torch.from_numpy(filled.astype(np.float32)), persistent=False)

    @property
    def noise_dim(self) -> int:
        """The flat noise one entity needs (what the training loop draws per unit)."""
        return self.attribute_noise + self.layout.k * self.step_noise

    def parts(self, z: torch.Tensor, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Attributes (B, attribute width) and event steps (B, k, step width); categories as
        Gumbel-softmax draws at temperature tau (noise from `generator`)."""
        layout, batch = self.layout, z.shape[0]
        attributes = self.attributes(z[:, : self.attribute_noise], generator)
        steps = z[:, self.attribute_noise :].reshape(batch, layout.k, self.step_noise)
        inputs = torch.cat([steps, attributes[:, None, :].expand(-1, layout.k, -1)], dim=2)
        hidden, _ = self.lstm(inputs)
        raw = self.out(hidden)
        present = self.present(attributes)
        cells, at = [], 0
        for size in layout.event_sizes:
            block = raw[..., at : at + size]
            uniform = torch.rand(block.shape, generator=generator, device=block.device).clamp(1e-10, 1.0 - 1e-7)
            cells.append(torch.softmax((block - torch.log(-torch.log(uniform))) / self.tau, dim=-1))
            at += size
        if layout.timed:
            cells.append(torch.sigmoid(raw[..., at : at + 1]))
        events = torch.cat([*(c * present for c in cells), present], dim=-1)
        return attributes, events

    def present(self, attributes: torch.Tensor) -> torch.Tensor:
        """(B, k, 1) present flags from the count bin's probabilities."""
        at = sum(self.layout.parent_sizes)
        return (attributes[:, at : at + self.layout.count_bins] @ self.filled)[..., None]

    def forward(
        self, z: torch.Tensor, generator: torch.Generator | None = None, condition: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Training output: the vectors the critic sees (an unconditional G: `condition` unused)."""
        attributes, events = self.parts(z, generator)
        return torch.cat([attributes, events.reshape(z.shape[0], self.layout.k * self.layout.step_width)], dim=1)

    @torch.no_grad()
    def sample_parts(self, n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """n entities' attributes and steps. Each category is the argmax of its logits plus Gumbel
        noise, which is an exact draw from its softmax (decoding takes the argmax)."""
        z = torch.randn(n, self.noise_dim, generator=generator, device=generator.device)
        return self.parts(z, generator)


def entity_critic(layout: EntityLayout, hidden: tuple[int, ...]) -> TabularCritic:
    """The critic: a LeakyReLU MLP over one entity's whole vector (the per-example fast path applies)."""
    return TabularCritic(layout.width, hidden)


__all__ = ["EntityGenerator", "entity_critic"]
