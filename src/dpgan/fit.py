"""One fit pipeline for every data kind: the order of a DP fit's releases, written once.

    open the ledger → the kind's data releases → the kind's model releases → the final budget
    check → the training record → the released model

1. `FitContext` opens the ledger, the budget's shares and the fit's random generator (seeded before
   anything is read).
2. The data kind (`DataKind.release_data`) reads its units by the unit rule and makes the releases
   that decide what the model is fitted on: the unit counts N̂ (kept, dropped per reason), a DP
   schema, a DP shape or label set. It returns `KindData`: the units on the fit's device, N̂, and
   whatever the kind needs later (its schema, its released labels).
3. The kind's model (`DataKind.model`, dpgan.model) releases on what is left of ε: a statistics
   model's DP statistics on all of it (no network), or the GAN model (its plug-ins' releases first,
   then the strategy's private steps, which the engine charges as it runs).
4. The kind finishes (`DataKind.finish`): releases that choose among what was trained (DP
   checkpoint selection, charged to a reservation made before σ was calibrated) and
   post-processing of released models; most kinds return the released model as it is.
5. The ledger's ε is checked against the target (a failure is a bug, never the data's), and the
   kind writes the training record from its releases and the model's.

The pipeline imports no data kind: a kind is a folder (dpgan.tables, dpgan.sequences,
dpgan.images) whose `DataKind` registers itself (`register_kind`): a table held in memory
("table", distributed and resumable) and a Parquet table read in record batches ("table-stream",
under torchrun too) are two unit sources of the tables' kind. tests/test_fit_pipeline.py plugs a
tiny kind in without touching this file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from dpgan.errors import InputError
from dpgan.model import GANModel, KindData, Model, Plugin, ReleasedModel, Strategy, release_plugins
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget
from dpgan.training.context import FitContext
from dpgan.training.progress import FitProgressFn


class DataKind(Protocol):
    """A data kind's part in the pipeline (tables, series, images, or a new one)."""

    name: str
    certified: bool  # False only for a published form that claims no ε (the noise-layer GAN)

    def release_data(self, ctx: FitContext, data: Any) -> KindData: ...  # pragma: no cover - protocol

    def model(self, data: KindData) -> Model: ...  # pragma: no cover - protocol

    def finish(
        self, ctx: FitContext, data: KindData, trained: ReleasedModel
    ) -> ReleasedModel: ...  # pragma: no cover - protocol

    def record(self, data: KindData, trained: ReleasedModel) -> dict[str, Any]: ...  # pragma: no cover


@dataclass
class FittedModel:
    """A fit's outcome: the ledger, the released model (a GAN's generator or a statistics model), a
    GAN's critic (in memory only), the kind's released facts and the training record."""

    ledger: PrivacyLedger
    model: Any
    critic: torch.nn.Module | None
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
    trained = kind.model(released).release(ctx, released, progress)
    trained = kind.finish(ctx, released, trained)
    if kind.certified:
        ctx.check_spent()
    record = kind.record(released, trained)
    record.setdefault("seeded", budget.seed is not None)
    return FittedModel(ctx.ledger, trained.model, trained.critic, released, record)


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


__all__ = ["DataKind", "FitBudget", "FitContext", "FittedModel", "GANModel", "KindData", "Model", "Plugin",
           "ReleasedModel", "Strategy", "data_kind", "register_kind", "release_plugins", "run_fit"]  # fmt: skip
