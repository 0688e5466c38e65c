"""The table anchors' generator side: G fitted to the DP one-way and 2-way statistics of its
outputs (released by dpgan.statistics.tables: marginals, pair_marginals) before the private steps
(the warm start), and held near them in each generator step (the penalty's gradient).

Why apart from the releases: a statistics release builds no network; what G does with released
statistics is the GAN's, and it reads only those statistics and public noise, so it is
post-processing and never passes through a clip-and-noise hook.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from dpgan.models.output_spans import OutputSpan
from dpgan.models.tabular import TabularGenerator
from dpgan.statistics.tables.marginals import MarginalAnchor, PositionMoments
from dpgan.statistics.tables.pair_marginals import PairAnchor, PairLayout
from dpgan.training.config import TrainingConfig
from dpgan.training.fake_rows import InputsFn

# the warm start fits only the one-way statistics, so it can take bigger steps than the GAN
WARM_START_LR_FACTOR = 10.0


def marginal_penalty(
    G: TabularGenerator,
    z: torch.Tensor,
    condition: torch.Tensor | None,
    spans: list[OutputSpan],
    targets: list[torch.Tensor],
    positions: list[PositionMoments] = (),  # type: ignore[assignment]
) -> torch.Tensor:
    """Σ_spans KL(target ‖ batch-mean softmax) + Σ_bins weight·((mean gap)² + (sd gap)²): zero
    when G's one-way statistics match the DP ones."""
    logits = G.logits(z, condition)
    total = logits.new_zeros(())
    for span, target in zip(spans, targets):
        mean = torch.softmax(logits[:, span.start : span.stop], dim=1).mean(dim=0).clamp_min(1e-8)
        total = total + (target * (target.log() - mean.log())).sum()
    for m in positions:
        position = torch.tanh(logits[:, m.value.start + m.offset])[:, None]
        in_bin = torch.softmax(logits[:, m.mode.start : m.mode.stop], dim=1)[:, : m.mode.value_modes]
        mass = in_bin.sum(dim=0).clamp_min(1e-6)
        mean = (in_bin * position).sum(dim=0) / mass
        sd = ((in_bin * position**2).sum(dim=0) / mass - mean**2).clamp_min(1e-8).sqrt()
        total = total + (m.weight * ((mean - m.mean) ** 2 + (sd - m.sd) ** 2)).sum()
    return total


def anchor_penalty(
    anchor: MarginalAnchor, G: TabularGenerator, z: torch.Tensor, condition: torch.Tensor | None
) -> torch.Tensor:
    """`marginal_penalty` of the anchor's released statistics."""
    return marginal_penalty(G, z, condition, anchor.spans, anchor.targets, anchor.positions)


def warm_start(anchor: MarginalAnchor, G: TabularGenerator, draw_inputs: InputsFn, steps: int, lr: float) -> float:
    """Fit G's one-way statistics to the anchor's targets before the private steps; returns the final
    penalty. `draw_inputs()` gives (z, condition one-hot or None) from public noise only."""
    opt = torch.optim.Adam(G.parameters(), lr=lr)
    value = float("nan")
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = anchor_penalty(anchor, G, *draw_inputs())
        loss.backward()
        opt.step()
        value = float(loss.detach())
    return value


@dataclass(frozen=True)
class AnchorHook:
    """The anchor as a plug-in of the generator side (dpgan.training.gan_loop.GeneratorHook) of
    either strategy: a warm start on the DP statistics before the private steps, and in each
    generator step, after its DP gradient is in place, the penalty's gradient. Both read only the
    released statistics and public noise, so neither goes through a clip-and-noise hook."""

    anchor: MarginalAnchor
    warmup_steps: int
    warmup_lr: float
    weight: float

    @classmethod
    def from_config(
        cls, anchor: MarginalAnchor, config: TrainingConfig, warmup_steps: int, weight: float
    ) -> "AnchorHook":
        """The hook of the plug-in's `warmup_steps` and `weight`, at the loop's G learning rate."""
        return cls(anchor, warmup_steps, config.generator_lr * WARM_START_LR_FACTOR, weight)

    def warm_start(self, G: TabularGenerator, draw_inputs: InputsFn) -> None:
        if self.warmup_steps > 0:
            warm_start(self.anchor, G, draw_inputs, self.warmup_steps, self.warmup_lr)

    def add_gradient(self, G: TabularGenerator, draw_inputs: InputsFn) -> None:
        if self.weight > 0:
            (self.weight * anchor_penalty(self.anchor, G, *draw_inputs())).backward()

    def released(self) -> list[torch.Tensor]:
        moments = [t for p in self.anchor.positions for t in (p.mean, p.sd, p.weight)]
        return [*self.anchor.targets, *moments]


