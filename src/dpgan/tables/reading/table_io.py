"""Reading and writing tables (CSV, Parquet) for the command line and the benchmarks.

Writing comes whole (`write_table`) or streamed (`write_chunks`: one chunk in memory at a time,
into a temporary file beside the target that is renamed over it only once every chunk is in, so
a failure part-way leaves no half-written table). Both write the same bytes for a CSV.

Two ways to read, for two purposes:
- `read_private_table` is what `fit` and `schema` use: every CSV cell is read as text (pandas'
  own empty-cell tokens become nulls), because `read_csv`'s dtype inference looks at every value
  and its result would then leak into the schema (see dpgan.tables.schema.cells). Parquet cells keep
  their stored types; dpgan classifies them one cell at a time as well.
- `read_table` infers dtypes, for evaluation (which reads real data without a DP claim anyway).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from dpgan.atomic_files import released_sibling
from dpgan.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from dpgan.tables.schema.columns import ColumnSpec
    from dpgan.tables.schema.table import Schema

READABLE = (".csv", ".gz", ".txt", ".parquet")
WRITABLE = (".csv", ".parquet")


def check_readable(path: str | Path) -> Path:
    """The data file exists and has a format dpgan reads: checked before anything heavy loads."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file not found: {path}")
    if path.suffix.lower() not in READABLE:
        raise InputError(f"unsupported data format {path.suffix!r}: use .csv or .parquet")
    return path


def check_writable(path: str | Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in WRITABLE:
        raise InputError(f"output must end in .csv or .parquet, not {path.name!r}")
    return path


def _read(path: Path, **csv_options) -> pd.DataFrame:
    import pandas as pd

    try:
        if path.suffix.lower() == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, skipinitialspace=True, **csv_options)
    except (ValueError, OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        # the exception's text may quote the file (a private cell): name its kind only
        raise InputError(f"cannot read {path}: not a well-formed CSV or Parquet file ({type(exc).__name__})") from None


def read_private_table(path: str | Path) -> pd.DataFrame:
    """The table as text cells (CSV) or stored cells (Parquet): no dtype inference from values."""
    path = check_readable(path)
    frame = _read(path, dtype=str, keep_default_na=True)
    return _named(frame, path)


def read_table(path: str | Path, schema: Schema | None = None) -> pd.DataFrame:
    """CSV or Parquet with inferred dtypes; with a schema, categorical columns of string
    categories are read as text."""
    path = check_readable(path)
    texts = [] if schema is None else [s.name for s in schema.columns if _string_categories(s)]
    # read as text, not converted after: `02139` parsed as a number would come back as "2139"
    csv_dtypes = {"dtype": dict.fromkeys(texts, str)} if texts and path.suffix.lower() != ".parquet" else {}
    frame = _named(_read(path, **csv_dtypes), path)
    for name in texts:
        if name in frame:
            column = frame[name]
            frame[name] = column.where(column.isna(), column.astype(str)).astype(object)
    return frame


def _string_categories(spec: ColumnSpec) -> bool:
    return spec.kind == "categorical" and all(isinstance(c, str) for c in spec.categories)


def read_header(path: str | Path) -> tuple[list[str], dict[str, str]]:
    """Column names and, for Parquet, the declared column types: structure only, no values read."""
    path = check_readable(path)
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(path)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read {path}: {type(exc).__name__}") from None
        return list(schema.names), {field.name: str(field.type) for field in schema}
    frame = _read(path, nrows=0)
    return [str(c) for c in frame.columns], {}


def _named(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    if any(str(c).startswith("Unnamed: ") for c in frame.columns):
        raise InputError(f"{path} has a column without a name in its header")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write the whole table atomically (a temporary sibling renamed over `path` when complete),
    with the modes of a release (dpgan.atomic_files)."""
    path = _writable_destination(path)
    temp = _released_temp(path)
    try:
        if path.suffix.lower() == ".parquet":
            frame.to_parquet(temp, index=False)
        else:
            frame.to_csv(temp, index=False)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return path


def _released_temp(path: Path) -> Path:
    """The hidden sibling a table is written to before it is renamed into place: made with the
    user's umask (0644 under the usual 022), as synthetic data is meant for release."""
    try:
        return released_sibling(path, suffix=".part")
    except OSError as exc:
        raise InputError(f"cannot write to the folder of {path}: {type(exc).__name__}") from None


def _writable_destination(path: str | Path) -> Path:
    """A `.csv`/`.parquet` path whose folder exists (made if need be) and that is not a folder."""
    path = check_writable(path)
    if path.is_dir():
        raise InputError(f"output {path} is a directory: give a file name ending in .csv or .parquet")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the folder of {path}: {type(exc).__name__}") from None
    return path


def write_chunks(frames: Iterable[pd.DataFrame], path: str | Path) -> tuple[Path, int]:
    """Stream `frames` (same columns and dtypes each) into one CSV or Parquet table; return the
    path and the rows written.

    Atomic: the rows go to a hidden temporary file in the target's folder (same file system, so
    the final `os.replace` is a rename), which is deleted if anything raises, the caller's frames
    included; an existing file at `path` is replaced only on success. CSV chunks are appended
    with pandas' own writer (the header once), so the file equals `write_table` of the whole
    frame; Parquet chunks become one row group each under the first chunk's Arrow schema."""
    path = _writable_destination(path)
    temp = _released_temp(path)
    try:
        if path.suffix.lower() == ".parquet":
            rows = _write_parquet_chunks(frames, temp)
        else:
            rows = _write_csv_chunks(frames, temp)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return path, rows


def _write_csv_chunks(frames: Iterable[pd.DataFrame], temp: Path) -> int:
    rows, first = 0, True
    with open(temp, "w", newline="", encoding="utf-8") as out:
        for frame in frames:
            frame.to_csv(out, index=False, header=first)
            rows, first = rows + len(frame), False
    return rows


def _write_parquet_chunks(frames: Iterable[pd.DataFrame], temp: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = 0
    writer: pq.ParquetWriter | None = None
    try:
        for frame in frames:
            if writer is None:
                table = pa.Table.from_pandas(frame, preserve_index=False)
                # a text column that happens to be empty in the first chunk has Arrow type null,
                # which later chunks' values could not be cast to: store such columns as text
                schema = pa.schema(
                    [field.with_type(pa.string()) if pa.types.is_null(field.type) else field for field in table.schema],
                    metadata=table.schema.metadata,
                )
                table = table.cast(schema)
                writer = pq.ParquetWriter(temp, schema)
            else:
                table = pa.Table.from_pandas(frame, schema=writer.schema, preserve_index=False)
            writer.write_table(table)
            rows += len(frame)
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        raise InputError("no rows to write")
    return rows
