"""One fit pipeline for every data kind: the order of a DP fit's releases, written once.

    open the ledger → the kind's data releases → each plug-in's release → the strategy on what is
    left of ε → the final budget check → the training record → the fitted generator

1. `FitContext` opens the ledger, the budget's shares and the fit's random generator (seeded before
   anything is read).
2. The data kind (`DataKind.release_data`) reads its units by the unit rule and makes the releases
   that decide what the GAN trains on: the unit counts N̂ (kept, dropped per reason), a DP schema, a
   DP shape or label set. It returns `KindData`: the units on the fit's device, N̂, and whatever the
   kind needs later (its schema, its released labels).
3. The generator is built (`DataKind.generator`), then each plug-in (`Plugin.release`) makes its
   release at its share of ε (the DP statistics first: anchors, a Gaussian base, a label guide) and
   hands the generator its hooks or sets its base; public-only plug-ins (mode seeking) spend nothing.
   The critic is built after them, so the plug-ins' networks are initialised before it, always.
4. The strategy (dpgan.training.strategies) calibrates σ on what the ledger has committed and
   trains through the engine, which charges every private step as it runs.
5. The kind finishes (`DataKind.finish`): releases that choose among what was trained (DP
   checkpoint selection, charged to a reservation made before σ was calibrated) and
   post-processing of released models; most kinds return the trained result as it is.
6. The ledger's ε is checked against the target (a failure is a bug, never the data's), and the
   kind writes the training record from its releases and the strategy's.

The pipeline imports no data kind: a kind is a folder (dpgan.tables, dpgan.sequences,
dpgan.images) whose `DataKind` registers itself (`register_kind`): a table held in memory
("table", distributed and resumable) and a Parquet table read in record batches ("table-stream",
under torchrun too) are two unit sources of the tables' kind. tests/test_fit_pipeline.py plugs a
tiny kind in without touching this file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.training.context import FitBudget, FitContext
from dpgan.training.gan_loop import GeneratorHook
from dpgan.training.progress import FitProgressFn
from dpgan.training.strategies import StrategyResult


@dataclass
class KindData:
    """What a kind's data releases give the rest of the fit: the units (one row per privacy unit,
    on the fit's device), the released unit count N̂ that sets the schedule, and the kind's own
    released facts (`details`: a completed schema, released labels, a tally) for its plug-ins,
    networks and record."""

    units: Any  # a tensor of units, or a table's row source
    rows: float
    details: Any
    hooks: tuple[GeneratorHook, ...] = ()  # the plug-ins' generator hooks, set by the pipeline


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


class DataKind(Protocol):
    """A data kind's part in the pipeline (tables, series, images, or a new one)."""

    name: str
    certified: bool  # False only for a published form that claims no ε (the noise-layer GAN)

    def release_data(self, ctx: FitContext, data: Any) -> KindData: ...  # pragma: no cover - protocol

    def generator(self, data: KindData) -> torch.nn.Module: ...  # pragma: no cover - protocol

    def plugins(self, data: KindData) -> Sequence[Plugin]: ...  # pragma: no cover - protocol

    def critic(self, data: KindData) -> torch.nn.Module: ...  # pragma: no cover - protocol

    def strategy(self, generator: torch.nn.Module) -> Strategy: ...  # pragma: no cover - protocol

    def finish(
        self, ctx: FitContext, data: KindData, trained: StrategyResult
    ) -> StrategyResult: ...  # pragma: no cover - protocol

    def record(self, data: KindData, trained: StrategyResult) -> dict[str, Any]: ...  # pragma: no cover


@dataclass
class FittedModel:
    """A fit's outcome: the ledger, the released generator, the critic (in memory only), the kind's
    released facts and the training record."""

    ledger: PrivacyLedger
    generator: torch.nn.Module
    critic: torch.nn.Module
    data: KindData
    record: dict[str, Any]


def run_fit(
    kind: DataKind,
    data: Any,
    budget: FitBudget,
    progress: FitProgressFn | None = None,
    ctx: FitContext | None = None,
) -> FittedModel:
    """One DP fit of `data` by `kind` within `budget` (the module docstring's steps); `ctx` when
    the caller already holds the ledger and the fit's generator (the tables' runs)."""
    ctx = ctx if ctx is not None else FitContext.open(budget)
    released = kind.release_data(ctx, data)
    generator = kind.generator(released)
    released.hooks = release_plugins(ctx, kind.plugins(released), released, generator)
    critic = kind.critic(released)
    strategy = kind.strategy(generator)
    trained = strategy.train(ctx, released.units, released.rows, generator, critic, released.hooks, progress)
    trained = kind.finish(ctx, released, trained)
    if kind.certified:
        ctx.check_spent()
    record = kind.record(released, trained)
    record.setdefault("seeded", budget.seed is not None)
    return FittedModel(ctx.ledger, trained.generator, trained.critic, released, record)


def release_plugins(
    ctx: FitContext, plugins: Sequence[Plugin], data: KindData, generator: torch.nn.Module | None
) -> tuple[GeneratorHook, ...]:
    """Each plug-in's release in order, at its share after those before it; their hooks, in order."""
    hooks: list[GeneratorHook] = []
    for plugin in plugins:
        hooks.extend(plugin.release(ctx, data, generator))  # type: ignore[arg-type]
        ctx.spend(plugin.share)
    return tuple(hooks)


KINDS: dict[str, Callable[..., DataKind]] = {}


def register_kind(name: str, factory: Callable[..., DataKind]) -> None:
    """Make a data kind known by name (each kind's folder registers its own when imported)."""
    if name in KINDS and KINDS[name] is not factory:
        raise InputError(f"a data kind named {name!r} is registered already")
    KINDS[name] = factory


def data_kind(name: str, **settings: Any) -> DataKind:
    """The registered kind `name`, built with its settings."""
    if name not in KINDS:
        raise InputError(f"unknown data kind {name!r}; known: {', '.join(sorted(KINDS)) or 'none'}")
    return KINDS[name](**settings)


__all__ = ["DataKind", "FitBudget", "FitContext", "FittedModel", "KindData", "Plugin", "Strategy", "data_kind",
           "register_kind", "release_plugins", "run_fit"]  # fmt: skip
