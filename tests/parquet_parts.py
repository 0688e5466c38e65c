"""A table written as a directory of Parquet files cut at given rows (the streamed-fit tests)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd


def split_to_parquet(frame: pd.DataFrame, directory: Path, cuts: Sequence[int]) -> Path:
    """`frame` as part0.parquet, part1.parquet, … in a new `directory`, cut before each row in `cuts`."""
    directory.mkdir()
    bounds = [0, *cuts, len(frame)]
    for i in range(len(bounds) - 1):
        frame.iloc[bounds[i] : bounds[i + 1]].to_parquet(directory / f"part{i}.parquet", index=False)
    return directory
