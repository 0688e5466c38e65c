"""The image kind's released facts (`ImageDetails`) and what its networks need of the public image
shape (`check_conv_shape`): shared by the in-memory data releases (dpgan.images.fit_kind) and the
ones read in blocks (dpgan.images.stream_fit), which the kind dispatches to, so neither imports the
other's module back."""

from __future__ import annotations

from dataclasses import dataclass

from dpgan.errors import InputError
from dpgan.images.gaussian import check_basis_size
from dpgan.images.labels import ReleasedLabels
from dpgan.images.settings import ImageSettings
from dpgan.models.conv import halvings
from dpgan.recipes.images import ImageRecipe


@dataclass(frozen=True)
class ImageDetails:
    """The image kind's released facts: the shape (and where it came from), the released labels;
    and the public form of the input that samples come back in: the pixels' dtype ("uint8" or
    "float") and, for float, their declared range (None: [0, 1])."""

    shape: tuple[int, int, int]
    shape_source: str
    released: ReleasedLabels
    input_dtype: str
    pixel_range: tuple[float, float] | None = None

    @property
    def n_labels(self) -> int:
        return len(self.released.names)


def check_conv_shape(recipe: ImageRecipe, shape: tuple[int, int, int], net: ImageSettings) -> None:
    """What the recipe's networks need of the (public) image shape."""
    if recipe.architecture == "conv" and min(halvings(shape[1]), halvings(shape[2])) == 0:
        raise InputError("conv recipes need even image sides of at least 8 pixels; use recipe='dp-cgan'")
    check_basis_size(recipe.architecture, shape, net.gaussian_basis, net.mixture_size)


__all__ = ["ImageDetails", "check_conv_shape"]
