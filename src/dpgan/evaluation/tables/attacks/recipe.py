"""The synthesizer the shadow-model and LOGAN attacks retrain: the model under test's recipe.

The attacks take a `SynthesizerFactory` (dpgan.evaluation.attacks.synthesizers); `model_recipe`
builds one from a saved model: the same ε, δ, schema and training configuration. By default the
batch is scaled so that the fits keep the model's Poisson sampling rate q: with the same q, epochs
(hence steps T) and ε, calibration lands on the same noise multiplier σ, so a shadow fit runs the
model's DP mechanism on a smaller table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dpgan.evaluation.attacks.synthesizers import Synthesizer, SynthesizerFactory
from dpgan.tables.schema.table import Schema
from dpgan.tables.settings import TableSettings
from dpgan.training.config import TrainingConfig


@dataclass(frozen=True)
class ModelRecipe:
    """What a retraining needs from the model under test, plus the attack's cost overrides."""

    epsilon: float
    delta: float
    accountant: str
    config: TrainingConfig
    schema: Schema | None
    sample_rate: float | None  # the model's q; None: keep the configured batch size
    settings: TableSettings | None = None  # the model's plug-in settings (None: the library's defaults)

    def batch_size(self, rows: int) -> int:
        if self.sample_rate is None:
            return self.config.batch_size
        return max(1, int(round(self.sample_rate * rows)))

    def factory(self) -> SynthesizerFactory:
        from dpgan.synthesizers import TabularSynthesizer

        def make(*, rows: int, seed: int) -> Synthesizer:
            return TabularSynthesizer(
                epsilon=self.epsilon,
                delta=self.delta,
                accountant=self.accountant,
                config=replace(self.config, batch_size=self.batch_size(rows)),
                table_settings=self.settings,
                epochs=self.config.epochs,
                seed=seed,
            )

        return make

    def describe(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accountant": self.accountant,
            "epochs": self.config.epochs,
            "sample_rate": self.sample_rate,
            "batch_size": "scaled to keep the model's sampling rate" if self.sample_rate else self.config.batch_size,
        }


def model_recipe(
    model_dir: str | Path, *, epochs: float | None = None, accountant: str | None = None, match_sample_rate: bool = True
) -> ModelRecipe:
    """Read a saved model's recipe (no private data is read: ε, δ, schema, config are its metadata)."""
    from dpgan.synthesizers import TabularSynthesizer

    model = TabularSynthesizer.load(model_dir)
    config = model.config if epochs is None else replace(model.config, epochs=float(epochs))
    rate = model.training.get("sample_rate") if match_sample_rate else None
    rate = float(rate) if isinstance(rate, (int, float)) and 0 < rate <= 1 and math.isfinite(rate) else None
    return ModelRecipe(
        epsilon=model.epsilon,
        delta=model.delta,
        accountant=accountant or model.accountant,
        config=config,
        schema=model.schema,
        sample_rate=rate,
        settings=model.settings,
    )
