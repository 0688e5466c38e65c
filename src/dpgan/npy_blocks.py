"""An ``.npy`` file read a block of rows at a time: the one reader of the image and series fits.

Why: a statistics fit sums over its units block by block, so it needs only one block in memory
(dpgan.statistics.blocks). A memory map would serve the reads, but every page it has touched counts
in the process's resident memory until it is closed: a pass over a mapped file grows the resident
memory to the file's size. So nothing is kept mapped or open: `NpyArray.open` reads the header
alone, and `rows` reads one block with one plain read at its byte offset.

What is public (dpgan.privacy.unit_rule): the header (shape, dtype, order) and the file's length,
which the caller supplies with the file and which no unit's value decides. Every refusal here is
decided by them alone (a missing file, a file that is not an ``.npy``, an object dtype, Fortran
order, a file shorter than its header says), each in one line naming the file and never a value.
The values are private: only `rows` reads them, in the fit's passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpgan.privacy.unit_rule import public_refusal

PLAIN_ARRAY = "save a C-ordered numeric or string array (np.save of a plain array)"


def header(path: Path, what: str) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """The header's shape, Fortran flag, dtype, and the byte offset where the data starts."""
    try:
        with path.open("rb") as handle:
            version = np.lib.format.read_magic(handle)  # the format's magic string, or not an .npy
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(handle)
            return tuple(int(s) for s in shape), bool(fortran), dtype, handle.tell()
    except (OSError, ValueError, EOFError):
        raise public_refusal(f"{what} file {path.name}: not a readable .npy file (not well-formed)") from None


@dataclass(frozen=True)
class NpyArray:
    """An ``.npy`` file's public header (shape, dtype) and where its data starts: read by offsets."""

    path: Path
    shape: tuple[int, ...]
    dtype: np.dtype
    offset: int  # bytes before the first value

    @classmethod
    def open(cls, path: str | Path, what: str = "array") -> NpyArray:
        """The header only, checked (module docstring); `what` names the file in a refusal
        ("images", "series", "labels")."""
        path = Path(path)
        if not path.is_file():
            raise public_refusal(f"{what} file not found: {path}")
        shape, fortran, dtype, offset = header(path, what)
        if dtype.hasobject:
            raise public_refusal(f"{what} file {path.name}: an object array cannot be read in blocks; {PLAIN_ARRAY}")
        if fortran:
            raise public_refusal(f"{what} file {path.name}: a Fortran-ordered array; {PLAIN_ARRAY}")
        if path.stat().st_size < offset + math.prod(shape) * dtype.itemsize:  # the header's promise: public
            raise public_refusal(f"{what} file {path.name}: not a readable .npy file (shorter than its header says)")
        return cls(path, shape, dtype, offset)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        """Rows along the first axis (the header's: public)."""
        if not self.shape:
            raise TypeError("len() of a 0-d .npy array")
        return self.shape[0]

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Rows start..stop-1 along the first axis (clipped as a slice is), as a new array read with
        one plain read: nothing stays mapped or open."""
        start, stop, _ = slice(start, stop).indices(len(self))
        count, cells = max(stop - start, 0), math.prod(self.shape[1:])
        with self.path.open("rb") as handle:
            handle.seek(self.offset + start * cells * self.dtype.itemsize)
            data = np.fromfile(handle, dtype=self.dtype, count=count * cells)
        if data.size != count * cells:  # cut short after `open` checked its length
            raise public_refusal(f"{self.path.name}: not a readable .npy file (shorter than its header says)")
        return data.reshape((count, *self.shape[1:]))


__all__ = ["NpyArray"]
