"""The critic's private step: the unit each real record is clipped as, and the step that releases it.

The privacy argument is dpgan.training.dp_critic's (the module docstring there): per real record the
real term and its gradient-penalty partner are clipped together to C (or per microbatch, 2C), the
noise is added to the clipped sum, which is divided by the expected batch. `critic_step` builds the
engine's PrivateStep for any critic module (grouped, adaptive or microbatch clipping by the
settings); `critic_release` runs one. The audit drives the same two (dpgan.evaluation.audit.whitebox).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from dpgan.errors import InputError
from dpgan.privacy import grad_sample
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.adaptive_clipping import AdaptiveClipping
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext, shard_positions
from dpgan.privacy.grouped_clipping import GroupedClipping
from dpgan.privacy.microbatch import assign_microbatches, microbatch_clipped_sum
from dpgan.privacy.mlp_clipping import FEATURES_KEY
from dpgan.privacy.step import Clipping, MicrobatchClipping, PerUnitClipping, PrivateStep, Recorder, Release, Sampler
from dpgan.training.config import TrainingConfig
from dpgan.training.generator_losses import spherical_interpolate

CRITIC_EVENT = "DP-SGD on the critic"


@dataclass(frozen=True)
class CriticStepSettings:
    """What the critic's unit loss is, fixed before training from the configuration: none of it is
    read from private data. `gp_weight` is 0 for losses without a gradient penalty; `microbatches`
    = 0 clips per record; `clipping_groups` "per-layer" clips each layer (and the feature vector)
    to its own share of C; `adaptive` moves C towards a quantile of the records' norms."""

    loss: str
    gp_weight: float
    one_sided_penalty: bool
    interpolation: str
    microbatches: int
    feature_scale: float
    clipping_groups: str = "none"
    adaptive: AdaptiveClipping | None = None

    @classmethod
    def from_config(cls, config: TrainingConfig) -> "CriticStepSettings":
        return cls(
            loss=config.loss,
            gp_weight=config.gp_weight if config.loss == "wgan-gp" else 0.0,
            one_sided_penalty=config.one_sided_penalty,
            interpolation=config.interpolation,
            microbatches=config.microbatches,
            feature_scale=config.info_feature_scale,
            clipping_groups=config.clipping_groups,
            adaptive=(
                AdaptiveClipping(
                    config.adaptive_clip_quantile, config.adaptive_clip_lr, config.adaptive_clip_count_noise
                )
                if config.adaptive_clip_quantile > 0
                else None
            ),
        )

    @property
    def clipping(self) -> Clipping:
        """Per-record clipping (sensitivity C), microbatches (2C: dpgan.privacy.microbatch), or
        per-layer groups (dpgan.privacy.grouped_clipping: the same event)."""
        if self.microbatches:
            return MicrobatchClipping(self.microbatches)
        return GroupedClipping(self.clipping_groups) if self.clipping_groups != "none" else PerUnitClipping()


@dataclass(frozen=True)
class CriticUnits:
    """One release's Poisson batch and what belongs to each record's clipped unit: its importance
    (or BCE) weight, its penalty partner (drawn from G with the record's own condition), its
    interpolation point α, and with microbatches its microbatch id."""

    real: torch.Tensor
    weight: torch.Tensor
    partners: torch.Tensor | None
    alpha: torch.Tensor
    groups: torch.Tensor | None
    with_features: bool
    context: tuple[torch.Tensor, ...] = ()

    def shard(self, rank: int, world_size: int) -> tuple["CriticUnits", int]:
        """Rank `rank`'s share of the batch for a data-parallel release (dpgan.privacy.distributed):
        each record's whole unit (row, weight, partner, α, context) goes to one rank; with
        microbatches, each whole microbatch does."""
        index = shard_positions(len(self.real), rank, world_size, self.groups)
        return (
            CriticUnits(
                self.real[index],
                self.weight[index],
                None if self.partners is None else self.partners[index],
                self.alpha[index],
                None if self.groups is None else self.groups[index],
                self.with_features,
                tuple(c[index] for c in self.context),
            ),
            len(index),
        )


def critic_clipped_sum(settings: CriticStepSettings):
    """The backend of the critic's private step: per record i, ℓ_i = -w_i·D(x_i) + λ·GP(x̂_i) (the
    penalty's interpolate reads x_i, so it is inside the unit) and, for the information loss, the
    feature vector β·[f(x_i), f(x_i)²], clipped with ONE norm per record through
    dpgan.privacy.grad_sample (any nn.Module critic; the MLP ghost kernel where it applies); with
    microbatches each microbatch's mean (dpgan.privacy.microbatch, an MLP critic)."""

    def clipped_sum(critic: torch.nn.Module, units: CriticUnits, max_norm: float, groups=None, mask=None):
        if settings.microbatches:
            if mask is not None:
                raise InputError("microbatch clipping takes no padded batch: run it with static_shapes off")
            return microbatch_clipped_sum(
                critic, units.real, -units.weight, units.groups, settings.microbatches, max_norm=max_norm
            )
        gp = settings.gp_weight > 0
        partners = units.real if units.partners is None else units.partners
        x_hat = (
            spherical_interpolate(units.real, partners, units.alpha)
            if gp and settings.interpolation == "spherical"
            else None
        )
        result = grad_sample.clipped_sum(
            critic,
            grad_sample.CriticUnitLoss(
                real=units.real,
                weight=units.weight,
                partners=partners if gp and x_hat is None else None,
                alpha=units.alpha if gp and x_hat is None else None,
                x_hat=x_hat,
                gp_weight=settings.gp_weight,
                one_sided=settings.one_sided_penalty,
                feature_scale=settings.feature_scale if units.with_features else 0.0,
                context=units.context,
                mask=mask,
            ),
            max_norm,
            groups=groups,
        )
        sums = dict(result.gradients)
        if result.features is not None:
            sums[FEATURES_KEY] = result.features
        return sums, result.norms

    return clipped_sum


