"""A long table of series (one row per reading) in Parquet, read in record batches and grouped by an
external pass: memory flat in the number of series, on one process or on each torchrun rank.

A series' readings may sit anywhere in the files, in any order, across batches and parts. Sorting
or buffering "until the series ends" would let one series' placement decide how another is read
(the unit rule: dpgan.sequences.reader). So every reading goes by its series' identity alone: the
canonical text of its id cell(s) (the reader's key) is hashed into one of `buckets` bucket files
on a temporary folder, whatever the other rows hold; then each bucket, which holds every reading of
each of its series and nothing of any other (dpgan.tables.reading.parquet_buckets), is grouped in memory by the reader
(`read_long_raw`) as a block. A bucket is a block of dpgan.sequences.series_file.SeriesBlocks: the
data steps' sums add up over buckets and ranks before their noise, as for an .npy. The number of
buckets is public (a setting, never the data's size); a bucket holds about 1/buckets of the table.
Under torchrun every rank reads every batch but writes and reads only its buckets (b ≡ rank mod K).

The entity unit is not read this way (its units draw k series at random across the whole table):
refused in one line, before any read; fit such a table in memory.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dpgan.errors import InputError
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.sequences.reader import RawSeries, read_long_raw
from dpgan.sequences.schema import SequenceSchema
from dpgan.sequences.series_file import SeriesBlocks
from dpgan.tables.reading.parquet_buckets import DEFAULT_BUCKETS, bucket_of, check_buckets, read_bucket, write_buckets


@dataclass(frozen=True)
class LongParquet(SeriesBlocks):
    """A long Parquet table (a file, or a folder of parts) grouped into `buckets` blocks."""

    files: tuple[Path, ...]
    buckets: int = DEFAULT_BUCKETS
    context: ProcessGroupContext = SINGLE_PROCESS
    cache: dict[str, Any] = field(default_factory=dict, compare=False)  # the bucket files, once written

    @classmethod
    def open(cls, path: str | Path, *, buckets: int = DEFAULT_BUCKETS) -> LongParquet:
        from dpgan.tables.reading.parquet_source import ParquetSource

        return cls(tuple(ParquetSource(path).files()), check_buckets(buckets))

    def columns(self) -> list[str]:
        import pyarrow.parquet as pq

        return list(pq.read_schema(self.files[0]).names)

    def check(self, schema: SequenceSchema) -> None:
        """The header against the schema (public): its columns present, no entity column."""
        if schema.entity is not None:
            raise InputError("an entity column draws series across the whole table: fit that table in memory")
        missing = [c for c in schema.columns if c not in self.columns()]
        if missing:
            raise InputError(f"the table lacks the schema's columns {', '.join(map(repr, missing))}")

    def on(self, context: ProcessGroupContext) -> LongParquet:
        return replace(self, context=context, cache={})

    def digest(self) -> int:
        from dpgan.tables.reading.parquet_source import files_digest

        return int(hashlib.sha256(f"{files_digest(self.files)}\0{self.buckets}".encode()).hexdigest()[:15], 16)

    def bucket_folder(self, schema: SequenceSchema) -> Path:
        """Every reading written to its series' bucket (this rank's buckets only), once per fit."""
        if "folder" in self.cache:
            return Path(self.cache["folder"].name)
        folder = tempfile.TemporaryDirectory(prefix="dpgan-series-buckets-")
        self.cache["folder"] = folder  # removed with this object
        columns = list(schema.columns)
        write_buckets(
            self.files,
            columns,
            list(schema.id_columns),
            self.buckets,
            self.context.owned(self.buckets),
            Path(folder.name),
        )
        return Path(folder.name)

    def raw_blocks(self, schema: SequenceSchema) -> Iterator[RawSeries]:
        """This rank's buckets, each grouped by the reader (an empty frame for an empty bucket)."""
        folder = self.bucket_folder(schema)
        for b in self.context.owned(self.buckets):
            yield read_long_raw(read_bucket(folder, b, list(schema.columns)), schema)


__all__ = ["DEFAULT_BUCKETS", "LongParquet", "bucket_of"]
