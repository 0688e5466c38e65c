"""The GAN's training strategies, as objects the fit pipeline runs (dpgan.fit) after the releases.

A strategy gets the units (one row per privacy unit, on the fit's device), the released unit count
N̂ (never the exact one), the networks and the plug-ins' generator hooks, and trains on what is left
of (ε, δ): the schedule from N̂, σ calibrated so that the ledger's committed entries plus its own
steps land on ε (or, with a fixed σ, as many steps as σ pays for), then the engine's loop, which
charges the ledger one event per private step as it runs. What it returns for the training record
is its own: σ, the rate, the expected batch, the steps.

- `DPCriticStrategy`: WGAN-GP (or BCE) with DP-SGD on the critic (dpgan.training.dp_critic);
- `DPGeneratorStrategy`: dtgan-g's DP on the generator through sharded critics;
- `NoiseLayerStrategy`: the noise-layer GAN (dpgan.training.noise_layer); its published form claims
  no ε and charges nothing, its sound form charges the ledger for every pass.
(A model that is DP statistics alone trains nothing: it is a statistics model, dpgan.model.)
The tables' loops take more (`LoopExtras`: spans, condition, objective, checkpoint, selection's
keeper, public warm start, process group); the tables' plan (dpgan.tables.fit.plan) runs
these same strategies.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from dpgan.errors import InputError
from dpgan.models.output_spans import OutputSpan
from dpgan.privacy.calibration import sigma_and_steps
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.privacy.feature_release import calibrate_feature_release, release_entry
from dpgan.privacy.releases import sampled_steps_event
from dpgan.training.checkpoint import FitCheckpoint
from dpgan.training.conditions import ConditionPrior
from dpgan.training.config import TrainingConfig
from dpgan.training.context import FitContext
from dpgan.training.dp_critic import TrainingResult, train_dp_critic
from dpgan.training.dp_generator import train_dp_generator
from dpgan.training.gan_loop import GeneratorHook
from dpgan.training.generator_losses import GeneratorObjective
from dpgan.training.noise_layer import train_noise_layer_gan
from dpgan.training.progress import FitProgressFn, StepReporter
from dpgan.training.public_warm_start import PublicWarmStart
from dpgan.training.schedule import Schedule, gan_schedule_for
from dpgan.training.selection import SnapshotKeeper, snapshot_steps


def critic_config(defaults: dict[str, Any], settings: dict[str, Any]) -> TrainingConfig:
    """The loop's settings for a series or image fit: the kind's defaults under the user's settings,
    checked; an unknown name is one clear line (a kind's own settings were taken out before)."""
    try:
        config = TrainingConfig(**(defaults | settings))
    except TypeError as exc:
        raise InputError(f"unknown setting: {exc}") from None
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
class LoopExtras:
    """What a table's loop takes besides the units (defaults: none, as for series and images): the
    output spans and condition of the default tabular networks, G's objective, a checkpoint to
    resume from, the keeper of DP checkpoint selection, a public warm start, the process group,
    whether given epochs cap a fixed σ's run, and the fit's torch generator when it was drawn
    before the releases (else the strategy draws it)."""

    spans: Sequence[OutputSpan] = ()
    condition: ConditionPrior | None = None
    objective: GeneratorObjective | None = None
    checkpoint: FitCheckpoint | None = None
    keeper: SnapshotKeeper | None = None
    public: PublicWarmStart | None = None
    context: ProcessGroupContext = SINGLE_PROCESS
    cap_steps: bool = False
    torch_gen: torch.Generator | None = None


@dataclass(frozen=True)
class Calibrated:
    schedule: Schedule
    noise_multiplier: float
    steps: int
    reporter: StepReporter

    def record(self, steps: int) -> dict[str, Any]:
        return {
            "noise_multiplier": self.noise_multiplier,
            "sample_rate": self.schedule.sample_rate,
            "expected_batch_size": self.schedule.expected_batch_size,
            "steps": steps,
        }


def calibrate_gan(
    ctx: FitContext, config: TrainingConfig, rows: float, dp_on: str, extras: LoopExtras, progress: FitProgressFn | None
) -> Calibrated:
    """The schedule from N̂, σ and T so that the ledger's committed entries (a reserved selection
    counted in full) plus the GAN's steps land on ε (or, with a fixed σ, as many steps as it pays
    for), the selection's snapshot steps, and the progress reporter."""
    schedule = gan_schedule_for(config, rows, dp_on)
    calibrated = sigma_and_steps(
        sample_rate=schedule.sample_rate,
        steps=schedule.steps,
        budget=ctx.budget,
        prior=ctx.ledger.committed(),
        sampling=schedule.sampling,
        cap_steps=extras.cap_steps,
    )
    sigma, steps = calibrated.noise_multiplier, calibrated.steps
    if extras.keeper is not None:
        extras.keeper.steps = snapshot_steps(steps, extras.keeper.count)
    step_entry = sampled_steps_event("step", sigma, sampling_rate=schedule.sample_rate, sampling=schedule.sampling)
    reporter = StepReporter(progress, steps, step_entry, ctx.ledger, ctx.budget)
    return Calibrated(schedule, sigma, steps, reporter)


@dataclass(frozen=True)
class _CalibratedLoop:
    """A strategy whose loop runs at the σ and T `calibrate_gan` gives (the DP critic, dtgan-g)."""

    config: TrainingConfig
    extras: LoopExtras = LoopExtras()
    name, dp_on = "dp-critic", "critic"

    def train(
        self,
        ctx: FitContext,
        units: Any,
        rows: float,
        generator: torch.nn.Module | None,
        critic: torch.nn.Module | None,
        hooks: Sequence[GeneratorHook],
        progress: FitProgressFn | None,
    ) -> StrategyResult:
        plan = calibrate_gan(ctx, self.config, rows, self.dp_on, self.extras, progress)
        torch_gen = self.extras.torch_gen if self.extras.torch_gen is not None else ctx.torch_generator()
        result = self.loop(ctx, units, plan, torch_gen, generator, critic, hooks)
        return StrategyResult(result.generator, result.critic, plan.record(result.steps))

    def loop(self, ctx: FitContext, units: Any, plan: Calibrated, torch_gen: torch.Generator,
             generator: torch.nn.Module | None, critic: torch.nn.Module | None,
             hooks: Sequence[GeneratorHook]) -> TrainingResult:  # fmt: skip
        raise NotImplementedError  # pragma: no cover - each strategy's loop


class DPCriticStrategy(_CalibratedLoop):
    """DP-SGD on the critic through the engine: Poisson sampling of units, the real term and the
    gradient penalty clipped together per unit, Gaussian noise, one ledger event per critic step.
    `generator` and `critic` None: the configured tabular networks (dpgan.training.dp_critic)."""

    def loop(self, ctx: FitContext, units: Any, plan: Calibrated, torch_gen: torch.Generator,
             generator: torch.nn.Module | None, critic: torch.nn.Module | None,
             hooks: Sequence[GeneratorHook]) -> TrainingResult:  # fmt: skip
        extras = self.extras
        return train_dp_critic(
            units,
            list(extras.spans),
            self.config,
            sample_rate=plan.schedule.sample_rate,
            expected_batch_size=plan.schedule.expected_batch_size,
            noise_multiplier=plan.noise_multiplier,
            steps=plan.steps,
            generator=torch_gen,
            ledger=ctx.ledger,
            condition=extras.condition,
            objective=extras.objective,
            critic=critic,
            generator_net=generator,
            hooks=hooks,
            progress=plan.reporter,
            checkpoint=extras.checkpoint,
            keeper=extras.keeper,
            public=extras.public,
            context=extras.context,
        )


class DPGeneratorStrategy(_CalibratedLoop):
    """dtgan-g: DP on the generator through sharded critics (dpgan.training.dp_generator); each
    shard's critic is trained without noise on its disjoint shard, G's gradient clipped and noised.
    The shard key is secret per fit (drawn from the fit's generator, never saved). Under a process
    group every rank runs it whole (the same release on each: no split, no speed-up)."""

    name, dp_on = "dp-generator", "generator"

    def loop(self, ctx: FitContext, units: Any, plan: Calibrated, torch_gen: torch.Generator,
             generator: torch.nn.Module | None, critic: torch.nn.Module | None,
             hooks: Sequence[GeneratorHook]) -> TrainingResult:  # fmt: skip
        if generator is not None or critic is not None:
            raise InputError("the DP-generator strategy builds its own tabular networks")
        extras = self.extras
        return train_dp_generator(
            units,
            list(extras.spans),
            self.config,
            noise_multiplier=plan.noise_multiplier,
            steps=plan.steps,
            generator=torch_gen,
            shard_key=ctx.rng.bytes(32),  # secret per fit, never saved
            ledger=ctx.ledger,
            condition=extras.condition,
            objective=extras.objective,
            hooks=hooks,
            progress=plan.reporter,
            checkpoint=extras.checkpoint,
            keeper=extras.keeper,
            public=extras.public,
        )


@dataclass(frozen=True)
class NoiseLayerStrategy:
    """The noise-layer GAN (Triastcyn & Faltings). Both forms use the noise σ that the sound form's
    release would need for the rest of ε (same noise, so the two compare); only the sound form
    (`certified`) charges the ledger. The batch capacity is public: the expected batch qN̂ (N̂
    released) plus three of its standard deviations."""

    config: TrainingConfig
    certified: bool
    activation_bound: float
    name, dp_on = "noise-layer", "critic"  # the noise sits in the discriminator; G learns through it

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
        schedule = gan_schedule_for(self.config, rows, "critic")
        calibrated = calibrate_feature_release(
            sample_rate=schedule.sample_rate, passes=schedule.steps, budget=ctx.budget, prior=ctx.ledger.committed()
        )
        capacity = int(math.ceil(schedule.expected_batch_size + 3.0 * math.sqrt(schedule.expected_batch_size)))
        torch_gen = ctx.torch_generator()
        if self.certified:  # ε so far from the passes' own ledger entry, as for the DP critic
            entry = release_entry(calibrated.noise_multiplier, schedule.sample_rate, capacity)
            reporter = StepReporter(progress, calibrated.steps, entry, ctx.ledger, ctx.budget)
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


STRATEGIES: dict[str, type[DPCriticStrategy] | type[DPGeneratorStrategy] | type[NoiseLayerStrategy]] = {
    cls.name: cls for cls in (DPCriticStrategy, DPGeneratorStrategy, NoiseLayerStrategy)
}  # a recipe names its strategy (dpgan.recipes.recipe)


__all__ = [
    "STRATEGIES",
    "DPCriticStrategy",
    "DPGeneratorStrategy",
    "LoopExtras",
    "NoiseLayerStrategy",
    "StrategyResult",
    "calibrate_gan",
    "critic_config",
]
