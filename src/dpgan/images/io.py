"""Reading and writing image sets: an ``.npz`` file or a folder of PNGs, one subfolder per label.

Reading follows the unit rule (dpgan.privacy.unit_rule; dpgan.images.checks for arrays): it refuses
on public inputs only (the path, the arrays an ``.npz`` holds and their dtypes and non-N
dimensions, the declared ``shape`` and ``labelled``), and maps each image by a rule that reads that
image alone: kept, or dropped and counted under a reason fixed before reading (``ImageSet.dropped``,
private counts that a fit releases with DP). A folder is never refused for what one file holds.

Formats:
- ``.npz``: array ``images`` (N×H×W or N×C×H×W, uint8, or float in [0, 1] or in a declared
  ``pixel_range``) and optionally ``labels`` (length N, ints or strings). Read with
  ``allow_pickle=False``: an object array would be unpickled, which runs code from the file, so it
  is refused. Its shape and dtype are public (one array, one shape, one dtype). Written with
  ``images`` in their dtype (uint8 as is, float as float32: samples keep the input's form) and
  ``labels`` as int64 when every label name is a decimal integer ("7"), else as strings, so
  ``read_images(write_images(...))`` gives back the same pixels, codes and names.
- a folder: with ``labelled=True`` the PNGs in its subfolders are labelled by the subfolder's name
  and PNGs directly inside it are dropped (``OUTSIDE_REASON``); with ``labelled=False`` every PNG,
  directly inside or one subfolder down, is an unlabelled image; ``labelled=None`` (for a look, not
  a fit) reads the layout off the folder: labelled when it has a subfolder. Grayscale PNGs give
  C=1, colour ones C=3 (alpha dropped, palettes converted); files are read in name order within a
  label, labels in ``label_key`` order (each label's own key, so one label cannot reorder others).
  Hidden entries (a leading dot) are skipped. Dropped and counted, each on its own: an entry that
  is not a PNG file, a PNG that cannot be read, a 16-bit PNG, one larger than ``MAX_SIDE``, and
  (with a declared ``shape``) a PNG of another (C, H, W). Without a declared shape a folder is read
  as ``ImageGroups`` (one group per shape): which shape to train at is the fit's choice, declared
  or released with DP (dpgan.images.labels.release_shape), never the files' for free.

For a fit in flat memory, dpgan.images.stream.open_images opens a folder (the same layout, file list
and per-file rule: `folder_layout`, `load_png`) or an ``.npy`` to be read a block at a time.

Writes are atomic: everything goes to a temporary path in the target's own folder first and is
renamed into place only when complete, so a failure leaves no half-written set. An existing path
is replaced only with ``overwrite=True``, and an existing folder only if it holds nothing but PNGs.

Errors name paths, arrays, dtypes and declared shapes, never a pixel or label value or a count of
images or files; a label subfolder's name is a label value, so it is not named either.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
from PIL import Image

from dpgan.errors import InputError
from dpgan.images.checks import (
    MAX_SIDE,
    OTHER_SHAPE_REASON,
    ImageGroups,
    ImageSet,
    as_nchw,
    check_image_array,
    check_pixel_range,
    check_shape,
    codes_of,
    to_uint8,
    to_unit_range,
)
from dpgan.images.files import atomic_write, label_values, png_image, safe_folder_name, visible
from dpgan.images.png_list import PngFiles, list_pngs
from dpgan.images.reading import check_images
from dpgan.images.sheet import write_contact_sheet
from dpgan.privacy.unit_rule import public_refusal

__all__ = [
    "FOLDER_REASONS",
    "ImageGroups",
    "ImageSet",
    "check_images",
    "read_images",
    "to_unit_range",
    "write_contact_sheet",
    "write_images",
]

# Pillow modes read as grayscale (C=1) or colour (C=3), with the conversion that gets them there
_GRAY_MODES = {"L": None, "1": "L", "LA": "L"}
_COLOUR_MODES = {"RGB": None, "RGBA": "RGB", "P": "RGBA", "PA": "RGBA", "CMYK": "RGB", "YCbCr": "RGB"}

# why a PNG folder's entry is dropped: fixed before any file is read
NOT_PNG_REASON = "not a PNG file"  # another file, or a folder where a PNG is expected
OUTSIDE_REASON = "PNG outside a label folder"  # labelled layout only
UNREADABLE_REASON = "unreadable PNG"  # corrupt, or not a PNG inside
SIXTEEN_BIT_REASON = "16-bit PNG"
TOO_LARGE_REASON = f"PNG larger than {MAX_SIDE} pixels"
FOLDER_REASONS = (NOT_PNG_REASON, OUTSIDE_REASON, UNREADABLE_REASON, SIXTEEN_BIT_REASON, TOO_LARGE_REASON)


def read_images(
    path: str | Path,
    *,
    shape: tuple[int, int, int] | None = None,
    labelled: bool | None = None,
    pixel_range: tuple[float, float] | None = None,
) -> ImageSet | ImageGroups:
    """Read an ``.npz`` file or a PNG folder by the unit rule (module docstring).

    `shape` (C, H, W) declares the image shape: an ``.npz`` of another shape is refused (both are
    public), a folder's PNGs of another shape are dropped and counted. `labelled` declares whether
    the images carry labels: True requires an ``.npz`` ``labels`` array / reads a folder's label
    subfolders, False ignores labels, None takes what the file or the layout holds. A folder read
    without `shape` gives ``ImageGroups``; anything else an ``ImageSet``. `pixel_range` (low, high)
    declares the range of an ``.npz``'s float pixels (e.g. (0, 255)); uint8 pixels and PNGs (8-bit)
    are 0-255 whatever it says. Nothing is refused for holding few images, few labels or none."""
    path = Path(path)
    declared = None if shape is None else check_shape(shape)
    pixel_range = check_pixel_range(pixel_range)
    if labelled is not None and not isinstance(labelled, bool):
        raise public_refusal("labelled must be True, False or None")
    if not path.exists():
        raise public_refusal(f"no such file or folder: {path}")
    if path.is_dir():
        groups = _read_png_folder(path, declared, labelled)
        return groups if declared is None else groups.select(declared)
    if path.suffix.lower() != ".npz":
        raise public_refusal(
            f"unsupported image input {path.suffix or path.name!r}: give an .npz file or a folder of PNGs"
        )
    data = _read_npz(path, labelled, pixel_range)
    if declared is not None and data.shape != declared:
        raise public_refusal(f"{path}: its images are {'×'.join(map(str, data.shape))}, not the declared shape")
    return data


def _read_npz(path: Path, labelled: bool | None, pixel_range: tuple[float, float] | None) -> ImageSet:
    if not zipfile.is_zipfile(path):  # e.g. a .npy renamed: np.load would hand back a bare array
        raise public_refusal(f"cannot read {path}: not a well-formed .npz file (not a zip archive)")
    try:
        # our own handle: np.load leaves its file open when the zip is corrupt
        with path.open("rb") as fh, np.load(fh, allow_pickle=False) as archive:
            if "images" not in archive.files:
                # the arrays' names are the file's structure (public), not its data: name them
                held = ", ".join(repr(name) for name in archive.files) or "no arrays"
                raise public_refusal(f"{path}: no array named 'images' (it holds {held})")
            if labelled and "labels" not in archive.files:
                raise public_refusal(
                    f"{path}: no array named 'labels' (unlabelled images: fit with conditional=False / --unconditional)"
                )
            images = archive["images"]
            labels = archive["labels"] if "labels" in archive.files and labelled is not False else None
    except InputError:
        raise
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise public_refusal(
                f"{path}: holds an object (pickled) array; save plain numeric or string arrays"
            ) from None
        raise public_refusal(f"cannot read {path}: not a well-formed .npz file ({type(exc).__name__})") from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise public_refusal(f"cannot read {path}: not a well-formed .npz file ({type(exc).__name__})") from None
    return check_image_array(images, labels, pixel_range=pixel_range)  # one array: one shape


def load_png(path: Path, shape: tuple[int, int, int] | None) -> np.ndarray | str:
    """Pixels as (C, H, W) uint8, or the reason the file is dropped; reads this file only."""
    try:
        with Image.open(path) as im:
            if im.format != "PNG":
                return UNREADABLE_REASON
            if max(im.size) > MAX_SIDE:
                return TOO_LARGE_REASON
            mode = im.mode
            if mode not in _GRAY_MODES and mode not in _COLOUR_MODES:
                return SIXTEEN_BIT_REASON  # I;16 and I modes: more than 8 bits per sample
            channels = 1 if mode in _GRAY_MODES else 3
            if shape is not None and (channels, im.size[1], im.size[0]) != shape:
                return OTHER_SHAPE_REASON  # decided from the header: the pixels are not decoded
            im.load()
            if mode in _GRAY_MODES:
                target = _GRAY_MODES[mode]
                pixels = np.asarray(im.convert(target) if target else im, dtype=np.uint8)[None]
            else:
                target = _COLOUR_MODES[mode]
                converted = im.convert(target) if target else im
                pixels = np.asarray(converted.convert("RGB"), dtype=np.uint8).transpose(2, 0, 1)
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        return UNREADABLE_REASON
    return np.ascontiguousarray(pixels)


def folder_layout(folder: Path, labelled: bool | None) -> tuple[bool, PngFiles, dict[str, int], tuple[str, ...]]:
    """A folder's public structure: its layout (label subfolders or not), its PNGs with their
    labels in the reader's order (dpgan.images.png_list), the entries the layout drops (per
    reason, every reason a cell) and the reasons a file can be dropped for. Reads names only."""
    layout = labelled if labelled is not None else any(p.is_dir() for p in folder.iterdir() if visible(p))
    files, dropped = list_pngs(folder, layout, NOT_PNG_REASON, OUTSIDE_REASON)
    reasons = tuple(r for r in FOLDER_REASONS if layout or r != OUTSIDE_REASON) + (OTHER_SHAPE_REASON,)
    dropped.update({reason: dropped.get(reason, 0) for reason in reasons})
    return layout, files, dropped, reasons


def _read_png_folder(folder: Path, shape: tuple[int, int, int] | None, labelled: bool | None) -> ImageGroups:
    layout, files, dropped, reasons = folder_layout(folder, labelled)
    by_shape: dict[tuple[int, int, int], tuple[list[np.ndarray], list[str]]] = {}
    for label, file in files.entries():
        pixels = load_png(file, shape)
        if isinstance(pixels, str):
            dropped[pixels] += 1
            continue
        arrays, labels = by_shape.setdefault(tuple(int(s) for s in pixels.shape), ([], []))  # type: ignore[arg-type]
        arrays.append(pixels)
        if label is not None:
            labels.append(label)
    sets: dict[tuple[int, int, int], ImageSet] = {}
    for key in sorted(by_shape):  # a public order: by the shape itself, not by how many hold it
        arrays, labels = by_shape[key]
        if layout:
            codes, names = codes_of(labels)
            sets[key] = ImageSet(np.stack(arrays), codes, names)
        else:
            sets[key] = ImageSet(np.stack(arrays))
    return ImageGroups(sets, labelled=layout, reasons=reasons, dropped=dropped)


# ---- writing ------------------------------------------------------------------------------------


def write_images(
    path: str | Path,
    images: object,
    labels: object | None = None,
    label_names: list[str] | None = None,
    *,
    overwrite: bool = False,
    pixel_range: tuple[float, float] | None = None,
) -> Path:
    """Write images (uint8, or float in [0, 1] or in `pixel_range`) and labels to ``.npz`` or a PNG folder.

    An ``.npz`` keeps the pixels' form: uint8 as is, float as float32 (so a float model's samples
    stay float); a PNG folder holds 8-bit pixels, float ones scaled from their range and rounded.
    ``labels`` are codes into ``label_names`` when names are given, else the labels themselves
    (ints or strings). A PNG folder puts image i in ``<label>/<i>.png`` (zero-padded), so the
    order within a label survives a round trip but the interleaving of labels does not.
    """
    path = Path(path)
    pixels = to_uint8(images, pixel_range)  # checks the range (and the structure) before anything is written
    values = label_values(pixels.shape[0], labels, label_names)
    if path.suffix.lower() == ".npz":
        given = as_nchw(images)
        kept = pixels if given.dtype == np.uint8 else given.astype(np.float32, copy=False)
        arrays: dict[str, np.ndarray] = {"images": kept}
        if values is not None:
            numeric = all(_is_decimal(v) for v in values)
            arrays["labels"] = np.array([int(v) for v in values], dtype=np.int64) if numeric else np.array(values)

        def write_npz(tmp: Path) -> None:
            with tmp.open("wb") as fh:
                np.savez_compressed(fh, **arrays)

        atomic_write(path, overwrite, folder=False, write=write_npz)
        return path
    if path.suffix:
        raise public_refusal(f"unsupported image output {path.suffix!r}: give an .npz path or a folder name")
    if values is not None and not all(safe_folder_name(v) for v in set(values)):
        raise public_refusal("a label cannot be a folder name (empty, leading dot or a path separator); write an .npz")
    width = max(6, len(str(pixels.shape[0] - 1)))

    def write_folder(tmp: Path) -> None:
        for i, (image, label) in enumerate(zip(pixels, values or [None] * len(pixels))):
            target = tmp if label is None else tmp / label
            target.mkdir(exist_ok=True)
            png_image(image).save(target / f"{i:0{width}d}.png", format="PNG")

    atomic_write(path, overwrite, folder=True, write=write_folder)
    return path


def _is_decimal(text: str) -> bool:
    return text.lstrip("-").isdigit() and str(int(text)) == text
