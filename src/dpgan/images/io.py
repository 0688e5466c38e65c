"""Reading and writing image sets: an ``.npz`` file or a folder of PNGs, one subfolder per label.

Formats:
- ``.npz``: array ``images`` (N×H×W or N×C×H×W, uint8 or float in [0, 1]) and optionally
  ``labels`` (length N, ints or strings). Read with ``allow_pickle=False``: an object array would
  be unpickled, which runs code from the file, so it is refused. Written with ``images`` as uint8
  and ``labels`` as int64 when every label name is a decimal integer ("7"), else as strings, so
  ``read_images(write_images(...))`` gives back the same codes and names.
- a folder: PNGs directly inside it form an unlabelled set; PNGs in subfolders are labelled by the
  subfolder's name. Grayscale PNGs give C=1, colour ones C=3 (alpha dropped, palettes converted);
  files are read in name order within each label, labels in ``label_names`` order. Hidden entries
  (a leading dot) are skipped; any other non-PNG file is an error, so nothing is silently left out.

Writes are atomic: everything goes to a temporary path in the target's own folder first and is
renamed into place only when complete, so a failure leaves no half-written set. An existing path
is replaced only with ``overwrite=True``, and an existing folder only if it holds nothing but PNGs.

Errors name paths, counts, sizes and modes, never pixel or label values (see dpgan.images.checks);
a label subfolder's name is a label value, so it is not named either.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
from PIL import Image

from dpgan.errors import InputError
from dpgan.images.checks import (
    MAX_SIDE,
    MAX_VALUES,
    ImageSet,
    check_images,
    sort_label_names,
    to_uint8,
    to_unit_range,
)
from dpgan.images.files import atomic_write, is_png, label_values, png_image, safe_folder_name, visible
from dpgan.images.sheet import write_contact_sheet

__all__ = [
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


def read_images(path: str | Path) -> ImageSet:
    """Read an ``.npz`` file or a PNG folder and validate it with ``check_images`` (one label is
    allowed: samples drawn for one label read back; a fit checks its training set again)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"no such file or folder: {path}")
    if path.is_dir():
        return _read_png_folder(path)
    if path.suffix.lower() != ".npz":
        raise InputError(f"unsupported image input {path.suffix or path.name!r}: give an .npz file or a folder of PNGs")
    return _read_npz(path)


def _read_npz(path: Path) -> ImageSet:
    if not zipfile.is_zipfile(path):  # e.g. a .npy renamed: np.load would hand back a bare array
        raise InputError(f"cannot read {path}: not a well-formed .npz file (not a zip archive)")
    try:
        # our own handle: np.load leaves its file open when the zip is corrupt
        with path.open("rb") as fh, np.load(fh, allow_pickle=False) as archive:
            if "images" not in archive.files:
                raise InputError(f"{path}: no array named 'images' (it holds {len(archive.files)} arrays)")
            images = archive["images"]
            labels = archive["labels"] if "labels" in archive.files else None
    except InputError:
        raise
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise InputError(f"{path}: holds an object (pickled) array; save plain numeric or string arrays") from None
        raise InputError(f"cannot read {path}: not a well-formed .npz file ({type(exc).__name__})") from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot read {path}: not a well-formed .npz file ({type(exc).__name__})") from None
    return check_images(images, labels, min_labels=1)


def _png_groups(folder: Path) -> list[tuple[str | None, list[Path]]]:
    """(label or None, PNG paths in name order) per group; structure errors raised here."""
    entries = sorted(p for p in folder.iterdir() if visible(p))
    subfolders = [p for p in entries if p.is_dir()]
    top_pngs = [p for p in entries if is_png(p)]
    others = [p for p in entries if not p.is_dir() and not is_png(p)]
    for sub in subfolders:
        others += [p for p in sub.iterdir() if visible(p) and not is_png(p)]
    if others:
        raise InputError(f"{folder}: {len(others)} entries are not PNG files (only .png images are read)")
    if top_pngs and subfolders:
        raise InputError(f"{folder}: holds PNGs both directly and in label subfolders; use one layout")
    if top_pngs:
        return [(None, top_pngs)]
    by_name = {sub.name: sub for sub in subfolders}
    ordered = [by_name[name] for name in sort_label_names(list(by_name))]  # the order of the label codes
    groups = [(sub.name, sorted(p for p in sub.iterdir() if visible(p))) for sub in ordered]
    empty = sum(1 for _, files in groups if not files)
    if empty:
        raise InputError(f"{folder}: {empty} label subfolders hold no PNG files")
    if not groups:
        raise InputError(f"{folder}: no PNG files found")
    return groups


