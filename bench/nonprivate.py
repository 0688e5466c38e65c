"""The non-private control shared by the benches: the same GAN and loop as dpgan's DP fit with
clipping and noise switched off (ε = ∞). Never part of the library: it has no privacy."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import torch

from dpgan import Schema
from dpgan.tables.codec.encoder import TableEncoder, public_dtypes
from dpgan.tables.reading.conform import validate_table
from dpgan.tables.sampling.label_model import LabelModel, label_span, label_target
from dpgan.tables.settings import TableSettings
from dpgan.training.aux_classifier import drop_span, train_dp_classifier
from dpgan.training.config import TrainingConfig
from dpgan.training.dp_critic import train_dp_critic
from dpgan.training.schedule import gan_schedule_for


class NonPrivateGAN:
    """Fit/sample like `TabularSynthesizer`, without DP (the positive control and the ε = ∞ row)."""

    def __init__(self, config: TrainingConfig, seed: int, settings: TableSettings | None = None) -> None:
        self.config = replace(config, max_grad_norm=math.inf)
        self.settings = settings or TableSettings()  # the label model's settings (the library's defaults)
        self.seed = seed

    def fit(self, data: pd.DataFrame, schema: Schema | None = None) -> "NonPrivateGAN":
        assert schema is not None
        self.encoder = TableEncoder(schema, public_dtypes(schema))
        encoded = torch.from_numpy(self.encoder.encode(validate_table(data, schema)))
        # the library's schedule (q ≤ max_sample_rate), so the control runs the steps a DP fit runs;
        # it was batch min(1,024, n) for `epochs`, which starved small tables (RESULTS §13). Adult's
        # 32,561 rows give the same schedule either way (L = 1,024 ≤ 0.05·n).
        schedule = gan_schedule_for(self.config, len(data), "critic")
        result = train_dp_critic(
            encoded,
            self.encoder.spans,
            self.config,
            sample_rate=schedule.sample_rate,
            expected_batch_size=schedule.expected_batch_size,
            noise_multiplier=0.0,
            steps=schedule.steps,
            generator=torch.Generator().manual_seed(self.seed),
            ledger=None,  # σ = 0: the non-private control charges nothing
        )
        self.generator, self.critic_for_evaluation = result.generator, result.critic
        self.label_model = self._fit_label_model(encoded, schema)
        return self

    def _fit_label_model(self, encoded: torch.Tensor, schema: Schema) -> LabelModel | None:
        """The library's label model with σ = 0 (same steps and clipping), when the config uses one."""
        cfg = self.settings
        column = label_target(schema) if cfg.label_model else None
        if column is None:
            return None
        start, stop = label_span(self.encoder, column)
        batch = float(min(cfg.label_model_batch_size, len(encoded)))
        classifier = train_dp_classifier(
            drop_span(encoded, start, stop),
            encoded[:, start:stop].argmax(dim=1),
            stop - start,
            sample_rate=batch / len(encoded),
            expected_batch_size=batch,
            steps=int(math.ceil(cfg.label_model_epochs * len(encoded) / batch)),
            noise_multiplier=0.0,
            max_grad_norm=cfg.label_model_max_grad_norm,
            lr=cfg.label_model_lr,
            hidden=cfg.label_model_hidden,
            generator=torch.Generator().manual_seed(self.seed + 1),
            ledger=None,
            label="label model (non-private control)",
        )
        return LabelModel(column, start, stop, cfg.label_model_hidden, classifier)

    def sample(self, n: int, *, seed: int | None = None) -> pd.DataFrame:
        gen = torch.Generator().manual_seed(seed or 0)
        z = torch.randn(n, self.config.noise_dim, generator=gen)
        rng = np.random.default_rng(seed)
        frame = self.encoder.decode(self.generator.sample_encoded(z).numpy(), rng)
        return frame if self.label_model is None else self.label_model.redraw(frame, self.encoder, rng)[0]
