"""White-box audits: a canary through dpgan's real private step, in many independent trials.

What is audited is one release of the engine's private step (dpgan.privacy.step), built and driven
exactly as training builds and drives it: `training.critic_step.critic_step` + `critic_release` (or,
for dtgan-g, `training.dp_generator.generator_hook_step` and its hook): everything after a release
(optimiser, generator, EMA) is post-processing, so a distinguisher that sees the release itself is
the strongest one. The audit calls those functions, never a copy of them; its steps charge a ledger
of their own (the audit reads no private data).

Critic recipes (dp-gan, dp-wgan, dp-cgan, dtgan-d). A "Dirac" canary that is a record (a row the
critic reads, clipped with everything the step computes from it), not an injected gradient:
- The critic has the configuration's shape and random weights, with column j* of its first layer
  zeroed. The step's guarantee holds for every critic state (in the adaptive composition each
  step's critic is public), so the auditor may pick it.
- Filler rows are random rows of the schema's public domain with x[j*] = 0, and each record's
  gradient-penalty partner is another public row. No filler record touches column j* of W₁: its
  real term's gradient there is δ₁·x[j*] = 0, and no gradient penalty does either, since the
  penalty's input gradient at coordinate j* is W₁[:, j*]ᵀe = 0.
- The canary is the record x[j*] = M, all else 0. Its real term's gradient in column j* is M
  times a direction u the auditor computes from the critic; M is so large that its clipped
  gradient lies almost entirely along u with norm ≈ C. M is outside the encoder's range [−1, 1]:
  the step's guarantee does not depend on that range (clipping bounds any row), and a canary
  inside it would put only part of its clipped norm into column j*, which weakens the audit.
- Statistic: ⟨released W₁[:, j*], u⟩. World OUT runs the step on the filler rows, world IN on the
  filler rows and the canary; each trial draws a fresh Poisson batch (with dpgan's sampler, at
  q < 1), fresh noise, penalty points and microbatch assignment. Threshold on half of the trials,
  Clopper–Pearson bound on the other half (`statistics.epsilon_lower_bound`).
- Claimed ε: dpgan's accountant for exactly what ran (k Gaussian steps at σ, Poisson at q).

Sequence and image models (dpgan.evaluation.audit.units): the same canary argument on their own
critics (an LSTM or MLP over series, a conv or MLP over images): one input channel's slice of the
first layer zeroed, the canary on that channel, the same step, release and statistic.

Ablations keep the claim and change only the step's arguments: `noise` runs σ = 0; `clipping`
runs C' = 10⁶·C with σ' = σ/10⁶, so the noise std σ'C' is unchanged while no gradient is clipped.

The one-run audit (Steinke, Nasr and Jagielski 2023) puts m canaries, each in its own zeroed
column, each included with probability 1/2, through k steps of one run, and counts right guesses.

dtgan-g: a record can change its shard's critic arbitrarily, so every generated row's upstream
gradient may flip. The audit feeds the hook the worst case the analysis allows (row i's
gradient is −100·C·v_i in world OUT and +100·C·v_i in world IN, for fixed unit directions v_i) and
scores Σ_i ⟨released row i, v_i⟩; the claim is one step without shard amplification (N_d = 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from dpgan.errors import InputError
from dpgan.evaluation.audit.statistics import epsilon_lower_bound, one_run_epsilon_lower_bound
from dpgan.evaluation.audit.target import AuditTarget, public_rows
from dpgan.evaluation.audit.units import UnitCanary
from dpgan.models.tabular import TabularCritic
from dpgan.privacy.accounting import ONE_OF_SHARDS, POISSON, PrivacyLedger, epsilon_of
from dpgan.privacy.releases import sampled_steps_event
from dpgan.privacy.sampling import PoissonSampler
from dpgan.privacy.step import PrivateStep
from dpgan.training.critic_step import CriticStepSettings, critic_release, critic_step
from dpgan.training.dp_critic import importance_weights
from dpgan.training.dp_generator import generator_hook_step

ABLATIONS = ("noise", "clipping")
CANARY_MARGIN = 1e3  # the canary's gradient in column j* is this many times C before clipping
CLIPPING_OFF = 1e6  # --ablate clipping: C' = 10⁶·C, σ' = σ/10⁶ (same noise std, nothing clipped)
HOOK_CANARY_SCALE = 100.0  # dtgan-g: each row's upstream gradient is 100·C, far beyond the clip
FILLER_ROWS = 16
FIRST_LAYER = "net.0.weight"
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


class _CriticCanary:
    """The critic, filler rows, canary rows and the auditor's direction u for the critic step."""

    def __init__(self, target: AuditTarget, canary_columns: int, rng: np.random.Generator, seed: int) -> None:
        encoder = target.encoder()
        width = encoder.width
        free = [j for j in range(width) if not _in_condition(target, j)]
        if canary_columns > len(free):
            raise InputError(f"at most {len(free)} canaries fit in this schema's encoded row")
        self.columns = free[len(free) - canary_columns :]
        self.target = target
        self.filler = torch.from_numpy(encoder.encode(public_rows(target.schema, FILLER_ROWS, rng)))
        self.partners = torch.from_numpy(encoder.encode(public_rows(target.schema, FILLER_ROWS, rng)))
        self.filler[:, self.columns] = 0.0
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.critic = TabularCritic(width, target.config.critic_hidden)
        weight = dict(self.critic.named_parameters())[FIRST_LAYER]
        with torch.no_grad():
            weight[:, self.columns] = 0.0
        unit = torch.zeros(1, width)
        unit[0, self.columns[0]] = 1.0
        (grad,) = torch.autograd.grad(-self.critic(unit).sum(), weight)
        column = grad[:, self.columns[0]]  # the same for every canary column: the forward pass ignores them
        self.direction = column / column.norm()
        self.magnitude = CANARY_MARGIN * target.config.max_grad_norm / float(column.norm())
        self.canaries = torch.zeros(len(self.columns), width)
        self.canaries[torch.arange(len(self.columns)), self.columns] = self.magnitude

    def describe(self) -> str:
        return f"x[{self.columns[0]}] = {self.magnitude:.4g}, all else 0"

    def step(
        self, data: torch.Tensor, sigma: float, clip: float, sample_rate: float, releases: int, generator
    ) -> PrivateStep:
        return _private_step(self.target, data, sigma, clip, sample_rate, releases, generator)

    def release_projections(self, data: torch.Tensor, step: PrivateStep, generator: torch.Generator) -> torch.Tensor:
        """One release of the private step on `data`; ⟨W₁[:, j], u⟩ for each canary column j."""
        gradient = _release(self.target, self.critic, self.partners, data, step, generator)
        return self.direction @ gradient[FIRST_LAYER][:, self.columns]