def _load_png(path: Path) -> np.ndarray | str:
    """Pixels as (C, H, W) uint8, or the reason the file is refused ("unreadable", "16-bit", "too large")."""
    try:
        with Image.open(path) as im:
            if im.format != "PNG":
                return "unreadable"
            if max(im.size) > MAX_SIDE:
                return "too large"
            im.load()
            mode = im.mode
            if mode in _GRAY_MODES:
                target = _GRAY_MODES[mode]
                pixels = np.asarray(im.convert(target) if target else im, dtype=np.uint8)[None]
            elif mode in _COLOUR_MODES:
                target = _COLOUR_MODES[mode]
                converted = im.convert(target) if target else im
                pixels = np.asarray(converted.convert("RGB"), dtype=np.uint8).transpose(2, 0, 1)
            else:
                return "16-bit"  # I;16 and I modes: more than 8 bits per sample
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        return "unreadable"
    return np.ascontiguousarray(pixels)


def _read_png_folder(folder: Path) -> ImageSet:
    groups = _png_groups(folder)
    total = sum(len(files) for _, files in groups)
    arrays: list[np.ndarray] = []
    labels: list[str] = []
    refused: dict[str, int] = {}
    values = 0
    for label, files in groups:
        for file in files:
            pixels = _load_png(file)
            if isinstance(pixels, str):
                refused[pixels] = refused.get(pixels, 0) + 1
                continue
            values += pixels.size
            if values > MAX_VALUES:
                raise InputError(f"{folder}: image set too large (more than 2**31 pixel values)")
            arrays.append(pixels)
            if label is not None:
                labels.append(label)
    if refused.get("unreadable"):
        raise InputError(
            f"{folder}: {refused['unreadable']} of {total} PNG files could not be read (corrupt or not PNG)"
        )
    if refused.get("16-bit"):
        raise InputError(f"{folder}: {refused['16-bit']} of {total} PNG files are 16-bit; save 8-bit PNGs")
    if refused.get("too large"):
        raise InputError(f"{folder}: {refused['too large']} of {total} PNG files are larger than {MAX_SIDE} pixels")
    channels = sorted({a.shape[0] for a in arrays})
    if len(channels) > 1:
        raise InputError(f"{folder}: PNG files mix grayscale and colour; convert them to one mode")
    sizes = sorted({a.shape[1:] for a in arrays})
    if len(sizes) > 1:
        shown = ", ".join(f"{h}×{w}" for h, w in sizes[:3]) + (", ..." if len(sizes) > 3 else "")
        raise InputError(f"{folder}: PNG files have {len(sizes)} different sizes ({shown}); all must be the same size")
    return check_images(np.stack(arrays), labels if groups[0][0] is not None else None, min_labels=1)


# ---- writing ------------------------------------------------------------------------------------


def write_images(
    path: str | Path,
    images: object,
    labels: object | None = None,
    label_names: list[str] | None = None,
    *,
    overwrite: bool = False,
) -> Path:
    """Write images (uint8, or float in [0, 1] rounded to uint8) and labels to ``.npz`` or a PNG folder.

    ``labels`` are codes into ``label_names`` when names are given, else the labels themselves
    (ints or strings). A PNG folder puts image i in ``<label>/<i>.png`` (zero-padded), so the
    order within a label survives a round trip but the interleaving of labels does not.
    """
    path = Path(path)
    pixels = to_uint8(images)
    values = label_values(pixels.shape[0], labels, label_names)
    if path.suffix.lower() == ".npz":
        arrays: dict[str, np.ndarray] = {"images": pixels}
        if values is not None:
            numeric = all(_is_decimal(v) for v in values)
            arrays["labels"] = np.array([int(v) for v in values], dtype=np.int64) if numeric else np.array(values)

        def write_npz(tmp: Path) -> None:
            with tmp.open("wb") as fh:
                np.savez_compressed(fh, **arrays)

        atomic_write(path, overwrite, folder=False, write=write_npz)
        return path
    if path.suffix:
        raise InputError(f"unsupported image output {path.suffix!r}: give an .npz path or a folder name")
    if values is not None and not all(safe_folder_name(v) for v in set(values)):
        raise InputError("a label cannot be a folder name (empty, leading dot or a path separator); write an .npz")
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
