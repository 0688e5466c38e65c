"""Vectors read in blocks, each pass from the start: what the statistics models sum over.

Every statistic a model of dpgan.statistics releases (a label's count, its clipped sum, its second
moments, a histogram's cells, a Lloyd step's cell sums) is a sum of per-unit contributions, each
bounded on its own. A sum does not care how its terms are grouped, so a model can read its units a
block at a time (a long series table's parts, an image folder's files) and hold only the running
sums: memory flat in the number of units. The noise is drawn once, after the last block (and after
the sum over ranks, `reduce`), with the std of the one-pass release: the same mechanism, the same
sensitivity, the same ledger entry. Nothing a block holds decides what is read next or how: the
passes, their order and the blocks' public dimension are fixed before any value is read.

A model that needs a released value before it can sum (the centred Gaussian's mean, the Lloyd
steps' centres, the copula's CDFs) passes over the blocks again: `VectorBlocks` is a recipe for a
pass (`passes()`), not a one-shot iterator.

`reduce` sums the running sums over torchrun's ranks (dpgan.privacy.distributed's one all-reduce,
`rank_sum`) when each rank reads its own share of the blocks; on one process it is the identity.
Every rank then holds the single-process sums, and every rank draws the same noise from the shared
seed: one release, not one per rank.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from dpgan.errors import InputError

if TYPE_CHECKING:  # PyTorch is loaded only when the sums travel over ranks
    from dpgan.privacy.distributed import ProcessGroupContext

Block = tuple[np.ndarray, np.ndarray]  # (n, d) float64 values and (n,) int64 labels
Reduce = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
DEFAULT_BLOCK = 8192  # units per block when an in-memory array is cut into blocks


def local_sum(sums: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One process: the sums are already the whole sums."""
    return sums


def rank_sum(context: ProcessGroupContext) -> Reduce:
    """The running sums added over the process group's ranks in one collective (float64, so the
    sums keep the single-process precision up to the order of additions); the identity on one
    process. Sums only: noise is added after (dpgan.privacy.distributed's module docstring)."""
    if not context.distributed:
        return local_sum
    import torch

    def reduce(sums: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        # every sum travels as float64 (the collective's one dtype would be float32 for counts
        # alone): integer counts stay exact up to 2^53
        tensors = {name: torch.from_numpy(np.asarray(v, dtype=np.float64)) for name, v in sums.items()}
        summed = context.all_reduce_sum(tensors)
        return {name: summed[name].cpu().numpy().astype(sums[name].dtype) for name in sums}

    return reduce


@dataclass(frozen=True)
class VectorBlocks:
    """Flat vectors of public length `dimension` and their label codes, read a block at a time.

    `read()` starts a new pass and yields (values, labels) blocks; labels may be None (one label).
    `reduce` adds the running sums over ranks (the identity on one process)."""

    dimension: int
    read: Callable[[], Iterable[tuple[np.ndarray, np.ndarray | None]]]
    reduce: Reduce = field(default=local_sum)

    def passes(self) -> Iterator[Block]:
        """One pass: each block as float64 values (n, d) and int64 labels (n,)."""
        for values, labels in self.read():
            values = np.asarray(values, dtype=np.float64)
            codes = np.zeros(len(values), dtype=np.int64) if labels is None else np.asarray(labels, dtype=np.int64)
            if values.ndim != 2 or values.shape[1] != self.dimension or codes.shape != (len(values),):
                # the blocks' structure is the reader's (public), never a unit's: a broken reader
                raise InputError(f"a block must be (n, {self.dimension}) values with n labels")
            yield values, codes

    def mapped(self, transform: Callable[[np.ndarray, np.ndarray], Block]) -> VectorBlocks:
        """The same blocks through `transform(values, labels)` (a function of the unit and of values
        released before this pass: scores through released CDFs, cells by released centres)."""

        def read() -> Iterator[Block]:
            for values, labels in self.passes():
                yield transform(values, labels)

        return VectorBlocks(self.dimension, read, self.reduce)

    def summed(self, sums: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The running sums over every rank (before any noise)."""
        return self.reduce(dict(sums))


def in_memory(values: np.ndarray, labels: np.ndarray | None, *, block: int | None = None) -> VectorBlocks:
    """An in-memory (n, d) array as blocks of `block` rows (None: one block, which keeps seeded fits
    bit-equal to the one-array code: every running sum starts at zero and adds the whole array's)."""
    values = np.asarray(values)
    d = int(values.shape[1])

    def read() -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        size = len(values) if block is None else block
        if size <= 0 or len(values) == 0:
            yield values, labels
            return
        for start in range(0, len(values), size):
            yield values[start : start + size], None if labels is None else labels[start : start + size]

    return VectorBlocks(d, read)


def as_blocks(values: np.ndarray | VectorBlocks, labels: np.ndarray | None) -> VectorBlocks:
    """Blocks as they are, or an in-memory array (with its labels) as one block."""
    return values if isinstance(values, VectorBlocks) else in_memory(values, labels)


__all__ = ["DEFAULT_BLOCK", "Block", "Reduce", "VectorBlocks", "as_blocks", "in_memory", "local_sum", "rank_sum"]