class _UnitCanaryStep:
    """The canary of a sequence or image model's critic (dpgan.evaluation.audit.units), driven
    through the same private step and release as the tabular one."""

    def __init__(self, target: AuditTarget, rng: np.random.Generator, seed: int) -> None:
        assert target.units is not None
        self.target = target
        self.canary = UnitCanary(target.units, target.config.max_grad_norm, FILLER_ROWS, rng, seed)
        self.filler, self.canaries = self.canary.filler, self.canary.canaries

    def describe(self) -> str:
        return self.canary.describe()

    def step(
        self, data: torch.Tensor, sigma: float, clip: float, sample_rate: float, releases: int, generator
    ) -> PrivateStep:
        return _private_step(self.target, data, sigma, clip, sample_rate, releases, generator)

    def release_projections(self, data: torch.Tensor, step: PrivateStep, generator: torch.Generator) -> torch.Tensor:
        gradient = _release(self.target, self.canary.critic, self.canary.partners, data, step, generator)
        return self.canary.project(gradient)


def _private_step(
    target: AuditTarget, data: torch.Tensor, sigma: float, clip: float, sample_rate: float, releases: int, generator
) -> PrivateStep:
    """The critic's private step over `data`, as training builds it; q = 1 takes every unit."""
    sampler = PoissonSampler(len(data), sample_rate, generator) if sample_rate < 1.0 else _EveryRow(len(data))
    return critic_step(
        CriticStepSettings.from_config(target.config),
        units=len(data),
        sample_rate=sample_rate,
        noise_multiplier=sigma,
        max_norm=clip,
        expected_batch_size=target.expected_batch_size,
        steps=releases,
        ledger=PrivacyLedger() if sigma > 0 else None,  # σ = 0 (--ablate noise): nothing to account
        generator=generator,
        sampler=sampler,
    )


def _release(
    target: AuditTarget,
    critic: torch.nn.Module,
    partners: torch.Tensor,
    data: torch.Tensor,
    step: PrivateStep,
    generator: torch.Generator,
) -> dict[str, torch.Tensor]:
    """One release of the private step on `data` (a fresh batch, penalty partners and α): its gradient."""
    settings = CriticStepSettings.from_config(target.config)
    real = data[step.sample()]
    pairs = None
    if settings.gp_weight > 0:
        pairs = partners[torch.randint(len(partners), (len(real),), generator=generator)]
    weight = importance_weights(target.condition, target.config, real)
    features = target.config.info_loss_weight > 0 and not settings.microbatches and hasattr(critic, "features")
    release = critic_release(
        step,
        critic,
        real,
        weight,
        pairs,
        settings,
        max_norm=step.max_norm,
        with_features=features,
        generator=generator,
    )
    return release.gradient(critic)


class _EveryRow:
    """The sampler of a q = 1 audit: every row in every release."""

    def __init__(self, rows: int) -> None:
        self.rows = rows

    def sample(self) -> torch.Tensor:
        return torch.arange(self.rows)


def _in_condition(target: AuditTarget, column: int) -> bool:
    if target.condition is None:
        return False
    start, stop = target.condition.slice
    return start <= column < stop


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
    canary: _CriticCanary | _UnitCanaryStep = (
        _CriticCanary(target, 1, rng, seed) if target.units is None else _UnitCanaryStep(target, rng, seed)
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
    canary = _CriticCanary(target, m, rng, seed)
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
