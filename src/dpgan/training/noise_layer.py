"""The noise-layer GAN (Triastcyn & Faltings 2018) in its two forms, on flat units of any kind.

The critic is pre-noise layers → noise layer (each example's activation clipped to ‖h‖ ≤ R, plus
N(0, (σR)²)) → head (dpgan.models.noise_layer). G is trained through the whole critic, noise
layer included, by the shared generator side (dpgan.training.gan_loop: G, its optimizer, the
released moving average).

- Published form (`certified=False`): the pre-noise layers are trained by ordinary backprop with
  the head, on Poisson batches of real units and fixed-size fake batches, WGAN-GP (penalty on
  interpolated units) or BCE. It is NOT DP (../shared/privacy/README.md §2 vi): the pre-noise
  gradient ∂ℓ/∂W₁ = δ·xᵀ carries each raw real input, unclipped and un-noised, into W₁, and G
  is trained through W₁. This loop writes nothing to the ledger, and the result says
  `certified=False` with the reason; no ε may be printed for it.
- Sound form (`certified=True`): the pre-noise layers are frozen (public: a seeded random init or
  weights trained on public data) and act per unit; each critic step reads the real data once,
  through dpgan.privacy.feature_release (Poisson q, B_cap slots, per-slot clip and noise), which
  charges the ledger one Gaussian(σ/2) pass at q as it runs. The head, the gradient penalty on
  interpolates of noisy real and noisy fake vectors, and G's updates through the frozen layers
  and the head read only that release: post-processing. Fake vectors get the same clip and noise
  (not for privacy: so the head sees one kind of input on both sides).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from dpgan.errors import InputError
from dpgan.models.noise_layer import NoiseLayerCritic, cross_example_modules, freeze
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.feature_release import FeatureRelease, Recorder, noisy_rows
from dpgan.privacy.sampling import PoissonSampler
from dpgan.training.config import TrainingConfig
from dpgan.training.fake_rows import make_optimizer
from dpgan.training.gan_loop import GeneratorSide, ProgressFn, StepCallbacks

LOSSES = ("wgan-gp", "bce")
PUBLISHED_REASON = (
    "published noise layer (Triastcyn & Faltings 2018): the layers before it train on raw real images "
    "by backprop and G trains through them, so no ε holds"
)
CERTIFIED_REASON = (
    "frozen public pre-noise layers; each pass over real data is a Poisson-subsampled Gaussian "
    "(sensitivity 2R, multiplier σ/2) charged to the ledger"
)


@dataclass
class NoiseLayerResult:
    """The released generator (G's moving average), the critic (in memory only: never saved),
    the number of critic steps, whether an ε may be claimed, and why (one line)."""

    generator: torch.nn.Module
    critic: NoiseLayerCritic
    steps: int
    certified: bool
    reason: str


def _critic_loss(loss: str, real: torch.Tensor, fake: torch.Tensor) -> torch.Tensor:
    """The critic's loss on its real and fake scores (an empty real batch contributes 0)."""
    if loss == "bce":
        real_term = F.softplus(-real).mean() if real.numel() else real.sum()
        return real_term + F.softplus(fake).mean()
    return fake.mean() - (real.mean() if real.numel() else real.sum())


def _penalty(score: Callable[[torch.Tensor], torch.Tensor], points: torch.Tensor, one_sided: bool) -> torch.Tensor:
    """Mean of (‖∇ score(x̂)‖ − 1)² (only the part above 1 when one-sided) at the points x̂."""
    if points.shape[0] == 0:
        return points.sum()
    points = points.detach().requires_grad_(True)
    (grad,) = torch.autograd.grad(score(points).sum(), points, create_graph=True)
    excess = grad.flatten(1).norm(dim=1) - 1.0
    return (excess.clamp_min(0.0) if one_sided else excess).pow(2).mean()


def _adversarial(loss: str, scores: torch.Tensor) -> torch.Tensor:
    return F.softplus(-scores).mean() if loss == "bce" else -scores.mean()


def train_noise_layer_gan(
    units: torch.Tensor,
    config: TrainingConfig,
    *,
    G: torch.nn.Module,
    critic: NoiseLayerCritic,
    certified: bool,
    sample_rate: float,
    capacity: int,
    noise_multiplier: float,
    activation_bound: float,
    steps: int,
    generator: torch.Generator,
    ledger: PrivacyLedger | None,
    noise_generator: torch.Generator | None = None,
    sampler=None,
    recorder: Recorder | None = None,
    progress: ProgressFn | None = None,
) -> NoiseLayerResult:
    """Run `steps` critic steps (a generator step every `config.n_critic`) on the flat `units`
    (N, width), G called as G(z, generator, None) (dpgan.models.image_units.ImageUnitGenerator).

    `capacity` is the public batch size: the sound form's B_cap slots, and the fake batch of both
    forms. `noise_multiplier` σ and `activation_bound` R set the noise layer (std σR).
    Certified: `ledger` is charged `steps` passes (reserved up front: refused past its budget) and
    `critic.pre` is frozen here. Published: `ledger` is never touched (no ε exists to charge).
    `noise_generator` (default `generator`), `sampler` and `recorder` are test injections."""
    if config.loss not in LOSSES:
        raise InputError(f"the noise-layer GAN trains with loss {' or '.join(LOSSES)}, not {config.loss!r}")
    if steps < 0 or capacity < 1:
        raise InputError("steps must be non-negative and capacity at least 1")
    if not (activation_bound > 0 and noise_multiplier >= 0):
        raise InputError("the noise layer needs a positive activation bound and a non-negative noise multiplier")
    noise_gen = noise_generator if noise_generator is not None else generator
    side = GeneratorSide(config, G, None, generator, capacity)
    after_step = StepCallbacks(progress)
    gp_weight = config.gp_weight if config.loss == "wgan-gp" else 0.0

    def noise_layer(h: torch.Tensor) -> torch.Tensor:
        return noisy_rows(h, activation_bound, noise_multiplier, noise_gen)

    if certified:
        mixing = cross_example_modules(critic.pre)
        if mixing:
            raise InputError("the certified noise layer needs a per-example pre-noise map: remove its BatchNorm")
        if ledger is None:
            raise InputError("the certified noise layer needs a ledger to charge")
        freeze(critic.pre)
        release = FeatureRelease(
            units=units.shape[0],
            sample_rate=sample_rate,
            capacity=capacity,
            width=critic.pre.out_dim,
            noise_multiplier=noise_multiplier,
            bound=activation_bound,
            passes=steps,
            ledger=ledger,
            generator=generator,
            noise_generator=noise_gen,
            sampler=sampler,
            recorder=recorder,
        )
        trained = list(critic.head.parameters())
    else:
        batches = sampler if sampler is not None else PoissonSampler(units.shape[0], sample_rate, generator)
        trained = list(critic.parameters())
    opt_d = make_optimizer(config, trained, config.critic_lr)

    for step in range(steps):
        with torch.no_grad():
            fakes = side.fakes(capacity)
        if certified:
            real_h = release.release(lambda index: critic.pre(units[index]))  # the only read of `units`
            with torch.no_grad():
                fake_h = noise_layer(critic.pre(fakes))
            loss = _critic_loss(config.loss, critic.head(real_h), critic.head(fake_h))
            if gp_weight > 0:
                alpha = torch.rand(capacity, 1, generator=generator, device=generator.device)
                points = alpha * real_h + (1.0 - alpha) * fake_h
                loss = loss + gp_weight * _penalty(critic.head, points, config.one_sided_penalty)
        else:
            real = units[batches.sample()]

            def score(x: torch.Tensor) -> torch.Tensor:
                return critic.head(noise_layer(critic.pre(x)))

            loss = _critic_loss(config.loss, score(real), score(fakes))
            if gp_weight > 0 and len(real):
                with torch.no_grad():
                    partners = side.fakes(len(real))
                alpha = torch.rand(len(real), 1, generator=generator, device=generator.device)
                loss = loss + gp_weight * _penalty(
                    score, alpha * real + (1.0 - alpha) * partners, config.one_sided_penalty
                )
        opt_d.zero_grad(set_to_none=True)
        loss.backward()
        opt_d.step()

        if (step + 1) % config.n_critic == 0:

            def backward() -> None:
                scores = critic.head(noise_layer(critic.pre(side.fakes(capacity))))
                _adversarial(config.loss, scores).backward()

            side.step(backward)
            critic.zero_grad(set_to_none=True)
        after_step(step + 1, side)
    return NoiseLayerResult(
        generator=side.released(),
        critic=critic,
        steps=steps,
        certified=certified,
        reason=CERTIFIED_REASON if certified else PUBLISHED_REASON,
    )


__all__ = ["CERTIFIED_REASON", "LOSSES", "PUBLISHED_REASON", "NoiseLayerResult", "train_noise_layer_gan"]
