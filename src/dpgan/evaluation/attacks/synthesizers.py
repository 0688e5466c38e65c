"""The synthesizer an attack retrains, as the attacks see it: a factory of unfitted synthesizers.

The attacks are injectable: they take a `SynthesizerFactory`, called as
`factory(rows=n, seed=s)` for every fit, which returns an unfitted object with
`fit(data, schema=...)` and `sample(n, seed=...)` (and, for LOGAN, `critic_for_evaluation` and
`encoder` after fitting). The model under test's recipe as such a factory is the table attacks'
(dpgan.evaluation.tables.attacks.recipe.model_recipe).
"""

from __future__ import annotations

from typing import Any, Protocol

import pandas as pd


class Synthesizer(Protocol):
    def fit(self, data: pd.DataFrame, schema: Any = None) -> Any: ...

    def sample(self, n: int, *, seed: int | None = None) -> pd.DataFrame: ...


class SynthesizerFactory(Protocol):
    def __call__(self, *, rows: int, seed: int) -> Synthesizer: ...
