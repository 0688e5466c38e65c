"""Series in an (N, T) or (N, T, F) .npy file, read a block at a time with plain reads
(dpgan.npy_blocks): the series fit's data steps with memory flat in N, on one process or on each
torchrun rank's share of the blocks.

Every data step of a series fit is a sum over units, each unit's term bounded on its own
(dpgan.statistics.blocks): the bounds' minima/maxima histograms (one count per unit in one bin of
each), the label counts of partition selection (1 per series), the tally (one count per unit, kept
or dropped per reason), and the statistics model's sums. A sum does not care how its terms are
grouped, so each is added up block by block, then over the ranks (`rank_sum`), and noised once after,
with the one-array release's std: the same mechanism, sensitivity and ledger entry. Each series is
kept or dropped by its own cells (dpgan.sequences.reader.read_array_raw, block by block): no series
decides how another is read. What the fit reads is public before any value is: the file's shape
and dtype (the header), the block size, the rank's blocks (block i on rank i mod K).

Refusals are the header's alone (not an .npy, an object dtype or Fortran order, a file shorter than
its header, a shape other than the schema's): one line naming the file, never a value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.npy_blocks import NpyArray
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.privacy.unit_rule import UnitTally
from dpgan.sequences.codec import SeriesSet, encode
from dpgan.sequences.dp_schema import bound_histograms
from dpgan.sequences.reader import SERIES_REASONS, RawSeries, read_array_raw
from dpgan.sequences.schema import SequenceSchema
from dpgan.statistics.blocks import DEFAULT_BLOCK, VectorBlocks, rank_sum


class SeriesBlocks:
    """Series read a block at a time (`raw_blocks`: this rank's blocks, each by the unit rule) and the
    data steps' sums over them: what dpgan.sequences.dp_schema (SummedSeries), the tally and the
    statistics model read. A subclass says where the blocks come from and checks its public header
    against the schema (`check`)."""

    context: ProcessGroupContext

    def raw_blocks(self, schema: SequenceSchema) -> Iterator[RawSeries]:  # pragma: no cover - abstract
        raise NotImplementedError

    def check(self, schema: SequenceSchema) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def on(self, context: ProcessGroupContext) -> SeriesBlocks:  # pragma: no cover - abstract
        raise NotImplementedError

    def digest(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def summed(self, sums: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Sums over the ranks (the identity on one process): before any noise."""
        return rank_sum(self.context)(sums)

    # ---------------------------------------------------------------- the DP schema's sums
    def bound_histograms(self, schema: SequenceSchema) -> np.ndarray:
        """dpgan.sequences.dp_schema's minima/maxima histograms, summed over blocks and ranks."""
        total = bound_histograms(self.empty(schema), schema)  # zeros over the public grid
        for raw in self.raw_blocks(schema):
            total = total + bound_histograms(raw, schema)
        return self.summed({"histograms": total})["histograms"]

    def label_sums(self, schema: SequenceSchema, cap: int, rng: np.random.Generator) -> dict[str, float]:
        """Each label's count of series (one unit = one series holds one label: weight 1), summed
        over blocks and ranks; the one draw dpgan.sequences.dp_schema.label_contributions takes from
        `rng` is taken here too, so the noise after is the one-array fit's."""
        rng.integers(0, 2**63 - 1)  # label_contributions' child seed (unused: one label per unit)
        counts: dict[str, float] = {}
        for raw in self.raw_blocks(schema):
            assert raw.labels is not None
            for key, count in pd.Series(raw.labels, dtype=object).map(str).value_counts(sort=False).items():
                counts[str(key)] = counts.get(str(key), 0.0) + float(count)
        keys = self.union_keys(sorted(counts))
        vector = np.array([counts.get(k, 0.0) for k in keys], dtype=np.float64)
        summed = self.summed({"labels": vector})["labels"] if keys else vector
        return {k: float(c) for k, c in zip(keys, summed)}

    def union_keys(self, keys: list[str]) -> list[str]:
        """The labels any rank read, in text order, on every rank (gathered between the processes,
        never released: only their noisy counts are)."""
        if not self.context.distributed:
            return keys
        import torch.distributed as dist

        gathered: list[list[str] | None] = [None] * self.context.world_size
        dist.all_gather_object(gathered, keys)
        return sorted({k for part in gathered for k in (part or [])})

    # ---------------------------------------------------------------- encode, tally, model blocks
    def tally(self, schema: SequenceSchema) -> SeriesSet:
        """The encoded series' tally (kept, dropped per reason) over every block and rank, in a
        SeriesSet that holds no series (the model reads them through `encoded`)."""
        tally = UnitTally(SERIES_REASONS)
        for raw in self.raw_blocks(schema):
            tally.merge(encode(raw, schema).tally)
        vector = self.summed({"tally": tally.vector()})["tally"]
        summed = UnitTally(SERIES_REASONS, kept=int(vector[0]))
        for reason, count in zip(SERIES_REASONS, vector[1:]):
            summed.drop(reason, int(count))
        empty = np.zeros((0, schema.length, len(schema.values)), dtype=np.float32)
        return SeriesSet(empty, None, None, summed, summed.total_dropped)

    def encoded(self, schema: SequenceSchema) -> VectorBlocks:
        """The kept series scaled with the complete schema, flattened (T·F values), with their label
        codes: this rank's blocks, each pass from the start, sums over the ranks (`rank_sum`)."""
        d = schema.length * len(schema.values)

        def read() -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
            for raw in self.raw_blocks(schema):
                series = encode(raw, schema)
                yield series.values.reshape(len(series.values), d), series.labels

        return VectorBlocks(d, read, rank_sum(self.context))

    def empty(self, schema: SequenceSchema) -> RawSeries:
        values = np.zeros((0, schema.length, len(schema.values)))
        labels = None if schema.label is None else np.zeros(0, dtype=object)
        return RawSeries(values, labels, None, UnitTally(SERIES_REASONS), 0)


@dataclass(frozen=True)
class SeriesFile(SeriesBlocks):
    """An .npy of series (its header: dpgan.npy_blocks) and their labels (None, a 1-D array in
    memory, or an .npy of N labels, also read by blocks), read `block` series at a time; `context`:
    the process group whose rank reads blocks rank, rank + K, ... (the single process reads all)."""

    array: NpyArray
    labels: np.ndarray | NpyArray | None
    block: int = DEFAULT_BLOCK
    context: ProcessGroupContext = SINGLE_PROCESS
    name: str = ""

    @classmethod
    def open(
        cls, path: str | Path, labels: np.ndarray | str | Path | None = None, *, block: int = DEFAULT_BLOCK
    ) -> SeriesFile:
        """The file's header checked (public): (N, T) or (N, T, F) real numbers, N labels."""
        array = NpyArray.open(path, "series")
        if array.ndim not in (2, 3):
            raise InputError(f"series file {Path(path).name}: an (N, T) or (N, T, F) array is needed")
        if not np.issubdtype(array.dtype, np.number) or np.issubdtype(array.dtype, np.complexfloating):
            raise InputError(f"series file {Path(path).name}: the series must hold real numbers (a numeric array)")
        if isinstance(labels, (str, Path)):
            labels = NpyArray.open(labels, "labels")
        elif labels is not None:
            labels = np.asarray(labels)
        if labels is not None and (labels.ndim != 1 or len(labels) != len(array)):
            raise InputError("labels must be a 1-D array with one label per series")
        if int(block) < 1:
            raise InputError("the block size must be at least 1 series")
        return cls(array, labels, int(block), SINGLE_PROCESS, Path(path).name)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    def check(self, schema: SequenceSchema) -> None:
        """The header against the schema (public): T and F, labels exactly when it names a label."""
        features = self.shape[2] if len(self.shape) == 3 else 1
        if self.shape[1:2] != (schema.length,) or features != len(schema.values):
            raise InputError(f"each series must have shape ({schema.length}, {len(schema.values)}) as the schema says")
        if (schema.label is None) != (self.labels is None):
            raise InputError("pass one label per series exactly when the schema names a label")

    def on(self, context: ProcessGroupContext) -> SeriesFile:
        """The same file read by `context`'s rank (its share of the blocks)."""
        return replace(self, context=context)

    def digest(self) -> int:
        """The header's public facts, for the ranks to check that they read the same input."""
        labels = None if self.labels is None else (len(self.labels), str(self.labels.dtype))
        text = f"{self.name}\0{self.shape}\0{self.array.dtype}\0{labels}\0{self.block}"
        return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)

    # ---------------------------------------------------------------- blocks
    def raw_blocks(self, schema: SequenceSchema) -> Iterator[RawSeries]:
        """This rank's blocks, each read by the unit rule (a series' fate is its own cells')."""
        n = len(self.array)
        for b in self.context.owned(-(-n // self.block)):
            start, stop = b * self.block, min((b + 1) * self.block, n)
            yield read_array_raw(self.array.rows(start, stop), self.label_rows(start, stop), schema)

    def label_rows(self, start: int, stop: int) -> np.ndarray | None:
        """The labels of series start..stop-1: a block of the labels file, or of the array in memory."""
        if isinstance(self.labels, NpyArray):
            return self.labels.rows(start, stop)
        return None if self.labels is None else self.labels[start:stop]


__all__ = ["SeriesBlocks", "SeriesFile"]
