"""The two-world experiment every audit mode shares: the claim, the ablations, the scores, the bound.

An audit runs a private release many times in world OUT (no canary) and world IN (with it),
scores each trial, and turns the two score samples into a lower bound on ε
(`statistics.epsilon_lower_bound`: threshold on half of the trials, Clopper–Pearson bound on the
other half). The claim it is set against is dpgan's accountant for exactly what ran.

Ablations keep the claim and change only the step's arguments: `noise` runs σ = 0; `clipping`
runs C' = 10⁶·C with σ' = σ/10⁶, so the noise std σ'C' is unchanged while no gradient is clipped.
Used by the white-box (dpgan.evaluation.audit.whitebox) and black-box (….blackbox) audits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpgan.errors import InputError
from dpgan.evaluation.audit.statistics import epsilon_lower_bound
from dpgan.privacy.accounting import POISSON, epsilon_of
from dpgan.privacy.releases import sampled_steps_event

ABLATIONS = ("noise", "clipping")
CLIPPING_OFF = 1e6  # --ablate clipping: C' = 10⁶·C, σ' = σ/10⁶ (same noise std, nothing clipped)
Progress = Callable[[int, int], None]


@dataclass
class Audit:
    """One audit's numbers; `AuditResult` (the public record) is built from it."""

    audited: str
    epsilon_claimed: float
    epsilon_lower_bound: float
    ceiling: float
    trials: int
    steps: int
    sample_rate: float
    details: dict[str, Any] = field(default_factory=dict)


def claimed_epsilon(sigma: float, sample_rate: float, steps: int, delta: float, sampling: str = POISSON) -> float:
    """ε that dpgan's accountant (PLD; RDP for shard events) gives the audited releases."""
    entry = sampled_steps_event("audited steps", sigma, sampling_rate=sample_rate, count=steps, sampling=sampling)
    return epsilon_of([entry], delta, "pld")


def ablated(sigma: float, clip: float, ablate: str | None) -> tuple[float, float]:
    """(σ, C) the step runs with; the claim always keeps the configured σ."""
    if ablate is None:
        return sigma, clip
    if ablate == "noise":
        return 0.0, clip
    if ablate == "clipping":
        return sigma / CLIPPING_OFF, clip * CLIPPING_OFF
    raise InputError(f"--ablate must be one of {', '.join(ABLATIONS)}, not {ablate!r}")


def score_worlds(
    trials: int, scorer_for: Callable[[str], Callable[[], float]], progress: Progress | None, every: int = 500
) -> dict[str, np.ndarray]:
    """`trials` scores in each world, OUT (no canary) first, then IN: `scorer_for(world)` sets the
    world up (its data, its step) and returns what scores one trial."""
    scores: dict[str, np.ndarray] = {}
    for w, world in enumerate(("out", "in")):
        score = scorer_for(world)
        values = np.empty(trials)
        for trial in range(trials):
            values[trial] = score()
            if progress is not None and (trial + 1) % every == 0:
                progress(w * trials + trial + 1, 2 * trials)
        scores[world] = values
    return scores


def two_world_audit(
    scores: dict[str, np.ndarray],
    *,
    audited: str,
    epsilon_claimed: float,
    delta: float,
    alpha: float,
    seed: int,
    steps: int,
    sample_rate: float,
    details: dict[str, Any],
) -> Audit:
    """The Audit of a two-world experiment: ε_lb from the OUT/IN scores (statistics module), with
    the bound's own details first and the experiment's after them."""
    bound = epsilon_lower_bound(scores["out"], scores["in"], delta=delta, alpha=alpha, seed=seed)
    return Audit(
        audited=audited,
        epsilon_claimed=epsilon_claimed,
        epsilon_lower_bound=bound.epsilon,
        ceiling=bound.ceiling,
        trials=len(scores["out"]),
        steps=steps,
        sample_rate=sample_rate,
        details={**bound.details(), **details},
    )


__all__ = [
    "ABLATIONS",
    "CLIPPING_OFF",
    "Audit",
    "Progress",
    "ablated",
    "claimed_epsilon",
    "score_worlds",
    "two_world_audit",
]
