"""Conditioning on one categorical column: where its one-hot sits, and how often each value occurs.

The frequencies decide which conditions fake rows get in training and which rows `sample`
returns by default, so they are a read of the data like any other: they come either from the
schema (public, free) or from a Gaussian noisy histogram recorded in the ledger. Exact counts
are never used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan.errors import InputError
from dpgan.privacy.accounting import LedgerEntry
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.releases import gaussian_event
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.schema.columns import category_index
from dpgan.tables.schema.table import Schema

PRIOR_FROM_SCHEMA = "schema (public)"
PRIOR_FROM_DP_COUNTS = "Gaussian noisy counts (in the ledger)"
# a noisy count below this is floored so that every category can still be generated
MIN_PROBABILITY = 1e-4


@dataclass(frozen=True)
class Condition:
    """The conditioning column, its slot in the encoded row, and its value distribution."""

    column: str
    categories: tuple[Any, ...]
    start: int
    prior: tuple[float, ...]
    prior_source: str

    @property
    def width(self) -> int:
        return len(self.categories)

    @property
    def slice(self) -> tuple[int, int]:
        return self.start, self.start + self.width

    def probabilities(self, training_by_sampling: bool = False) -> torch.Tensor:
        """The prior; with training-by-sampling (CTGAN) its log-frequency flattening, which shows
        rare values more often. Both are functions of the public or DP prior only."""
        p = torch.tensor(self.prior, dtype=torch.float64)
        if training_by_sampling:
            p = torch.log1p(p * 1000.0)
        return p / p.sum()

    def draw(self, n: int, generator: torch.Generator, training_by_sampling: bool = False) -> torch.Tensor:
        """n condition codes drawn from the (flattened) prior."""
        if n == 0:
            return torch.zeros(0, dtype=torch.long, device=generator.device)
        probabilities = self.probabilities(training_by_sampling).to(generator.device)  # drawn where the generator is
        return torch.multinomial(probabilities, n, replacement=True, generator=generator)

    def one_hot(self, codes: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.one_hot(codes, self.width).to(torch.float32)

    def codes_of_encoded(self, encoded: torch.Tensor) -> torch.Tensor:
        """The category index of each encoded row (its one-hot slot)."""
        start, stop = self.slice
        return encoded[:, start:stop].argmax(dim=1)

    def code_of(self, value: Any) -> int:
        return category_index(self.column, self.categories, value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "categories": [c.item() if isinstance(c, np.generic) else c for c in self.categories],
            "start": self.start,
            "prior": list(self.prior),
            "prior_source": self.prior_source,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Condition":
        return cls(
            column=str(data["column"]),
            categories=tuple(data["categories"]),
            start=int(data["start"]),
            prior=tuple(float(p) for p in data["prior"]),
            prior_source=str(data["prior_source"]),
        )


def check_condition_column(schema: Schema, column: str) -> None:
    """A condition must be a complete categorical or boolean column of the schema."""
    if column not in schema.names:
        raise InputError(f"condition column {column!r} is not in the table")
    spec = schema[column]
    if spec.kind not in ("categorical", "boolean"):
        raise InputError(f"condition column {column!r} must be categorical or boolean, not {spec.kind}")
    if spec.nullable:
        raise InputError(f"condition column {column!r} is nullable; condition on a complete column")


def build_condition(
    schema: Schema,
    encoder: TableEncoder,
    column: str,
    values: pd.Series,
    noise_multiplier: float,
    rng: np.random.Generator,
) -> tuple[Condition, LedgerEntry | None]:
    """The condition for `column`: the schema's public frequencies if it has them, else a noisy
    histogram (sensitivity 1 under add/remove: one record moves one count by one)."""
    check_condition_column(schema, column)
    spec = schema[column]
    start = next(s.start for s in encoder.spans if s.column == column)
    if spec.frequencies:
        return Condition(column, spec.categories, start, tuple(spec.frequencies), PRIOR_FROM_SCHEMA), None
    index = {c: i for i, c in enumerate(spec.categories)}
    other = index.get(spec.other_category) if spec.other_category is not None else None
    counts = np.zeros(len(spec.categories))
    for value, count in values.value_counts(dropna=True).items():
        slot = index.get(value, other)
        if slot is not None:
            counts[slot] += count
    probs = np.clip(noisy_counts(counts, noise_multiplier, rng), 0.0, None)
    probs = probs / probs.sum() if probs.sum() > 0 else np.full(len(probs), 1.0 / len(probs))
    probs = np.maximum(probs, MIN_PROBABILITY)
    probs = probs / probs.sum()
    entry = gaussian_event(
        f"condition frequencies ({column})", noise_multiplier, note="Gaussian noisy histogram, sensitivity 1"
    )
    return Condition(column, spec.categories, start, tuple(float(p) for p in probs), PRIOR_FROM_DP_COUNTS), entry


def condition_codes(condition: Condition, conditions: dict[str, Any] | None, n: int, generator: torch.Generator):
    """Codes for `n` sampled rows: all equal to the requested value, or drawn from the prior."""
    if not conditions:
        return condition.draw(n, generator)
    if not isinstance(conditions, dict):
        raise InputError("conditions must be a mapping like {'income': '>50K'}")
    unknown = [c for c in conditions if c != condition.column]
    if unknown:
        names = ", ".join(map(str, unknown))
        raise InputError(f"this model is conditioned on {condition.column!r} only; cannot condition on {names}")
    return torch.full((n,), condition.code_of(conditions[condition.column]), dtype=torch.long, device=generator.device)


def condition_column_for(
    column: str | None,
    *,
    recipe: str,
    conditional: bool,
    schema: Schema | None,
    target_hint: str | None,
    columns: Sequence[str] | None = None,
) -> str | None:
    """The column to condition on: the user's, else the target for conditional recipes; checked
    against the table's `columns` (when known) and the schema, both public."""
    if column is None and conditional:
        column = schema.target if schema is not None else target_hint
        if column is None:
            raise InputError(
                f"recipe {recipe} conditions on a column: pass condition=COLUMN "
                "(or name a target: target=COLUMN, --target, or a schema with a 'target')"
            )
    if column is not None:
        if columns is not None and column not in columns:
            raise InputError(f"condition column {column!r} is not in the table")
        if schema is not None:
            check_condition_column(schema, column)
    return column
