"""The image fit's data steps over an image stream (dpgan.images.stream), a block at a time.

The same releases as for images held in memory (dpgan.images.fit_kind, dpgan.images.labels), made
from sums instead of arrays, so memory stays flat in N:
1. one counting pass: each image is read by its own rule and adds 1 to one cell, its (shape, label)
   if kept, its reason if dropped. The cells are sums over blocks (and over torchrun's ranks,
   `ImageStream.reduce`, before any noise), so the counts are the in-memory reader's;
2. the shape's release (a folder without a declared shape: partition selection over the shapes'
   counts, dpgan.images.labels.release_shape) and the tally's release (kept per label, dropped per
   reason, the label set by partition selection without a public class list): one Gaussian each,
   from the counts summed, noise drawn once, in the same order and from the same stream as in memory;
3. the model's passes (`VectorBlocks`): each pass reads the blocks again, keeps the images of the
   released shape whose label was released, scaled to [-1, 1] as `image_units` scales them.

Public facts stay public: the cells' keys come from public structure (a folder's label subfolders,
the shapes C ∈ {1, 3}, sides 1..MAX_SIDE) or, for an ``.npy``'s labels under torchrun, from every
rank reading the whole labels file; a key whose count is 0 has no cell, as in memory. Nothing a
block holds decides which blocks are read, how big they are or in what order.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from dpgan.images.checks import LABEL_REASON, MAX_SIDE, OTHER_SHAPE_REASON, label_texts, sort_label_names, to_unit_range
from dpgan.images.details import ImageDetails, check_conv_shape
from dpgan.images.labels import ReleasedLabels, release_shape
from dpgan.images.settings import SHAPE_SHARE, ImageSettings
from dpgan.images.stream import ImageStream
from dpgan.model import KindData
from dpgan.recipes.images import ImageRecipe
from dpgan.statistics.blocks import VectorBlocks
from dpgan.training.context import FitContext

Shape = tuple[int, int, int]


class StreamedKind(Protocol):
    """What the releases read in blocks need of the image kind (dpgan.images.fit_kind.ImageKind,
    which dispatches here: a protocol, so this module does not import it back)."""

    declared_shape: Shape | None
    conditional: bool
    recipe: ImageRecipe
    networks: ImageSettings
    pixel_range: tuple[float, float] | None

    def release_tally(
        self, ctx: FitContext, label_names: list[str] | None, codes: np.ndarray | None, images: int,
        reasons: tuple[str, ...], dropped: dict[str, int], form: tuple[str, tuple[float, float] | None],
        label_counts: np.ndarray | None = None,
    ) -> ReleasedLabels: ...  # fmt: skip


@dataclass(frozen=True)
class StreamCounts:
    """The counting pass, summed over blocks and ranks: kept images per (shape, label) and dropped
    per reason (private counts: released only through dpgan.images.labels)."""

    kept: dict[tuple[Shape, str | None], int]
    dropped: dict[str, int]

    def shapes(self) -> dict[Shape, int]:
        """Kept images per shape (for release_shape)."""
        out: Counter[Shape] = Counter()
        for (shape, _), count in self.kept.items():
            out[shape] += count
        return {shape: out[shape] for shape in sorted(out) if out[shape] > 0}

    def at(self, shape: Shape, names: list[str]) -> tuple[np.ndarray, int, int]:
        """Kept images of `shape` per label name, all kept images of `shape`, and those of other shapes."""
        here = np.array([self.kept.get((shape, name), 0) for name in names], dtype=np.float64)
        total = sum(count for (s, _), count in self.kept.items() if s == shape)
        return here, total, sum(self.kept.values()) - total


def count_pass(stream: ImageStream, conditional: bool) -> StreamCounts:
    """One pass over this rank's blocks (nothing held but counts); the sums over ranks follow."""
    from dpgan.images.io import load_png

    kept: Counter[tuple[Shape, str | None]] = Counter()
    dropped: Counter[str] = Counter()
    for start, stop in stream.spans(stream.shape):
        if stream.array is not None:
            images, texts, ok = stream.npy_block(start, stop)
            assert stream.shape is not None
            if stream.dtype != "uint8":  # float pixels: the range rule's reason comes first (open_npy)
                dropped[stream.reasons[0]] += int((~ok).sum())
            if texts is None:
                kept[(stream.shape, None)] += int(ok.sum())
                continue
            for text, good in zip(texts, ok):
                if good and text is None:
                    dropped[LABEL_REASON] += 1
                elif good:
                    kept[(stream.shape, text if conditional else None)] += 1
            continue
        for label, path in stream.files.entries(start, stop):
            pixels = load_png(path, stream.shape)
            if isinstance(pixels, str):
                dropped[pixels] += 1
            else:
                kept[(tuple(int(s) for s in pixels.shape), label if conditional else None)] += 1  # type: ignore[index]
    return StreamCounts(dict(kept), dict(dropped))


def candidate_labels(stream: ImageStream, counts: StreamCounts, conditional: bool) -> list[str]:
    """The label keys every rank agrees on, in `label_key` order: a folder's label subfolders
    (public), or an .npy's labels (one process: those counted; under torchrun every rank reads the
    whole labels file, so the keys are the same on every rank without a collective)."""
    if not conditional or not stream.labelled:
        return []
    if stream.array is None:
        return sort_label_names(stream.files.labels())
    if stream.world == 1:
        return sort_label_names({label for _, label in counts.kept if label is not None})
    assert stream.label_array is not None
    seen: set[str] = set()
    size, total = stream.block_size(stream.shape), len(stream)
    for start in range(0, total, size):
        block = stream.label_array.rows(start, min(start + size, total))
        seen.update(t for t in label_texts(block, len(block)) if t is not None)
    return sort_label_names(seen)


