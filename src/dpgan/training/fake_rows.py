"""G's public inputs and fake rows, and the optimizers both sides use.

Nothing here reads private data: noise and conditions come from `generator` and the public or DP
condition prior. A caller that passes codes read from a record makes the fake row part of that
record's clipped unit (the gradient penalty's partner), never of anything released outside it.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from dpgan.models.output_spans import OutputSpan
from dpgan.models.tabular import TabularGenerator
from dpgan.training.conditions import ConditionPrior
from dpgan.training.config import TrainingConfig

# draws (z, condition one-hot or None) for one batch of G's inputs from public noise only
InputsFn = Callable[[], tuple[torch.Tensor, torch.Tensor | None]]


def make_optimizer(config: TrainingConfig, params, lr: float) -> torch.optim.Optimizer:
    if config.optimizer == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr)
    return torch.optim.Adam(params, lr=lr, betas=config.betas)


class FakeRows:
    """Draws noise and conditions and runs G: fake rows never depend on private data unless the
    caller passes codes read from a record (then they belong to that record's clipped unit)."""

    def __init__(self, G: TabularGenerator, config: TrainingConfig, condition: ConditionPrior | None, generator):
        self.G, self.config, self.condition, self.generator = G, config, condition, generator

    def codes(self, n: int) -> torch.Tensor | None:
        if self.condition is None:
            return None
        return self.condition.draw(n, self.generator, self.config.training_by_sampling)

    def public_inputs(self, n: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """G's inputs with conditions drawn from the prior: no record's value enters."""
        return self.inputs(n, self.codes(n))

    def inputs(self, n: int, codes: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """G's inputs: noise z and, for a conditional G, the one-hot of `codes`."""
        z = torch.randn(n, self.config.noise_dim, generator=self.generator, device=self.generator.device)
        return z, None if self.condition is None or codes is None else self.condition.one_hot(codes)

    def __call__(self, n: int, codes: torch.Tensor | None = None, rows: torch.Tensor | None = None) -> torch.Tensor:
        """n fake rows, or with `rows` only those positions of them: the inputs (and a tabular G's
        Gumbel noise) are still drawn for all n, so `generator` advances the same either way and
        each row is the one the whole batch would hold (up to float rounding) (a data-parallel rank's share). A G that
        cannot compute a subset is run whole and indexed."""
        z, onehot = self.inputs(n, codes)
        if rows is None:
            return self.G(z, self.generator, onehot)
        if isinstance(self.G, TabularGenerator):
            return self.G(z, self.generator, onehot, rows=rows)
        return self.G(z, self.generator, onehot)[rows]


def build_generator(
    config: TrainingConfig, spans: list[OutputSpan], condition_slice: tuple[int, int] | None = None
) -> TabularGenerator:
    return TabularGenerator(
        config.noise_dim,
        config.generator_hidden,
        spans,
        config.categorical_activation,
        config.gumbel_tau,
        condition_slice=condition_slice,
    )
