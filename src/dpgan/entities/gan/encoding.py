"""One entity as one fixed-width vector: the GAN's unit, and its decoding back to cells and times.

The layout (`EntityLayout`) comes from the public schema alone (each column's cells, k, whether
there is a time column), so the width never depends on the data:

    [ parent cells, one one-hot per parent column | count bin (one-hot) | first time, span (each in
      [-1, 1]) | k event steps, each: one one-hot per event column, the time gap, the present flag ]

- the count n is of all the entity's readable events (as the statistics model reads it: one number
  per entity, whatever n), in the statistics model's count bins (dpgan.entities.statistics.count_edges:
  one bin per count from 0 to k, then bins growing by 1.25 up to the public cap max(64k, 1024)). A
  one-hot, not a number: measured first as one tanh number (log1p(n)/log1p(cap)), the GAN's counts
  missed the real distribution by KS 0.10 at ε = 3 and 0.30 at ε = 10 (bench/notes/36-entities.md);
- the first time and the span are fractions of the public window (dpgan.entities.schema.TimeSpec);
- the event steps are the (at most k) events the reader drew uniformly and kept in time order; an
  event's time is its place in the entity's span, f = (t - first)/span, and its gap is f minus the
  previous read event's f (the first's gap is its own f). A step past the entity's last read event
  is all zeros, its present flag 0: the flag goes 1…1 0…0, and its first 0 is the end flag.

The vector is what the critic's private step reads of one entity: one unit, one clipped gradient,
however many events the entity has (its events past k are not read; its count is one number).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from dpgan.entities.columns import ColumnCells
from dpgan.entities.reader import EntityRead
from dpgan.entities.schema import EntitySchema
from dpgan.entities.statistics import Sampled, count_edges
from dpgan.models.output_spans import SOFTMAX, TANH, OutputSpan


@dataclass(frozen=True)
class EntityLayout:
    """Widths and spans of one entity's vector, from the public schema and the `bins` setting."""

    parent_sizes: tuple[int, ...]
    event_sizes: tuple[int, ...]
    k: int
    timed: bool

    @classmethod
    def of(cls, schema: EntitySchema, bins: int) -> EntityLayout:
        parents = tuple(ColumnCells.of(c, bins).size for c in schema.parents.columns)
        events = tuple(ColumnCells.of(c, bins).size for c in schema.events.columns)
        return cls(parents, events, schema.max_events, schema.time is not None)

    @property
    def edges(self) -> np.ndarray:
        """The count bins' edges (public: from k alone)."""
        return count_edges(self.k)

    @property
    def count_bins(self) -> int:
        return len(self.edges) - 1

    @property
    def numbers(self) -> int:
        """The entity's numbers after its count bin: first time and span, with a time column."""
        return 2 if self.timed else 0

    @property
    def attribute_width(self) -> int:
        return sum(self.parent_sizes) + self.count_bins + self.numbers

    @property
    def step_width(self) -> int:
        """One event step: its cells, its gap (with a time column) and its present flag."""
        return sum(self.event_sizes) + (1 if self.timed else 0) + 1

    @property
    def width(self) -> int:
        return self.attribute_width + self.k * self.step_width

    def attribute_spans(self) -> list[OutputSpan]:
        """The attribute generator's heads: a softmax per parent column, a tanh per number."""
        spans, at = [], 0
        for j, size in enumerate(self.parent_sizes):
            spans.append(OutputSpan(SOFTMAX, at, size, f"parent_{j}"))
            at += size
        spans.append(OutputSpan(SOFTMAX, at, self.count_bins, "count"))
        at += self.count_bins
        for name in ("start", "span")[: self.numbers]:
            spans.append(OutputSpan(TANH, at, 1, name))
            at += 1
        return spans