def feature_width(critic: torch.nn.Module, unit_shape: tuple[int, ...], context_shapes=()) -> int:
    """Length of β·[f, f²] for this critic: read from `critic.features` on a zero probe of the
    public unit shape (the schema's width), never from a private batch."""
    probe = torch.zeros(1, *unit_shape)
    context = tuple(torch.zeros(1, *shape) for shape in context_shapes)
    with torch.no_grad():
        return 2 * int(critic.features(probe, *context)[0].numel())


def critic_step(
    settings: CriticStepSettings,
    *,
    units: int,
    sample_rate: float,
    noise_multiplier: float,
    max_norm: float,
    expected_batch_size: float,
    steps: int,
    ledger: PrivacyLedger | None,
    generator: torch.Generator,
    recorder: Recorder | None = None,
    sampler: Sampler | None = None,
    context: ProcessGroupContext = SINGLE_PROCESS,
) -> PrivateStep:
    """The critic's private step, `steps` releases reserved in `ledger` (one event per critic step).
    `recorder` and `sampler` are for tests (dpgan.privacy.step)."""
    unit = (
        f"mean of each of {settings.microbatches} microbatches clipped (sensitivity 2C, noise 2σC)"
        if settings.microbatches
        else "real term"
        + (" and gradient penalty" if settings.gp_weight > 0 else "")
        + (" clipped per record" if settings.clipping_groups == "none" else " clipped per layer and record")
    )
    if settings.adaptive is not None:
        unit += f"; adaptive C (quantile {settings.adaptive.quantile:g}, its noisy count in the same event)"
    return PrivateStep(
        units=units,
        sample_rate=sample_rate,
        noise_multiplier=noise_multiplier,
        max_norm=max_norm,
        expected_batch_size=expected_batch_size,
        steps=steps,
        ledger=ledger,
        label=CRITIC_EVENT,
        note=f"Poisson; {unit}",
        clipped_sum=critic_clipped_sum(settings),
        clipping=settings.clipping,
        generator=generator,
        recorder=recorder,
        sampler=sampler,
        adaptive=settings.adaptive,
        context=context,
    )


def critic_release(
    step: PrivateStep,
    critic: torch.nn.Module,
    real: torch.Tensor,
    weight: torch.Tensor,
    fake_pairs: torch.Tensor | None,
    settings: CriticStepSettings,
    *,
    max_norm: float,
    with_features: bool,
    generator: torch.Generator,
    pad_to: int | None = None,
) -> Release:
    """The only place a critic step reads private rows: one release of `step` per call.

    `real` is the Poisson batch (possibly empty), `weight` each record's public importance weight,
    `fake_pairs` each record's gradient-penalty partner (None without a penalty). For BCE the unit
    softplus(-D(x_i))·w_i enters as the weight σ(-D(x_i))·w_i of -D(x_i). The release's gradient is
    the noisy sum ÷ qN̂ (÷ m with microbatches); with `with_features`, its extra FEATURES_KEY is the
    noisy sum of β·[f, f²] (the information loss's input). The privacy audit
    (dpgan.evaluation.audit) calls this function with its own step, not a copy of it.

    With `pad_to` P ≥ |B| (static shapes: dpgan.privacy.padded_batches) every per-record input is
    drawn for the |B| records as without it (the same generator calls, so the same numbers), then
    padded with zero rows to P, and the release masks the padding out: the same release, within
    float rounding, with P rows in every step's kernels."""
    if settings.loss == "bce":
        with torch.no_grad():
            weight = weight * torch.sigmoid(-critic(real))  # d softplus(-D)/dD = -σ(-D)
    size = len(real)
    alpha = torch.rand(size, 1, generator=generator, device=generator.device)
    groups = None
    if settings.microbatches and size > 0:
        groups = assign_microbatches(size, settings.microbatches, generator)
    mask = None
    if pad_to is not None and pad_to > size:
        if settings.microbatches:
            raise InputError("microbatch clipping takes no padded batch: run it with static_shapes off")
        real, weight, alpha = pad_rows(real, pad_to), pad_rows(weight, pad_to), pad_rows(alpha, pad_to)
        fake_pairs = None if fake_pairs is None else pad_rows(fake_pairs, pad_to)
        mask = pad_rows(torch.ones(size, device=real.device), pad_to)
    units = CriticUnits(real, weight, fake_pairs, alpha, groups, with_features)
    extras = {FEATURES_KEY: feature_width(critic, tuple(real.shape[1:]))} if with_features else None
    return step.release(critic, units, size, max_norm=max_norm, extras=extras, mask=mask)


def pad_rows(rows: torch.Tensor, size: int) -> torch.Tensor:
    """`rows` followed by zero rows up to `size` rows (a padded batch's masked positions)."""
    padding = rows.new_zeros(size - rows.shape[0], *rows.shape[1:])
    return torch.cat([rows, padding])
