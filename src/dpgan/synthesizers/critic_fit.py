"""The DP-critic fit that the series and image facades share: schedule, σ, the loop.

After a facade has made its releases (counts, schema, plug-ins' statistics) it trains the GAN on
what is left of (ε, δ): the schedule from the released unit count N̂ (never the exact one), σ
calibrated so that the ledger's committed entries plus the critic's steps land on ε (or, with a
fixed σ, as many steps as it pays for), then the engine's DP-critic loop, which charges the ledger
one event per critic step as it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from dpgan.api import Synthesizer
from dpgan.devices import seeded_generator
from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import TrainingBudget, sigma_and_steps
from dpgan.privacy.releases import sampled_steps_event
from dpgan.training.config import TrainingConfig
from dpgan.training.dp_critic import TrainingResult, train_dp_critic
from dpgan.training.gan_loop import GeneratorHook
from dpgan.training.progress import FitProgressFn, StepReporter
from dpgan.training.schedule import Schedule, gan_schedule_for


def critic_config(defaults: dict[str, Any], settings: dict[str, Any]) -> TrainingConfig:
    """The loop's settings for a series or image fit: the kind's defaults under the user's settings,
    checked; an unknown name is one clear line. The tabular-only extras stay off (these kinds have
    no label model, marginal or pair anchors)."""
    try:
        config = TrainingConfig(**(defaults | settings))
    except TypeError as exc:
        raise InputError(f"unknown setting: {exc}") from None
    config = replace(config, label_model=False, pair_anchor=False, marginal_anchor=False)
    config.check()
    return config


@dataclass(frozen=True)
class CriticFit:
    result: TrainingResult
    schedule: Schedule
    budget: TrainingBudget


def fit_dp_critic(
    synth: Synthesizer,
    units: torch.Tensor,
    config: TrainingConfig,
    *,
    rows: float,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    critic: torch.nn.Module,
    generator_net: torch.nn.Module,
    hooks: Sequence[GeneratorHook] = (),
    progress: FitProgressFn | None = None,
) -> CriticFit:
    """Train `generator_net` against the DP `critic` on `units` with the rest of synth's budget;
    `progress` (step, total, ε spent so far) as the tabular fit reports it (StepReporter)."""
    schedule = gan_schedule_for(config, rows, "critic")
    budget = sigma_and_steps(
        sample_rate=schedule.sample_rate,
        steps=schedule.steps,
        epsilon=synth.epsilon,
        delta=synth.delta,
        accountant=synth.accountant,
        prior=ledger.committed(),
        sampling=schedule.sampling,
        noise_multiplier=synth.noise_multiplier,
        cap_steps=False,
    )
    step_entry = sampled_steps_event(
        "step", budget.noise_multiplier, sampling_rate=schedule.sample_rate, sampling=schedule.sampling
    )
    reporter = StepReporter(progress, budget.steps, step_entry, ledger, synth.delta, synth.accountant)
    result = train_dp_critic(
        units,
        [],
        config,
        sample_rate=schedule.sample_rate,
        expected_batch_size=schedule.expected_batch_size,
        noise_multiplier=budget.noise_multiplier,
        steps=budget.steps,
        generator=seeded_generator(int(rng.integers(0, 2**63 - 1))),  # on the fit's device
        ledger=ledger,
        critic=critic,
        generator_net=generator_net,
        hooks=hooks,
        progress=reporter,
    )
    return CriticFit(result, schedule, budget)


__all__ = ["CriticFit", "critic_config", "fit_dp_critic"]
