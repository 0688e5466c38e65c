"""The series' statistics models in the fit pipeline (dpgan.model): DP statistics on all of ε that is
left after the data releases are the model; no network is built, nothing is trained.

Each model is one entry of dpgan.sequences.settings.STATISTICS_MODELS, naming its class:
- a series model (dpgan.sequences.released_gaussian: "gaussian", "gaussian-copula") releases from
  the kind's data (`release(ctx, data, settings, name)`) and samples scaled series itself;
- any other is a flat-vector statistics model of dpgan.statistics (`fit`, NumPy `sample`, `arrays`
  / `from_arrays`: dpgan.statistics.independent), which `VectorSeries` fits on the units' series,
  flattened, at all of ε that is left, and samples as series. A new one is its class in
  dpgan.statistics plus its entry.
A released model samples (`sample(n, generator, labels)`), and its files hold its public form
(`form`) and its released arrays (`state_dict`) alone (dpgan.synthesizers.sequence writes them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from dpgan.kinds import load
from dpgan.model import KindData, ReleasedModel
from dpgan.sequences.plugins import unit_vectors
from dpgan.sequences.settings import STATISTICS_MODELS, SequenceSettings
from dpgan.statistics.blocks import VectorBlocks
from dpgan.training.context import FitContext
from dpgan.training.progress import FitProgressFn


def series_model_class(name: str) -> Any:
    """The released-model class of the statistics model `name`: its series class, or a flat-vector
    class of dpgan.statistics inside `VectorSeries`."""
    found = load(STATISTICS_MODELS[name][1])  # "module:attribute", as the kind registry names its code
    return found if hasattr(found, "release") else VectorSeries.of(found)


@dataclass(frozen=True)
class SeriesStatisticsModel:
    """The sequence kind's statistics model `name` (dpgan.model.Model): its releases, no GAN steps."""

    name: str
    settings: SequenceSettings

    def release(self, ctx: FitContext, data: KindData, progress: FitProgressFn | None) -> ReleasedModel:
        released = series_model_class(self.name).release(ctx, data, self.settings, self.name)
        return ReleasedModel(released, None, {"steps": 0})


class VectorSeries:
    """A flat-vector statistics model (dpgan.statistics) as a released series model."""

    statistics: type = object  # the dpgan.statistics class (`of` makes one adapter per class)

    def __init__(self, name: str, model: Any, *, length: int, n_values: int, n_labels: int) -> None:
        self.name, self.model = name, model
        self.length, self.n_values, self.n_labels = length, n_values, n_labels

    @classmethod
    def of(cls, statistics: type) -> type[VectorSeries]:
        return type(f"{statistics.__name__}Series", (cls,), {"statistics": statistics})

    @classmethod
    def release(cls, ctx: FitContext, data: KindData, settings: SequenceSettings, name: str) -> VectorSeries:
        """The model fitted on the units' series, flattened (T·F values in [-1, 1]), on all of ε that
        is left; with an entity unit, the unit's k series count k times in every sensitivity."""
        n_labels = data.details.schema.n_labels
        values, labels, per_unit, (length, features) = unit_vectors(data, n_labels)
        vectors = values if isinstance(values, VectorBlocks) else values.astype(np.float64)
        model = cls.statistics(-1.0, 1.0).fit(
            vectors, labels, n_labels, ctx.rng, ledger=ctx.ledger, target=ctx.budget.whole_target(), per_unit=per_unit,
        )  # fmt: skip
        return cls(name, model, length=length, n_values=features, n_labels=n_labels)

    @torch.no_grad()
    def sample(
        self, n: int, generator: torch.Generator, labels: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """n scaled series (n, T, F) and their label codes; NumPy draws seeded from `generator`."""
        seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device))
        imposed = None if labels is None else labels.cpu().numpy()
        values, codes = self.model.sample(n, np.random.default_rng(seed), imposed)
        series = torch.from_numpy(np.asarray(values, dtype=np.float32).reshape(n, self.length, self.n_values))
        return series, (torch.from_numpy(np.asarray(codes, dtype=np.int64)) if self.n_labels else None)

    def to(self, device: str | torch.device) -> VectorSeries:
        return self  # NumPy arrays: on the CPU already

    def form(self) -> dict[str, Any]:
        return {"length": self.length, "n_values": self.n_values, "n_labels": self.n_labels}

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {key: torch.from_numpy(np.ascontiguousarray(value)) for key, value in self.model.arrays().items()}

    @classmethod
    def from_files(cls, name: str, form: dict[str, Any], tensors: dict[str, torch.Tensor]) -> VectorSeries:
        length, n_values, n_labels = (int(form[key]) for key in ("length", "n_values", "n_labels"))
        model = cls.statistics.from_arrays({key: value.cpu().numpy() for key, value in tensors.items()})
        values, codes = model.sample(1, np.random.default_rng(0))  # the arrays fit the form, or refused
        if np.shape(values) != (1, length * n_values) or not 0 <= int(codes[0]) < max(1, n_labels):
            raise ValueError("the released arrays do not fit the series' length, values and labels")
        return cls(name, model, length=length, n_values=n_values, n_labels=n_labels)


__all__ = ["SeriesStatisticsModel", "VectorSeries", "series_model_class"]
