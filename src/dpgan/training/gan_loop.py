"""The part of GAN training that both DP strategies share: the generator side.

DP-on-critic (dp_critic.py) and DP-on-generator (dp_generator.py) differ only in where the noise
enters: the critic's private step, or a clip-and-noise hook on G's output. Everything else about G
is the same and lives here once: build G, the public source of its inputs and fake rows, the
plug-in warm starts, the optimizer step with the plug-ins' extra gradients, the exponential moving
average that is released, and the per-step progress callbacks.

Plug-ins (`GeneratorHook`) shape G from DP outputs only: a marginal anchor fits G to noisy
one-way statistics (dpgan.statistics.tables.marginals), a public warm start could fit it to public rows.
They never read private data and never pass through a clip-and-noise hook, so what they add is
post-processing of releases already in the ledger; a strategy never branches on which are present.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from typing import Protocol

import torch

from dpgan.models.output_spans import OutputSpan
from dpgan.models.tabular import TabularGenerator
from dpgan.threads import recheck as recheck_threads
from dpgan.training.checkpoint import Snapshot
from dpgan.training.conditions import ConditionPrior
from dpgan.training.config import TrainingConfig
from dpgan.training.fake_rows import FakeRows, InputsFn, build_generator, make_optimizer

ProgressFn = Callable[[int], None]
MonitorFn = Callable[[int, TabularGenerator], None]


class GeneratorHook(Protocol):
    """A plug-in of the generator side. Both methods may read only public inputs and DP outputs."""

    def warm_start(self, G: TabularGenerator, draw_inputs: InputsFn) -> None:
        """Before the first private step: fit G to what the plug-in knows (may do nothing)."""

    def add_gradient(self, G: TabularGenerator, draw_inputs: InputsFn) -> None:
        """In each generator step, after the step's (DP) gradient is in G's .grad: add to it."""

    def released(self) -> list[torch.Tensor]:
        """The DP values the plug-in holds (a resumed fit checks that its replay reproduced them)."""


class GeneratorSide:
    """G, the EMA copy that is released, G's optimizer, the fake-row source and the plug-ins.

    `G` is any generator network called as G(z, generator, condition one-hot or None) (the data
    kind builds it: `generator_for` for tables). Built in a fixed order (G's weights from torch's
    global RNG, then the warm starts' draws from `generator`, then the EMA copy) before the
    strategy builds its critics, so that a seeded fit draws the same numbers whichever strategy
    and plug-ins run."""

    def __init__(
        self,
        config: TrainingConfig,
        G: torch.nn.Module,
        condition: ConditionPrior | None,
        generator: torch.Generator,
        batch: int,
        hooks: Sequence[GeneratorHook] = (),
    ) -> None:
        self.config = config
        self.G = G
        self.fakes = FakeRows(self.G, config, condition, generator)
        self.batch = batch
        self.draw_inputs: InputsFn = functools.partial(self.fakes.public_inputs, batch)
        self.hooks = tuple(hooks)
        for hook in self.hooks:
            hook.warm_start(self.G, self.draw_inputs)
        self.G_ema = copy.deepcopy(self.G) if config.ema_decay > 0 else self.G
        self.optimizer = make_optimizer(config, self.G.parameters(), config.generator_lr)

    def step(self, backward: Callable[[], None]) -> None:
        """One generator update: `backward()` puts the strategy's gradient in G's .grad (through
        its DP hook, or from a critic that is itself DP); the plug-ins add theirs after it; then
        the optimizer steps and the released average follows."""
        self.optimizer.zero_grad(set_to_none=True)
        backward()
        for hook in self.hooks:
            hook.add_gradient(self.G, self.draw_inputs)
        self.optimizer.step()
        if self.G_ema is not self.G:
            with torch.no_grad():
                for p_ema, p in zip(self.G_ema.parameters(), self.G.parameters()):
                    p_ema.lerp_(p, 1.0 - self.config.ema_decay)

    def restart_average(self) -> None:
        """Start the released average from G's current weights (after a public warm start)."""
        if self.G_ema is not self.G:
            self.G_ema.load_state_dict(self.G.state_dict())

    def save_to(self, snapshot: Snapshot) -> None:
        """G, its average and its optimizer into a checkpoint (dpgan.training.checkpoint)."""
        snapshot.put_module("G", self.G)
        if self.G_ema is not self.G:
            snapshot.put_module("G_ema", self.G_ema)
        snapshot.put_optimizer("opt_G", self.optimizer)

    def restore_from(self, snapshot: Snapshot) -> None:
        snapshot.get_module("G", self.G)
        if self.G_ema is not self.G:
            snapshot.get_module("G_ema", self.G_ema)
        snapshot.get_optimizer("opt_G", self.optimizer)

    def released(self) -> TabularGenerator:
        """The generator the fit releases (the average of G's iterates: post-processing)."""
        self.G_ema.eval()
        return self.G_ema


def generator_for(
    config: TrainingConfig, spans: list[OutputSpan], condition: ConditionPrior | None
) -> TabularGenerator:
    """The configured tabular generator for these output spans (and the condition's slice)."""
    return build_generator(config, spans, condition.slice if condition else None)


class StepCallbacks:
    """After each private step: the progress display, a monitor every `every` steps, and `keep`
    (dpgan.training.selection's snapshots) after every step. A monitor sees only the released
    generator (DP post-processing): it may score it on public data only; `keep` copies it for a
    selection that is itself a DP release charged to the ledger."""

    def __init__(
        self,
        progress: ProgressFn | None = None,
        monitor: MonitorFn | None = None,
        every: int = 0,
        keep: MonitorFn | None = None,
    ) -> None:
        self.progress, self.monitor, self.every, self.keep = progress, monitor, every, keep

    def __call__(self, steps_done: int, side: GeneratorSide) -> None:
        recheck_threads()  # auto threads follow the cores other jobs leave free (dpgan.threads)
        if self.progress is not None:
            self.progress(steps_done)
        if self.monitor is not None and self.every and steps_done % self.every == 0:
            self.monitor(steps_done, side.G_ema)
        if self.keep is not None:
            self.keep(steps_done, side.G_ema)
