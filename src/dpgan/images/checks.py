"""What an image set must look like before dpgan touches it: shape, dtype, range, labels.

Every message here names a shape, a dtype or a count, never a pixel value or a label value: the
images and their labels are the private data, and an error message ends up in logs and bug
reports. The label domain (the sorted distinct labels) is returned as ``label_names`` for the
caller to treat as it must: a facade that fits a model on it should take the domain from public
metadata or pay for it (a DP count), since the set of labels present is itself read off the data.

Accepted pixels: ``uint8`` (0..255) or a float dtype with every value finite and in [0, 1]. Other
integer dtypes are refused rather than guessed at (an int64 array may hold 0..255, 0..65535 or
0..1), and so is ``bool``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from dpgan.errors import InputError

MAX_SIDE = 512  # pixels: larger images are beyond what the networks here are built for
MAX_VALUES = 2**31  # N*C*H*W: past this the float32 copy alone is 8 GiB
CHANNELS = (1, 3)  # grayscale or RGB

_CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)")


@dataclass(frozen=True)
class ImageSet:
    """Images as (N, C, H, W) in their given dtype, with optional labels as codes into ``label_names``.

    ``labels`` are int64 codes 0..K-1 and ``label_names[k]`` is the label that code k stands for,
    as a string (numbers are written as decimal integers, e.g. "7").
    """

    images: np.ndarray
    labels: np.ndarray | None = None
    label_names: list[str] | None = None

    def __len__(self) -> int:
        return int(self.images.shape[0])


def as_nchw(images: object) -> np.ndarray:
    """The pixel array as (N, C, H, W), its dtype and range checked; N may be any count here.

    A view where possible (an N×H×W array gains a channel axis of 1), never a converted copy, so
    uint8 data stays uint8.
    """
    if not isinstance(images, np.ndarray):
        try:
            images = np.asarray(images)
        except ValueError:
            raise InputError("images have mixed sizes: all images must have the same shape") from None
    if images.dtype == object:
        raise InputError(
            "images must be one numeric array (uint8 or float), not an object array (are the images of mixed sizes?)"
        )
    if images.ndim == 3:
        images = images[:, None, :, :]
    elif images.ndim != 4:
        raise InputError(f"images must be N×H×W or N×C×H×W; got an array with {images.ndim} dimensions")
    n, c, h, w = images.shape
    if c not in CHANNELS:
        hint = " (channels last? use images.transpose(0, 3, 1, 2))" if w in CHANNELS else ""
        raise InputError(f"images must have 1 or 3 channels on axis 1 (N×C×H×W); got shape {images.shape}{hint}")
    if h < 1 or w < 1 or h > MAX_SIDE or w > MAX_SIDE:
        raise InputError(f"image height and width must be 1..{MAX_SIDE} pixels; got {h}×{w}")
    if n * c * h * w > MAX_VALUES:
        raise InputError(f"image set too large: {n}×{c}×{h}×{w} values is more than 2**31")
    if images.dtype == np.uint8:
        return images
    if not np.issubdtype(images.dtype, np.floating):
        raise InputError(f"images must be uint8 (0-255) or float (0.0-1.0); got dtype {images.dtype}")
    if images.size and not np.isfinite(images).all():
        raise InputError("images contain NaN or infinite values")
    if images.size and (images.min() < 0 or images.max() > 1):
        raise InputError("float images must lie in [0, 1] (or pass uint8 for 0-255)")
    return images


def sort_label_names(names: set[str] | list[str]) -> list[str]:
    """Label names in code order: numerically if every name is a decimal integer ("10" after "9"), else as text."""
    ordered = sorted(set(names))
    if all(_CANONICAL_INT.fullmatch(s) for s in ordered):
        ordered.sort(key=int)
    return ordered


def _sorted_names(values: np.ndarray) -> list[str]:
    if np.issubdtype(values.dtype, np.integer):
        return [str(int(v)) for v in np.unique(values)]
    return sort_label_names({str(v) for v in values})


def encode_labels(labels: object, n: int) -> tuple[np.ndarray, list[str]]:
    """Labels (ints or strings, 1-D, length n) as int64 codes and the sorted distinct names."""
    values = np.asarray(labels)
    if values.ndim != 1:
        raise InputError(f"labels must be a 1-D array; got {values.ndim} dimensions")
    if len(values) != n:
        raise InputError(f"labels has length {len(values)} but there are {n} images")
    if values.dtype == object:
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
            values = values.astype(np.int64)
        elif all(isinstance(v, str) for v in values):
            values = values.astype(str)
        else:
            raise InputError("labels must be all integers or all strings (found missing or mixed values)")
    if values.dtype == bool or not (np.issubdtype(values.dtype, np.integer) or values.dtype.kind == "U"):
        raise InputError(f"labels must be integers or strings; got dtype {values.dtype}")
    names = _sorted_names(values)
    index = {name: code for code, name in enumerate(names)}
    as_text = [str(int(v)) for v in values] if values.dtype.kind != "U" else values.tolist()
    codes = np.fromiter((index[s] for s in as_text), dtype=np.int64, count=n)
    return codes, names


def check_images(images: object, labels: object | None = None, *, min_labels: int = 2) -> ImageSet:
    """Validate an image set: at least 2 images, and if labelled, at least `min_labels` distinct
    labels (2 for a training set; 1 to read samples drawn for one label).

    Raises InputError with one line that names shapes, dtypes or counts only.
    """
    array = as_nchw(images)
    n = array.shape[0]
    if n < 2:
        raise InputError(f"an image set needs at least 2 images; got {n}")
    if labels is None:
        return ImageSet(array)
    codes, names = encode_labels(labels, n)
    if len(names) < min_labels:
        raise InputError("a labelled image set needs at least 2 distinct labels; pass no labels for an unlabelled set")
    return ImageSet(array, codes, names)


def to_unit_range(images: object) -> np.ndarray:
    """float32 pixels in [0, 1]: uint8 divided by 255, float as is (after the same checks)."""
    array = as_nchw(images)
    if array.dtype == np.uint8:
        return array.astype(np.float32) / np.float32(255.0)
    return array.astype(np.float32, copy=False)


def to_uint8(images: object) -> np.ndarray:
    """uint8 pixels: float in [0, 1] scaled by 255 and rounded (at most 1/510 from the float)."""
    array = as_nchw(images)
    if array.dtype == np.uint8:
        return array
    return np.rint(array.astype(np.float64) * 255.0).astype(np.uint8)
