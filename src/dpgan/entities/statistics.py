"""The entity kind's DP statistics models: "linked" (the default) and its "independent" baseline.

What is released, each a Gaussian histogram at one σ calibrated so that the ledger reaches the
whole target (FitBudget.whole_target), each entry's noise std σ·Δ with Δ its L2 sensitivity to
adding or removing one entity with all its rows:

1. the parents: with a link column (a categorical parent column), its 1-way histogram and the 2-way
   histogram of (link, c) for every other parent column c (a star tree rooted at the link);
   without one, every column's 1-way histogram. One entity is one parent row: +1 in one cell of
   each of the d_p histograms, Δ = √d_p;
2. events per entity: the histogram of (link cell, count bin) of every entity, its count n of
   readable events binned exactly from 0 to k and in bins growing by 1.25 above (to a public cap;
   none above k with `counts_above_k` off):
   one entity in one cell, Δ = 1. The count is one number per entity, so n beyond k costs nothing
   more: the model draws counts above k as they are;
3. with a time column: (count bucket, span bin) and (span bin, first-time bin) of every entity with
   events: one entity in at most one cell of each, Δ = √2;
4. the event columns: with `event_pairs="none"`, for each event column j the histogram of (link
   cell, position bucket, cell of j); with "chain", the first column's so, and each next column's
   2-way table with the one before it in schema order, given the link: (link cell, cell of j-1,
   cell of j); "pooled" (the default, chosen on validation) the same pairs over all entities,
   without the link. The link cell is split by the entity's count group when `count_groups` > 1.
   Each over the events read (at most k per entity), each event weighing 1/k. Why 1/k: one
   entity adds at most k events, so it moves each column's table by at most k·(1/k) = 1 in L1
   and hence by at most 1 in L2 (in raw counts: the sensitivity k of counts an entity can add to
   one cell k times, stated in units of the noise). Stacked over d_e columns:
   Δ = √d_e. The position bucket (an event's place in its entity's history, in equal parts), the
   link and the chain's pairs change nothing: all of the entity's events are in the one table per
   column (a pair's table counts each event once, in the cell of its two values).
5. with `own_values`: each entity's own value of every event column and its share (own_values.py):
   one cell per entity and column whatever its count, Δ = √d_e.

The link column, when the user names none, is chosen with DP before these (link_choice.py: the
exponential mechanism at LINK_SHARE of ε, its own ledger entry; `choose_link=False`: the parents'
first categorical column, free).

The independent baseline releases the same with the link cut (the count and event tables have one
group): parents and events drawn without their link.

Sampling (post-processing, free): a parent row from the star tree; a count from its link's count
histogram (uniform inside a bin); a span from the count's bucket, a first time from the span's bin;
the entity's times are its first time, its last (first + span) and uniform draws between, sorted;
each event's first column given its link and position, each next one from its pair's table given
the link and the column before ("none": each given the link and position, independently).
Noisy counts below THRESHOLD_STDS noise stds are set to 0 and the rest normalised; an all-zero row
falls back to the marginal over its condition (then uniform); a non-nullable column's missing cell gets no mass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgan.entities.blocks import EntityReads, summed_histograms
from dpgan.entities.columns import ColumnCells
from dpgan.entities.histograms import draw as _draw
from dpgan.entities.histograms import normalised as _normalised
from dpgan.entities.histograms import table as _table
from dpgan.entities.link_choice import LINK_SHARE, choose_link, link_candidates, link_tables, utilities_of
from dpgan.entities.own_values import OWN, SHARE_BINS, apply_own_values, own_tables
from dpgan.entities.reader import EntityRead
from dpgan.entities.schema import EntitySchema
from dpgan.entities.settings import EntitySettings
from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.releases import charge_gaussian

COUNT_GROWTH = 1.25
# a noisy count below this many noise stds is taken as 0: an empty cell's noise, clipped at 0, would
# otherwise add about 0.4 std of mass to every empty cell (the count bins above k are mostly empty)
THRESHOLD_STDS = 2.0
COUNT_BUCKETS = 12  # count buckets of the span: n = 1, 2-3, 4-7, ..., 2^11 and more
PARENTS, COUNTS, TIMES, EVENTS = (
    "entity parents (link and 2-way tables)",
    "events per entity",
    "entity time span and first time",
    "event columns per link and position",
)


def count_edges(k: int, above_k: bool = True) -> np.ndarray:
    """The count bins' edges: 0, 1, ..., k + 1 (one bin per count up to k), then each next edge at
    least 1.25 times the last, up to the cap max(64k, 1024) (the last bin holds everything above).
    Without `above_k` (the public fact that no entity has more than k events, e.g. a series set's
    documented longest length) the table stops at k: an entity with more is counted as k, and no
    noise cell above k can draw a count no entity has (on the vowels set's validation split, 7 % of
    the synthetic utterances had drawn hundreds of frames and held three quarters of all frames)."""
    cap = max(64 * k, 1024) if above_k else k + 1
    edges = list(range(k + 2))
    while edges[-1] < cap:
        edges.append(min(cap, max(edges[-1] + 1, math.ceil(edges[-1] * COUNT_GROWTH))))
    return np.array(edges, dtype=np.int64)


def count_bucket(counts: np.ndarray) -> np.ndarray:
    """0 for n ≤ 1, then ⌊log2 n⌋, at most COUNT_BUCKETS - 1."""
    return np.minimum(np.floor(np.log2(np.maximum(counts, 1))), COUNT_BUCKETS - 1).astype(np.int64)


def count_group(counts: np.ndarray, groups: int) -> np.ndarray:
    """The event tables' group of an entity by its count n of events: 1-3, 4-15, 16-63, ... (a factor
    of 4 each), the last one holding the rest; 0 for all when `groups` is 1."""
    return np.minimum(np.floor(np.log2(np.maximum(counts, 1)) / 2), groups - 1).astype(np.int64)


def position_bucket(position: np.ndarray, total: np.ndarray, buckets: int) -> np.ndarray:
    return np.minimum((buckets * position) // np.maximum(total, 1), buckets - 1).astype(np.int64)


@dataclass
class Sampled:
    """Entities drawn from the model: parent cells, counts, times, events (owner, cells, times)."""

    parent_codes: np.ndarray
    counts: np.ndarray
    owner: np.ndarray
    event_codes: np.ndarray
    times: np.ndarray | None


class EntityStatistics:
    """The released tables (probabilities, post-processed) and how to sample from them."""

    def __init__(
        self, schema: EntitySchema, settings: EntitySettings, arrays: dict[str, np.ndarray], *, link: int | None = None
    ) -> None:
        """`link`: the link chosen with DP (link_choice.py); without it, `link_index`'s rule."""
        self.schema, self.settings, self.arrays_ = schema, settings, arrays
        self.parent_cells = [ColumnCells.of(c, settings.bins) for c in schema.parents.columns]
        self.event_cells = [ColumnCells.of(c, settings.bins) for c in schema.events.columns]
        self.link = link_index(schema, settings) if link is None else link
        if self.link is not None and self.parent_cells[self.link].spec.is_numeric:
            raise ValueError("the link must be a categorical or boolean parent column")
        self.edges = count_edges(schema.max_events, settings.counts_above_k)

    # ------------------------------------------------------------------ release
    @classmethod
    def release(
        cls,
        read: EntityRead | EntityReads,
        schema: EntitySchema,
        settings: EntitySettings,
        *,
        ledger: PrivacyLedger,
        target: ShareTarget,
        rng: np.random.Generator,
    ) -> EntityStatistics:
        """The link's choice (when there is one), then the releases of the module docstring at one
        σ (`len(releases)` Gaussian entries) on what is left of the target; `read` whole or in
        blocks (blocks.py: each exact histogram summed over them before its one noise draw)."""
        reads = read if isinstance(read, EntityReads) else EntityReads.whole(read)
        model = cls(schema, settings, {}, link=cls.chosen_link(reads, schema, settings, ledger, target, rng))
        histograms = summed_histograms(model, reads)
        sigma = target.sigma(1.0, len(histograms), ledger.entries)
        arrays: dict[str, np.ndarray] = {}
        for name, (parts, sensitivity, note) in histograms.items():
            charge_gaussian(ledger, name, sigma, note=f"Δ = {note} = {sensitivity:.4g}")
            flat = np.concatenate([p.ravel() for p in parts.values()])
            noisy = noisy_counts(flat, sigma * sensitivity, rng)
            at = 0
            for key, part in parts.items():
                arrays[key] = noisy[at : at + part.size].reshape(part.shape)
                at += part.size
        stds = {key: sigma * sensitivity for parts, sensitivity, _ in histograms.values() for key in parts}
        model.arrays_ = model.post_process(arrays, stds)
        return model

    @staticmethod
    def chosen_link(
        reads: EntityReads,
        schema: EntitySchema,
        settings: EntitySettings,
        ledger: PrivacyLedger,
        target: ShareTarget,
        rng: np.random.Generator,
    ) -> int | None:
        """The link drawn with DP (link_choice.py) when none is named, the choice is on and there are
        two candidates or more (public facts all); else None (`link_index`'s rule, free)."""
        candidates = link_candidates([c.is_numeric for c in schema.parents.columns])
        if settings.link is not None or not settings.choose_link or len(candidates) < 2:
            return None
        sizes = [ColumnCells.of(c, settings.bins).size for c in schema.parents.columns]
        event_sizes = [ColumnCells.of(c, settings.bins).size for c in schema.events.columns]
        tables = reads.sum(lambda r: link_tables(r.parent_codes, sizes, candidates, count_bucket(r.counts),
                                                 COUNT_BUCKETS, r.owner, r.event_codes, event_sizes))  # fmt: skip
        utilities = utilities_of(tables, len(candidates), len(event_sizes), schema.max_events)
        return choose_link(utilities, candidates, len(event_sizes), LINK_SHARE * target.epsilon, ledger, rng)

    def histograms(self, read: EntityRead) -> dict[str, tuple[dict[str, np.ndarray], float, str]]:
        """Every release's exact histograms (private), its L2 sensitivity and its argument in words."""
        p = read.parent_codes
        groups = self.groups(p)
        parents: dict[str, np.ndarray] = {}
        if self.link is not None:
            parents["parent_link"] = np.bincount(p[:, self.link], minlength=self.parent_cells[self.link].size)
        for j, cells in enumerate(self.parent_cells):
            if j == self.link:
                continue
            if self.link is None:
                parents[f"parent_{j}"] = np.bincount(p[:, j], minlength=cells.size)[None, :].astype(np.float64)
            else:
                parents[f"parent_{j}"] = _table(p[:, self.link], p[:, j], self.parent_cells[self.link].size, cells.size)
        d_p = len(parents)
        out = {PARENTS: (parents, math.sqrt(d_p), f"√d_p = √{d_p} (one parent row: one cell of each)")}
        count_bin = _count_bin(read.counts, self.edges)
        out[COUNTS] = ({"counts": _table(groups, count_bin, self.n_groups, len(self.edges) - 1)}, 1.0,
                       "1 (one entity: one cell)")  # fmt: skip
        if self.schema.time is not None:
            has = read.counts > 0
            span_bin, start_bin = self.time_bins(read.span[has], read.start[has])  # type: ignore[index]
            bins = self.settings.time_bins
            times = {
                "span": _table(count_bucket(read.counts[has]), span_bin, COUNT_BUCKETS, bins),
                "start": _table(span_bin, start_bin, bins, bins),
            }
            out[TIMES] = (times, math.sqrt(2.0), "√2 (one entity: one cell of each)")
        k, buckets = self.schema.max_events, self.settings.position_buckets
        bucket = position_bucket(read.position, read.read[read.owner], buckets)
        entity_group = groups * self.settings.count_groups + count_group(read.counts, self.settings.count_groups)
        event_group = entity_group[read.owner] * buckets + bucket
        events: dict[str, np.ndarray] = {}
        codes = read.event_codes
        for j, cells in enumerate(self.event_cells):
            if self.paired(j):  # (link cell, cell of j - 1, cell of j)
                before = self.event_cells[j - 1].size
                pair_groups = self.pair_groups
                rows = (entity_group[read.owner] % pair_groups) * before + codes[:, j - 1]
                table = _table(rows, codes[:, j], pair_groups * before, cells.size) / k
                events[f"event_{j}"] = table.reshape(pair_groups, before, cells.size)
            else:
                table = _table(event_group, codes[:, j], self.event_groups * buckets, cells.size) / k
                events[f"event_{j}"] = table.reshape(self.event_groups, buckets, cells.size)
        d_e = len(events)
        out[EVENTS] = (events, math.sqrt(d_e), f"√d_e = √{d_e} (≤ k events of weight 1/k: ≤ 1 per column, k = {k})")
        if self.settings.own_values:  # own_values.py: one entity, one cell per column
            own = own_tables(groups, read.owner, codes, [c.size for c in self.event_cells], self.n_groups)
            out[OWN] = (own, math.sqrt(d_e), f"√d_e = √{d_e} (one entity: one cell per column)")
        return out

    def paired(self, j: int) -> bool:
        """Whether event column j is drawn from its pair with column j - 1 (the chain)."""
        return j > 0 and self.settings.event_pairs != "none"

    @property
    def pair_groups(self) -> int:
        """The chain's pair tables' groups: the event tables' ("chain"), or one ("pooled")."""
        return self.event_groups if self.settings.event_pairs == "chain" else 1

    @property
    def n_groups(self) -> int:
        """The link's cells when the events are linked to it, else 1."""
        return self.parent_cells[self.link].size if self.link is not None and self.settings.linked else 1

    @property
    def event_groups(self) -> int:
        """The event tables' groups: the link's cells (or 1) times the count groups."""
        return self.n_groups * self.settings.count_groups

    def groups(self, parent_codes: np.ndarray) -> np.ndarray:
        if self.n_groups == 1:
            return np.zeros(len(parent_codes), dtype=np.int64)
        return parent_codes[:, self.link]

    def time_bins(self, span: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        low, high = self.schema.time.bounds  # type: ignore[union-attr]
        bins = self.settings.time_bins
        span_bin = np.clip((span / (high - low) * bins).astype(np.int64), 0, bins - 1)
        start_bin = np.clip(((start - low) / (high - low) * bins).astype(np.int64), 0, bins - 1)
        return span_bin, start_bin

    def post_process(self, noisy: dict[str, np.ndarray], stds: dict[str, float]) -> dict[str, np.ndarray]:
        """Noisy counts → probabilities along the last axis (the module docstring's rule)."""
        out = {}
        for key, values in noisy.items():
            column = self._column_of(key)
            clipped = np.where(values >= THRESHOLD_STDS * stds[key], values, 0.0)
            if column is not None and not column.spec.nullable:
                clipped[..., column.missing] = 0.0
                if column.size == 1:
                    clipped[..., 0] = 1.0
            out[key] = _normalised(clipped)
        return out

    def _column_of(self, key: str) -> ColumnCells | None:
        table, _, index = key.partition("_")
        if table == "parent":
            return self.parent_cells[self.link if index == "link" else int(index)]  # type: ignore[index]
        if table == "event":
            return self.event_cells[int(index)]
        return None

    # ------------------------------------------------------------------ sample
    def sample(self, n: int, rng: np.random.Generator) -> Sampled:
        a = self.arrays_
        parents = np.zeros((n, len(self.parent_cells)), dtype=np.int64)
        if self.link is not None:
            parents[:, self.link] = _draw(np.broadcast_to(a["parent_link"], (n, a["parent_link"].size)), rng)
        for j in range(len(self.parent_cells)):
            if j != self.link:
                table = a[f"parent_{j}"]
                rows = parents[:, self.link] if self.link is not None else np.zeros(n, dtype=np.int64)
                parents[:, j] = _draw(table[rows], rng)
        groups = self.groups(parents)
        count_bin = _draw(a["counts"][groups], rng)
        low_edge, high_edge = self.edges[count_bin], np.maximum(self.edges[count_bin + 1], self.edges[count_bin] + 1)
        counts = low_edge + np.floor(rng.random(n) * (high_edge - low_edge)).astype(np.int64)
        owner = np.repeat(np.arange(n), counts)
        position = np.arange(len(owner)) - np.repeat(np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        times = self._times(counts, owner, position, rng) if self.schema.time is not None else None
        buckets = self.settings.position_buckets
        bucket = position_bucket(position, counts[owner], buckets)
        events = np.zeros((len(owner), len(self.event_cells)), dtype=np.int64)
        entity_group = groups * self.settings.count_groups + count_group(counts, self.settings.count_groups)
        for j in range(len(self.event_cells)):
            table = a[f"event_{j}"]
            given = events[:, j - 1] if self.paired(j) else bucket
            rows = entity_group[owner] % self.pair_groups if self.paired(j) else entity_group[owner]
            events[:, j] = _draw(table[rows, given], rng)
        if self.settings.own_values:
            events = apply_own_values(a, groups, owner, events, rng)
        return Sampled(parents, counts, owner, events, times)

    def _times(
        self, counts: np.ndarray, owner: np.ndarray, position: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """Each entity's first time and span, and its events' times: first, last and sorted uniform
        draws between."""
        a, bins = self.arrays_, self.settings.time_bins
        low, high = self.schema.time.bounds  # type: ignore[union-attr]
        width = (high - low) / bins
        span_bin = _draw(a["span"][count_bucket(counts)], rng)
        span = np.where(counts > 1, (span_bin + rng.random(len(counts))) * width, 0.0)
        start_bin = _draw(a["start"][span_bin], rng)
        start = np.minimum(low + (start_bin + rng.random(len(counts))) * width, high - span)
        inner = rng.random(len(owner))
        inner[position == 0] = 0.0
        last = position == counts[owner] - 1
        inner[last & (position > 0)] = 1.0
        order = np.lexsort((inner, owner))
        inner = inner[order]
        return start[owner] + inner * span[owner]

    # ------------------------------------------------------------------ files
    def arrays(self) -> dict[str, np.ndarray]:
        """What was released (post-processed), and nothing else."""
        return dict(self.arrays_)

    def form(self) -> dict[str, Any]:
        return {"link": self.link, "groups": self.n_groups, "count_edges": self.edges.tolist(),
                "event_pairs": self.settings.event_pairs}  # fmt: skip

    def expected_shapes(self) -> dict[str, tuple[int, ...]]:
        model = EntityStatistics(self.schema, self.settings, {}, link=self.link)
        shapes: dict[str, tuple[int, ...]] = {}
        if self.link is not None:
            shapes["parent_link"] = (self.parent_cells[self.link].size,)
        rows = self.parent_cells[self.link].size if self.link is not None else 1
        for j, cells in enumerate(self.parent_cells):
            if j != self.link:
                shapes[f"parent_{j}"] = (rows, cells.size)
        shapes["counts"] = (model.n_groups, len(self.edges) - 1)
        if self.schema.time is not None:
            bins = self.settings.time_bins
            shapes["span"], shapes["start"] = (COUNT_BUCKETS, bins), (bins, bins)
        for j, cells in enumerate(self.event_cells):
            given = self.event_cells[j - 1].size if self.paired(j) else self.settings.position_buckets
            shapes[f"event_{j}"] = (model.pair_groups if self.paired(j) else model.event_groups, given, cells.size)
            if self.settings.own_values:
                shapes[f"own_{j}"] = (model.n_groups, cells.size * SHARE_BINS)
        return shapes

    @classmethod
    def from_arrays(
        cls, schema: EntitySchema, settings: EntitySettings, arrays: dict[str, np.ndarray], *, link: int | None = None
    ) -> EntityStatistics:
        """The model from its saved arrays and its saved link (its form's), strictly (ValueError on a
        missing, misshapen or improper array or link)."""
        if link is not None and (isinstance(link, bool) or not isinstance(link, int)
                                 or not 0 <= link < len(schema.parents.columns)):  # fmt: skip
            raise ValueError("the saved link is not a parent column's place")
        model = cls(schema, settings, {}, link=link)
        expected = model.expected_shapes()
        if set(arrays) != set(expected):
            raise ValueError(f"arrays {sorted(arrays)} where {sorted(expected)} were expected")
        for key, shape in expected.items():
            value = np.asarray(arrays[key], dtype=np.float64)
            if value.shape != shape or not np.isfinite(value).all() or (value < 0).any():
                raise ValueError(f"array {key!r} is not of shape {shape} with finite non-negative values")
            if not np.allclose(value.sum(axis=-1), 1.0):
                raise ValueError(f"array {key!r} does not hold probabilities")
        model.arrays_ = {key: np.asarray(arrays[key], dtype=np.float64) for key in expected}
        return model


def link_index(schema: EntitySchema, settings: EntitySettings) -> int | None:
    """The link column's place among the parents' columns: the one named, else the first categorical
    or boolean one (schema order: public), else None."""
    names = schema.parents.names
    if settings.link is not None:
        if settings.link not in names:
            raise InputError(f"link {settings.link!r} is not one of the parents' modelled columns")
        if schema.parents[settings.link].is_numeric:
            raise InputError(f"link {settings.link!r} must be a categorical or boolean parent column")
        return names.index(settings.link)
    return next((j for j, c in enumerate(schema.parents.columns) if not c.is_numeric), None)


def _count_bin(counts: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.clip(np.searchsorted(edges, counts, side="right") - 1, 0, len(edges) - 2)


__all__ = ["COUNTS", "EVENTS", "EntityStatistics", "PARENTS", "Sampled", "TIMES", "count_edges", "link_index"]
