"""The white-box audits' canaries: a record whose gradient the auditor can read off one release.

Each canary drives one release of the engine's private step (dpgan.privacy.step), built and driven
exactly as training builds and drives it: `training.critic_step.critic_step` + `critic_release`.
The audit calls those functions, never a copy of them; its steps charge a ledger of their own (the
audit reads no private data).

Critic recipes (dp-gan, dp-wgan, dp-cgan, dtgan-d), `CriticCanary`. A "Dirac" canary that is a
record (a row the critic reads, clipped with everything the step computes from it), not an
injected gradient:
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

Sequence and image models, `UnitCanaryStep` (dpgan.evaluation.audit.units): the same canary
argument on their own critics (an LSTM or MLP over series, a conv or MLP over images): one input
channel's slice of the first layer zeroed, the canary on that channel, the same step, release and
statistic.
"""

from __future__ import annotations

import numpy as np
import torch

from dpgan.errors import InputError
from dpgan.evaluation.audit.target import AuditTarget, public_rows
from dpgan.evaluation.audit.units import UnitCanary
from dpgan.models.tabular import TabularCritic
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.sampling import PoissonSampler
from dpgan.privacy.step import PrivateStep
from dpgan.training.critic_step import CriticStepSettings, critic_release, critic_step
from dpgan.training.dp_critic import importance_weights

CANARY_MARGIN = 1e3  # the canary's gradient in column j* is this many times C before clipping
FILLER_ROWS = 16
FIRST_LAYER = "net.0.weight"


class CriticCanary:
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


class UnitCanaryStep:
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


__all__ = ["CANARY_MARGIN", "FILLER_ROWS", "FIRST_LAYER", "CriticCanary", "UnitCanaryStep"]
