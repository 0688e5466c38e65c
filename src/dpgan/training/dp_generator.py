"""DP on the generator (dtgan-g; Kunar et al. 2021 after GS-WGAN, Chen et al. 2020).

N_d critics are trained WITHOUT noise, each on its own disjoint shard; a record's shard is a
keyed hash of its content (the key is drawn per fit and never saved), so a neighbouring table
changes exactly one shard. Each generator step picks one critic uniformly and backpropagates
L_G through it; a hook on G's output clips the upstream gradient ∂L_G/∂x̃_i of every generated
row to C and adds Gaussian noise before it reaches G. All loss terms (adversarial, information,
classification) pass through that one hook, so they are clipped and noised together.

Accounting (dpgan.privacy.accounting, module docstring, has the proof): one record can change
the chosen critic arbitrarily, and all B generated rows pass through it, so the step's L2
sensitivity is 2C√B, not C; the noise std is σ·2C√B. A neighbouring table changes one of the N_d
shards. The critics keep hidden state (weights, Adam moments) that depends on which past steps
chose them, so no per-step amplification theorem applies; instead, given the selections and the
other randomness, the fit is n Gaussian steps of multiplier σ (n = steps that chose the changed
shard) composed with the earlier events, and joint convexity mixes over n ~ Binomial(T, 1/N_d).
The ledger holds ONE entry for the T steps (`LedgerEntry(sampling="one-of-shards")`), never B·T
per-example events (GS-WGAN's released accounting) and never a Poisson add/remove event at rate
1/N_d, which is only a lower bound here. The honest ε is large unless N_d is large; the critics
are never saved.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np
import torch

from dpgan.models.output_spans import OutputSpan
from dpgan.models.tabular import TabularCritic
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.mlp_clipping import wgan_gp_clipped_sum
from dpgan.privacy.step import GeneratorHookStep, Recorder
from dpgan.training.checkpoint import FitCheckpoint, Snapshot
from dpgan.training.conditions import ConditionPrior
from dpgan.training.config import TrainingConfig
from dpgan.training.dp_critic import TrainingResult, fake_term_gradient
from dpgan.training.fake_rows import make_optimizer
from dpgan.training.gan_loop import GeneratorHook, GeneratorSide, ProgressFn, StepCallbacks, generator_for
from dpgan.training.generator_losses import GeneratorObjective
from dpgan.training.public_warm_start import PublicWarmStart
from dpgan.training.selection import SnapshotKeeper


def shard_of_rows(encoded: np.ndarray, num_shards: int, key: bytes) -> np.ndarray:
    """Shard id of every row from a keyed BLAKE2b hash of its content: independent of the other
    rows, so adding or removing one record leaves every other record's shard unchanged."""
    rows = np.ascontiguousarray(encoded, dtype=np.float32)
    ids = np.empty(rows.shape[0], dtype=np.int64)
    for i in range(rows.shape[0]):
        digest = hashlib.blake2b(rows[i].tobytes(), key=key, digest_size=8).digest()
        ids[i] = int.from_bytes(digest, "little") % num_shards
    return ids


def _critic_step(
    D: TabularCritic,
    opt: torch.optim.Optimizer,
    real: torch.Tensor,
    fake: torch.Tensor,
    config: TrainingConfig,
    generator: torch.Generator,
) -> None:
    """A non-private WGAN-GP step on one shard (nothing from it is released directly)."""
    alpha = torch.rand(real.shape[0], 1, generator=generator, device=generator.device)
    summed, _ = wgan_gp_clipped_sum(
        D, real, fake, alpha, gp_weight=config.gp_weight, max_norm=math.inf, one_sided=config.one_sided_penalty
    )
    fake_grads = fake_term_gradient(D, fake, torch.ones(fake.shape[0]), math.inf)
    for name, p in D.named_parameters():
        p.grad = summed[name] / real.shape[0] + fake_grads[name]
    opt.step()


GENERATOR_EVENT = "DP on the generator (dtgan-g)"


def generator_hook_step(
    *,
    num_shards: int,
    batch_size: int,
    noise_multiplier: float,
    max_norm: float,
    steps: int,
    ledger: PrivacyLedger | None,
    generator: torch.Generator,
    recorder: Recorder | None = None,
) -> GeneratorHookStep:
    """dtgan-g's private step: `steps` hook releases reserved in `ledger` (one event per generator step)."""
    note = (
        f"one event per generator step: one of {num_shards} shards; ε from the binomial mixture over the steps "
        "that pick the changed shard (add/remove); rows' gradients at G's output clipped to C, sensitivity "
        f"2C√B (B={batch_size}), noise std σ·2C√B"
    )
    return GeneratorHookStep(
        num_shards=num_shards,
        batch_size=batch_size,
        noise_multiplier=noise_multiplier,
        max_norm=max_norm,
        steps=steps,
        ledger=ledger,
        label=GENERATOR_EVENT,
        note=note,
        generator=generator,
        recorder=recorder,
    )