def _shape_cell(shape: Shape) -> int:
    c, h, w = shape
    return ((0 if c == 1 else 1) * MAX_SIDE + h - 1) * MAX_SIDE + w - 1


def summed_shapes(stream: ImageStream, counts: StreamCounts) -> dict[Shape, int]:
    """Kept images per shape over every rank: one process's dict, or a dense vector over every
    possible shape (2 × MAX_SIDE², public keys) summed over the ranks."""
    mine = counts.shapes()
    if stream.world == 1:
        return mine
    dense = np.zeros(2 * MAX_SIDE * MAX_SIDE, dtype=np.float64)
    for shape, count in mine.items():
        dense[_shape_cell(shape)] = count
    dense = stream.reduce({"shapes": dense})["shapes"]
    out = {}
    for cell in np.flatnonzero(dense):
        rest, w = divmod(int(cell), MAX_SIDE)
        c, h = divmod(rest, MAX_SIDE)
        out[(1 if c == 0 else 3, h + 1, w + 1)] = int(round(dense[cell]))
    return dict(sorted(out.items()))


def summed_tally(
    stream: ImageStream, counts: StreamCounts, shape: Shape, names: list[str], chosen_by_dp: bool
) -> tuple[np.ndarray, int, dict[str, int]]:
    """Kept images of `shape` per label name, in all, and dropped per reason, over every rank; the
    layout's own drops (`listed`, known to every rank) added once, after the sum."""
    here, total, others = counts.at(shape, names)
    reasons = stream.reasons
    dropped = np.array([counts.dropped.get(r, 0) for r in reasons], dtype=np.float64)
    if chosen_by_dp:  # images of a shape that was not released: dropped as the in-memory `select` drops them
        dropped[reasons.index(OTHER_SHAPE_REASON)] += others
    summed = stream.reduce({"kept": here, "total": np.array([total], dtype=np.float64), "dropped": dropped})
    listed = dict(stream.listed)
    out = {r: int(round(c)) + listed.get(r, 0) for r, c in zip(reasons, summed["dropped"])}
    return summed["kept"], int(round(summed["total"][0])), out


def unit_blocks(stream: ImageStream, shape: Shape, released: ReleasedLabels, conditional: bool) -> VectorBlocks:
    """The model's passes: each reads this rank's blocks again and yields the kept images of the
    released shape as (n, C·H·W) pixels in [-1, 1] (float32 ops, as `image_units`) with their codes
    in the released label order; images whose label was not released are left out."""
    position = {name: code for code, name in enumerate(released.names)}
    labelled = conditional and stream.labelled

    def read() -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        for block in stream.kept(shape):
            unit = to_unit_range(block.images, stream.pixel_range)
            values = (unit * np.float32(2.0) - np.float32(1.0)).reshape(len(unit), math.prod(shape))
            if not labelled:
                yield values, None
                continue
            assert block.labels is not None
            codes = np.fromiter((position.get(name, -1) for name in block.labels), dtype=np.int64, count=len(values))
            keep = codes >= 0
            yield (values, codes) if keep.all() else (values[keep], codes[keep])

    return VectorBlocks(math.prod(shape), read, stream.reduce)


def release_stream(kind: StreamedKind, ctx: FitContext, stream: ImageStream) -> KindData:
    """The image kind's data releases (dpgan.images.fit_kind.ImageKind.release_data) from a stream
    read in blocks: the counts summed over blocks and ranks, the shape's and the tally's releases,
    then the model's units as `VectorBlocks` (module docstring)."""
    if stream.shape is None and kind.declared_shape is not None:
        stream = replace(stream, shape=kind.declared_shape)  # others dropped from the header, as read_images does
    if not kind.conditional:
        stream = stream.unlabelled()
    counts = count_pass(stream, kind.conditional)
    if stream.shape is not None:
        shape, shape_source = stream.shape, "public" if kind.declared_shape is None else "declared"
    else:
        shapes = summed_shapes(stream, counts)
        shape = release_shape(shapes, target=ctx.target(SHAPE_SHARE), ledger=ctx.ledger, rng=ctx.rng)
        check_conv_shape(kind.recipe, shape, kind.networks)  # post-processing of the DP release
        shape_source = "dp"
        ctx.spend(SHAPE_SHARE)
    labelled = kind.conditional and stream.labelled
    names = candidate_labels(stream, counts, kind.conditional)
    kept, total, dropped = summed_tally(stream, counts, shape, names, shape_source == "dp")
    form = ("uint8", None) if stream.dtype == "uint8" else ("float", kind.pixel_range or stream.pixel_range)
    released = kind.release_tally(
        ctx, names if labelled else None, None, total, stream.reasons, dropped, form,
        label_counts=kept if labelled else None,
    )  # fmt: skip
    details = ImageDetails(shape, shape_source, released, *form)
    return KindData(unit_blocks(stream, shape, released, kind.conditional), released.total, details)


__all__ = [
    "StreamCounts",
    "release_stream",
    "candidate_labels",
    "count_pass",
    "summed_shapes",
    "summed_tally",
    "unit_blocks",
]
