"""The released model as the unit: what a fit makes from a kind's data under the fit's ledger.

A `Model` releases from the kind's units under the ledger and gives back a `ReleasedModel`: the
released thing that samples (post-processing, free) and whose files hold only what was released.
Two families, one interface:

- statistics models (a kind's registry: dpgan.sequences.statistics_models, the image kind's
  "gaussian" recipe; their mechanisms and sensitivities in dpgan.statistics): DP statistics on all
  of ε are the model. They build no network, and their files hold the released arrays alone;
- the GAN model (`GANModel`): a generator, the plug-ins released before it at their shares (DP
  statistics as anchors, a warm start or a base: "a GAN on the statistics" is this composition),
  a critic and a strategy (dpgan.training.strategies) that trains on what is left of ε.

What the pipeline (dpgan.fit) needs of a released model is `sample(n, generator, labels)` through
the kind's facade, and the files its facade writes; a GAN's generator already samples so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from dpgan.training.context import FitContext
from dpgan.training.gan_loop import GeneratorHook
from dpgan.training.progress import FitProgressFn
from dpgan.training.strategies import StrategyResult


@dataclass
class KindData:
    """What a kind's data releases give the rest of the fit: the units (one row per privacy unit,
    on the fit's device), the released unit count N̂ that sets the schedule, and the kind's own
    released facts (`details`: a completed schema, released labels, a tally) for its model and record."""

    units: Any  # a tensor of units, or a table's row source
    rows: float
    details: Any
    hooks: tuple[GeneratorHook, ...] = ()  # the GAN plug-ins' generator hooks, set by `GANModel`


@dataclass(frozen=True)
class ReleasedModel:
    """A model's release: the released model (`model`: a GAN's generator, or a statistics model;
    either samples), a GAN's critic (kept in memory for white-box attacks, never saved; None for
    statistics) and the items of the training record that are the model's own."""

    model: Any
    critic: torch.nn.Module | None
    record: dict[str, Any]


class Model(Protocol):
    """Releases from the kind's data under the fit's ledger (every read charged there)."""

    def release(
        self, ctx: FitContext, data: KindData, progress: FitProgressFn | None
    ) -> ReleasedModel: ...  # pragma: no cover - protocol


class Plugin(Protocol):
    """A release before the GAN and what it gives the generator: hooks on its loss, or a base."""

    share: float  # of ε, calibrated after the releases before it (0: public only, spends nothing)

    def release(
        self, ctx: FitContext, data: KindData, generator: torch.nn.Module
    ) -> Sequence[GeneratorHook]: ...  # pragma: no cover - protocol


class Strategy(Protocol):
    def train(
        self,
        ctx: FitContext,
        units: torch.Tensor,
        rows: float,
        generator: torch.nn.Module,
        critic: torch.nn.Module,
        hooks: Sequence[GeneratorHook],
        progress: FitProgressFn | None,
    ) -> StrategyResult: ...  # pragma: no cover - protocol


class GANParts(Protocol):
    """What a kind gives its GAN model: the networks, the plug-ins and the strategy."""

    def generator(self, data: KindData) -> torch.nn.Module | None: ...  # pragma: no cover - protocol

    def plugins(self, data: KindData) -> Sequence[Plugin]: ...  # pragma: no cover - protocol

    def critic(self, data: KindData) -> torch.nn.Module | None: ...  # pragma: no cover - protocol

    def strategy(self, generator: torch.nn.Module | None) -> Strategy: ...  # pragma: no cover - protocol


@dataclass(frozen=True)
class GANModel:
    """The GAN model: the generator is built, each plug-in makes its release at its share of ε and
    hands G its hooks or its base, the critic is built after them (so the plug-ins' networks are
    initialised before it, always), and the strategy trains on what is left of ε, charging every
    private step as it runs."""

    parts: GANParts

    def release(self, ctx: FitContext, data: KindData, progress: FitProgressFn | None) -> ReleasedModel:
        generator = self.parts.generator(data)
        data.hooks = release_plugins(ctx, self.parts.plugins(data), data, generator)
        critic = self.parts.critic(data)
        strategy = self.parts.strategy(generator)
        trained = strategy.train(ctx, data.units, data.rows, generator, critic, data.hooks, progress)  # type: ignore[arg-type]
        return ReleasedModel(trained.generator, trained.critic, trained.record)


def release_plugins(
    ctx: FitContext, plugins: Sequence[Plugin], data: KindData, generator: torch.nn.Module | None
) -> tuple[GeneratorHook, ...]:
    """Each plug-in's release in order, at its share after those before it; their hooks, in order."""
    hooks: list[GeneratorHook] = []
    for plugin in plugins:
        hooks.extend(plugin.release(ctx, data, generator))  # type: ignore[arg-type]
        ctx.spend(plugin.share)
    return tuple(hooks)


def check_arrays(tensors: dict[str, torch.Tensor], expected: dict[str, tuple[int, ...]]) -> None:
    """Exactly the expected arrays, each float32 of its shape and finite (a file is read strictly)."""
    if set(tensors) != set(expected):
        raise ValueError(f"arrays {sorted(tensors)} where {sorted(expected)} were expected")
    for key, shape in expected.items():
        array = tensors[key]
        if array.dtype != torch.float32 or tuple(array.shape) != shape or not bool(torch.isfinite(array).all()):
            raise ValueError(f"array {key!r} is not float32 of shape {shape} with finite values")


__all__ = ["GANModel", "GANParts", "KindData", "Model", "Plugin", "ReleasedModel", "Strategy", "check_arrays",
           "release_plugins"]  # fmt: skip