def encode(read: EntityRead, layout: EntityLayout, schema: EntitySchema) -> torch.Tensor:
    """(E, width) float32: each kept entity's vector (the module docstring's layout). Private: only
    the critic's clipped step reads it."""
    entities = len(read.parent_codes)
    out = np.zeros((entities, layout.width), dtype=np.float32)
    at = 0
    for j, size in enumerate(layout.parent_sizes):
        out[np.arange(entities), at + read.parent_codes[:, j]] = 1.0
        at += size
    count_bin = np.clip(np.searchsorted(layout.edges, read.counts, side="right") - 1, 0, layout.count_bins - 1)
    out[np.arange(entities), at + count_bin] = 1.0
    at += layout.count_bins
    steps = np.zeros((len(read.owner), layout.step_width), dtype=np.float32)
    if layout.timed:
        low, high = schema.time.bounds  # type: ignore[union-attr]
        width = high - low
        has = read.counts > 0
        out[:, at] = np.where(has, 2.0 * (np.nan_to_num(read.start, nan=low) - low) / width - 1.0, -1.0)
        out[:, at + 1] = np.where(has, 2.0 * np.nan_to_num(read.span, nan=0.0) / width - 1.0, -1.0)
        span = np.nan_to_num(read.span, nan=0.0)[read.owner]
        first = np.nan_to_num(read.start, nan=low)[read.owner]
        place = np.where(span > 0, (read.event_times - first) / np.where(span > 0, span, 1.0), 0.0)  # type: ignore[operator]
        previous = np.where(read.position > 0, np.concatenate([[0.0], place[:-1]]), 0.0)
        steps[:, -2] = np.clip(place - previous, 0.0, 1.0)
    at = 0
    for j, size in enumerate(layout.event_sizes):
        steps[np.arange(len(steps)), at + read.event_codes[:, j]] = 1.0
        at += size
    steps[:, -1] = 1.0
    events = out[:, layout.attribute_width :].reshape(entities, layout.k, layout.step_width)
    events[read.owner, read.position] = steps
    return torch.from_numpy(out)


def decode(
    attributes: np.ndarray, steps: np.ndarray, layout: EntityLayout, schema: EntitySchema, rng: np.random.Generator
) -> Sampled:
    """Generated entities → cells, counts and times (post-processing). `attributes` (n, attribute
    width) hold the parent one-hots (already drawn) and the numbers; `steps` (n, k, step width) the
    event one-hots, gaps and present flags. The number of events is the present flags' prefix (the
    end flag ends it), at most k; an entity whose k steps are all present has the count its count
    number says (at least k): its events past the k generated ones are copies of uniformly drawn
    ones among those k (the k are a uniform sample of an entity's events), at uniform places in
    its span. Every entity's events come out in time order."""
    n = len(attributes)
    parents = np.zeros((n, len(layout.parent_sizes)), dtype=np.int64)
    at = 0
    for j, size in enumerate(layout.parent_sizes):
        parents[:, j] = attributes[:, at : at + size].argmax(axis=1)
        at += size
    present = (steps[:, :, -1] > 0.5).cumprod(axis=1).astype(bool)
    made = present.sum(axis=1)
    edges = layout.edges
    count_bin = attributes[:, at : at + layout.count_bins].argmax(axis=1)
    at += layout.count_bins
    low_edge, high_edge = edges[count_bin], np.maximum(edges[count_bin + 1], edges[count_bin] + 1)
    said = low_edge + np.floor(rng.random(n) * (high_edge - low_edge)).astype(np.int64)  # uniform in its bin
    counts = np.where(made == layout.k, np.maximum(said, layout.k), made)
    owner = np.repeat(np.arange(n), counts)
    position = np.arange(len(owner)) - np.repeat(np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    generated = position < layout.k
    source = np.where(generated, position, np.floor(rng.random(len(owner)) * layout.k).astype(np.int64))
    events = np.zeros((len(owner), len(layout.event_sizes)), dtype=np.int64)
    cells = steps[owner, source]
    at = 0
    for j, size in enumerate(layout.event_sizes):
        events[:, j] = cells[:, at : at + size].argmax(axis=1)
        at += size
    times = None
    if layout.timed:
        low, high = schema.time.bounds  # type: ignore[union-attr]
        width = high - low
        first = low + np.clip((attributes[:, at] + 1.0) / 2.0, 0.0, 1.0) * width
        span = np.minimum(np.clip((attributes[:, at + 1] + 1.0) / 2.0, 0.0, 1.0) * width, high - first)
        span = np.where(counts > 1, span, 0.0)
        place = np.clip(np.cumsum(steps[:, :, -2], axis=1), 0.0, 1.0)[owner, np.minimum(position, layout.k - 1)]
        place = np.where(generated, place, rng.random(len(owner)))
        times = first[owner] + place * span[owner]
        order = np.lexsort((position, times, owner))
        times, events = times[order], events[order]
    return Sampled(parents, counts, owner, events, times)


__all__ = ["EntityLayout", "decode", "encode"]
