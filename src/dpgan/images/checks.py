"""What an image set must look like before dpgan touches it, by the unit rule (dpgan.privacy.unit_rule).

The unit is one image with its label. Two inputs that differ in one image must get the same
refusal-or-not and the same public metadata, so the checks here are of two kinds:

- **Refusals on public structure only**: the array's dtype and its non-N dimensions (the caller
  built the array, so its shape is public: one array has one shape), the labels array's dtype and
  that it holds one label per image. Messages name dtypes, dimensions and arguments, never a
  pixel, a label, or a count of images (N is private: a channels-last hint prints ``(N, 8, 8, 3)``).
- **A rule per image**, read off that image alone: a float image with a pixel outside [0, 1]
  (NaN and ±inf included) is dropped under ``PIXELS_REASON``; a label that is missing or neither an
  integer nor text is dropped under ``LABEL_REASON``. Nothing is refused for holding few images or
  few distinct labels: the fit releases how many it kept and dropped with DP
  (dpgan.images.labels), and an input with no usable image trains on none.

The label order is decided per label too (``label_key``: decimal integers by value, then other
text as text), so the order of a set of labels depends on that set only: an image labelled 'x'
that the release drops cannot turn ['2', '10'] into ['10', '2'].

Accepted pixels: ``uint8`` (0..255) or a float dtype (values in [0, 1] kept, or in a declared
``pixel_range`` such as (0, 255): a public setting, so the rule stays one image's own). Other
integer dtypes are refused rather than guessed at (an int64 array may hold 0..255, 0..65535 or
0..1), and so is ``bool``. There is no cap on the number of images (it would be a refusal on N):
memory is the limit.

A Python list or tuple of images is not one array: each element is read by its own dtype and
shape (dpgan.images.lists), never through one ``np.asarray`` of them all, whose dtype and shape
every element would decide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from dpgan.privacy.unit_rule import public_refusal

MAX_SIDE = 512  # pixels: larger images are beyond what the networks here are built for
CHANNELS = (1, 3)  # grayscale or RGB
PIXELS_REASON = "pixels outside [0, 1]"  # a float image with a pixel < 0, > 1, NaN or ±inf
LABEL_REASON = "label missing or not an integer or text"
OTHER_SHAPE_REASON = "another shape"  # a PNG or list element whose (C, H, W) is not the declared or released shape
# the unit rule for images, as the privacy report states it
INPUT_RULE = (
    "each image is kept or dropped by its own pixels, label and file: dropped when a float pixel is outside "
    "[0, 1] or not finite, its label is missing or unusable, its PNG is unreadable, 16-bit, larger than "
    f"{MAX_SIDE} pixels or not of the (declared or DP-released) shape, or its label is outside the (public or "
    "DP-released) label set; no image decides whether the fit runs, and the dropped are counted with DP, per reason"
)
_CHUNK_VALUES = 2**24  # pixel values per pass of the per-image check (bounds its temporary memory)

_CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)")


@dataclass(frozen=True)
class ImageSet:
    """Images as (N, C, H, W) in their given dtype, with optional labels as codes into ``label_names``.

    ``labels`` are int64 codes 0..K-1 and ``label_names[k]`` is the label that code k stands for,
    as a string (numbers are written as decimal integers, e.g. "7"), in ``label_key`` order.
    ``reasons`` are the reasons the reader could drop an image for (public: fixed by the kind of
    input before any image was read) and ``dropped`` how many it dropped for each: a private
    count, which a fit releases with DP only (dpgan.images.labels) and nothing else may print.
    ``pixel_range`` is the declared range of float pixels (None: [0, 1]); uint8 pixels are 0-255.
    """

    images: np.ndarray
    labels: np.ndarray | None = None
    label_names: list[str] | None = None
    reasons: tuple[str, ...] = ()
    dropped: dict[str, int] = field(default_factory=dict)
    pixel_range: tuple[float, float] | None = None

    def __len__(self) -> int:
        return int(self.images.shape[0])

    @property
    def shape(self) -> tuple[int, int, int]:
        """(C, H, W) of every image: public (the caller's array, or a declared shape)."""
        _, c, h, w = self.images.shape
        return int(c), int(h), int(w)


@dataclass(frozen=True)
class ImageGroups:
    """A PNG folder (or a list of images) read without a declared shape: its images grouped by shape (C, H, W).

    The shape a fit trains at must not be read off the files for free (one PNG of another size
    would decide it), so the reader keeps every readable shape and the fit chooses: the declared
    ``image_shape``, else the shape a DP release picks (dpgan.images.labels.release_shape). The
    images of the other shapes are then dropped and counted under ``OTHER_SHAPE_REASON``
    (`select`). ``reasons``/``dropped`` are the reader's, as in `ImageSet`; ``labelled`` is the
    folder's layout (label subfolders or not). ``dtype`` is the pixels' dtype, public (uint8 for
    PNGs, float32 for a list): a shape that no image holds is an empty set of that dtype, so
    whether one image has the chosen shape cannot change the samples' dtype.

    For a look at a folder (not a fit) ``images``, ``labels`` and ``label_names`` give the one group
    when there is exactly one; a folder of several shapes needs ``select`` or a declared shape.
    """

    groups: dict[tuple[int, int, int], ImageSet]
    labelled: bool
    reasons: tuple[str, ...]
    dropped: dict[str, int] = field(default_factory=dict)
    dtype: str = "uint8"

    def __len__(self) -> int:
        return sum(len(group) for group in self.groups.values())

    def counts(self) -> dict[tuple[int, int, int], int]:
        """Images per shape: private counts, for a DP release only."""
        return {shape: len(group) for shape, group in self.groups.items()}

    def select(self, shape: tuple[int, int, int]) -> ImageSet:
        """The images of `shape` (none if the folder has none), the others dropped and counted."""
        shape = check_shape(shape)
        dropped = dict(self.dropped)
        others = sum(len(group) for key, group in self.groups.items() if key != shape)
        dropped[OTHER_SHAPE_REASON] = dropped.get(OTHER_SHAPE_REASON, 0) + others
        group = self.groups.get(shape)
        if group is None:
            empty = np.zeros((0, *shape), dtype=self.dtype)
            group = ImageSet(empty, np.zeros(0, dtype=np.int64), []) if self.labelled else ImageSet(empty)
        return ImageSet(group.images, group.labels, group.label_names, reasons=self.reasons, dropped=dropped)

    def _only(self) -> ImageSet:
        if len(self.groups) != 1:
            raise public_refusal(
                "the images (a folder of PNGs, or a list) are of several shapes, or none: declare one "
                "(read_images(path, shape=(C, H, W)), check_images(images, shape=...), "
                "ImageSynthesizer(image_shape=...), --image-shape CxHxW)"
            )
        return next(iter(self.groups.values()))

    @property
    def images(self) -> np.ndarray:
        return self._only().images

    @property
    def labels(self) -> np.ndarray | None:
        return self._only().labels

    @property
    def label_names(self) -> list[str] | None:
        return self._only().label_names


def as_nchw(images: object) -> np.ndarray:
    """The pixel array as (N, C, H, W), its dtype and non-N dimensions checked (public structure);
    N may be any count here, 0 included. The values are not read (see `check_images`, `to_unit_range`).

    A view where possible (an N×H×W array gains a channel axis of 1), never a converted copy, so
    uint8 data stays uint8.
    """
    if not isinstance(images, np.ndarray):
        try:
            images = np.asarray(images)
        except ValueError:
            raise public_refusal(
                "images have mixed sizes: pass one array (or a PNG folder with a declared shape)"
            ) from None
    if images.dtype == object:
        raise public_refusal(
            "images must be one numeric array (uint8 or float), not an object array (are the images of mixed sizes?)"
        )
    if images.ndim == 3:
        images = images[:, None, :, :]
    elif images.ndim != 4:
        raise public_refusal(f"images must be N×H×W or N×C×H×W; got an array with {images.ndim} dimensions")
    _, c, h, w = images.shape
    if c not in CHANNELS:
        hint = " (channels last? use images.transpose(0, 3, 1, 2))" if w in CHANNELS else ""
        raise public_refusal(
            f"images must have 1 or 3 channels on axis 1 (N×C×H×W); got shape (N, {c}, {h}, {w}){hint}"
        )
    check_side(h, w)
    if images.dtype == np.uint8:
        return images
    if not np.issubdtype(images.dtype, np.floating):
        raise public_refusal(f"images must be uint8 (0-255) or float (0.0-1.0); got dtype {images.dtype}")
    return images


def check_side(h: int, w: int) -> None:
    """Height and width within 1..MAX_SIDE (public: an array's dimensions or a declared shape)."""
    if h < 1 or w < 1 or h > MAX_SIDE or w > MAX_SIDE:
        raise public_refusal(f"image height and width must be 1..{MAX_SIDE} pixels; got {h}×{w}")


def check_shape(shape: object) -> tuple[int, int, int]:
    """A declared image shape (C, H, W): C in 1 or 3, sides 1..MAX_SIDE (a public setting)."""
    try:
        values = tuple(shape)  # type: ignore[arg-type]
    except TypeError:
        values = ()
    if len(values) != 3 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        raise public_refusal("an image shape is three whole numbers (C, H, W), e.g. (1, 28, 28)")
    c, h, w = (int(v) for v in values)
    if c not in CHANNELS:
        raise public_refusal("an image shape's C (channels) must be 1 (grayscale) or 3 (colour)")
    check_side(h, w)
    return c, h, w


def check_pixel_range(pixel_range: object) -> tuple[float, float] | None:
    """A declared range of float pixels (low, high): two finite numbers, low < high (a public
    setting; None means [0, 1])."""
    if pixel_range is None:
        return None
    try:
        values = tuple(pixel_range)  # type: ignore[arg-type]
    except TypeError:
        values = ()
    numbers = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in values)
    if len(values) != 2 or not numbers or not all(np.isfinite(v) for v in values) or not values[0] < values[1]:
        raise public_refusal("pixel_range is two finite numbers (low, high) with low < high, e.g. (0, 255)")
    return float(values[0]), float(values[1])


