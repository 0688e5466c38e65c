"""The synthesizer the shadow-model and LOGAN attacks retrain: the model under test's recipe.

The attacks are injectable: they take a `SynthesizerFactory`, called as
`factory(rows=n, seed=s)` for every fit, which returns an unfitted object with
`fit(data, schema=...)` and `sample(n, seed=...)` (and, for LOGAN, `critic_for_evaluation` and
`encoder` after fitting). `model_recipe` builds the factory from a saved model: the same ε, δ,
schema and training configuration. By default the batch is scaled so that the fits keep the
model's Poisson sampling rate q: with the same q, epochs (hence steps T) and ε, calibration lands
on the same noise multiplier σ, so a shadow fit runs the model's DP mechanism on a smaller table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from dpgan.tables.schema import Schema
from dpgan.training.config import TrainingConfig


class Synthesizer(Protocol):
    def fit(self, data: pd.DataFrame, schema: Any = None) -> Any: ...

    def sample(self, n: int, *, seed: int | None = None) -> pd.DataFrame: ...


class SynthesizerFactory(Protocol):
    def __call__(self, *, rows: int, seed: int) -> Synthesizer: ...


@dataclass(frozen=True)
class ModelRecipe:
    """What a retraining needs from the model under test, plus the attack's cost overrides."""

    epsilon: float
    delta: float
    accountant: str
    config: TrainingConfig
    schema: Schema | None
    sample_rate: float | None  # the model's q; None: keep the configured batch size

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
    )