def train_dp_generator(
    data: torch.Tensor,
    spans: list[OutputSpan],
    config: TrainingConfig,
    *,
    noise_multiplier: float,
    steps: int,
    generator: torch.Generator,
    shard_key: bytes,
    ledger: PrivacyLedger | None,
    condition: ConditionPrior | None = None,
    objective: GeneratorObjective | None = None,
    hooks: Sequence[GeneratorHook] = (),
    progress: ProgressFn | None = None,
    recorder: Recorder | None = None,
    checkpoint: FitCheckpoint | None = None,
    keeper: SnapshotKeeper | None = None,
    public: PublicWarmStart | None = None,
) -> TrainingResult:
    """The DP-on-generator strategy: run exactly `steps` noisy generator steps (the accounted T),
    each through one random critic, on the shared generator side (dpgan.training.gan_loop) with
    its plug-in `hooks`; their gradients are added after the clip-and-noise hook (post-processing
    of DP outputs, no further cost). With a `checkpoint`, resumes from its snapshot and writes one
    every few steps (dpgan.training.checkpoint)."""
    N_d = config.num_discriminators
    shards = torch.from_numpy(shard_of_rows(data.cpu().numpy(), N_d, shard_key))
    shard_rows = [data[shards == j] for j in range(N_d)]
    batch = config.batch_size
    side = GeneratorSide(config, generator_for(config, spans, condition), condition, generator, batch, hooks)
    fakes, G = side.fakes, side.G
    critics = [TabularCritic(data.shape[1], config.critic_hidden) for _ in range(N_d)]
    critic_opts = [make_optimizer(config, D.parameters(), config.critic_lr) for D in critics]
    objective = objective or GeneratorObjective(config.loss)
    after_step = StepCallbacks(progress, keep=keeper)
    private_step = generator_hook_step(
        num_shards=N_d,
        batch_size=batch,
        noise_multiplier=noise_multiplier,
        max_norm=config.max_grad_norm,
        steps=steps,
        ledger=ledger,
        generator=generator,
        recorder=recorder,
    )

    start = 0
    saved = checkpoint.load() if checkpoint is not None else None
    if saved is not None:
        start = saved.step
        side.restore_from(saved)
        if keeper is not None:
            keeper.restore_from(saved)
        for j, (D, opt) in enumerate(zip(critics, critic_opts)):
            saved.get_module(f"D{j}", D)
            saved.get_optimizer(f"opt_D{j}", opt)
        saved.get_generator("generator", generator)
        private_step.restore(start)
    elif public is not None:  # every shard critic starts from one critic warm-started on public rows
        public_critic = TabularCritic(data.shape[1], config.critic_hidden)
        opt = make_optimizer(config, public_critic.parameters(), config.critic_lr)
        public.run(side, public_critic, opt, config, objective, generator, batch)
        for D in critics:
            D.load_state_dict(public_critic.state_dict())

    for step in range(start, steps):
        j = private_step.sample()
        D, rows = critics[j], shard_rows[j]
        for _ in range(config.n_critic):
            if rows.shape[0] == 0:
                break
            pick = torch.randint(
                rows.shape[0], (min(batch, rows.shape[0]),), generator=generator, device=generator.device
            )
            real = rows[pick]
            with torch.no_grad():
                fake = fakes(real.shape[0], condition.codes_of_encoded(real) if condition else None)
            _critic_step(D, critic_opts[j], real, fake, config, generator)
        real_moments = None
        if objective.info_weight > 0 and rows.shape[0] > 0:
            with torch.no_grad():  # shard statistics: they reach G only through the hook
                f = D.features(
                    rows[torch.randint(rows.shape[0], (batch,), generator=generator, device=generator.device)]
                )
                real_moments = (f.mean(dim=0), f.std(dim=0, unbiased=False))

        def backward(D=D, moments=real_moments) -> None:
            codes = fakes.codes(batch)
            x = fakes(batch, codes)
            x.register_hook(private_step.hook())
            # summed over rows (×B) so each row's upstream gradient is O(1) against C; the hook's
            # output is then averaged by the division below
            (objective.batch_loss(D, x, codes, moments) * batch).backward()
            for p in G.parameters():
                if p.grad is not None:
                    p.grad /= batch

        side.step(backward)
        after_step(step + 1, side)
        if checkpoint is not None and checkpoint.due(step + 1, steps):
            snapshot = Snapshot(step + 1)
            side.save_to(snapshot)
            if keeper is not None:
                keeper.save_to(snapshot)
            for j, (D, opt) in enumerate(zip(critics, critic_opts)):
                snapshot.put_module(f"D{j}", D)
                snapshot.put_optimizer(f"opt_D{j}", opt)
            snapshot.put_generator("generator", generator)
            checkpoint.save(snapshot)
    # the critics never leave this function; the first is returned for in-memory evaluation only
    return TrainingResult(generator=side.released(), critic=critics[0], steps=steps)
