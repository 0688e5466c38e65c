"""White-box audits: a canary through dpgan's real private step, in many independent trials.

What is audited is one release of the engine's private step (dpgan.privacy.step), built and driven
exactly as training builds and drives it: `training.critic_step.critic_step` + `critic_release` (or,
for dtgan-g, `training.dp_generator.generator_hook_step` and its hook): everything after a release
(optimiser, generator, EMA) is post-processing, so a distinguisher that sees the release itself is
the strongest one. The audit calls those functions, never a copy of them; its steps charge a ledger
of their own (the audit reads no private data).

Critic recipes (dp-gan, dp-wgan, dp-cgan, dtgan-d) and sequence and image models: a "Dirac"
canary record whose clipped gradient lies along a direction u the auditor computes, in a column
of the critic's first layer no other record touches (dpgan.evaluation.audit.canaries, with the
argument). Statistic ⟨released W₁[:, j*], u⟩ in worlds OUT and IN (dpgan.evaluation.audit.experiment).
- Claimed ε: dpgan's accountant for exactly what ran (k Gaussian steps at σ, Poisson at q).

Ablations (`noise`, `clipping`: dpgan.evaluation.audit.experiment) keep the claim and switch off
the step's noise or its clipping.

The one-run audit (Steinke, Nasr and Jagielski 2023) puts m canaries, each in its own zeroed
column, each included with probability 1/2, through k steps of one run, and counts right guesses.

dtgan-g: a record can change its shard's critic arbitrarily, so every generated row's upstream
gradient may flip. The audit feeds the hook the worst case the analysis allows (row i's
gradient is −100·C·v_i in world OUT and +100·C·v_i in world IN, for fixed unit directions v_i) and
scores Σ_i ⟨released row i, v_i⟩; the claim is one step without shard amplification (N_d = 1).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from dpgan.errors import InputError
from dpgan.evaluation.audit.canaries import CriticCanary, UnitCanaryStep
from dpgan.evaluation.audit.experiment import (
    Audit,
    Progress,
    ablated,
    claimed_epsilon,
    score_worlds,
    two_world_audit,
)
from dpgan.evaluation.audit.statistics import one_run_epsilon_lower_bound
from dpgan.evaluation.audit.target import AuditTarget
from dpgan.privacy.accounting import ONE_OF_SHARDS, PrivacyLedger
from dpgan.training.dp_generator import generator_hook_step

HOOK_CANARY_SCALE = 100.0  # dtgan-g: each row's upstream gradient is 100·C, far beyond the clip


def audit_critic_step(
    target: AuditTarget,
    *,
    trials: int,
    steps: int = 1,
    sample_rate: float = 1.0,
    ablate: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    progress: Progress | None = None,
) -> Audit:
    """ε_lb of `steps` releases of the private critic step with the canary in the data set."""
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(int(rng.integers(2**63 - 1)))
    canary: CriticCanary | UnitCanaryStep = (
        CriticCanary(target, 1, rng, seed) if target.units is None else UnitCanaryStep(target, rng, seed)
    )
    sigma, clip = ablated(target.noise_multiplier, target.config.max_grad_norm, ablate)

    def scorer_for(world: str) -> Callable[[], float]:
        data = canary.filler if world == "out" else torch.cat([canary.filler, canary.canaries])
        step = canary.step(data, sigma, clip, sample_rate, trials * steps, generator)
        return lambda: sum(float(canary.release_projections(data, step, generator)[0]) for _ in range(steps))

    scores = score_worlds(trials, scorer_for, progress)
    unit = "each microbatch's mean" if target.config.microbatches else "each record's gradient"
    return two_world_audit(
        scores,
        audited=(
            f"{steps} release(s) of the private critic step ({target.recipe.name}: {unit} clipped to C, "
            f"Gaussian noise) with a Dirac canary, q = {sample_rate:g}"
        ),
        epsilon_claimed=claimed_epsilon(target.noise_multiplier, sample_rate, steps, target.delta),
        delta=target.delta,
        alpha=alpha,
        seed=seed,
        steps=steps,
        sample_rate=sample_rate,
        details={
            "mean_score": {"out": float(scores["out"].mean()), "in": float(scores["in"].mean())},
            "canary": canary.describe(),
            "run_noise_multiplier": sigma,
            "run_max_grad_norm": clip,
        },
    )


def audit_one_run(
    target: AuditTarget,
    *,
    canaries: int | None = None,
    steps: int | None = None,
    sample_rate: float | None = None,
    ablate: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    progress: Progress | None = None,
) -> Audit:
    """Steinke et al.'s one-run audit: m canaries through one run of private critic steps.

    By default the run is the configuration's own schedule (its T steps at its q), so the claim is
    the ε of the whole critic training. The critic is held fixed during the run (a valid choice of
    the adaptive adversary; the real loop updates it, which is post-processing of the releases).
    Every canary has its own zeroed column and is included with probability 1/2. The guess rule
    is fixed before the run: "in" for the quarter of canaries with the largest summed projections,
    "out" for the quarter with the smallest, abstain on the middle half (Steinke et al.'s top-k /
    bottom-k guesses)."""
    steps = target.steps if steps is None else steps
    sample_rate = target.sample_rate if sample_rate is None else sample_rate
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(int(rng.integers(2**63 - 1)))
    width = target.encoder().width
    available = width - (target.condition.width if target.condition is not None else 0)
    m = available if canaries is None else canaries
    if m < 4:
        raise InputError("the one-run audit needs at least 4 canaries")
    canary = CriticCanary(target, m, rng, seed)
    included = rng.random(m) < 0.5
    data = torch.cat([canary.filler, canary.canaries[torch.from_numpy(included)]])
    sigma, clip = ablated(target.noise_multiplier, target.config.max_grad_norm, ablate)
    private_step = canary.step(data, sigma, clip, sample_rate, steps, generator)
    scores = torch.zeros(m)
    for step in range(steps):
        scores += canary.release_projections(data, private_step, generator)
        if progress is not None and ((step + 1) % 100 == 0 or step + 1 == steps):
            progress(step + 1, steps)
    order = np.argsort(scores.numpy(), kind="stable")
    k = m // 4
    guesses = 2 * k
    correct = int(included[order[m - k :]].sum() + (~included[order[:k]]).sum())
    return Audit(
        audited=(
            f"one run of {steps} private critic step(s) ({target.recipe.name}) at q = {sample_rate:g} with "
            f"{m} canaries, each included with probability 1/2 (Steinke, Nasr and Jagielski 2023)"
        ),
        epsilon_claimed=claimed_epsilon(target.noise_multiplier, sample_rate, steps, target.delta),
        epsilon_lower_bound=one_run_epsilon_lower_bound(m, guesses, correct, delta=target.delta, alpha=alpha),
        ceiling=one_run_epsilon_lower_bound(m, guesses, guesses, delta=target.delta, alpha=alpha),
        trials=1,
        steps=steps,
        sample_rate=sample_rate,
        details={"canaries": m, "included": int(included.sum()), "guesses": guesses, "correct": correct},
    )


def audit_generator_hook(
    target: AuditTarget,
    *,
    trials: int,
    steps: int = 1,
    ablate: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    progress: Progress | None = None,
) -> Audit:
    """dtgan-g: ε_lb of `steps` releases of the clip-and-noise hook on G's output gradient."""
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(int(rng.integers(2**63 - 1)))
    batch, width, clip = target.config.batch_size, target.encoder().width, target.config.max_grad_norm
    sigma, run_clip = ablated(target.noise_multiplier, clip, ablate)
    step = generator_hook_step(
        num_shards=1,  # the claim is one step through one critic: no shard amplification
        batch_size=batch,
        noise_multiplier=sigma,
        max_norm=run_clip,
        steps=2 * trials * steps,
        ledger=PrivacyLedger() if sigma > 0 else None,
        generator=generator,
    )
    noise_std = sigma * step.sensitivity(run_clip, batch)
    directions = torch.randn(batch, width, generator=generator)
    directions /= directions.norm(dim=1, keepdim=True)

    def scorer_for(world: str) -> Callable[[], float]:
        upstream = (-1.0 if world == "out" else 1.0) * HOOK_CANARY_SCALE * clip * directions
        return lambda: sum(float((step.hook()(upstream) * directions).sum()) for _ in range(steps))

    return two_world_audit(
        score_worlds(trials, scorer_for, progress),
        audited=(
            f"{steps} release(s) of dtgan-g's clip-and-noise hook (B = {batch} rows, sensitivity 2C√B) with "
            "every row's upstream gradient flipped, one critic (no shard amplification)"
        ),
        epsilon_claimed=claimed_epsilon(target.noise_multiplier, 1.0, steps, target.delta, ONE_OF_SHARDS),
        delta=target.delta,
        alpha=alpha,
        seed=seed,
        steps=steps,
        sample_rate=1.0,
        details={"run_noise_std": noise_std, "run_max_grad_norm": run_clip},
    )


__all__ = ["HOOK_CANARY_SCALE", "audit_critic_step", "audit_generator_hook", "audit_one_run"]
