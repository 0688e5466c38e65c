"""The one .npy block reader (dpgan.npy_blocks): blocks equal np.load's rows for every dtype and
shape the kinds read; each refusal is one line (InputError) with no value in it; nothing is kept
mapped after a read, so a pass holds one block in memory."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from dpgan.errors import InputError
from dpgan.npy_blocks import NpyArray

SECRET = 987654.25  # a value that must never appear in a message

ARRAYS = {
    "uint8 images": np.arange(5 * 3 * 4 * 4, dtype=np.uint8).reshape(5, 3, 4, 4),
    "float32 series": np.linspace(-1, 1, 7 * 6 * 2, dtype=np.float32).reshape(7, 6, 2),
    "float64 rows": np.linspace(0, 1, 9 * 4).reshape(9, 4),
    "big-endian int": np.arange(11, dtype=">i4"),
    "string labels": np.array(["a", "bc", "def", "", "gh"]),
    "bytes labels": np.array([b"x", b"yz", b""]),
    "bool": np.array([True, False, True, True]),
    "no rows": np.zeros((0, 3, 2), dtype=np.float64),
    "empty rows": np.zeros((4, 0), dtype=np.int16),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_blocks_are_np_load_rows(tmp_path, name):
    expected = ARRAYS[name]
    path = tmp_path / "a.npy"
    np.save(path, expected)
    array = NpyArray.open(path)
    loaded = np.load(path, allow_pickle=False)
    assert array.shape == loaded.shape and array.dtype == loaded.dtype and len(array) == len(loaded)
    np.testing.assert_array_equal(array.rows(0, len(array)), loaded)
    for start, stop in [(0, 2), (1, 4), (3, 3), (2, 10**6), (-2, len(array))]:  # clipped as slices are
        block = array.rows(start, stop)
        assert block.dtype == loaded.dtype
        np.testing.assert_array_equal(block, loaded[start:stop])


def truncated(path: Path) -> Path:
    np.save(path, np.full((9, 8, 8), SECRET))
    path.write_bytes(path.read_bytes()[:-10])
    return path


def more_rows_in_header(path: Path) -> Path:
    """A hand-made header that promises 20 rows over the data of 4."""
    with path.open("wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {"descr": "<f8", "fortran_order": False, "shape": (20, 3)})
        handle.write(np.full((4, 3), SECRET).tobytes())
    return path


def write(path: Path, content: str | bytes) -> Path:
    (path.write_text if isinstance(content, str) else path.write_bytes)(content)  # type: ignore[operator]
    return path


REFUSALS = [
    (lambda p: p / "missing.npy", "not found"),
    (lambda p: write(p / "csv.npy", f"id,value\n1,{SECRET}\n"), "not a readable .npy"),
    (lambda p: write(p / "empty.npy", b""), "not a readable .npy"),
    (lambda p: write(p / "magic.npy", b"\x93NUMPY\x01\x00" + b"\xff" * 4), "not a readable .npy"),
    (lambda p: np.save(p / "o.npy", np.array([SECRET, "a"], dtype=object), allow_pickle=True) or p / "o.npy",
     "object array"),
    (lambda p: np.save(p / "f.npy", np.asfortranarray(np.full((4, 3), SECRET))) or p / "f.npy", "C-ordered"),
    (lambda p: truncated(p / "t.npy"), "shorter than its header"),
    (lambda p: more_rows_in_header(p / "m.npy"), "shorter than its header"),
]  # fmt: skip


@pytest.mark.parametrize(("make", "words"), REFUSALS)
def test_each_refusal_is_one_line_without_a_value(tmp_path, make, words):
    with pytest.raises(InputError) as caught:
        NpyArray.open(make(tmp_path), "series")
    message = str(caught.value)
    assert words in message and "series file" in message
    assert "\n" not in message and str(SECRET) not in message and "987654" not in message


def test_a_file_cut_short_after_opening_is_refused_in_one_line(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.full((6, 4), SECRET))
    array = NpyArray.open(path, "series")
    path.write_bytes(path.read_bytes()[:-40])  # two of the six rows gone
    np.testing.assert_array_equal(array.rows(0, 3), np.full((3, 4), SECRET))
    with pytest.raises(InputError, match="shorter than its header") as caught:
        array.rows(2, 6)
    assert "\n" not in str(caught.value) and "987654" not in str(caught.value)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc (Linux)")
def test_nothing_stays_mapped_or_open_after_a_read(tmp_path):
    path = tmp_path / "kept-or-not.npy"
    np.save(path, np.arange(4096 * 8, dtype=np.float64).reshape(4096, 8))
    array = NpyArray.open(path)
    block = array.rows(100, 200)
    assert block.sum() > 0
    assert str(path) not in Path("/proc/self/maps").read_text()
    assert str(path) not in open_paths()


def open_paths() -> set[str]:
    """What this process's file descriptors point to (Linux)."""
    found = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            found.add(os.readlink(fd))
        except OSError:  # closed since it was listed (the listing's own descriptor)
            pass
    return found
