"""The non-private control shared by the benches: the same GAN and loop as dpgan's DP fit with
clipping and noise switched off (ε = ∞). Never part of the library: it has no privacy."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import torch

from dpgan import Schema
from dpgan.training.config import TrainingConfig
from dpgan.training.dp_critic import train_dp_critic
from dpgan.transforms.encoder import TableEncoder


class NonPrivateGAN:
    """Fit/sample like `TabularSynthesizer`, without DP (the positive control and the ε = ∞ row)."""

    def __init__(self, config: TrainingConfig, seed: int) -> None:
        self.config = replace(config, max_grad_norm=math.inf)
        self.seed = seed

    def fit(self, data: pd.DataFrame, schema: Schema | None = None) -> "NonPrivateGAN":
        assert schema is not None
        self.encoder = TableEncoder(schema, {c: str(data[c].dtype) for c in data.columns})
        encoded = torch.from_numpy(self.encoder.encode(schema.validate(data)))
        batch = float(min(self.config.batch_size, len(data)))
        steps = int(math.ceil(self.config.epochs * len(data) / batch))
        result = train_dp_critic(
            encoded,
            self.encoder.spans,
            self.config,
            sample_rate=batch / len(data),
            expected_batch_size=batch,
            noise_multiplier=0.0,
            steps=steps,
            generator=torch.Generator().manual_seed(self.seed),
        )
        self.generator, self.critic_for_evaluation = result.generator, result.critic
        return self

    def sample(self, n: int, *, seed: int | None = None) -> pd.DataFrame:
        gen = torch.Generator().manual_seed(seed or 0)
        z = torch.randn(n, self.config.noise_dim, generator=gen)
        return self.encoder.decode(self.generator.sample_encoded(z).numpy(), np.random.default_rng(seed))
