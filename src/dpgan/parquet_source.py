"""A private table too large for memory: a Parquet file or a directory of Parquet files, read in
record batches.

Why its own type: `fit` must know before it reads a cell whether the input is a DataFrame (one
pass in memory) or a stream (several sequential passes, dpgan.synthesizers.streamed_fit). Every
pass reads the files in one fixed order (sorted paths, row groups in file order) with the same
batch length, so the i-th row is the same row on every pass: the row indices a Poisson sampler
draws (dpgan.privacy.block_sampling) name the same records throughout the fit.

What is read without a DP release, and why that is allowed: the column names and types (table
structure, public like a DataFrame's columns) and the files' row counts from their footers. The
row count is private: it is used only to index the rows for Poisson sampling (the in-memory path
does the same with len(data)) and is released only as the Gaussian noisy count. Refusals name
the file (a path the user chose), never a value.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dpgan.errors import InputError

if TYPE_CHECKING:  # pandas loads only when a batch is read: the CLI's argument checks stay fast
    import pandas as pd

DEFAULT_BATCH_ROWS = 65_536
DEFAULT_MEMORY_BUDGET_MB = 512.0


@dataclass(frozen=True)
class ParquetSource:
    """`path`: a .parquet file or a directory holding .parquet files (searched recursively).

    `memory_budget_mb` bounds the encoded rows a streamed fit holds at once (its training block;
    when the whole encoded table fits, it is materialised); `batch_rows` is the length of the
    record batches each pass reads. Neither changes what the fit releases, only its work."""

    path: str | Path
    memory_budget_mb: float = DEFAULT_MEMORY_BUDGET_MB
    batch_rows: int = DEFAULT_BATCH_ROWS

    def __post_init__(self) -> None:
        if isinstance(self.batch_rows, bool) or not isinstance(self.batch_rows, int) or self.batch_rows < 1:
            raise InputError("batch_rows must be a positive integer")
        if not (isinstance(self.memory_budget_mb, (int, float)) and self.memory_budget_mb > 0):
            raise InputError("memory_budget_mb must be a positive number")

    @property
    def budget_bytes(self) -> int:
        return int(self.memory_budget_mb * 2**20)

    def files(self) -> list[Path]:
        """The Parquet files, in the fixed order every pass reads them."""
        path = Path(self.path)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.parquet") if p.is_file())
            if not found:
                raise InputError(f"{path} holds no .parquet file")
            return found
        if not path.is_file():
            raise InputError(f"data file not found: {path}")
        if path.suffix.lower() != ".parquet":
            raise InputError(f"streaming reads .parquet files, not {path.name!r}")
        return [path]

    def open(self) -> "OpenSource":
        """Check every file's footer (readable, one schema across files, at least one row) and
        return the handle the passes read through."""
        import pyarrow.parquet as pq

        files = self.files()
        schema = None
        rows = 0
        for file in files:
            try:
                meta = pq.ParquetFile(file).metadata
                file_schema = meta.schema.to_arrow_schema()
            except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
                raise InputError(f"cannot read {file}: not a well-formed Parquet file ({type(exc).__name__})") from None
            if schema is None:
                schema = file_schema
            elif not file_schema.remove_metadata().equals(schema.remove_metadata()):
                raise InputError(f"{file} has different columns or column types than {files[0]}")
            rows += meta.num_rows
        assert schema is not None
        names = [str(n) for n in schema.names]
        if not names or rows == 0:
            raise InputError("the table is empty: nothing to learn from")
        if len(set(names)) != len(names):
            raise InputError("the table has duplicate column names")
        return OpenSource(self, tuple(files), tuple(names), rows)


@dataclass(frozen=True)
class OpenSource:
    """A checked source: its files, column names and (private) row count."""

    source: ParquetSource
    files: tuple[Path, ...]
    columns: tuple[str, ...]
    num_rows: int

    def batches(self, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
        """The table in record batches of at most `batch_rows` rows, always in the same order;
        each batch as a DataFrame with the file's stored types (classified cell by cell later,
        dpgan.transforms.cells, exactly as `pd.read_parquet` would give them)."""
        import pyarrow.parquet as pq

        for file in self.files:
            try:
                reader = pq.ParquetFile(file)
                for batch in reader.iter_batches(batch_size=self.source.batch_rows, columns=columns):
                    yield batch.to_pandas()
            except (OSError, ValueError) as exc:
                raise InputError(f"cannot read {file}: not a well-formed Parquet file ({type(exc).__name__})") from None


def should_stream(source: ParquetSource) -> bool:
    """Whether the command line reads `source` in batches: a directory, or a Parquet file whose
    uncompressed size (its footer's, structure only) is larger than the memory budget."""
    path = Path(source.path)
    if path.is_dir():
        return True
    if not path.is_file() or path.suffix.lower() != ".parquet":
        return False
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, ValueError):
        return False  # the ordinary reader refuses it with its own message
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return size > source.budget_bytes
