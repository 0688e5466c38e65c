"""Where a training loop gets the rows of a Poisson batch: "rows by index".

The loop asks its private step for the next batch's indices (the sampler) and then for those
rows. In memory the rows are a tensor and `rows(index)` is `data[index]`. A table larger than
memory (dpgan.tables.fit.streamed) is read a block at a time: `BlockRows` asks its sampler
for the index sets of the next steps (dpgan.privacy.block_sampling: the same sets it would give
one by one), gathers the union of those rows in one sequential pass through `gather`, and serves
each step from that block. The sampler's indices are never changed: a step's batch is exactly
the rows its index set names, so the loop, the clipping and the accounting see what they would
see in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
import torch

from dpgan.privacy.block_sampling import BlockPoissonSampler


class RowSource(Protocol):
    """The rows of a table by index, and (optionally) the sampler whose indices it serves."""

    num_rows: int
    width: int
    sampler: BlockPoissonSampler | None

    def rows(self, index: torch.Tensor) -> torch.Tensor: ...


class TensorRows:
    """The whole encoded table in memory (the path of every in-memory fit), moved once to the
    device the fit runs on, so a step's batch is gathered there instead of copied from the host
    every step (on the CPU the same tensor)."""

    def __init__(self, data: torch.Tensor, sampler: BlockPoissonSampler | None = None) -> None:
        self.data, self.sampler = on_fit_device(data), sampler
        self.num_rows, self.width = int(data.shape[0]), int(data.shape[1])

    def rows(self, index: torch.Tensor) -> torch.Tensor:
        return on_fit_device(self.data[index.to(self.data.device)])


def on_fit_device(rows: torch.Tensor) -> torch.Tensor:
    """Rows on the device the fit runs on (dpgan.devices: torch's default device inside the fit),
    wherever they were read: a table encoded from NumPy or a streamed block is on the CPU. The
    same tensor when it is already there (always, on the CPU)."""
    return rows.to(torch.get_default_device())


def as_row_source(data: torch.Tensor | RowSource) -> RowSource:
    return TensorRows(data) if isinstance(data, torch.Tensor) else data


# gather(sorted unique row indices) -> those rows, encoded, in that order (one pass over the data)
Gather = Callable[[np.ndarray], torch.Tensor]


class BlockRows:
    """Rows served from blocks of `block_rows` rows at most (one step's batch may exceed it):
    the block holds the union of the next steps' batches (module docstring)."""

    def __init__(
        self, num_rows: int, width: int, sampler: BlockPoissonSampler, gather: Gather, block_rows: int
    ) -> None:
        self.num_rows, self.width, self.sampler = num_rows, width, sampler
        self.gather, self.block_rows = gather, max(1, int(block_rows))
        self._union = np.zeros(0, dtype=np.int64)
        self._block = torch.zeros(0, width)
        self._pending = 0  # steps of the current block not yet served
        self.passes = 0  # gathering passes so far (for tests and benches)

    def rows(self, index: torch.Tensor) -> torch.Tensor:
        wanted = index.cpu().numpy().astype(np.int64)
        if self._pending == 0:
            # a new block: this step and the next ones up to the budget, as the sampler queued them
            following = self.sampler.ahead(max(self.block_rows - len(wanted), 0))
            self._pending = 1 + len(following)
            self._union = np.unique(np.concatenate([wanted, *following]))
            self._block = self.gather(self._union) if len(self._union) else torch.zeros(0, self.width)
            self.passes += 1
        self._pending -= 1
        if len(wanted) == 0:
            return on_fit_device(torch.zeros(0, self.width))
        position = np.searchsorted(self._union, wanted)
        if position.max() >= len(self._union) or not np.array_equal(self._union[position], wanted):
            raise RuntimeError("internal error: a batch asked for rows its block does not hold")
        return on_fit_device(self._block[torch.from_numpy(position)])
