"""Sampled images streamed to disk a chunk at a time (`dpgan sample -n N --out`): memory flat in N.

Sampling is post-processing, so nothing here is private; what matters is that a million images need
not sit in memory to be written. The chunks come from dpgan.images.sampling.sample_chunks, with the
one generator in the same order as `ImageSynthesizer.sample`, so a seed gives the same images:

- an ``.npz`` is written member by member: ``images.npy``'s header first (its shape and dtype are
  the model's, public: n and the fitted input's form, (n, C, H, W) as `write_images` stores it),
  then each chunk's bytes through the zip's deflate stream, then ``labels.npy``. The labels are
  the model's names (numbers when every name is a whole number, as `write_images` writes them),
  kept as int32 codes until the end: 4 bytes per image;
- a PNG folder gets each chunk's PNGs (``<label>/<i>.png``, i zero-padded to the width of n).

Both go to a hidden sibling renamed into place when complete (dpgan.images.files.atomic_write), so a
failed write leaves nothing. The contact sheet is drawn from the first images of each label (the
first `per_row` per label, or the first `per_row`·`max_rows` unlabelled): the sheet of the whole.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from dpgan.images.checks import as_nchw, to_uint8
from dpgan.images.files import atomic_write, png_image, safe_folder_name
from dpgan.images.sheet import write_contact_sheet
from dpgan.privacy.unit_rule import public_refusal

PER_ROW, MAX_ROWS = 10, 10  # the contact sheet's (dpgan.images.sheet's defaults)
Chunks = Iterable[tuple[np.ndarray, np.ndarray | None]]


def label_array(codes: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """The labels as `write_images` stores them: whole numbers as int64 when every one of the
    model's names is one (a public rule on the names), else the names as text."""
    numeric = all(name.lstrip("-").isdigit() and str(int(name)) == name for name in names)
    table = np.array([int(name) for name in names], dtype=np.int64) if numeric else np.array(list(names))
    return table[codes]


class SheetPicks:
    """The images the contact sheet shows, picked as the chunks pass (sheet_rows' choice)."""

    def __init__(self, labelled: bool) -> None:
        self.labelled, self.images, self.codes = labelled, [], []  # type: ignore[var-annotated]
        self.taken: dict[int, int] = {}

    def add(self, images: np.ndarray, codes: np.ndarray | None) -> None:
        for i in range(len(images)):
            key = int(codes[i]) if self.labelled and codes is not None else -1
            limit = PER_ROW if self.labelled else PER_ROW * MAX_ROWS
            if self.taken.get(key, 0) < limit:
                self.taken[key] = self.taken.get(key, 0) + 1
                self.images.append(images[i])
                self.codes.append(key)

    def write(self, path: Path, names: Sequence[str], pixel_range: tuple[float, float] | None) -> Path:
        labels = np.array(list(names))[self.codes] if self.labelled else None
        return write_contact_sheet(path, np.stack(self.images), labels, pixel_range=pixel_range)


def stream_images(
    path: Path,
    chunks: Chunks,
    n: int,
    names: Sequence[str],
    *,
    overwrite: bool,
    pixel_range: tuple[float, float] | None,
    sheet: Path,
) -> None:
    """Write the n sampled images of `chunks` to `path` (an .npz or a PNG folder) and the contact
    sheet to `sheet`, a chunk at a time."""
    labelled = bool(names)
    picks = SheetPicks(labelled)
    if path.suffix.lower() == ".npz":
        atomic_write(path, overwrite, folder=False, write=lambda tmp: _write_npz(tmp, chunks, n, names, picks))
    elif path.suffix:
        raise public_refusal(f"unsupported image output {path.suffix!r}: give an .npz path or a folder name")
    else:
        if labelled and not all(safe_folder_name(name) for name in names):
            raise public_refusal(
                "a label cannot be a folder name (empty, leading dot or a path separator); write an .npz"
            )

        def write_folder(tmp: Path) -> None:
            _write_folder(tmp, chunks, n, names, picks, pixel_range)

        atomic_write(path, overwrite, folder=True, write=write_folder)
    picks.write(sheet, names, pixel_range)


def _write_npz(tmp: Path, chunks: Chunks, n: int, names: Sequence[str], picks: SheetPicks) -> None:
    codes: list[np.ndarray] = []
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        with archive.open("images.npy", "w", force_zip64=True) as member:
            header = False
            for images, chunk_codes in chunks:
                images = as_nchw(images)  # as `write_images` stores them: (n, C, H, W) whatever the input's rank
                if not header:  # the shape and dtype are the model's: the first chunk shows them
                    described = {"descr": np.lib.format.dtype_to_descr(images.dtype), "fortran_order": False}
                    np.lib.format.write_array_header_1_0(member, described | {"shape": (n, *images.shape[1:])})
                    header = True
                member.write(np.ascontiguousarray(images).tobytes())
                picks.add(images, chunk_codes)
                if chunk_codes is not None:
                    codes.append(chunk_codes.astype(np.int32))
        if names and codes:
            with archive.open("labels.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, label_array(np.concatenate(codes), names))


def _write_folder(
    tmp: Path, chunks: Chunks, n: int, names: Sequence[str], picks: SheetPicks, pixel_range: tuple[float, float] | None
) -> None:
    width, index = max(6, len(str(n - 1))), 0
    for images, codes in chunks:
        pixels = to_uint8(images, pixel_range)  # PNGs are 8-bit: float pixels scaled from their range
        for i, image in enumerate(pixels):
            target = tmp if codes is None or not names else tmp / names[int(codes[i])]
            target.mkdir(exist_ok=True)
            png_image(image).save(target / f"{index:0{width}d}.png", format="PNG")
            index += 1
        picks.add(images, codes)


__all__ = ["label_array", "stream_images"]
