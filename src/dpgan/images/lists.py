"""A Python list (or tuple) of images, read element by element by the unit rule.

A list is not one array. ``np.asarray(list)`` would give it one dtype, the common type of every
element, and one shape: one float image among uint8 ones would make every image float (the uint8
ones then fail the [0, 1] rule and are dropped), and one image of another size would refuse the
whole fit. Both are public facts decided by one unit (dpgan.privacy.unit_rule). So each element is
read on its own, by its own dtype and shape:

- it is dropped under ``NOT_AN_IMAGE_REASON`` unless it is an H×W or C×H×W array (C = 1 or 3,
  sides 1..MAX_SIDE) of uint8 or float pixels;
- with a declared shape, under ``OTHER_SHAPE_REASON`` if its (C, H, W) is another;
- a float element, under the pixel reason if a pixel is outside [0, 1] (or the declared
  ``pixel_range``) or not finite;
- with labels, under ``LABEL_REASON`` if its label is unusable (dpgan.images.checks).

An element that breaks several rules counts once, under the first. The reasons are fixed by the
kind of input (a list, labelled or not, the declared range) before any element is read.

What is kept is converted by its own dtype into one common, public form: float32 pixels in [0, 1]
(uint8 divided by 255, floats scaled from the declared range). The pixels' dtype of a list is so
float whatever its elements hold, and its samples come back as float (in the declared range): the
container, not an element, decides. Without a declared shape the kept images are grouped by shape
(``ImageGroups``) and the fit trains at the shape a DP release picks
(dpgan.images.labels.release_shape), as for a PNG folder; no element decides it either.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpgan.images.checks import (
    CHANNELS,
    LABEL_REASON,
    MAX_SIDE,
    OTHER_SHAPE_REASON,
    ImageGroups,
    ImageSet,
    codes_of,
    label_texts,
    pixels_ok,
    pixels_reason,
)

NOT_AN_IMAGE_REASON = f"not an image (an H×W or C×H×W uint8 or float array, 1 or 3 channels, sides up to {MAX_SIDE})"
LIST_DTYPE = "float32"  # the pixels of every image read from a list: in [0, 1]


def list_reasons(labelled: bool, pixel_range: tuple[float, float] | None) -> tuple[str, ...]:
    """The reasons an element of a list can be dropped for: public, fixed before any is read."""
    reasons = (NOT_AN_IMAGE_REASON, OTHER_SHAPE_REASON, pixels_reason(pixel_range))
    return reasons + ((LABEL_REASON,) if labelled else ())


def read_element(
    element: object, shape: tuple[int, int, int] | None, pixel_range: tuple[float, float] | None
) -> np.ndarray | str:
    """One element as (C, H, W) float32 pixels in [0, 1], or the reason it is dropped: a rule that
    reads this element alone (its own dtype and shape)."""
    try:
        array = np.asarray(element)
    except (ValueError, TypeError):  # a ragged nested list, or something that is not an array
        return NOT_AN_IMAGE_REASON
    uint8 = array.dtype == np.uint8
    if not uint8 and array.dtype.kind != "f":
        return NOT_AN_IMAGE_REASON  # other integers, bool, object, text: not guessed at
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3 or array.shape[0] not in CHANNELS or not all(1 <= s <= MAX_SIDE for s in array.shape[1:]):
        return NOT_AN_IMAGE_REASON
    if shape is not None and array.shape != shape:
        return OTHER_SHAPE_REASON
    if uint8:
        return array.astype(np.float32) / np.float32(255.0)
    if not pixels_ok(array[None], pixel_range)[0]:
        return pixels_reason(pixel_range)
    low, high = pixel_range if pixel_range is not None else (0.0, 1.0)
    unit = (array.astype(np.float64) - low) / (high - low)
    return np.clip(unit, 0.0, 1.0).astype(np.float32)  # the clip only undoes rounding at the ends


def read_image_list(
    images: Sequence[object],
    labels: object | None,
    *,
    shape: tuple[int, int, int] | None,
    pixel_range: tuple[float, float] | None,
) -> ImageSet | ImageGroups:
    """The list's images by the rule of one element (module docstring): an ``ImageSet`` at a
    declared `shape` (the others dropped and counted), else ``ImageGroups`` by shape. Refuses on
    public structure only: labels not one per element."""
    texts = None if labels is None else label_texts(labels, len(images))
    reasons = list_reasons(texts is not None, pixel_range)
    dropped = dict.fromkeys(reasons, 0)
    by_shape: dict[tuple[int, int, int], tuple[list[np.ndarray], list[str]]] = {}
    for i, element in enumerate(images):
        pixels = read_element(element, shape, pixel_range)
        if isinstance(pixels, str):
            dropped[pixels] += 1
            continue
        if texts is not None and texts[i] is None:
            dropped[LABEL_REASON] += 1
            continue
        key = (int(pixels.shape[0]), int(pixels.shape[1]), int(pixels.shape[2]))
        arrays, names = by_shape.setdefault(key, ([], []))
        arrays.append(pixels)
        if texts is not None:
            names.append(texts[i])  # type: ignore[arg-type]
    groups: dict[tuple[int, int, int], ImageSet] = {}
    for key in sorted(by_shape):  # a public order: by the shape itself
        arrays, names = by_shape[key]
        if texts is None:
            groups[key] = ImageSet(np.stack(arrays))
        else:
            codes, label_names = codes_of(names)
            groups[key] = ImageSet(np.stack(arrays), codes, label_names)
    read = ImageGroups(groups, labelled=texts is not None, reasons=reasons, dropped=dropped, dtype=LIST_DTYPE)
    return read if shape is None else read.select(shape)


__all__ = ["LIST_DTYPE", "NOT_AN_IMAGE_REASON", "list_reasons", "read_element", "read_image_list"]
