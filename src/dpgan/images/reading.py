"""Any in-memory image input, by the unit rule: one array, or a list (tuple) of images.

The two are different kinds of input with different public facts. One array has one dtype and one
shape, chosen by its caller (dpgan.images.checks.check_image_array). A list has neither: each
element carries its own, so it is read element by element (dpgan.images.lists), never through one
``np.asarray`` of them all, whose dtype would be decided by the one float image among uint8 ones.
Which of the two it is, is the container's type: public.
"""

from __future__ import annotations

from dpgan.images.checks import ImageGroups, ImageSet, check_image_array, check_pixel_range, check_shape
from dpgan.images.lists import read_image_list


def check_images(
    images: object,
    labels: object | None = None,
    *,
    pixel_range: tuple[float, float] | None = None,
    shape: tuple[int, int, int] | None = None,
) -> ImageSet | ImageGroups:
    """An image set by the unit rule: an array as `check_image_array` reads it (an `ImageSet`); a
    list or tuple element by element (dpgan.images.lists): an `ImageSet` at a declared `shape`,
    else `ImageGroups` by shape, as a PNG folder read without one."""
    if isinstance(images, (list, tuple)):
        declared = None if shape is None else check_shape(shape)
        return read_image_list(images, labels, shape=declared, pixel_range=check_pixel_range(pixel_range))
    return check_image_array(images, labels, pixel_range=pixel_range, shape=shape)


__all__ = ["check_images"]
