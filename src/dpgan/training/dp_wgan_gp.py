"""WGAN-GP with DP-SGD on the critic (Frigerio et al. 2019, Algorithm 1), done carefully.

Per real record i the critic's private unit is -D(x_i) + λ·GP(α x_i + (1-α) x̃_i): the gradient
penalty reads x_i, so it is clipped *together* with the real term. The fake-only term ∇ mean D(x̃)
depends on no private record: it is never charged noise (by default each fake row's gradient is
clipped to C as well, which is free and keeps both sides of the update on the same scale). The
noisy sum is divided by the expected batch size L = qN̂. The generator never reads private rows;
the released generator is an exponential moving average of its iterates (post-processing).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch

from dpgan.models.tabular import TabularCritic, TabularGenerator
from dpgan.privacy.dpsgd import add_gaussian_noise
from dpgan.privacy.mlp_clipping import wgan_gp_clipped_sum
from dpgan.privacy.sampling import PoissonSampler
from dpgan.transforms.encoder import OutputSpan


@dataclass
class TrainingConfig:
    """Network and optimisation settings; none of them is read from private data.

    Defaults were chosen on Adult at ε=3 with learning curves scored on the public test split
    (bench/tune_curve.py); bench/RESULTS.md records the ablations.
    """

    batch_size: int = 1024
    epochs: float = 60.0
    n_critic: int = 2
    gp_weight: float = 10.0
    # Penalise only ‖∇D‖ > 1 (WGAN-LP). The two-sided penalty spends most of each record's
    # clipping budget pushing ‖∇D‖ up towards 1 early on, leaving little for the real term.
    one_sided_penalty: bool = True
    max_grad_norm: float = 1.0
    clip_decay: float = 1.0
    # Clip the fake term's per-example gradients to C too (free: it reads no private data) so
    # that the real and fake sides of the critic's update carry comparable weight.
    clip_fake_term: bool = True
    # Release an exponential moving average of G's weights (post-processing: free), which damps
    # the oscillation that noisy critics cause; 0 releases the last iterate.
    ema_decay: float = 0.995
    noise_dim: int = 64
    generator_hidden: tuple[int, ...] = (256, 256)
    critic_hidden: tuple[int, ...] = (128, 128)
    generator_lr: float = 5e-4
    critic_lr: float = 5e-4
    betas: tuple[float, float] = (0.5, 0.9)
    categorical_activation: str = "gumbel"
    gumbel_tau: float = 0.2

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TrainingConfig":
        data = dict(data)
        for key in ("generator_hidden", "critic_hidden", "betas"):
            if key in data:
                data[key] = tuple(data[key])
        return cls(**data)


def build_generator(config: TrainingConfig, spans: list[OutputSpan]) -> TabularGenerator:
    return TabularGenerator(
        config.noise_dim, config.generator_hidden, spans, config.categorical_activation, config.gumbel_tau
    )


ProgressFn = Callable[[int], None]


def _fake_term_gradient(critic: TabularCritic, fakes: torch.Tensor, clip: float | None) -> dict[str, torch.Tensor]:
    """∇θ mean_j D(x̃_j): reads no private data, so it gets no noise; optionally clipped per row."""
    if clip is None:
        grads = torch.autograd.grad(critic(fakes).mean(), list(critic.parameters()))
        return {name: g for (name, _), g in zip(critic.named_parameters(), grads)}
    # the real-side routine with λ = 0 gives Σ_j clip(∇(−D(x̃_j))); flip the sign
    unused = torch.zeros(fakes.shape[0], 1)
    summed, _ = wgan_gp_clipped_sum(critic, fakes, fakes, unused, gp_weight=0.0, max_norm=clip)
    return {name: -g / fakes.shape[0] for name, g in summed.items()}


@dataclass
class TrainingResult:
    """The trained generator (released), the critic (kept in memory only, for white-box attack
    evaluation; it is never saved), and the number of noisy critic steps taken."""

    generator: TabularGenerator
    critic: TabularCritic
    steps: int


def train_dp_wgan_gp(
    data: torch.Tensor,
    spans: list[OutputSpan],
    config: TrainingConfig,
    *,
    sample_rate: float,
    expected_batch_size: float,
    noise_multiplier: float,
    steps: int,
    generator: torch.Generator,
    progress: ProgressFn | None = None,
    monitor: Callable[[int, TabularGenerator], None] | None = None,
    monitor_every: int = 0,
) -> TrainingResult:
    """Run exactly `steps` noisy critic updates (the accounted T)."""
    G = build_generator(config, spans)
    G_ema = copy.deepcopy(G) if config.ema_decay > 0 else G
    D = TabularCritic(data.shape[1], config.critic_hidden)
    opt_g = torch.optim.Adam(G.parameters(), lr=config.generator_lr, betas=config.betas)
    opt_d = torch.optim.Adam(D.parameters(), lr=config.critic_lr, betas=config.betas)
    sampler = PoissonSampler(data.shape[0], sample_rate, generator)
    fake_batch = max(1, int(round(expected_batch_size)))
    clip = config.max_grad_norm
    lam = config.gp_weight
    # Per-example clipping of the real term and GP together (mlp_clipping; same result as
    # dpsgd.private_gradient with torch.func, without materialising per-example gradients).

    def noise(n: int) -> torch.Tensor:
        return torch.randn(n, config.noise_dim, generator=generator)

    for step in range(steps):
        index = sampler.sample()
        real = data[index]
        with torch.no_grad():
            # Nothing outside the noisy sum may depend on the private batch size |B|: the fake
            # term uses a fixed-size batch, and G has no cross-row operations, so each GP
            # partner depends on its own noise only.
            fake_term = G(noise(fake_batch), generator)
            fake_pairs = G(noise(len(index)), generator)
        alpha = torch.rand(len(index), 1, generator=generator)
        params = {k: v.detach() for k, v in D.named_parameters()}
        clipped_sum = {}
        if len(index) > 0:
            clipped_sum, _ = wgan_gp_clipped_sum(
                D, real, fake_pairs, alpha, gp_weight=lam, max_norm=clip, one_sided=config.one_sided_penalty
            )
        noisy = add_gaussian_noise(clipped_sum, params, noise_multiplier, clip, generator)
        private = {k: v / expected_batch_size for k, v in noisy.items()}
        fake_grads = _fake_term_gradient(D, fake_term, clip if config.clip_fake_term else None)
        for name, p in D.named_parameters():
            p.grad = private[name] + fake_grads[name]
        opt_d.step()

        if (step + 1) % config.n_critic == 0:
            opt_g.zero_grad(set_to_none=True)
            g_loss = -D(G(noise(fake_batch), generator)).mean()
            g_loss.backward()
            opt_g.step()
            if G_ema is not G:
                with torch.no_grad():
                    for p_ema, p in zip(G_ema.parameters(), G.parameters()):
                        p_ema.lerp_(p, 1.0 - config.ema_decay)
            D.zero_grad(set_to_none=True)
            clip *= config.clip_decay
        if progress is not None:
            progress(step + 1)
        if monitor is not None and monitor_every and (step + 1) % monitor_every == 0:
            monitor(step + 1, G_ema)  # G is DP post-processing: a monitor may only read public data
    G_ema.eval()
    return TrainingResult(generator=G_ema, critic=D, steps=steps)
