"""What a recipe is: where the noise goes and what the networks see.

A recipe is a set of `TrainingConfig` overrides plus two facts the synthesizer needs: whether DP
sits on the critic or on the generator, and whether the recipe conditions on a column. Values
marked (paper) come from the recipe's paper; the others are dpgan's choices, measured in
bench/RESULTS.md, because the paper does not state them or they do not fit Adult on 2 cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Recipe:
    name: str
    paper: str
    summary: str
    dp_on: str  # "critic" or "generator"
    conditional: bool  # conditions on a column (the schema's target unless told otherwise)
    overrides: dict[str, Any] = field(default_factory=dict)
