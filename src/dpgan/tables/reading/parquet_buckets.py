"""A Parquet table's rows hashed by their unit's key into public bucket files: memory flat in the units.

A unit (a series, an entity) may have rows anywhere in the files, in any order, across batches and
parts. Sorting, or buffering "until the unit ends", would let one unit's placement decide how another
is read (dpgan.privacy.unit_rule). So each row goes by its unit's key alone: the canonical text of its
key cell(s) (dpgan.tables.schema.cells.cell_keys: `1`, `1.0` and `"1"` are one key) is hashed into one
of `buckets` bucket files, whatever the other rows hold. A bucket then holds every row of each of its
units and nothing of any other, and is read in memory as a block. Two tables hashed by the same key
(an entity's parent row and its events) land in the same bucket number.

The number of buckets is public (a setting, never the data's size). Under torchrun each rank reads
every batch but writes only its own buckets (b ≡ rank mod K): the ranks' buckets partition the units.

A file's stored column types are not compared (a writer infers them from the values: one missing
value turns an int64 column into float64), so a bucket is written as files (`{b}-{flush}.parquet`),
each of one stored schema, and read back by concatenating them in turn (the input's row order): no
row's type decides whether the fit runs, and every cell is read by its own rule afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.tables.schema.cells import cell_keys

DEFAULT_BUCKETS = 64  # bucket files (blocks) of a table: public, whatever its size
BATCH_ROWS = 65_536  # rows read from the Parquet files at once
FLUSH_ROWS = 8 * BATCH_ROWS  # rows held before they are written to their buckets' files


def bucket_of(frame: pd.DataFrame, key_columns: Sequence[str], buckets: int) -> np.ndarray:
    """Each row's bucket, from its unit's key alone: a hash of its key cells' canonical texts
    (missing keys share a bucket; the readers ignore them there)."""
    texts = []
    for c in key_columns:
        keys = cell_keys(frame[c])  # canonical texts, None for a missing key
        keys[pd.isna(keys)] = "\x00"
        texts.append(pd.Series(keys, dtype=object))
    joined = texts[0].str.cat(texts[1:], sep="\x1f") if len(texts) > 1 else texts[0]
    hashed = pd.util.hash_pandas_object(joined, index=False).to_numpy()
    return (hashed % np.uint64(buckets)).astype(np.int64)


def check_buckets(buckets: int) -> int:
    """The public number of buckets, a whole number ≥ 1 (one line otherwise)."""
    if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)) or int(buckets) < 1:
        raise InputError("the number of buckets must be a whole number of at least 1")
    return int(buckets)


def write_buckets(
    files: Sequence[Path],
    columns: Sequence[str],
    key_columns: Sequence[str],
    buckets: int,
    mine: Sequence[int],
    folder: Path,
) -> None:
    """Every row of `files` (its `columns`) written to its bucket in `folder`, for the buckets in
    `mine` only (this rank's). The rows are held until FLUSH_ROWS have gathered (or the stored
    schema changes), then each bucket's are written as one new file `{b}-{flush}.parquet`: no writer
    stays open, so memory is the held rows whatever the table's size (an open writer per bucket
    keeps every row group's metadata until it closes), and reading a bucket's files in flush order
    gives its rows in the input's order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wanted, held, rows, flush, last = sorted(set(mine)), {}, 0, 0, None

    def write() -> None:
        nonlocal held, rows, flush
        for b, pieces in held.items():
            pq.write_table(pa.concat_tables(pieces), folder / f"{b}-{flush}.parquet")
        held, rows, flush = {}, 0, flush + 1

    file = files[0] if files else folder
    try:
        for file in files:
            for batch in pq.ParquetFile(file).iter_batches(batch_size=BATCH_ROWS, columns=list(columns)):
                table = pa.Table.from_batches([batch])
                if table.schema != last or rows >= FLUSH_ROWS:  # a table of another stored schema: its own files
                    write()
                    last = table.schema
                keys = pa.Table.from_arrays([table.column(c) for c in key_columns], names=list(key_columns))
                which = bucket_of(keys.to_pandas(), key_columns, buckets)
                order = np.argsort(which, kind="stable")  # by bucket, the input's order within each
                grouped, edges = table.take(pa.array(order)), np.searchsorted(which[order], np.arange(buckets + 1))
                for b in wanted:
                    if edges[b + 1] > edges[b]:
                        held.setdefault(b, []).append(grouped.slice(edges[b], edges[b + 1] - edges[b]))
                rows += len(table)
        write()
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise InputError(f"cannot read {file}: not a well-formed Parquet file ({type(exc).__name__})") from None


def read_bucket(folder: Path, bucket: int, columns: Sequence[str]) -> pd.DataFrame:
    """Bucket `bucket`'s rows (its files in the order they were written: the input's row order),
    an empty frame of `columns` when it holds none."""
    import pyarrow.parquet as pq

    parts = sorted(folder.glob(f"{bucket}-*.parquet"), key=lambda p: int(p.stem.split("-")[1]))  # flush order
    frames = [pq.read_table(p).to_pandas()[list(columns)] for p in parts]
    if not frames:
        return pd.DataFrame(columns=list(columns))
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


__all__ = ["BATCH_ROWS", "DEFAULT_BUCKETS", "FLUSH_ROWS", "bucket_of", "check_buckets", "read_bucket", "write_buckets"]
