"""A list of images is read element by element: no element decides a dtype, a shape or a refusal
(dpgan.images.lists; issue 49 item 1).

On the old reader one ``np.asarray`` of the list chose the dtype and the shape from every element:
one float image among uint8 ones made the set float (the uint8 images then failed the [0, 1] rule),
one image of another size refused the fit. Each test compares two lists that differ in ONE image
(as tests/images/test_image_unit_rule.py does for arrays and folders): same refusal-or-not, same reasons,
same released shape and labels, and, where the added image is dropped, the same release with the
tally one higher in that image's cell.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgan.errors import InputError
from dpgan.images.checks import LABEL_REASON, OTHER_SHAPE_REASON, PIXELS_REASON, ImageGroups, ImageSet
from dpgan.images.labels import SHAPE_EVENT
from dpgan.images.lists import NOT_AN_IMAGE_REASON, list_reasons
from dpgan.images.reading import check_images
from test_image_unit_rule import DIGITS, assert_one_more_dropped, assert_same_release, digits, fit, refusal

__all__ = ["digits"]  # the fixture, shared with the unit-rule tests

FLOAT_OUT_OF_RANGE = np.full((1, 8, 8), 0.5, dtype=np.float32)
FLOAT_OUT_OF_RANGE[0, 3, 3] = 17.0  # a 0-255 float pixel: this image alone breaks the [0, 1] rule
NEIGHBOURS = {  # one element added to a list of uint8 digits, and the reason it is dropped
    "float image out of range": (FLOAT_OUT_OF_RANGE, PIXELS_REASON),
    "another size": (np.zeros((10, 10), dtype=np.uint8), OTHER_SHAPE_REASON),
    "int64 pixels": (np.zeros((8, 8), dtype=np.int64), NOT_AN_IMAGE_REASON),
    "channels last": (np.zeros((8, 8, 3), dtype=np.uint8), NOT_AN_IMAGE_REASON),
    "ragged rows": ([[0, 1], [2]], NOT_AN_IMAGE_REASON),
    "text": ("SECRET-42", NOT_AN_IMAGE_REASON),
}


def as_list(images: np.ndarray) -> list[np.ndarray]:
    return [image for image in images]  # (1, 8, 8) uint8 elements


def test_one_float_image_among_uint8_ones_changes_no_other_image() -> None:
    uint8 = [np.full((8, 8), 51, dtype=np.uint8), np.full((1, 8, 8), 255, dtype=np.uint8)]
    good = np.full((1, 8, 8), 0.25, dtype=np.float64)
    a, b = check_images(uint8, shape=(1, 8, 8)), check_images([*uint8, good], shape=(1, 8, 8))
    assert isinstance(a, ImageSet) and isinstance(b, ImageSet)
    assert a.reasons == b.reasons == list_reasons(False, None)  # fixed by the kind of input
    assert a.dropped == b.dropped == dict.fromkeys(a.reasons, 0)  # no uint8 image dropped
    assert a.images.dtype == b.images.dtype == np.float32  # a list's pixels: float in [0, 1], whatever it holds
    np.testing.assert_allclose(b.images[:, 0, 0, 0], [0.2, 1.0, 0.25])  # each element scaled by its own dtype


def test_a_list_of_several_shapes_is_grouped_not_refused() -> None:
    images = [np.zeros((8, 8), np.uint8), np.zeros((3, 8, 8), np.uint8), np.ones((1, 8, 8), np.float32)]
    read = check_images(images, ["a", "b", "a"])
    assert isinstance(read, ImageGroups) and read.counts() == {(1, 8, 8): 2, (3, 8, 8): 1}
    assert read.reasons == list_reasons(True, None) and LABEL_REASON in read.reasons
    with pytest.raises(InputError, match="several shapes"):
        read.images  # noqa: B018  (a look needs one shape)
    empty = read.select((1, 4, 4))  # a shape no element holds: the list's public dtype all the same
    assert len(empty) == 0 and empty.images.dtype == np.float32
    assert empty.dropped[OTHER_SHAPE_REASON] == 3


@pytest.mark.parametrize("case", list(NEIGHBOURS))
def test_one_element_more_at_a_declared_shape_is_dropped_and_the_fit_unchanged(digits, case) -> None:
    images, target = digits
    element, reason = NEIGHBOURS[case]
    a = fit(as_list(images), target, classes=DIGITS, image_shape=(1, 8, 8))
    b = fit([*as_list(images), element], np.append(target, 4), classes=DIGITS, image_shape=(1, 8, 8))
    assert_same_release(a, b)
    assert_one_more_dropped(a, b, reason)
    assert a.input_dtype == b.input_dtype == "float" and a.input_rank == b.input_rank == 4


def test_one_image_of_another_size_without_a_declared_shape_leaves_the_dp_shape_release(digits) -> None:
    """The old reader refused the second list ("mixed sizes") and fitted the first."""
    images, target = digits
    a = fit(as_list(images), target)
    b = fit([*as_list(images), np.zeros((10, 10), np.uint8)], np.append(target, 4))
    assert a.training["shape_source"] == b.training["shape_source"] == "dp"
    assert a.ledger.entries[0].name == SHAPE_EVENT and a.image_shape == b.image_shape == (1, 8, 8)
    assert_same_release(a, b)
    assert_one_more_dropped(a, b, OTHER_SHAPE_REASON)


def test_one_float_image_added_to_uint8_ones_keeps_the_refusal_and_the_labels(digits) -> None:
    """The old reader made the second list float: its uint8 digits were dropped and the DP label
    release refused the fit, while the first list fitted."""
    images, target = digits
    good = images[:1].astype(np.float64) / 255.0
    more = [*as_list(images), good[0]]
    settings = {"image_shape": (1, 8, 8), "epsilon": 100.0}  # the DP label set: each digit's ~40 images clear τ
    first = refusal(lambda: fit(as_list(images), target, **settings))
    second = refusal(lambda: fit(more, np.append(target, 4), **settings))
    assert first is None and second is None
    a, b = fit(as_list(images), target, **settings), fit(more, np.append(target, 4), **settings)
    assert a.label_names == b.label_names and a.image_shape == b.image_shape
    assert [e.name for e in a.ledger.entries] == [e.name for e in b.ledger.entries]  # N̂ (so q) moves by ~1
    assert a.released_units.dropped == b.released_units.dropped  # the added image is kept, nothing else moves
    assert a.sample(3, seed=0)[0].dtype == b.sample(3, seed=0)[0].dtype == np.float32
