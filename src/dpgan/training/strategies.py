"""The GAN's training strategies, as objects the fit pipeline runs (dpgan.fit) after the releases.

A strategy gets the units (one row per privacy unit, on the fit's device), the released unit count
N̂ (never the exact one), the networks and the plug-ins' generator hooks, and trains on what is left
of (ε, δ): the schedule from N̂, σ calibrated so that the ledger's committed entries plus its own
steps land on ε (or, with a fixed σ, as many steps as σ pays for), then the engine's loop, which
charges the ledger one event per private step as it runs. What it returns for the training record
is its own: σ, the rate, the expected batch, the steps.

- `DPCriticStrategy`: WGAN-GP (or BCE) with DP-SGD on the critic (dpgan.training.dp_critic);
- `NoiseLayerStrategy`: the noise-layer GAN (dpgan.training.noise_layer); its published form claims
  no ε and charges nothing, its sound form charges the ledger for every pass.
The tables' strategies (dtgan-g's shard critics, selection, warm start) run in their own plan for
now (dpgan.synthesizers.fit_plan); they join this module as the pipeline takes them over.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from dpgan.errors import InputError
from dpgan.privacy.calibration import sigma_and_steps
from dpgan.privacy.feature_release import calibrate_feature_release, release_entry
from dpgan.privacy.releases import sampled_steps_event
from dpgan.training.config import TrainingConfig
from dpgan.training.context import FitContext
from dpgan.training.dp_critic import train_dp_critic
from dpgan.training.gan_loop import GeneratorHook
from dpgan.training.noise_layer import train_noise_layer_gan
from dpgan.training.progress import FitProgressFn, StepReporter
from dpgan.training.schedule import gan_schedule_for


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
class StrategyResult:
    """What a strategy trained: the released generator, the critic (kept in memory for white-box
    attacks, never saved) and the items of the training record that are the strategy's own."""

    generator: torch.nn.Module
    critic: torch.nn.Module
    record: dict[str, Any]


@dataclass(frozen=True)
class DPCriticStrategy:
    """DP-SGD on the critic through the engine: Poisson sampling of units, the real term and the
    gradient penalty clipped together per unit, Gaussian noise, one ledger event per critic step."""

    config: TrainingConfig

    def train(
        self,
        ctx: FitContext,
        units: torch.Tensor,
        rows: float,
        generator: torch.nn.Module,
        critic: torch.nn.Module,
        hooks: Sequence[GeneratorHook],
        progress: FitProgressFn | None,
    ) -> StrategyResult:
        budget, config = ctx.budget, self.config
        schedule = gan_schedule_for(config, rows, "critic")
        calibrated = sigma_and_steps(
            sample_rate=schedule.sample_rate,
            steps=schedule.steps,
            epsilon=budget.epsilon,
            delta=budget.delta,
            accountant=budget.accountant,
            prior=ctx.ledger.committed(),
            sampling=schedule.sampling,
            noise_multiplier=budget.noise_multiplier,
            cap_steps=False,
        )
        step_entry = sampled_steps_event(
            "step", calibrated.noise_multiplier, sampling_rate=schedule.sample_rate, sampling=schedule.sampling
        )
        reporter = StepReporter(progress, calibrated.steps, step_entry, ctx.ledger, budget.delta, budget.accountant)
        result = train_dp_critic(
            units,
            [],
            config,
            sample_rate=schedule.sample_rate,
            expected_batch_size=schedule.expected_batch_size,
            noise_multiplier=calibrated.noise_multiplier,
            steps=calibrated.steps,
            generator=ctx.torch_generator(),  # on the fit's device
            ledger=ctx.ledger,
            critic=critic,
            generator_net=generator,
            hooks=hooks,
            progress=reporter,
        )
        record = {
            "noise_multiplier": calibrated.noise_multiplier,
            "sample_rate": schedule.sample_rate,
            "expected_batch_size": schedule.expected_batch_size,
            "steps": result.steps,
        }
        return StrategyResult(result.generator, result.critic, record)


@dataclass(frozen=True)
class NoiseLayerStrategy:
    """The noise-layer GAN (Triastcyn & Faltings). Both forms use the noise σ that the sound form's
    release would need for the rest of ε (same noise, so the two compare); only the sound form
    (`certified`) charges the ledger. The batch capacity is public: the expected batch qN̂ (N̂
    released) plus three of its standard deviations."""

    config: TrainingConfig
    certified: bool
    activation_bound: float

    def train(
        self,
        ctx: FitContext,
        units: torch.Tensor,
        rows: float,
        generator: torch.nn.Module,
        critic: torch.nn.Module,
        hooks: Sequence[GeneratorHook],
        progress: FitProgressFn | None,
    ) -> StrategyResult:
        if hooks:
            raise InputError("the noise-layer GAN takes no generator plug-ins")
        budget = ctx.budget
        schedule = gan_schedule_for(self.config, rows, "critic")
        calibrated = calibrate_feature_release(
            sample_rate=schedule.sample_rate,
            passes=schedule.steps,
            epsilon=budget.epsilon,
            delta=budget.delta,
            accountant=budget.accountant,
            prior=ctx.ledger.committed(),
            noise_multiplier=budget.noise_multiplier,
        )
        capacity = int(math.ceil(schedule.expected_batch_size + 3.0 * math.sqrt(schedule.expected_batch_size)))
        torch_gen = ctx.torch_generator()
        if self.certified:  # ε so far from the passes' own ledger entry, as for the DP critic
            entry = release_entry(calibrated.noise_multiplier, schedule.sample_rate, capacity)
            reporter = StepReporter(progress, calibrated.steps, entry, ctx.ledger, budget.delta, budget.accountant)
        else:  # the published form claims no ε: the bar says so

            def reporter(step: int) -> None:
                if progress is not None:
                    progress(step, calibrated.steps, math.nan)

        result = train_noise_layer_gan(
            units,
            self.config,
            G=generator,
            critic=critic,
            certified=self.certified,
            sample_rate=schedule.sample_rate,
            capacity=capacity,
            noise_multiplier=calibrated.noise_multiplier,
            activation_bound=self.activation_bound,
            steps=calibrated.steps,
            generator=torch_gen,
            ledger=ctx.ledger if self.certified else None,
            progress=reporter,
        )
        record = {
            "noise_layer_sigma": calibrated.noise_multiplier,
            "capacity": capacity,
            "sample_rate": schedule.sample_rate,
            "expected_batch_size": schedule.expected_batch_size,
            "steps": result.steps,
            **({} if result.certified else {"not_certified": result.reason}),
        }
        return StrategyResult(result.generator, result.critic, record)


__all__ = ["DPCriticStrategy", "NoiseLayerStrategy", "StrategyResult", "critic_config"]
