"""The entity kind's "gan" model: the release (the one private step), and the released generator.

The release: each kept entity is encoded as one vector (encoding.py) and the engine's DP-critic
strategy (dpgan.training.strategies.DPCriticStrategy) trains WGAN-GP on those vectors: Poisson
sampling of entities at q = L/N̂ (N̂ the released tally's count, never the exact one), per entity
ℓ_i = -D(x_i) + λ·GP(x̂_i) with the interpolate x̂_i between the entity's vector and its fake
partner (the penalty reads the entity: it is clipped *with* the real term, one norm per entity),
clipped to C, Gaussian noise σC on the sum, divided by the expected batch; one ledger event per
critic step, σ calibrated so that the tally's entry plus the steps land on ε. The fake-only term
reads no entity and is charged nothing. Only the generator (its moving average) is released.

Why the entity is the unit: an entity is one row of the units tensor, whatever its number of
events (k read, its count one number), so adding or removing it with all its rows adds or removes
one clipped gradient of norm ≤ C: the sensitivity the accountant is given.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from dpgan.devices import module_device, seeded_generator, to_device
from dpgan.entities.gan.encoding import EntityLayout, decode, encode
from dpgan.entities.gan.networks import EntityGenerator, entity_critic
from dpgan.entities.schema import EntitySchema
from dpgan.entities.settings import EntitySettings
from dpgan.entities.statistics import Sampled
from dpgan.model import KindData, ReleasedModel
from dpgan.training.config import TrainingConfig
from dpgan.training.context import FitContext
from dpgan.training.progress import FitProgressFn
from dpgan.training.strategies import DPCriticStrategy

SAMPLE_CHUNK = 4096  # entities per generator pass when sampling


def entity_generator(schema: EntitySchema, settings: EntitySettings, config: TrainingConfig) -> EntityGenerator:
    """The generator the settings describe (public: the schema, the settings, the loop's sizes)."""
    return EntityGenerator(
        EntityLayout.of(schema, settings.bins),
        noise=config.noise_dim,
        hidden=tuple(config.generator_hidden),
        event_hidden=settings.event_hidden,
        step_noise=settings.step_noise,
        tau=config.gumbel_tau,
    )


class EntityGAN:
    """The released model: the generator, and how its vectors become entities (post-processing)."""

    def __init__(self, schema: EntitySchema, generator: EntityGenerator) -> None:
        self.schema, self.generator = schema, generator.eval()

    def sample(self, n: int, rng: np.random.Generator) -> Sampled:
        """n entities: the generator's vectors (noise from a torch generator seeded from `rng`),
        decoded (encoding.decode): events in time order, counts from the end flag or the count."""
        torch_gen = seeded_generator(int(rng.integers(0, 2**63 - 1)), module_device(self.generator))
        attributes, steps = [], []
        for start in range(0, n, SAMPLE_CHUNK):
            a, s = self.generator.sample_parts(min(SAMPLE_CHUNK, n - start), torch_gen)
            attributes.append(a.cpu().numpy())
            steps.append(s.cpu().numpy())
        layout = self.generator.layout
        if not attributes:
            attributes = [np.zeros((0, layout.attribute_width), np.float32)]
            steps = [np.zeros((0, layout.k, layout.step_width), np.float32)]
        return decode(np.concatenate(attributes), np.concatenate(steps), layout, self.schema, rng)

    def tensors(self) -> dict[str, torch.Tensor]:
        return dict(self.generator.state_dict())

    def form(self) -> dict[str, Any]:
        """The public shape the weights must fit (checked on load)."""
        layout = self.generator.layout
        return {"width": layout.width, "k": layout.k, "noise_dim": self.generator.noise_dim}

    @classmethod
    def from_tensors(
        cls,
        schema: EntitySchema,
        settings: EntitySettings,
        config: TrainingConfig,
        tensors: dict[str, torch.Tensor],
    ) -> EntityGAN:
        """The saved generator, strictly (a missing or misshapen weight: RuntimeError)."""
        generator = entity_generator(schema, settings, config)
        generator.load_state_dict(tensors, strict=True)
        return cls(schema, generator)


@dataclass(frozen=True)
class EntityGANModel:
    """The GAN model (dpgan.model.Model): encode the entities, train through the engine, release G."""

    schema: EntitySchema
    settings: EntitySettings
    config: TrainingConfig

    def release(self, ctx: FitContext, data: KindData, progress: FitProgressFn | None) -> ReleasedModel:
        layout = EntityLayout.of(self.schema, self.settings.bins)
        units = to_device(encode(data.units, layout, self.schema))
        generator = entity_generator(self.schema, self.settings, self.config)
        critic = entity_critic(layout, tuple(self.config.critic_hidden))
        strategy = DPCriticStrategy(replace(self.config, noise_dim=generator.noise_dim))
        trained = strategy.train(ctx, units, data.rows, generator, critic, (), progress)
        released = trained.generator.cpu()  # type: ignore[attr-defined]
        return ReleasedModel(EntityGAN(self.schema, released), trained.critic, trained.record)  # type: ignore[arg-type]


__all__ = ["EntityGAN", "EntityGANModel", "entity_generator"]
