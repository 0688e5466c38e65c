"""Poisson sampling: each record joins each batch independently with probability q.

What is run is what is accounted: the ledger records these batches as Poisson-subsampled
Gaussian events, so no fixed-size or shuffled batching is offered here.
"""

from __future__ import annotations

import torch


class PoissonSampler:
    """Draws index sets whose size varies from step to step (and may be zero).

    A table with no rows is legal (every row of a private table can be dropped by a per-row rule,
    dpgan.tables.reading.conform): every batch is then empty and each release is pure noise, as the accounting
    assumes; refusing it instead would make whether a fit runs depend on the data."""

    def __init__(self, num_rows: int, sample_rate: float, generator: torch.Generator) -> None:
        if num_rows < 0:
            raise ValueError("num_rows must be non-negative")
        if not 0.0 < sample_rate <= 1.0:
            raise ValueError("sample_rate must be in (0, 1]")
        self.num_rows = num_rows
        self.sample_rate = sample_rate
        self.generator = generator

    @property
    def expected_batch_size(self) -> float:
        return self.sample_rate * self.num_rows

    def sample(self) -> torch.Tensor:
        mask = torch.rand(self.num_rows, generator=self.generator, device=self.generator.device) < self.sample_rate
        return mask.nonzero(as_tuple=True)[0]
