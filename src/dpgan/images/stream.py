"""Image input read in blocks: a PNG folder a block of files at a time, or an ``.npy`` by offsets.

Why: a fit that holds every image holds N × C·H·W pixels; a statistics model (dpgan.statistics)
needs only running sums, so its data steps and its passes can read a block of images at a time and
keep memory flat in N (dpgan.images.stream_fit does the steps; dpgan.statistics.blocks the passes).

What is public and what is not (dpgan.privacy.unit_rule):
- public structure, read when the source is opened: a folder's file list (names, order, label
  subfolders: the layout of dpgan.images.io), an ``.npy``'s header (shape, dtype), the labels
  file's header, the declared shape, pixel range and layout, and the block size (a function of the
  public shape alone);
- private, read only in the fit's passes: every pixel, whether a file is readable and its shape, a
  label's value in a labels ``.npy``. Each file is kept or dropped by its own rule
  (dpgan.images.io's `load_png`; dpgan.images.checks' pixel and label rules for an ``.npy``),
  the dropped counted per reason for the fit's DP tally, never refused.

An ``.npy`` is read at byte offsets with plain reads (dpgan.npy_blocks: a memory map would leave
every page it touched in the resident memory); labels come from ``NAME.labels.npy`` beside ``NAME.npy`` (ints or
strings, one per image). An ``.npz`` cannot be read in blocks (its arrays are zip members, usually
compressed): `dpgan.images.io.read_images` reads it whole; save ``images`` as ``.npy`` for flat memory.

Ranks (torchrun): block i is read by rank i mod K (`on_rank`), so every image is read by exactly one
rank in each pass and the sums over ranks are the one-process sums.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dpgan.images.checks import (
    LABEL_REASON,
    ImageSet,
    check_pixel_range,
    check_shape,
    check_side,
    label_texts,
    pixels_ok,
    pixels_reason,
)
from dpgan.images.png_list import PngFiles
from dpgan.npy_blocks import NpyArray
from dpgan.privacy.unit_rule import public_refusal
from dpgan.statistics.blocks import Reduce, local_sum, rank_sum

if TYPE_CHECKING:  # PyTorch is loaded only when the sums travel over ranks
    from dpgan.privacy.distributed import ProcessGroupContext

BLOCK_VALUES = 2**22  # pixel values per block (32 MB as the float64 the passes sum): a public constant
LABELS_SUFFIX = ".labels.npy"  # NAME.labels.npy holds the labels of NAME.npy


def labels_path(path: Path) -> Path:
    """Where an ``.npy``'s labels are: ``NAME.labels.npy`` beside ``NAME.npy``."""
    return path.with_name(path.name[: -len(".npy")] + LABELS_SUFFIX)


@dataclass(frozen=True)
class Kept:
    """One block's kept images at a shape, with their label texts (None: unlabelled)."""

    images: np.ndarray
    labels: list[str] | None


