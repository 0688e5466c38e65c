"""File helpers shared by the image reader, writer and contact sheet: atomic writes, PNG conversion.

``atomic_write`` is why a failed write leaves nothing behind: the data goes to a hidden sibling of
the target (same folder, so the final ``os.replace`` is a rename on one file system) and is moved
into place only when complete. An existing target is replaced only when asked, and an existing
folder only if it holds nothing but PNGs, so ``overwrite=True`` cannot wipe an unrelated folder.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

from dpgan.atomic_files import released_sibling, replace_folder
from dpgan.errors import InputError
from dpgan.images.checks import encode_labels


def visible(path: Path) -> bool:
    return not path.name.startswith(".")


def is_png(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() == ".png"


def label_values(n: int, labels: object | None, label_names: list[str] | None) -> list[str] | None:
    """The label of each image as a string: codes looked up in label_names, or raw ints/strings."""
    if labels is None:
        if label_names is not None:
            raise InputError("label_names given without labels")
        return None
    if label_names is None:
        codes, names = encode_labels(labels, n)
        return [names[c] for c in codes]
    codes = np.asarray(labels)
    if codes.ndim != 1 or len(codes) != n:
        raise InputError("labels must be a 1-D array with one label per image")
    if not np.issubdtype(codes.dtype, np.integer) or codes.dtype == bool:
        raise InputError(f"labels must be integer codes into label_names; got dtype {codes.dtype}")
    if n and (codes.min() < 0 or codes.max() >= len(label_names)):
        raise InputError(f"label codes must lie in 0..{len(label_names) - 1} (one per label name)")
    if len(set(map(str, label_names))) != len(label_names):
        raise InputError("label_names must be distinct")
    return [str(label_names[c]) for c in codes]


def safe_folder_name(name: str) -> bool:
    return bool(name) and not name.startswith(".") and not any(ch in name for ch in "/\\\0")


def _is_png_tree(folder: Path) -> bool:
    """True if the folder holds only PNGs, hidden files and subfolders of those (what we write)."""
    for entry in folder.iterdir():
        if entry.is_dir():
            if any(not is_png(p) and visible(p) for p in entry.iterdir()):
                return False
        elif visible(entry) and not is_png(entry):
            return False
    return True


def _check_target(path: Path, overwrite: bool, folder: bool) -> None:
    if not path.exists() and not path.is_symlink():
        return
    if not overwrite:
        raise InputError(f"{path} already exists; pass overwrite=True to replace it")
    if path.is_dir() and not folder:
        raise InputError(f"{path} is a folder; refusing to replace it with a file")
    if path.is_dir() and not _is_png_tree(path):
        raise InputError(f"{path} holds files other than PNG images; refusing to replace it")
    if folder and not path.is_dir():
        raise InputError(f"{path} is a file; refusing to replace it with a folder of PNGs")


def _made_parents(path: Path) -> list[Path]:
    """Create the missing parent folders; return them deepest first (to remove on failure)."""
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(parent)
    for parent in reversed(missing):
        parent.mkdir()
    return missing


def atomic_write(path: Path, overwrite: bool, folder: bool, write: Callable[[Path], None]) -> None:
    """Run write(tmp) on a temporary sibling of path, then rename it to path; on error remove it."""
    _check_target(path, overwrite, folder)
    made = _made_parents(path)
    tmp: Path | None = None
    try:
        # a hidden, unique sibling made with the user's umask: a release (dpgan.atomic_files)
        tmp = released_sibling(path, folder=folder)
        write(tmp)
        if folder:
            replace_folder(tmp, path)  # never neither the old folder nor the new at the path
        else:
            os.replace(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            if tmp.is_dir():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)
            for parent in made:
                try:
                    parent.rmdir()
                except OSError:
                    break


def png_image(pixels: np.ndarray) -> Image.Image:
    """(C, H, W) uint8 as a Pillow image: mode L for one channel, RGB for three."""
    if pixels.shape[0] == 1:
        return Image.fromarray(np.ascontiguousarray(pixels[0]))  # 2-D uint8: mode L
    return Image.fromarray(np.ascontiguousarray(pixels.transpose(1, 2, 0)))  # H×W×3 uint8: mode RGB
