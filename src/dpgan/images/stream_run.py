"""Where an image stream's fit runs: one process, or every rank of torchrun in lockstep.

Under torchrun (dpgan.privacy.distributed) the image statistics model ("gaussian") is fitted by
every rank at once: each rank reads its share of the blocks (dpgan.images.stream: block i on rank
i mod K), the counts and the model's running sums are added over the ranks before any noise, and
every rank draws the same noise from rank 0's seed, so every rank holds the one-process releases
and the one-process ledger; only rank 0 writes files (the caller's part). Before anything is read
the ranks check that they opened the same input (a digest of its public structure, compared
between the processes only) and agree on the seed (ProcessGroupContext.lockstep_seed, as every
kind's data-parallel fit).

A GAN recipe holds its units in memory and its steps are not split over ranks for images: it is
refused under torchrun (one line), and in one process a stream is read whole first.
"""

from __future__ import annotations

from dpgan.errors import InputError
from dpgan.images.checks import ImageGroups, ImageSet
from dpgan.images.stream import ImageStream
from dpgan.privacy.distributed import ProcessGroupContext
from dpgan.recipes.images import ImageRecipe

STATISTICS = "released-statistics"  # the recipes whose model sums over blocks (dpgan.images.fit_kind)


def public_stream(
    stream: ImageStream,
    labels: object | None,
    conditional: bool,
    declared_shape: tuple[int, int, int] | None,
    pixel_range: tuple[float, float] | None,
) -> ImageStream:
    """A stream's public structure against the synthesizer's settings (dpgan.images.fit_kind.public_input)."""
    if labels is not None:
        raise InputError("an image set opened by open_images carries its own labels: pass no labels")
    if conditional and not stream.labelled:
        raise InputError(
            "a conditional model needs labelled images (label subfolders, or NAME.labels.npy beside NAME.npy), "
            "or conditional=False"
        )
    if declared_shape is not None and stream.shape is not None and stream.shape != declared_shape:
        raise InputError("the images' shape (C, H, W) is not the declared image_shape")
    if pixel_range is not None and stream.dtype == "uint8":
        raise InputError("pixel_range is for float images: these are uint8 (or PNGs), 0-255 already")
    if pixel_range is not None and stream.pixel_range is not None and stream.pixel_range != pixel_range:
        raise InputError("the images were opened with another pixel_range than the synthesizer's: give the same")
    return stream


def refuse_distributed(recipe: ImageRecipe, given: object, context: ProcessGroupContext) -> None:
    """Under torchrun: only the statistics model, and only on an input read in blocks (public facts)."""
    if not context.distributed:
        return
    if recipe.strategy != STATISTICS:
        raise InputError(
            f"a distributed image fit (torchrun) is for the gaussian model only: fit --model {recipe.name} "
            "in one process"
        )
    if not isinstance(given, ImageStream):
        raise InputError(
            "a distributed image fit (torchrun) reads a PNG folder or an .npy in blocks: "
            "pass dpgan.images.open_images(path), not images in memory"
        )


def stream_input(recipe: ImageRecipe, stream: ImageStream) -> ImageStream | ImageSet | ImageGroups:
    """What a one-process fit reads: the stream itself for the statistics model, else the images
    read whole (a GAN's units are in memory), as dpgan.images.io.read_images reads them."""
    if recipe.strategy == STATISTICS:
        return stream
    if stream.array is not None:
        return stream.read_whole()
    from dpgan.images.io import read_images

    return read_images(stream.source, shape=stream.shape, labelled=stream.labelled)


__all__ = ["public_stream", "refuse_distributed", "stream_input"]
