"""Warm start on public data (Boob et al.'s option): G and a critic pre-trained without noise.

Before the first private step, G and the critic play `steps` ordinary (non-private: no clipping,
no noise) GAN rounds on rows of a PUBLIC table encoded by the fit's encoder. Why it costs no ε:
the public table is not the private one, and nothing here reads a private record; the private
fit's σ, T and every ledger entry are fixed before training from the private table's own (DP)
statistics, so the ledger is the same with or without it. What the warm start changes is only the
starting point of the weights, which DP-SGD's guarantee allows to be any data-independent value
(here: a function of public data and the fit's random draws). It is not free if the "public"
table is in fact part of the private one, or derived from it (privacy README §2 xi): the model
records the public table's name, SHA-256, row count and the steps so that this can be checked.

After the warm start, the released average restarts from G (the random initial weights are not
averaged in). dtgan-g's shard critics all start from the warm-started critic: their
initialisation is then a function of public data, which its accounting (one of N_d shards,
dpgan.privacy.accounting) already allows for any data-independent initialisation.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from dpgan.training.config import TrainingConfig
from dpgan.training.fake_rows import FakeRows
from dpgan.training.generator_losses import GeneratorObjective


@dataclass(frozen=True)
class PublicWarmStart:
    """The encoded public rows and how many non-private rounds to play on them."""

    rows: torch.Tensor
    steps: int

    def run(
        self,
        side,  # dpgan.training.gan_loop.GeneratorSide (not imported: gan_loop imports nothing of this)
        critic: torch.nn.Module,
        critic_optimizer: torch.optim.Optimizer,
        config: TrainingConfig,
        objective: GeneratorObjective,
        generator: torch.Generator,
        batch: int,
    ) -> None:
        """`steps` critic updates on public rows, a generator update every `n_critic` of them."""
        if self.steps <= 0 or self.rows.shape[0] == 0:
            return
        fakes: FakeRows = side.fakes
        for step in range(self.steps):
            index = torch.randint(self.rows.shape[0], (batch,), generator=generator, device=generator.device)
            real = self.rows[index.to(self.rows.device)].to(generator.device)  # public rows: encoded on the CPU
            with torch.no_grad():
                fake = fakes(batch, fakes.codes(batch))
            critic_optimizer.zero_grad(set_to_none=True)
            critic_loss(critic, real, fake, config, generator).backward()
            critic_optimizer.step()
            if config.loss == "wgan":
                with torch.no_grad():
                    for p in critic.parameters():
                        p.clamp_(-config.weight_clip, config.weight_clip)
            if (step + 1) % config.n_critic == 0:
                moments = None
                if objective.info_weight > 0:
                    with torch.no_grad():
                        features = critic.features(real)
                        moments = (features.mean(dim=0), features.std(dim=0, unbiased=False))

                def backward(moments=moments) -> None:
                    codes = fakes.codes(batch)
                    objective.batch_loss(critic, fakes(batch, codes), codes, moments).backward()

                side.step(backward)
                critic.zero_grad(set_to_none=True)
        side.restart_average()


def critic_loss(
    critic: torch.nn.Module, real: torch.Tensor, fake: torch.Tensor, config: TrainingConfig, generator: torch.Generator
) -> torch.Tensor:
    """The critic's ordinary (non-private) loss for the configured GAN loss."""
    if config.loss == "bce":
        return F.softplus(-critic(real)).mean() + F.softplus(critic(fake)).mean()
    loss = critic(fake).mean() - critic(real).mean()
    if config.loss == "wgan-gp":
        alpha = torch.rand(real.shape[0], 1, generator=generator, device=generator.device)
        x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        (grad,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
        gap = grad.norm(dim=1) - 1.0
        gap = gap.clamp_min(0.0) if config.one_sided_penalty else gap
        loss = loss + config.gp_weight * (gap**2).mean()
    return loss
