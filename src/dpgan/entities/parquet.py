"""A parent table and an events table in Parquet (a file, or a folder of parts each), read in buckets:
memory flat in the number of entities, on one process or on each torchrun rank.

Both tables are hashed by the key's canonical text into the same `buckets` bucket files
(dpgan.tables.reading.parquet_buckets): bucket b holds the parent rows and the events of each of its
entities and nothing of any other, wherever those rows sat in the parts. Each bucket is then read in
memory by the reader (the unit rule: orphans and duplicates dropped and tallied, the k-of-n draw keyed
per entity), and its exact sums go into the releases' sums (blocks.py): the same releases as the
tables read whole. Under torchrun each rank writes and reads only its buckets (b ≡ rank mod K); the
sums are added over the ranks before each noise draw.

What is read before any value: each table's column names (every part the same, ParquetSource's check)
and the first part's stored types (the caller's dtypes, public as a DataFrame's are: the key's
numbers-or-text and the time column's type are checked on them, once, reader.check_tables); the
number of buckets (public, a setting). A later part's stored types decide nothing: each cell is read
by its own rule in its bucket.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgan.entities.blocks import EntityReads
from dpgan.entities.reader import UNIT_REASONS, EntityRead, read_checked
from dpgan.entities.schema import EntitySchema
from dpgan.errors import InputError
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.privacy.unit_rule import UnitTally
from dpgan.statistics.blocks import rank_sum
from dpgan.tables.reading.parquet_buckets import DEFAULT_BUCKETS, check_buckets, read_bucket, write_buckets

PARENTS, EVENTS = "parents", "events"
Reader = Callable[[], pd.DataFrame]  # reads one bucket's table when called


@dataclass(frozen=True)
class EntityParquet:
    """The two tables' Parquet files, grouped into `buckets` blocks of entities; `context`: the
    process group whose rank reads buckets rank, rank + K, ... (the single process reads all)."""

    parents: tuple[Path, ...]
    events: tuple[Path, ...]
    headers: tuple[pd.DataFrame, pd.DataFrame] = field(compare=False)  # no rows: the first parts' columns and types
    buckets: int = DEFAULT_BUCKETS
    context: ProcessGroupContext = SINGLE_PROCESS
    cache: dict[str, Any] = field(default_factory=dict, compare=False)  # the bucket folders, once written

    @classmethod
    def open(cls, parents: str | Path, events: str | Path, *, buckets: int = DEFAULT_BUCKETS) -> EntityParquet:
        """Each table's footers checked (readable Parquet, the same columns in every part): one line
        naming the file otherwise, before any value is read."""
        from dpgan.tables.reading.parquet_source import ParquetSource

        buckets = check_buckets(buckets)
        opened = {words: ParquetSource(path).open() for words, path in ((PARENTS, parents), (EVENTS, events))}
        headers = tuple(_header(opened[words].files[0], opened[words].columns) for words in (PARENTS, EVENTS))
        return cls(opened[PARENTS].files, opened[EVENTS].files, headers, buckets)  # type: ignore[arg-type]

    def on(self, context: ProcessGroupContext) -> EntityParquet:
        """The same tables read by `context`'s rank (its share of the buckets)."""
        return replace(self, context=context, cache={})

    def digest(self) -> int:
        """The files' public facts, for the ranks to check that they read the same input."""
        from dpgan.tables.reading.parquet_source import files_digest

        text = f"{files_digest(self.parents)}\0{files_digest(self.events)}\0{self.buckets}"
        return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)

    def columns(self, schema: EntitySchema) -> tuple[list[str], list[str]]:
        """The columns read of each table: the key and the schema's (the events' time column too)."""
        time = [] if schema.time is None else [schema.time.column]
        return [schema.key, *schema.parents.names], [schema.key, *time, *schema.events.names]

    def folder(self, schema: EntitySchema) -> Path:
        """Every row of both tables written to its entity's bucket (this rank's buckets), once per fit."""
        if "folder" not in self.cache:
            folder = tempfile.TemporaryDirectory(prefix="dpgan-entity-buckets-")
            self.cache["folder"] = folder  # removed with this object
            for words, files, columns in zip((PARENTS, EVENTS), (self.parents, self.events), self.columns(schema)):
                (Path(folder.name) / words).mkdir()
                write_buckets(
                    files,
                    columns,
                    [schema.key],
                    self.buckets,
                    self.context.owned(self.buckets),
                    Path(folder.name) / words,
                )
        return Path(self.cache["folder"].name)

    def frames(
        self, schema: EntitySchema
    ) -> Iterator[tuple[int, Callable[[], pd.DataFrame], Callable[[], pd.DataFrame]]]:
        """This rank's buckets, each as (b, a function reading its parents, one reading its events);
        the empty headers once (b = -1) when the rank holds no bucket (more ranks than buckets), so
        every pass yields a block."""
        folder, columns = self.folder(schema), self.columns(schema)

        def table(which: int, b: int) -> pd.DataFrame:
            words, names = (PARENTS, EVENTS)[which], columns[which]
            frame = read_bucket(folder / words, b, names) if b >= 0 else self.headers[which][names]
            return frame if len(frame) else self.headers[which][names]  # an empty bucket: the header's types

        for b in self.context.owned(self.buckets) or [-1]:
            yield b, (lambda b=b: table(0, b)), (lambda b=b: table(1, b))

    def reads(self, schema: EntitySchema, bins: int, seed: int) -> EntityReads:
        """The kept entities bucket by bucket (the reader's rule on each, the k-of-n draw keyed by
        `seed`), their sums added over the ranks. The first pass reads each bucket's rows and keeps
        what the reader made of them (cells and counts: a few integers per entity and event read) in
        a file beside the bucket; later passes (the link's tables, the histograms) load that file: the
        same block, one bucket in memory at a time, without reading the cells again."""
        folder = self.folder(schema) / f"read-{bins}-{seed}"
        folder.mkdir(exist_ok=True)

        def read() -> Iterator[EntityRead]:
            for b, parents, events in self.frames(schema):
                kept = folder / f"{b}.npz"
                if kept.is_file():
                    yield _load_read(kept)
                    continue
                block = read_checked(parents(), events(), schema, bins, seed)
                _save_read(block, kept)
                yield block

        return EntityReads(read, rank_sum(self.context))


def _save_read(read: EntityRead, path: Path) -> None:
    """A bucket's read (private: a temporary file of this fit's, removed with its folder)."""
    arrays = {f.name: getattr(read, f.name) for f in fields(EntityRead) if f.name != "tally"}
    np.savez(path, tally=read.tally.vector(), **{k: v for k, v in arrays.items() if v is not None})


def _load_read(path: Path) -> EntityRead:
    with np.load(path, allow_pickle=False) as saved:
        vector = saved["tally"]
        tally = UnitTally(UNIT_REASONS, kept=int(vector[0]))
        for reason, count in zip(UNIT_REASONS, vector[1:]):
            tally.drop(reason, int(count))
        values = {f.name: saved[f.name] if f.name in saved else None for f in fields(EntityRead) if f.name != "tally"}
    return EntityRead(**values, tally=tally)


def _header(file: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    """A table with the first part's columns and stored types and no row (nothing of the data)."""
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(file).empty_table().to_pandas()[list(columns)]
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"cannot read {file}: not a well-formed Parquet file ({type(exc).__name__})") from None


__all__ = ["EntityParquet"]