def pair_penalty(
    G: TabularGenerator,
    z: torch.Tensor,
    condition: torch.Tensor | None,
    layout: "PairLayout",
    target: torch.Tensor,
) -> torch.Tensor:
    """Σ_pairs ‖E_batch[p_a ⊗ p_b] − target_ab‖²: zero when G's 2-way tables match the DP ones.

    All pairs in one product: with P the batch's softmax outputs of every measured span side by
    side (n × W), PᵀP/n holds every pair's table as a block; `target` holds the DP tables in the
    same blocks and `layout.mask` picks them (one triangle, no block of a column with itself)."""
    logits = G.logits(z, condition)
    probabilities = torch.cat([torch.softmax(logits[:, s.start : s.stop], dim=1) for s in layout.spans], dim=1)
    joint = probabilities.T @ probabilities / logits.shape[0]
    return (((joint - target) ** 2) * layout.mask).sum()


def pair_anchor_penalty(
    anchor: PairAnchor, G: TabularGenerator, z: torch.Tensor, condition: torch.Tensor | None
) -> torch.Tensor:
    """`pair_penalty` of the anchor's released tables."""
    return pair_penalty(G, z, condition, anchor.layout, anchor.target)


@dataclass(frozen=True)
class PairAnchorHook:
    """The 2-way anchor as a plug-in of the generator side (dpgan.training.gan_loop.GeneratorHook):
    a warm start on the DP tables before the private steps, then in each generator step, after its
    DP gradient is in place, the penalty's gradient. Reads only released tables and public noise."""

    anchor: PairAnchor
    warmup_steps: int
    warmup_lr: float
    weight: float

    @classmethod
    def from_config(
        cls,
        anchor: PairAnchor,
        config: TrainingConfig,
        warmup_steps: int,
        weight: float,
        max_warmup_steps: int | None = None,
    ) -> "PairAnchorHook":
        """The hook of the plug-in's `warmup_steps` (at most `max_warmup_steps`) and `weight`, at
        the loop's G learning rate."""
        warmup = warmup_steps if max_warmup_steps is None else min(warmup_steps, max_warmup_steps)
        return cls(anchor, warmup, config.generator_lr * WARM_START_LR_FACTOR, weight)

    def warm_start(self, G: TabularGenerator, draw_inputs: InputsFn) -> None:
        if self.warmup_steps <= 0 or not self.anchor.pairs:
            return
        opt = torch.optim.Adam(G.parameters(), lr=self.warmup_lr)
        for _ in range(self.warmup_steps):
            opt.zero_grad(set_to_none=True)
            pair_anchor_penalty(self.anchor, G, *draw_inputs()).backward()
            opt.step()

    def add_gradient(self, G: TabularGenerator, draw_inputs: InputsFn) -> None:
        if self.weight > 0 and self.anchor.pairs:
            (self.weight * pair_anchor_penalty(self.anchor, G, *draw_inputs())).backward()

    def released(self) -> list[torch.Tensor]:
        return list(self.anchor.targets)


__all__ = [
    "WARM_START_LR_FACTOR",
    "AnchorHook",
    "PairAnchorHook",
    "anchor_penalty",
    "marginal_penalty",
    "pair_anchor_penalty",
    "pair_penalty",
    "warm_start",
]
