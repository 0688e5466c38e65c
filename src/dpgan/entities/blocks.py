"""The kept entities as blocks: what the tally, the link's choice and the statistics model sum over.

Every release of the entity kind is a sum over entities of a bounded contribution (the tally's
cells, the link's tables N_c and W_cj, each histogram of statistics.py): one entity adds to it from
its own rows alone, wherever they sit. A sum does not care how its terms are grouped, so the
entities may be read a block at a time (a bucket of both Parquet tables, dpgan.entities.parquet:
each bucket holds every row of each of its entities and nothing of any other), the blocks' exact
sums added up, then over torchrun's ranks (`reduce`, dpgan.statistics.blocks.rank_sum), and the
noise drawn once after, with the one-table release's std: the same mechanism, sensitivity and
ledger entry. The tables in memory are one block.

What a block holds never decides what is read next: the blocks, their order and the tables' shapes
(the schema's cells) are fixed before any value is read. A pass is a new read of every block
(`read()`), so a release that needs an earlier one (the histograms given the chosen link) passes again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from dpgan.entities.reader import EntityRead
from dpgan.statistics.blocks import Reduce, local_sum

Sums = dict[str, np.ndarray]
Histograms = dict[str, tuple[dict[str, np.ndarray], float, str]]


class HistogramModel(Protocol):
    """What `summed_histograms` reads of the statistics model (statistics.py imports this module)."""

    def histograms(self, read: EntityRead) -> Histograms: ...


@dataclass(frozen=True)
class EntityReads:
    """The kept entities, a block at a time (`read()` starts a pass; at least one block, an empty
    one when a rank holds none), and the sum over ranks (the identity on one process)."""

    read: Callable[[], Iterable[EntityRead]]
    reduce: Reduce = field(default=local_sum)

    @classmethod
    def whole(cls, read: EntityRead) -> EntityReads:
        """The tables read in memory: one block."""
        return cls(lambda: (read,))

    def sum(self, each: Callable[[EntityRead], Sums]) -> Sums:
        """Σ over blocks and ranks of `each` block's exact sums (same keys and shapes in every
        block: the schema's, public), before any noise."""
        total: Sums | None = None
        for read in self.read():
            part = each(read)
            total = dict(part) if total is None else {key: total[key] + value for key, value in part.items()}
        if total is None:  # a reader's fault, not the data's: every pass yields a block
            raise ValueError("a pass over the entities yielded no block")
        return self.reduce(total)


def summed_histograms(model: HistogramModel, reads: EntityRead | EntityReads) -> Histograms:
    """`model.histograms` of the whole input: each block's exact histograms added up (and over the
    ranks); their sensitivities and notes are the schema's (every block says the same)."""
    reads = reads if isinstance(reads, EntityReads) else EntityReads.whole(reads)
    layout: dict[str, Any] = {}

    def each(read: EntityRead) -> Sums:
        histograms = model.histograms(read)
        layout.setdefault("histograms", histograms)
        return {key: part for parts, _, _ in histograms.values() for key, part in parts.items()}

    total = reads.sum(each)
    return {
        name: ({key: total[key] for key in parts}, sensitivity, note)
        for name, (parts, sensitivity, note) in layout["histograms"].items()
    }


__all__ = ["EntityReads", "summed_histograms"]
