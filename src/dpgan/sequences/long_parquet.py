"""A long table of series (one row per reading) in Parquet, read in record batches and grouped by an
external pass: memory flat in the number of series, on one process or on each torchrun rank.

A series' readings may sit anywhere in the files, in any order, across batches and parts. Sorting
or buffering "until the series ends" would let one series' placement decide how another is read
(the unit rule: dpgan.sequences.reader). So every reading goes by its series' identity alone: the
canonical text of its id cell(s) (the reader's key) is hashed into one of `buckets` bucket files
on a temporary folder, whatever the other rows hold; then each bucket, which holds every reading of
each of its series and nothing of any other, is grouped in memory by the reader
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

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.sequences.reader import RawSeries, read_long_raw
from dpgan.sequences.schema import SequenceSchema
from dpgan.sequences.series_file import SeriesBlocks
from dpgan.tables.schema.cells import cell_keys

DEFAULT_BUCKETS = 64  # bucket files (blocks) of a long table: public, whatever its size
BATCH_ROWS = 65_536  # rows read from the Parquet files at once


def bucket_of(frame: pd.DataFrame, id_columns: list[str], buckets: int) -> np.ndarray:
    """Each row's bucket, from its series' identity alone: a hash of its id cells' canonical texts
    (missing ids share a bucket; the reader ignores them there)."""
    texts = [
        pd.Series(cell_keys(frame[c]), dtype=object).map(lambda v: "\x00" if v is None else str(v)) for c in id_columns
    ]
    joined = texts[0].str.cat(texts[1:], sep="\x1f") if len(texts) > 1 else texts[0]
    hashed = pd.util.hash_pandas_object(joined, index=False).to_numpy()
    return (hashed % np.uint64(buckets)).astype(np.int64)


def _text(key: object) -> str:
    return "\x00" if key is None else str(key)


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

        if int(buckets) < 1:
            raise InputError("the number of buckets must be at least 1")
        return cls(tuple(ParquetSource(path).files()), int(buckets))

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

    def mine(self) -> list[int]:
        return list(range(self.context.rank, self.buckets, self.context.world_size))

    def bucket_folder(self, schema: SequenceSchema) -> Path:
        """Every reading written to its series' bucket (this rank's buckets only), once per fit."""
        if "folder" in self.cache:
            return Path(self.cache["folder"].name)
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder = tempfile.TemporaryDirectory(prefix="dpgan-series-buckets-")
        self.cache["folder"] = folder  # removed with this object
        mine, writers = set(self.mine()), {}
        try:
            for file in self.files:
                for batch in pq.ParquetFile(file).iter_batches(batch_size=BATCH_ROWS, columns=list(schema.columns)):
                    table = pa.Table.from_batches([batch])
                    which = bucket_of(table.to_pandas(), list(schema.id_columns), self.buckets)
                    for b in sorted(mine.intersection(np.unique(which).tolist())):
                        part = table.filter(pa.array(which == b))
                        if b not in writers:
                            writers[b] = pq.ParquetWriter(Path(folder.name) / f"{b}.parquet", table.schema)
                        writers[b].write_table(part)
        except (ValueError, pa.ArrowInvalid):
            raise InputError("the Parquet parts must share one schema (the same column types)") from None
        finally:
            for writer in writers.values():
                writer.close()
        return Path(folder.name)

    def raw_blocks(self, schema: SequenceSchema) -> Iterator[RawSeries]:
        """This rank's buckets, each grouped by the reader (an empty frame for an empty bucket)."""
        import pyarrow.parquet as pq

        folder = self.bucket_folder(schema)
        for b in self.mine():
            path = folder / f"{b}.parquet"
            frame = pq.read_table(path).to_pandas() if path.is_file() else pd.DataFrame(columns=list(schema.columns))
            yield read_long_raw(frame, schema)


__all__ = ["DEFAULT_BUCKETS", "LongParquet", "bucket_of"]
