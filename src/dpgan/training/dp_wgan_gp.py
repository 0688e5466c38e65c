"""WGAN-GP with DP-SGD on the critic (Frigerio et al. 2019, Algorithm 1), done carefully.

Per real record i the critic's private unit is -D(x_i) + λ·GP(α x_i + (1-α) x̃_i): the gradient
penalty reads x_i, so it is clipped *together* with the real term. The fake-only term ∇ mean D(x̃)
depends on no private record and is added without clipping or noise. The noisy sum is divided
by the expected batch size L = qN̂. The generator never reads private rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch

from dpgan.models.tabular import TabularCritic, TabularGenerator
from dpgan.privacy.dpsgd import add_gaussian_noise
from dpgan.privacy.mlp_clipping import wgan_gp_clipped_sum
from dpgan.privacy.sampling import PoissonSampler
from dpgan.transforms.encoder import OutputSpan


@dataclass
class TrainingConfig:
    """Network and optimisation settings; none of them is read from private data."""

    batch_size: int = 512
    epochs: float = 10.0
    n_critic: int = 2
    gp_weight: float = 10.0
    max_grad_norm: float = 1.0
    clip_decay: float = 1.0
    noise_dim: int = 64
    generator_hidden: tuple[int, ...] = (256, 256)
    critic_hidden: tuple[int, ...] = (256, 256)
    generator_lr: float = 2e-4
    critic_lr: float = 2e-4
    betas: tuple[float, float] = (0.5, 0.9)
    categorical_activation: str = "gumbel"
    gumbel_tau: float = 0.2
    extra: dict = field(default_factory=dict)

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
) -> tuple[TabularGenerator, int]:
    """Run exactly `steps` noisy critic updates (the accounted T); return G and the steps done."""
    G = build_generator(config, spans)
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
            # term uses a fixed-size batch, and the GP partners are drawn row by row in eval
            # mode (BatchNorm would otherwise couple them across records and leak |B|).
            fake_term = G(noise(fake_batch), generator)
            G.eval()
            fake_pairs = G(noise(len(index)), generator)
            G.train()
        alpha = torch.rand(len(index), 1, generator=generator)
        params = {k: v.detach() for k, v in D.named_parameters()}
        clipped_sum = {}
        if len(index) > 0:
            clipped_sum, _ = wgan_gp_clipped_sum(D, real, fake_pairs, alpha, gp_weight=lam, max_norm=clip)
        noisy = add_gaussian_noise(clipped_sum, params, noise_multiplier, clip, generator)
        private = {k: v / expected_batch_size for k, v in noisy.items()}
        fake_loss = D(fake_term).mean()
        fake_grads = torch.autograd.grad(fake_loss, list(D.parameters()))
        for (name, p), g_fake in zip(D.named_parameters(), fake_grads):
            p.grad = private[name] + g_fake
        opt_d.step()

        if (step + 1) % config.n_critic == 0:
            opt_g.zero_grad(set_to_none=True)
            g_loss = -D(G(noise(fake_batch), generator)).mean()
            g_loss.backward()
            opt_g.step()
            D.zero_grad(set_to_none=True)
            clip *= config.clip_decay
        if progress is not None:
            progress(step + 1)
    G.eval()
    return G, steps
