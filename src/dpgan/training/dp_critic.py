"""GAN training with DP-SGD on the critic: the dp-gan, dp-wgan, dp-cgan and dtgan-d recipes.

Per real record i the critic's private unit is ℓ_i = -w_i·D(x_i) [+ λ·GP(x̂_i)] for WGAN losses
(the penalty's interpolate x̂_i reads x_i, so it is clipped *together* with the real term), or
softplus(-D(x_i))·w_i for the BCE loss; w_i is a training-by-sampling importance weight from the
public/DP prior (1 otherwise). Each ℓ_i is clipped to C (or, with microbatches, each microbatch's
mean, which doubles the sensitivity to 2C and so the noise), Gaussian noise is added to the sum,
and the sum is divided by the expected batch size qN̂ (never by |B|). The fake-only term reads no
private record: it is never charged noise. One accounted event per critic step, whatever the
recipe: the information loss's real feature moments ride in the same clipped vector.
The released generator is an exponential moving average of its iterates (post-processing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from dpgan.errors import InputError
from dpgan.models.output_spans import OutputSpan
from dpgan.models.tabular import TabularCritic, TabularGenerator
from dpgan.privacy import grad_sample
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext, shard_positions
from dpgan.privacy.mlp_clipping import FEATURES_KEY
from dpgan.privacy.padded_batches import pad_size
from dpgan.privacy.step import (
    Recorder,
    Sampler,
)
from dpgan.training.checkpoint import FitCheckpoint, Snapshot
from dpgan.training.conditions import ConditionPrior
from dpgan.training.config import TrainingConfig
from dpgan.training.critic_step import CriticStepSettings, critic_release, critic_step
from dpgan.training.fake_rows import make_optimizer
from dpgan.training.gan_loop import GeneratorHook, GeneratorSide, MonitorFn, ProgressFn, StepCallbacks, generator_for
from dpgan.training.generator_losses import GeneratorObjective, feature_moments_from_noisy_sums
from dpgan.training.public_warm_start import PublicWarmStart
from dpgan.training.row_source import RowSource, as_row_source
from dpgan.training.selection import SnapshotKeeper


@dataclass
class TrainingResult:
    """The trained generator (released), the critic (kept in memory only, for white-box attack
    evaluation; it is never saved), and the number of noisy DP-SGD steps taken."""

    generator: TabularGenerator
    critic: torch.nn.Module
    steps: int


def fake_term_gradient(
    critic: torch.nn.Module, fakes: torch.Tensor, weight: torch.Tensor, clip: float | None, total: int | None = None
) -> dict[str, torch.Tensor]:
    """(1/n) Σ_j ∇θ [w_j·D(x̃_j)]: reads no private data, so no noise; optionally clipped per row
    through the per-unit backend (an MLP critic takes its penalty-free fast path: no interpolate
    and no penalty chain). With `total`, `fakes` is one rank's share of a fake batch of `total`
    rows and the sum is divided by `total`, so the ranks' results add up to the batch's mean."""
    if clip is None:
        scores = weight * critic(fakes)
        objective = scores.mean() if total is None else scores.sum() / total
        grads = torch.autograd.grad(objective, list(critic.parameters()))
        return {name: g for (name, _), g in zip(critic.named_parameters(), grads)}
    loss = grad_sample.CriticUnitLoss(real=fakes, weight=-weight)  # ℓ_j = -(-w_j)·D(x̃_j)
    summed = grad_sample.clipped_sum(critic, loss, clip).gradients
    return {name: g / (fakes.shape[0] if total is None else total) for name, g in summed.items()}


def fake_share(context: ProcessGroupContext, fake_batch: int) -> torch.Tensor | None:
    """This rank's positions of a fake batch, or None (compute it whole): one process, or fewer
    fake rows than ranks (a rank with no row would have no gradient to add)."""
    if not context.distributed or fake_batch < context.world_size:
        return None
    return shard_positions(fake_batch, context.rank, context.world_size)


def importance_weights(condition: ConditionPrior | None, config: TrainingConfig, real: torch.Tensor) -> torch.Tensor:
    """Training-by-sampling for Poisson batches: real rows are reweighted from the prior to the
    flattened prior that fake conditions are drawn from (ratios of public/DP numbers only)."""
    if condition is None or not config.training_by_sampling:
        return torch.ones(real.shape[0])
    ratio = condition.probabilities(True) / condition.probabilities(False)
    return ratio[condition.codes_of_encoded(real)].to(real.dtype)


def train_dp_critic(
    data: torch.Tensor | RowSource,
    spans: list[OutputSpan],
    config: TrainingConfig,
    *,
    sample_rate: float,
    expected_batch_size: float,
    noise_multiplier: float,
    steps: int,
    generator: torch.Generator,
    ledger: PrivacyLedger | None,
    condition: ConditionPrior | None = None,
    objective: GeneratorObjective | None = None,
    hooks: Sequence[GeneratorHook] = (),
    progress: ProgressFn | None = None,
    monitor: MonitorFn | None = None,
    monitor_every: int = 0,
    recorder: Recorder | None = None,
    sampler: Sampler | None = None,
    critic: torch.nn.Module | None = None,
    generator_net: torch.nn.Module | None = None,
    checkpoint: FitCheckpoint | None = None,
    keeper: SnapshotKeeper | None = None,
    public: PublicWarmStart | None = None,
    context: ProcessGroupContext = SINGLE_PROCESS,
) -> TrainingResult:
    """The DP-on-critic strategy: run exactly `steps` noisy critic updates, reserved in `ledger` and
    charged one by one (σ = 0 with no ledger: the benches' non-private control), a generator step
    every `n_critic` of them through the shared generator side (dpgan.training.gan_loop), with its
    plug-in `hooks`. `recorder`/`sampler` are test injections; `critic` any nn.Module scoring
    encoded rows (default: the configured MLP), `generator_net` any generator called as
    G(z, generator, condition) (default: the configured tabular one). G reads only the critic,
    which is DP. With a
    `checkpoint`, the loop resumes from its snapshot (if any) and writes one every few steps
    (dpgan.training.checkpoint has the argument why nothing is spent twice). `context` runs the loop
    data-parallel in lockstep (dpgan.privacy.distributed): the critic's clipped sums, the fake term
    and G's step (without the information loss) are split by position and summed; every draw, the
    noise, the plug-ins' gradients and both updates are the same on every rank."""
    source = as_row_source(data)  # rows by index: in memory, or a streamed block (training.row_source)
    sampler = sampler if sampler is not None else source.sampler
    fake_batch = max(1, int(round(expected_batch_size)))
    G = generator_net if generator_net is not None else generator_for(config, spans, condition)
    side = GeneratorSide(config, G, condition, generator, fake_batch, hooks)
    fakes = side.fakes
    D = critic if critic is not None else TabularCritic(source.width, config.critic_hidden)
    opt_d = make_optimizer(config, D.parameters(), config.critic_lr)
    objective = objective or GeneratorObjective(config.loss)
    after_step = StepCallbacks(progress, monitor, monitor_every, keep=keeper)
    clip = config.max_grad_norm
    step_settings = CriticStepSettings.from_config(config)
    private_step = critic_step(
        step_settings,
        units=source.num_rows,
        sample_rate=sample_rate,
        noise_multiplier=noise_multiplier,
        max_norm=clip,
        expected_batch_size=expected_batch_size,
        steps=steps,
        ledger=ledger,
        generator=generator,
        recorder=recorder,
        sampler=sampler,
        context=context,
    )
    # static shapes: each batch padded to one public size P from q·N̂ (dpgan.privacy.padded_batches)
    pad = pad_size(expected_batch_size, sample_rate) if config.static_shapes else None
    if pad is not None and context.distributed:
        raise InputError("static_shapes pads one process's batch: it does not run data-parallel yet")
    real_moments: tuple[torch.Tensor, torch.Tensor] | None = None
    # Data-parallel: each rank computes G's rows and the fake-only terms at its share of the fake
    # positions only (every rank still draws the whole batch's inputs, so the streams stay in
    # lockstep) and the shares' gradients are summed: they read no private record (no noise).
    mine = fake_share(context, fake_batch)
    start = 0
    saved = checkpoint.load() if checkpoint is not None else None
    if saved is not None:
        start, clip = saved.step, float(saved.values["clip"])
        side.restore_from(saved)
        if keeper is not None:
            keeper.restore_from(saved)
        saved.get_module("D", D)
        saved.get_optimizer("opt_D", opt_d)
        saved.get_generator("generator", generator)
        if saved.values["real_moments"]:
            device = torch.get_default_device()  # the file holds CPU copies (dpgan.training.checkpoint)
            real_moments = (saved.tensors["real_moments/mean"].to(device), saved.tensors["real_moments/sd"].to(device))
        private_step.restore(start, max_norm=clip if step_settings.adaptive is not None else None)
    elif public is not None:  # no private record read: dpgan.training.public_warm_start
        public.run(side, D, opt_d, config, objective, generator, fake_batch)

    for step in range(start, steps):
        if step_settings.adaptive is not None:
            clip = private_step.max_norm  # the step owns C: moved by its own noisy counts
        index = private_step.sample()
        real = source.rows(index)
        generator_step = (step + 1) % config.n_critic == 0
        want_features = generator_step and objective.info_weight > 0 and not step_settings.microbatches
        weight = importance_weights(condition, config, real)
        with torch.no_grad():
            # Nothing outside the noisy sum may depend on the private batch: the fake term has a
            # fixed size and prior-drawn conditions; G has no cross-row operations, so each GP
            # partner (conditioned on its record's own value) depends on that record only.
            fake_codes = fakes.codes(fake_batch)
            fake_term = fakes(fake_batch, fake_codes, rows=mine)
            pair_codes = condition.codes_of_encoded(real) if condition is not None else None
            fake_pairs = fakes(len(index), pair_codes) if step_settings.gp_weight > 0 else None
        release = critic_release(
            private_step,
            D,
            real,
            weight,
            fake_pairs,
            step_settings,
            max_norm=clip,
            with_features=want_features,
            generator=generator,
            pad_to=pad,
        )
        private = release.gradient(D)
        if want_features:
            real_moments = feature_moments_from_noisy_sums(
                release.extra(FEATURES_KEY), config.info_feature_scale, expected_batch_size
            )
        with torch.no_grad():
            fake_weight = torch.sigmoid(D(fake_term)) if config.loss == "bce" else torch.ones(len(fake_term))
        fake_clip = clip if config.clip_fake_term else None
        fake_grads = fake_term_gradient(D, fake_term, fake_weight, fake_clip, None if mine is None else fake_batch)
        if mine is not None:
            fake_grads = context.all_reduce_sum(fake_grads)
        for name, p in D.named_parameters():
            p.grad = private[name] + fake_grads[name]
        opt_d.step()
        if config.loss == "wgan":
            with torch.no_grad():
                for p in D.parameters():
                    p.clamp_(-config.weight_clip, config.weight_clip)

        if generator_step:

            def backward(moments=real_moments) -> None:
                codes = fakes.codes(fake_batch)
                if mine is None or (objective.info_weight > 0 and moments is not None):
                    # the information loss reads the whole batch's feature moments: not a sum of rows
                    objective.batch_loss(D, fakes(fake_batch, codes), codes, moments).backward()
                    return
                share = fakes(fake_batch, codes, rows=mine)
                loss = objective.batch_loss(D, share, None if codes is None else codes[mine], moments)
                (loss * (len(mine) / fake_batch)).backward()  # a mean over the share → its part of the mean
                context.all_reduce_grads(G)  # before the hooks: they add theirs once, whole, on every rank

            side.step(backward)
            D.zero_grad(set_to_none=True)
            clip *= config.clip_decay
        after_step(step + 1, side)
        if checkpoint is not None and checkpoint.due(step + 1, steps):
            next_clip = private_step.max_norm if step_settings.adaptive is not None else clip
            snapshot = Snapshot(step + 1, values={"clip": next_clip, "real_moments": real_moments is not None})
            side.save_to(snapshot)
            if keeper is not None:
                keeper.save_to(snapshot)
            snapshot.put_module("D", D)
            snapshot.put_optimizer("opt_D", opt_d)
            snapshot.put_generator("generator", generator)
            if real_moments is not None:
                snapshot.tensors.update({"real_moments/mean": real_moments[0], "real_moments/sd": real_moments[1]})
            checkpoint.save(snapshot)
    return TrainingResult(generator=side.released(), critic=D, steps=steps)
