"""Every refusal of the readers names public structure only (issue 30, dpgan.privacy.unit_rule).

Two checks. Statically, every refusal message built in a reader module (`InputError(...)` or
`public_refusal(...)`) is walked with `ast`, and the values it interpolates must be on a reviewed
list of public ones (paths, column names, the schema's settings, declared shapes, dtypes): a new
interpolated value fails this test until someone has checked that no unit decides it. Dynamically,
each reader is given inputs whose size and cells are planted with a distinctive number and word,
and every refusal it makes must quote neither.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpgan
from dpgan.errors import InputError
from dpgan.images.io import read_images
from dpgan.images.reading import check_images
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.sequences.codec import encode
from dpgan.sequences.reader import read_array_raw, read_long_raw
from dpgan.tables.reading.parquet_source import ParquetSource

SOURCE = Path(dpgan.__file__).parent
READERS = (
    "sequences/reader.py",
    "sequences/codec.py",
    "sequences/times.py",
    "sequences/dp_schema.py",
    "images/checks.py",
    "images/io.py",
    "images/labels.py",
    "images/lists.py",
    "images/reading.py",
    "tables/reading/parquet_source.py",
    "tables/reading/conform.py",
    "tables/reading/table_io.py",
    "tables/fit/preparation.py",
)
# what a refusal may interpolate (reviewed: each is a path, a column or schema name, a declared or
# structural shape, a dtype, an exception's type, or a DP output)
PUBLIC_VALUES = {
    "', '.join(map(repr, missing))",  # schema columns absent from the header
    "schema.length",
    "len(schema.values)",
    "c",  # an array's channels, height, width (its non-N dimensions: the caller's structure)
    "h",
    "w",
    "hint",
    "images.dtype",
    "images.ndim",
    "MAX_SIDE",
    "values.ndim",  # the labels array's ndim and dtype
    "values.dtype",
    "path",
    "path.suffix",
    "path.name",
    "path.suffix or path.name",
    "'×'.join(map(str, data.shape))",  # an .npz's (C, H, W)
    "type(exc).__name__",
    "len(archive.files)",  # how many arrays an .npz holds: its structure
    "held",  # the names of the arrays an .npz holds: its structure
    "released.describe()",  # a DP release's output
    "dropped",  # the noticeable dropped counts of a DP release, with advice on the public dtype and range
    "where",  # "[0, 1]" or "the pixel_range": whether a range was declared (a public setting)
    "file",
    "files[0]",
    "', '.join(unknown)",  # column names
    "', '.join(missing)",
    "STRICT_NOTE",
    "spec.name",
    "message",
    "schema.label",
    "schema.units",
    "name",
    "side",
    "v.name",
}


def _interpolated(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("InputError", "public_refusal"):
            found += [(node.lineno, ast.unparse(v.value)) for v in ast.walk(node) if isinstance(v, ast.FormattedValue)]
    return found


def test_every_refusal_in_the_readers_interpolates_public_values_only():
    unknown = [
        f"{name}:{line}: {expression}"
        for name in READERS
        for line, expression in _interpolated(SOURCE / name)
        if expression not in PUBLIC_VALUES
    ]
    assert not unknown, "review these refusal values (public? no count of units?): " + "; ".join(unknown)


PLANTED = 4243  # the number of units in every input below, and a value in its cells
WORD = "SECRETWORD"


def _assert_clean(refusal: InputError) -> None:
    text = str(refusal)
    assert str(PLANTED) not in text and "4,243" not in text and WORD not in text and "\n" not in text


def _series_schema(**changes) -> SequenceSchema:
    base = {"id": "sid", "time": "t", "length": 4, "values": (ValueColumn("v", 0.0, 1.0),), "label": "lab"}
    return SequenceSchema(**(base | {"categories": ("a", "b")} | changes))


def _long() -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "sid": np.repeat(np.arange(PLANTED), 4),
            "t": np.tile(np.arange(4), PLANTED),
            "v": [str(float(PLANTED))] * (4 * PLANTED),
            "lab": WORD,
        }
    )
    frame.loc[0, "v"] = WORD  # a word where a number belongs: dropped, never quoted
    return frame


SEQUENCE_REFUSALS = [
    lambda: read_long_raw(_long().drop(columns=["t"]), _series_schema()),
    lambda: read_long_raw(_long().to_numpy(), _series_schema()),
    lambda: read_array_raw(np.full((PLANTED, 4, 2), PLANTED), None, _series_schema()),
    lambda: read_array_raw(np.full((PLANTED, 4), PLANTED), None, _series_schema()),
    lambda: read_array_raw(np.full((PLANTED, 4), PLANTED), np.array([WORD] * (PLANTED - 1)), _series_schema()),
    lambda: read_array_raw(np.full((PLANTED, 4), WORD), np.array([WORD] * PLANTED), _series_schema()),
    lambda: read_array_raw(np.full((PLANTED, 4), 1.0), np.array([WORD] * PLANTED), _series_schema(label=None)),
    lambda: read_array_raw(np.full((PLANTED, 4, 1, 1), 1.0), None, _series_schema(label=None, categories=())),
    lambda: encode(read_array_raw(np.ones((PLANTED, 4)), None, _series_schema(label=None)), _series_schema()),
]


@pytest.mark.parametrize("refuse", SEQUENCE_REFUSALS)
def test_sequence_refusals_quote_no_count_and_no_value(refuse):
    with pytest.raises(InputError) as caught:
        refuse()
    _assert_clean(caught.value)


def test_a_planted_word_in_a_value_is_dropped_not_quoted():
    raw = read_long_raw(_long(), _series_schema(categories=(WORD, "b")))
    assert raw.series.kept == PLANTED - 1 and raw.series.total_dropped == 1


IMAGE_REFUSALS = [
    lambda: check_images(np.full((PLANTED, 8, 8, 3), 7, dtype=np.uint8)),  # channels last
    lambda: check_images(np.full((PLANTED, 8, 8), PLANTED, dtype=np.int64)),
    lambda: check_images(np.zeros((PLANTED, 8, 8), np.uint8), np.array([WORD] * (PLANTED + 1))),
    lambda: check_images(np.zeros((PLANTED, 8, 8), np.uint8), np.full((PLANTED, 2), PLANTED)),
    lambda: check_images(np.zeros((PLANTED, 1, 1, 8, 8), np.uint8)),
    lambda: check_images(np.zeros((PLANTED, 8, 600), np.uint8)),
]


@pytest.mark.parametrize("refuse", IMAGE_REFUSALS)
def test_image_refusals_quote_no_count_and_no_value(refuse):
    with pytest.raises(InputError) as caught:
        refuse()
    _assert_clean(caught.value)


def test_npz_and_folder_refusals_quote_no_count(tmp_path):
    np.savez(tmp_path / "no_images.npz", pixels=np.zeros((PLANTED, 8, 8), np.uint8))
    np.savez(tmp_path / "wide.npz", images=np.zeros((PLANTED, 8, 10), np.uint8))
    for refuse in (
        lambda: read_images(tmp_path / "no_images.npz"),
        lambda: read_images(tmp_path / "wide.npz", shape=(1, 8, 8)),
        lambda: read_images(tmp_path / "missing.npz"),
    ):
        with pytest.raises(InputError) as caught:
            refuse()
        _assert_clean(caught.value)


def test_parquet_refusals_quote_no_count(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    pd.DataFrame({"a": np.arange(PLANTED), "b": WORD}).to_parquet(folder / "0.parquet")
    pd.DataFrame({"a": np.arange(PLANTED), "c": WORD}).to_parquet(folder / "1.parquet")
    (tmp_path / "broken.parquet").write_bytes(b"PAR1" + str(PLANTED).encode() * 10)
    for refuse in (
        lambda: ParquetSource(folder).open(),
        lambda: ParquetSource(tmp_path / "broken.parquet").open(),
        lambda: ParquetSource(tmp_path / "empty_dir").open(),
    ):
        with pytest.raises(InputError) as caught:
            refuse()
        _assert_clean(caught.value)
