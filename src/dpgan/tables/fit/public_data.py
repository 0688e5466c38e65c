"""A public table for the warm start (dpgan.training.public_warm_start): read, checked, recorded.

The public table is read only to pre-train the networks: it never enters the schema, the encoder,
the noisy row count, the calibration of σ or any other ledger entry, so every charge is the same
with or without it. It must fit the fit's schema (the user's, or the one bought with DP from the
private table) strictly: a column the schema lacks, a missing one, a value of the wrong kind, a
missing value in a complete column or an empty table is refused with one line naming the column
and the problem. What the model records of it is public: the file's name, the SHA-256 of its bytes
(of its cells for a DataFrame), its row count and the warm-start steps.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from dpgan.errors import InputError
from dpgan.tables.codec.encoder import TableEncoder, public_dtypes
from dpgan.tables.fit.resume import table_fingerprint
from dpgan.tables.reading.conform import STRICT_NOTE, conform
from dpgan.tables.reading.table_io import check_readable, read_private_table
from dpgan.tables.schema.table import Schema

DEFAULT_WARM_START_STEPS = 500


@dataclass(frozen=True)
class PublicTable:
    """The public table and what the model says about it."""

    frame: pd.DataFrame
    record: dict[str, Any]

    @property
    def steps(self) -> int:
        return int(self.record["warm_start_steps"])


def load_public_table(public_data: pd.DataFrame | str | Path, steps: int) -> PublicTable:
    """The table from a DataFrame or a CSV/Parquet path, with its record; InputError if unusable."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise InputError(f"public_warm_start_steps must be a positive integer, got {steps!r}")
    if isinstance(public_data, pd.DataFrame):
        frame, source = public_data, "DataFrame"
        digest, of = table_fingerprint(public_data), "table cells"
    elif isinstance(public_data, (str, Path)):
        path = check_readable(public_data)
        digest, of = hashlib.sha256(path.read_bytes()).hexdigest(), "file bytes"
        frame, source = read_private_table(path), path.name
    else:
        raise InputError("public_data must be a pandas DataFrame or a path to a CSV or Parquet file")
    if len(frame) == 0 or frame.shape[1] == 0:
        raise InputError("public data: the table is empty")
    record = {"source": source, "sha256": digest, "sha256_of": of, "rows": int(len(frame)), "warm_start_steps": steps}
    return PublicTable(frame, record)


def encode_public(public: PublicTable, schema: Schema, encoder: TableEncoder) -> torch.Tensor:
    """The public rows in the fit's encoding, conformed to `schema` strictly (one line otherwise)."""
    try:
        clean = conform(public.frame, schema, strict=True).frame
    except InputError as exc:  # the note about the private table's lenient mode does not apply here
        raise InputError(f"public data: {str(exc).replace(f' ({STRICT_NOTE})', '')}") from None
    if len(clean) == 0:
        raise InputError("public data: no row fits the schema")
    return torch.from_numpy(encoder.encode(clean))


def checked_public_table(
    public_data: pd.DataFrame | str | Path | None, steps: int, schema: Schema | None
) -> PublicTable | None:
    """The public warm-start table (None without one), checked against a public schema before any
    private read: a public table that does not fit the schema is refused first."""
    public = None if public_data is None else load_public_table(public_data, steps)
    if public is not None and schema is not None:
        encode_public(public, schema, TableEncoder(schema, public_dtypes(schema)))
    return public
