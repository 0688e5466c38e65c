"""What a recipe is: a strategy (where the noise goes), the plug-ins it turns on, and the loop's
settings it overrides.

- `strategy`: the name of the strategy the fit pipeline runs (dpgan.training.strategies.STRATEGIES:
  "dp-critic", DP-SGD on the critic; "dp-generator", DP on the generator through shard critics;
  "noise-layer", the noise-layer GAN), by name so that the command line reads recipes without
  importing PyTorch;
- `plugins`: the data kind's plug-in settings the recipe sets by default (for tables the fields of
  dpgan.tables.settings.TableSettings, e.g. dtgan-g's marginal anchor; for images those of
  dpgan.images.settings.ImageSettings, e.g. dcgan's label guide and mode-seeking weight); the
  user's settings come on top;
- `overrides`: the loop's settings (dpgan.training.config.TrainingConfig) from the recipe's paper.
Values marked (paper) come from the recipe's paper; the others are dpgan's choices, measured in
bench/RESULTS.md, because the paper does not state them or they do not fit Adult on 2 cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# which network's updates each strategy makes private (tests check each strategy class says the same)
STRATEGY_SIDES = {"dp-critic": "critic", "dp-generator": "generator", "noise-layer": "critic"}


@dataclass(frozen=True, kw_only=True)
class Recipe:
    name: str
    paper: str
    summary: str
    strategy: str  # a key of STRATEGY_SIDES (dpgan.training.strategies.STRATEGIES)
    conditional: bool  # conditions on a column (the schema's target unless told otherwise)
    overrides: dict[str, Any] = field(default_factory=dict)  # the loop's settings
    plugins: dict[str, Any] = field(default_factory=dict)  # the kind's plug-in settings, by default

    @property
    def dp_on(self) -> str:
        """Which network's updates are private: "critic" or "generator" (the strategy's)."""
        return STRATEGY_SIDES[self.strategy]
