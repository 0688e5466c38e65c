"""What a GAN loop needs of a condition, whatever the data kind: a protocol, not a tabular class.

A condition is a categorical input of G and D with a public or DP prior (tabular: one column's
one-hot slot, dpgan.tables.codec.conditioning.Condition; sequences and images: a label). The loops draw fake
conditions from the prior (or its flattening) and read a real unit's condition from its encoding;
both are functions of public or DP numbers and of the unit itself, never of other units.
"""

from __future__ import annotations

from typing import Protocol

import torch


class ConditionPrior(Protocol):
    column: str  # the condition's public name (a column, a label)

    @property
    def slice(self) -> tuple[int, int]:
        """Where the condition's one-hot sits in an encoded unit."""
        ...

    def probabilities(self, training_by_sampling: bool = False) -> torch.Tensor:
        """The prior over condition values (flattened for training-by-sampling)."""
        ...

    def draw(self, n: int, generator: torch.Generator, training_by_sampling: bool = False) -> torch.Tensor:
        """n condition codes drawn from the (flattened) prior."""
        ...

    def one_hot(self, codes: torch.Tensor) -> torch.Tensor: ...

    def codes_of_encoded(self, encoded: torch.Tensor) -> torch.Tensor:
        """Each encoded unit's own condition code."""
        ...