@dataclass(frozen=True)
class ImageStream:
    """An image input read a block at a time (module docstring): a PNG folder's `files` (label or
    None, path) in the reader's public order, or an ``.npy`` (`array`, `label_array`). `listed` are
    the folder entries dropped by the layout alone (not PNGs, PNGs outside a label folder): private
    counts, released in the fit's tally. `rank`/`world` say which blocks this process reads."""

    source: Path
    reasons: tuple[str, ...]
    labelled: bool
    dtype: str  # the pixels' public dtype: "uint8" (PNGs), or the .npy's
    shape: tuple[int, int, int] | None = None  # declared, or the .npy's (public); None: released with DP
    files: PngFiles = PngFiles(())
    listed: tuple[tuple[str, int], ...] = ()
    array: NpyArray | None = None
    label_array: NpyArray | None = None
    pixel_range: tuple[float, float] | None = None
    block: int | None = None  # images per block (None: BLOCK_VALUES // C·H·W)
    rank: int = 0
    world: int = 1
    reduce: Reduce = local_sum

    def __len__(self) -> int:
        """The number of entries read (files, or the .npy's rows): public structure, not N."""
        return len(self.files) if self.array is None else self.array.shape[0]

    def on_ranks(self, context: ProcessGroupContext) -> ImageStream:
        """This stream as the context's rank reads it: blocks rank, rank + K, ..., its sums added
        over the K ranks (`rank_sum`) before any noise."""
        return replace(self, rank=context.rank, world=context.world_size, reduce=rank_sum(context))

    def unlabelled(self) -> ImageStream:
        """The same images read without labels (an unconditional fit): an .npy's labels file is
        not read at all, as an array fitted without labels; a folder's layout drops stay counted."""
        files = self.files.unlabelled()
        reasons = tuple(r for r in self.reasons if r != LABEL_REASON)
        return replace(self, files=files, label_array=None, labelled=False, reasons=reasons)

    def block_size(self, shape: tuple[int, int, int] | None) -> int:
        """Images per block: the caller's, else as many as fit BLOCK_VALUES at the (public) shape."""
        if self.block is not None:
            return max(1, int(self.block))
        return max(1, BLOCK_VALUES // math.prod(shape or (3, 64, 64)))

    def spans(self, shape: tuple[int, int, int] | None) -> Iterator[tuple[int, int]]:
        """This rank's blocks as (start, stop) entry positions."""
        size, total = self.block_size(shape), len(self)
        for index, start in enumerate(range(0, total, size)):
            if index % self.world == self.rank:
                yield start, min(start + size, total)

    def digest(self) -> int:
        """A digest of the public structure (paths, sizes, times), for the ranks of a distributed fit to
        check they read the same input (compared between the processes only, never released)."""
        digest = hashlib.sha256(str(self.shape).encode())
        for group in self.files.groups:  # the names, and each folder's time (a file added or removed)
            digest.update(f"{group.folder}\0{group.folder.stat().st_mtime_ns}\0".encode())
            digest.update(b"\0".join(bytes(n) for n in group.names))
        for path in [a.path for a in (self.array, self.label_array) if a is not None]:
            stat = path.stat()
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
        return int(digest.hexdigest()[:15], 16)

    def read_whole(self) -> ImageSet:
        """An ``.npy`` read whole (for a GAN recipe, which holds its units in memory)."""
        from dpgan.images.checks import check_image_array

        assert self.array is not None
        labels = None if self.label_array is None else self.label_array.rows(0, self.label_array.shape[0])
        return check_image_array(self.array.rows(0, len(self)), labels, pixel_range=self.pixel_range)

    # ---- the passes' reads: each image by its own rule ------------------------------------------

    def npy_block(self, start: int, stop: int) -> tuple[np.ndarray, list[str | None] | None, np.ndarray]:
        """Rows start..stop-1 of an .npy: (images, label texts or None, each image's pixel check)."""
        assert self.array is not None
        images = self.array.rows(start, stop)
        if images.ndim == 3:
            images = images[:, None]
        texts = None if self.label_array is None else label_texts(self.label_array.rows(start, stop), stop - start)
        return images, texts, pixels_ok(images, self.pixel_range)

    def kept(self, shape: tuple[int, int, int]) -> Iterator[Kept]:
        """This rank's blocks of images kept at `shape` (readable, of that shape, pixels and label
        usable): what the model's passes sum over, in the reader's order."""
        from dpgan.images.io import load_png

        for start, stop in self.spans(shape):
            if self.array is not None:
                images, texts, ok = self.npy_block(start, stop)
                if texts is not None:
                    ok &= np.fromiter((t is not None for t in texts), dtype=bool, count=len(texts))
                labels = None if texts is None else [t for t, k in zip(texts, ok) if k]
                yield Kept(images if ok.all() else images[ok], labels)  # type: ignore[arg-type]
                continue
            block = np.empty((stop - start, *shape), dtype=np.uint8)  # one buffer per block, filled in place
            names: list[str | None] = []
            for label, path in self.files.entries(start, stop):
                pixels = load_png(path, shape)
                if not isinstance(pixels, str):
                    block[len(names)] = pixels
                    names.append(label)
            yield Kept(block[: len(names)], names if self.labelled else None)  # type: ignore[arg-type]


def open_npy(
    path: Path, shape: tuple[int, int, int] | None, labelled: bool | None, pixel_range: tuple[float, float] | None
) -> ImageStream:
    """An ``.npy`` of images (N×H×W or N×C×H×W, uint8 or float) and its ``NAME.labels.npy``."""
    array = NpyArray.open(path, "images")
    dims = array.shape[1:]
    if len(dims) not in (2, 3):
        raise public_refusal(f"{path}: images must be N×H×W or N×C×H×W; got {len(array.shape)} dimensions")
    c, h, w = (1, *dims) if len(dims) == 2 else dims
    if c not in (1, 3):
        raise public_refusal(f"{path}: images must have 1 or 3 channels on axis 1 (N×C×H×W)")
    check_side(h, w)
    if array.dtype != np.uint8 and not np.issubdtype(array.dtype, np.floating):
        raise public_refusal(f"{path}: images must be uint8 (0-255) or float (0.0-1.0); got dtype {array.dtype}")
    if shape is not None and shape != (c, h, w):
        raise public_refusal(f"{path}: its images are {c}×{h}×{w}, not the declared shape")
    where = labels_path(path)
    label_array = NpyArray.open(where, "labels") if where.exists() and labelled is not False else None
    if labelled and label_array is None:
        raise public_refusal(
            f"{path}: no labels file {where.name} (unlabelled images: conditional=False / --unconditional)"
        )
    if label_array is not None and label_array.shape != (array.shape[0],):
        raise public_refusal(f"{where}: labels must be a 1-D array, one label per image")
    eight_bit = array.dtype == np.uint8
    reasons = (() if eight_bit else (pixels_reason(pixel_range),)) + ((LABEL_REASON,) if label_array else ())
    return ImageStream(
        path, reasons, label_array is not None, str(array.dtype), (c, h, w), array=array,
        label_array=label_array, pixel_range=None if eight_bit else pixel_range,
    )  # fmt: skip


def open_images(
    path: str | Path,
    *,
    shape: tuple[int, int, int] | None = None,
    labelled: bool | None = None,
    pixel_range: tuple[float, float] | None = None,
    block: int | None = None,
) -> ImageStream:
    """A PNG folder or an ``.npy`` opened for a fit in blocks (module docstring): only its public
    structure is read here. `shape`, `labelled` and `pixel_range` as for dpgan.images.io.read_images;
    `block` the images per block (None: from the public shape)."""
    from dpgan.images.io import folder_layout

    path = Path(path)
    declared = None if shape is None else check_shape(shape)
    pixel_range = check_pixel_range(pixel_range)
    if labelled is not None and not isinstance(labelled, bool):
        raise public_refusal("labelled must be True, False or None")
    if block is not None and (isinstance(block, bool) or not isinstance(block, int) or block < 1):
        raise public_refusal("block is a whole number of images, at least 1")
    if not path.exists():
        raise public_refusal(f"no such file or folder: {path}")
    if path.is_dir():
        if pixel_range is not None:
            raise public_refusal("pixel_range is for float images: PNGs are 8-bit (0-255)")
        layout, files, dropped, reasons = folder_layout(path, labelled)
        listed = tuple((r, n) for r, n in dropped.items())
        return ImageStream(path, reasons, layout, "uint8", declared, files, listed, block=block)
    if path.suffix.lower() != ".npy":
        raise public_refusal(f"{path.name!r}: read in blocks are a folder of PNGs or an .npy (an .npz: read_images)")
    return replace(open_npy(path, declared, labelled, pixel_range), block=block)


__all__ = ["BLOCK_VALUES", "ImageStream", "Kept", "LABELS_SUFFIX", "labels_path", "open_images"]
