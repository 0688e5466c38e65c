"""A private table too large for memory: a Parquet file or a directory of Parquet files, read in
record batches.

Why its own type: `fit` must know before it reads a cell whether the input is a DataFrame (one
pass in memory) or a stream (several sequential passes, dpgan.tables.fit.streamed). Every
pass reads the files in one fixed order (sorted paths, row groups in file order) with the same
batch length, so the i-th row is the same row on every pass: the row indices a Poisson sampler
draws (dpgan.privacy.block_sampling) name the same records throughout the fit.

The rule every reader follows (dpgan.privacy.unit_rule: no unit decides a public fact):
- Whether a table is streamed is decided by public inputs only: a directory, or the user's
  `--stream` (`should_stream`), never a file's size (the footer's byte count grows with the rows).
- What is read without a DP release: the column names (table structure, public like a
  DataFrame's columns; every file must have the same names) and the files' row counts from their
  footers. The stored column types are not compared: a writer infers them from the values (one
  missing value turns pandas' int64 into float64), so every cell is classified on its own
  (dpgan.tables.schema.cells) in every batch, whatever its file's type. The row count is private: it
  is used only to index the rows for Poisson sampling (the in-memory path does the same with
  len(data)) and is released only as the Gaussian noisy count; a table with no rows is not
  refused (the fit runs on none, and N̂ says so). Refusals name the file (a path the user chose)
  and columns, never a value or a count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dpgan.privacy.unit_rule import public_refusal

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
            raise public_refusal("batch_rows must be a positive integer")
        if not (isinstance(self.memory_budget_mb, (int, float)) and self.memory_budget_mb > 0):
            raise public_refusal("memory_budget_mb must be a positive number")

    @property
    def budget_bytes(self) -> int:
        return int(self.memory_budget_mb * 2**20)

    def files(self) -> list[Path]:
        """The Parquet files, in the fixed order every pass reads them."""
        path = Path(self.path)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.parquet") if p.is_file())
            if not found:
                raise public_refusal(f"{path} holds no .parquet file")
            return found
        if not path.is_file():
            raise public_refusal(f"data file not found: {path}")
        if path.suffix.lower() != ".parquet":
            raise public_refusal(f"streaming reads .parquet files, not {path.name!r}")
        return [path]

    def open(self) -> "OpenSource":
        """Check every file's footer (readable, the same column names across files) and return the
        handle the passes read through. The column names are public structure and must agree; the
        stored types need not: a writer infers them from the values (pandas writes an int column
        with one missing value as float64), so a type would let one row decide whether the fit
        runs. Every cell is classified on its own instead (dpgan.tables.schema.cells), in every batch
        of every file. A table with no rows is not refused either (dpgan.privacy.unit_rule)."""
        import pyarrow.parquet as pq

        files = self.files()
        names: list[str] | None = None
        rows = 0
        for file in files:
            try:
                meta = pq.ParquetFile(file).metadata
                arrow_schema = meta.schema.to_arrow_schema()
                # a pandas writer's index is stored as a column named in the file's metadata: not data
                stored_index = {str(c) for c in (arrow_schema.pandas_metadata or {}).get("index_columns", [])}
                file_names = [str(n) for n in arrow_schema.names if str(n) not in stored_index]
            except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
                raise public_refusal(
                    f"cannot read {file}: not a well-formed Parquet file ({type(exc).__name__})"
                ) from None
            if len(set(file_names)) != len(file_names):
                raise public_refusal(f"{file} has duplicate column names")
            if names is None:
                names = file_names
            elif set(file_names) != set(names):
                raise public_refusal(f"{file} has different columns than {files[0]}")
            rows += meta.num_rows
        assert names is not None
        if not names:
            raise public_refusal(f"{files[0]} has no columns: nothing to learn from")
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
        each batch as a DataFrame with its file's stored types (which may differ between files)
        and the columns in the first file's order. Every reader of a batch classifies its cells
        one by one (dpgan.tables.schema.cells), so a batch's types never decide anything."""
        import pyarrow.parquet as pq

        for file in self.files:
            try:
                reader = pq.ParquetFile(file)
                wanted = list(self.columns if columns is None else columns)
                for batch in reader.iter_batches(batch_size=self.source.batch_rows, columns=wanted):
                    yield batch.to_pandas()[wanted]
            except (OSError, ValueError) as exc:
                raise public_refusal(
                    f"cannot read {file}: not a well-formed Parquet file ({type(exc).__name__})"
                ) from None


def should_stream(path: str | Path, asked: bool = False) -> bool:
    """Whether the command line reads `path` in batches: a directory (its layout is public), or a
    file when the user `asked` (`--stream`). Never the file's size: a footer's byte count grows
    with the rows, so a budget between the sizes of two neighbouring tables would send them down
    different paths (different refusals, a different model.json): one row would decide it."""
    return asked or Path(path).is_dir()


def files_digest(files: Sequence[Path]) -> int:
    """A digest of the files' names, sizes and modification times, for the ranks of a distributed
    fit to check that they read the same files (compared between the processes only, never released)."""
    digest = hashlib.sha256()
    for file in files:
        stat = file.stat()
        digest.update(f"{file.name}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return int(digest.hexdigest()[:15], 16)