def pixels_reason(pixel_range: tuple[float, float] | None) -> str:
    """The reason a float image is dropped: a pixel outside the declared range (public), [0, 1] by default."""
    if pixel_range is None:
        return PIXELS_REASON
    return f"pixels outside [{pixel_range[0]:g}, {pixel_range[1]:g}]"


def pixels_ok(images: np.ndarray, pixel_range: tuple[float, float] | None = None) -> np.ndarray:
    """Per image, True if it is uint8, or float with every pixel finite and in [0, 1] (or in the
    declared `pixel_range`): a rule that reads each image alone (one image's NaN drops that image,
    not the set)."""
    low, high = pixel_range if pixel_range is not None else (0.0, 1.0)
    n = images.shape[0]
    if images.dtype == np.uint8:
        return np.ones(n, dtype=bool)
    ok = np.empty(n, dtype=bool)
    chunk = max(1, _CHUNK_VALUES // max(1, int(np.prod(images.shape[1:]))))
    for start in range(0, n, chunk):
        part = images[start : start + chunk].reshape(min(chunk, n - start), -1)
        # NaN compares False both ways, so it fails `0 <= x <= 1` like ±inf does
        ok[start : start + len(part)] = ((part >= low) & (part <= high)).all(axis=1)
    return ok


def label_key(name: str) -> tuple[int, int, str]:
    """The sort key of one label, read off that label alone: decimal integers ("7", "-2") by value
    first, then any other text as text. The order of a set of labels depends on that set only."""
    if _CANONICAL_INT.fullmatch(name):
        return (0, int(name), name)
    return (1, 0, name)


def sort_label_names(names: set[str] | list[str]) -> list[str]:
    """Distinct label names in code order (`label_key`): "2" before "10", integers before other text."""
    return sorted(set(names), key=label_key)


def _labels_array(labels: object) -> np.ndarray:
    """Labels as a 1-D array. A list or tuple becomes an object array (each label then judged
    alone); an array keeps the dtype its caller built, which is checked (public structure)."""
    if isinstance(labels, (list, tuple)):
        values = np.empty(len(labels), dtype=object)
        for i, value in enumerate(labels):  # element by element: a nested value stays one (unusable) label
            values[i] = value
    else:
        values = np.asarray(labels)
    if values.ndim != 1:
        raise public_refusal(f"labels must be a 1-D array; got {values.ndim} dimensions")
    if values.dtype != object and (
        values.dtype == bool or not (np.issubdtype(values.dtype, np.integer) or values.dtype.kind == "U")
    ):
        raise public_refusal(f"labels must be integers or strings; got dtype {values.dtype}")
    return values


def _label_text(value: object) -> str | None:
    """One label as text, or None if it is missing or neither an integer nor a string."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, str):
        return str(value)
    return None


def label_texts(labels: object, n: int) -> list[str | None]:
    """Each image's label as text ("7" for 7), None where the label is unusable (`_label_text`).
    Refuses on structure only: not 1-D, a dtype that is not integer, string or object, or not one
    label per image (the message names no length: the number of images is private)."""
    values = _labels_array(labels)
    if len(values) != n:
        raise public_refusal("labels must hold one label per image (the labels and the images differ in length)")
    if values.dtype == object:
        return [_label_text(v) for v in values]
    if values.dtype.kind == "U":
        return values.tolist()
    return [str(v) for v in values.tolist()]


def codes_of(texts: list[str]) -> tuple[np.ndarray, list[str]]:
    """Label texts as int64 codes into their distinct names in `label_key` order."""
    names = sort_label_names(texts)
    index = {name: code for code, name in enumerate(names)}
    return np.fromiter((index[s] for s in texts), dtype=np.int64, count=len(texts)), names


def encode_labels(labels: object, n: int) -> tuple[np.ndarray, list[str]]:
    """Labels (ints or strings, 1-D, length n) as int64 codes and the sorted distinct names; for
    writers and sheets, which refuse an unusable label rather than drop its image."""
    texts = label_texts(labels, n)
    if any(t is None for t in texts):
        raise public_refusal("labels must be all integers or strings (found missing or other values)")
    return codes_of(texts)  # type: ignore[arg-type]


def check_image_array(
    images: object,
    labels: object | None = None,
    *,
    pixel_range: tuple[float, float] | None = None,
    shape: tuple[int, int, int] | None = None,
) -> ImageSet:
    """One image array by the unit rule (module docstring): refused on public structure only; an
    image with a pixel outside [0, 1] (or the declared `pixel_range`, which applies to float pixels
    only) or an unusable label is dropped and counted (`ImageSet.dropped`), the rest kept in their
    order. Any number of images and labels passes, none included. The array's shape is public
    (`shape`, if declared, must be it). A list of images is not one array: dpgan.images.reading
    sends it to dpgan.images.lists, which reads it element by element."""
    pixel_range = check_pixel_range(pixel_range)
    declared = None if shape is None else check_shape(shape)
    array = as_nchw(images)
    if declared is not None and array.shape[1:] != declared:
        raise public_refusal("the images' shape (C, H, W) is not the declared shape")
    if array.dtype == np.uint8:
        pixel_range = None  # uint8 pixels are 0-255 whatever the range for floats says
    n = array.shape[0]
    reason = pixels_reason(pixel_range)
    reasons: tuple[str, ...] = () if array.dtype == np.uint8 else (reason,)
    keep = pixels_ok(array, pixel_range)
    dropped = {reason: int(n - keep.sum())} if reasons else {}
    texts: list[str | None] | None = None
    if labels is not None:
        texts = label_texts(labels, n)
        reasons += (LABEL_REASON,)
        usable = np.fromiter((t is not None for t in texts), dtype=bool, count=n)
        dropped[LABEL_REASON] = int((keep & ~usable).sum())  # an image with both faults counts once
        keep &= usable
    if not keep.all():
        array = array[keep]
    if texts is None:
        return ImageSet(array, reasons=reasons, dropped=dropped, pixel_range=pixel_range)
    kept_texts = [t for t, k in zip(texts, keep) if k]
    codes, names = codes_of(kept_texts)  # type: ignore[arg-type]
    return ImageSet(array, codes, names, reasons=reasons, dropped=dropped, pixel_range=pixel_range)


def _check_range(array: np.ndarray, pixel_range: tuple[float, float] | None) -> None:
    """Every pixel in range, for the converters below (their input is the caller's images to write
    or already-checked training images; no value is named)."""
    if array.dtype != np.uint8 and not pixels_ok(array, pixel_range).all():
        where = "[0, 1]" if pixel_range is None else "the pixel_range"
        raise public_refusal(
            f"float images must lie in {where} with no NaN or infinite pixels (or pass uint8 for 0-255)"
        )


def to_unit_range(images: object, pixel_range: tuple[float, float] | None = None) -> np.ndarray:
    """float32 pixels in [0, 1]: uint8 divided by 255, float as is, or scaled from the declared
    `pixel_range` (refused if any pixel is out of range)."""
    array = as_nchw(images)
    pixel_range = check_pixel_range(pixel_range)
    _check_range(array, pixel_range)
    if array.dtype == np.uint8:
        return array.astype(np.float32) / np.float32(255.0)
    if pixel_range is None:
        return array.astype(np.float32, copy=False)
    low, high = pixel_range
    unit = (array.astype(np.float64) - low) / (high - low)
    return np.clip(unit, 0.0, 1.0).astype(np.float32)  # the clip only undoes rounding at the ends


def to_uint8(images: object, pixel_range: tuple[float, float] | None = None) -> np.ndarray:
    """uint8 pixels: float in [0, 1] (or in `pixel_range`) scaled to 0-255 and rounded (at most
    1/510 of the range from the float)."""
    array = as_nchw(images)
    pixel_range = check_pixel_range(pixel_range)
    _check_range(array, pixel_range)
    if array.dtype == np.uint8:
        return array
    low, high = pixel_range if pixel_range is not None else (0.0, 1.0)
    unit = np.clip((array.astype(np.float64) - low) / (high - low), 0.0, 1.0)
    return np.rint(unit * 255.0).astype(np.uint8)
