"""Per-unit clipped gradient sums for a critic step: one interface, pluggable backends.

`clipped_sum(critic, loss, max_norm)` returns Σ_i min(1, C/‖v_i‖)·v_i for the per-unit vector v_i
that `CriticUnitLoss` describes (spec.py), before any noise. The generic backend (functorch.py:
vmap of grad, with the gradient penalty's double backward) accepts any nn.Module critic without
batch-coupling layers; registered fast paths (the MLP ghost kernel) are used where they apply
and must compute the same function (tests/privacy/test_grad_sample.py checks each against the generic
path). `backend="functorch"` forces the generic path (tests, the audit); a fast path's name
forces that path and fails if it does not apply.

Privacy: which path runs depends only on the critic's structure and the loss's settings, never
on the batch, except that a fast path whose result holds a non-finite unit norm is replaced by
the generic path's result (same function, which zeroes that unit; spec.clip_factors). Either
way each unit's clipped contribution has norm ≤ C and depends on that unit alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from dpgan.errors import InputError
from dpgan.privacy.grad_sample import mlp_ghost
from dpgan.privacy.grad_sample.functorch import NAME as GENERIC
from dpgan.privacy.grad_sample.functorch import functorch_clipped_sum
from dpgan.privacy.grad_sample.spec import (
    FEATURES_KEY,
    ClippedSum,
    CriticUnitLoss,
    ParameterGroups,
    clip_factors,
    refuse_batch_coupling,
)

AUTO = "auto"


@dataclass(frozen=True)
class FastPath:
    """A kernel for a family of critics: `applies` must read only the critic and the loss's
    settings (not the batch's values), and `run` must equal the generic backend where it applies."""

    name: str
    applies: Callable[[nn.Module, CriticUnitLoss], bool]
    run: Callable[[nn.Module, CriticUnitLoss, float], ClippedSum]


_FAST_PATHS: dict[str, FastPath] = {}


def register_fast_path(path: FastPath) -> None:
    if path.name in (AUTO, GENERIC) or path.name in _FAST_PATHS:
        raise ValueError(f"a backend named {path.name!r} is already registered")
    _FAST_PATHS[path.name] = path


def backends() -> tuple[str, ...]:
    """Names `clipped_sum(backend=...)` accepts."""
    return (AUTO, GENERIC, *_FAST_PATHS)


def select_backend(critic: nn.Module, loss: CriticUnitLoss) -> str:
    """The path `backend="auto"` takes for this critic and loss (the first fast path that applies)."""
    for path in _FAST_PATHS.values():
        if path.applies(critic, loss):
            return path.name
    return GENERIC


def clipped_sum(
    critic: nn.Module,
    loss: CriticUnitLoss,
    max_norm: float,
    *,
    backend: str = AUTO,
    chunk_size: int | None = None,
    groups: ParameterGroups | None = None,
) -> ClippedSum:
    """Σ_i clip_C(v_i) through the chosen backend; `chunk_size` bounds the generic path's memory.

    With `groups` (grouped clipping: each group of v_i clipped to its own c_j) only the generic
    path runs: the fast paths clip one joint norm. That choice reads the setting, not the batch."""
    if backend not in backends():
        raise InputError(f"unknown gradient backend {backend!r}; choose one of {', '.join(backends())}")
    refuse_batch_coupling(critic)
    if not max_norm > 0:
        raise InputError(f"max_norm must be > 0, got {max_norm}")
    if groups is not None:
        if backend not in (AUTO, GENERIC):
            raise InputError(f"the {backend} gradient backend does not clip parameter groups; use {GENERIC}")
        return functorch_clipped_sum(critic, loss, max_norm, chunk_size=chunk_size, groups=groups)
    name = select_backend(critic, loss) if backend == AUTO else backend
    if name != GENERIC:
        path = _FAST_PATHS[name]
        if backend != AUTO and not path.applies(critic, loss):
            raise InputError(f"the {name} gradient backend does not apply to this critic or loss")
        result = path.run(critic, loss, max_norm)
        if bool(torch.isfinite(result.norms).all()):
            return result
    return functorch_clipped_sum(critic, loss, max_norm, chunk_size=chunk_size)


register_fast_path(FastPath(mlp_ghost.NAME, mlp_ghost.applies, mlp_ghost.run))

__all__ = [
    "AUTO",
    "FEATURES_KEY",
    "GENERIC",
    "ClippedSum",
    "CriticUnitLoss",
    "FastPath",
    "ParameterGroups",
    "backends",
    "clip_factors",
    "clipped_sum",
    "refuse_batch_coupling",
    "register_fast_path",
    "select_backend",
]
