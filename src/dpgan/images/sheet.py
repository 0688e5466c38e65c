"""A contact sheet: one PNG grid of images, a row per label, to look at what a synthesizer made.

Meant for samples: a sheet of training images shows the private data itself. Label names are
drawn at the left of each row; they are the label domain, which the model already carries.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from dpgan.errors import InputError
from dpgan.images.checks import encode_labels, to_uint8
from dpgan.images.files import atomic_write, label_values, png_image

MIN_CELL = 32  # pixels: smaller images are scaled up (nearest neighbour) to at least this


def sheet_rows(n: int, codes: np.ndarray | None, n_labels: int, per_row: int, max_rows: int) -> list[list[int]]:
    """Image indices per row: the first per_row of each label in code order, or the first images."""
    if codes is None:
        shown = min(n, per_row * max_rows)
        return [list(range(start, min(start + per_row, shown))) for start in range(0, shown, per_row)]
    return [[int(i) for i in np.flatnonzero(codes == code)[:per_row]] for code in range(n_labels)]


def write_contact_sheet(
    path: str | Path,
    images: object,
    labels: object | None = None,
    label_names: list[str] | None = None,
    per_row: int = 10,
    *,
    max_rows: int = 10,
    overwrite: bool = True,
    pixel_range: tuple[float, float] | None = None,
) -> Path:
    """Write a grid PNG: one row per label (up to ``per_row`` images each), or ``max_rows`` rows unlabelled.

    ``labels`` are codes into ``label_names`` when names are given (every name gets a row, empty
    if no image has it), else raw ints/strings (a row per distinct label, sorted).
    """
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise InputError(f"a contact sheet is written as .png, not {path.suffix or path.name!r}")
    if per_row < 1 or max_rows < 1:
        raise InputError("per_row and max_rows must be at least 1")
    pixels = to_uint8(images, pixel_range)  # float pixels in [0, 1], or in `pixel_range`
    n, _, h, w = pixels.shape
    codes: np.ndarray | None = None
    names: list[str] | None = None
    if labels is not None and label_names is None:
        codes, names = encode_labels(labels, n)
    elif labels is not None:
        label_values(n, labels, label_names)  # checks codes against the names
        codes, names = np.asarray(labels, dtype=np.int64), [str(s) for s in label_names]
    rows = sheet_rows(n, codes, len(names or []), per_row, max_rows)
    scale = max(1, -(-MIN_CELL // max(h, w)))
    cell_h, cell_w, pad = h * scale, w * scale, 2
    margin = 0 if names is None else 8 + 6 * max(len(s) for s in names)
    size = (margin + per_row * (cell_w + pad) + pad, max(1, len(rows)) * (cell_h + pad) + pad)
    sheet = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(sheet)
    for r, indices in enumerate(rows):
        top = pad + r * (cell_h + pad)
        if names is not None:
            draw.text((4, top + max(0, cell_h // 2 - 5)), names[r], fill="black")
        for k, i in enumerate(indices):
            tile = png_image(pixels[i]).convert("RGB").resize((cell_w, cell_h), Image.Resampling.NEAREST)
            sheet.paste(tile, (margin + pad + k * (cell_w + pad), top))
    atomic_write(path, overwrite, folder=False, write=lambda tmp: sheet.save(tmp, format="PNG"))
    return path
