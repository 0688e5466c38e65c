"""The entity-level event statistic: each entity's "own value" of an event column and how
concentrated its events are in it.

Why: events drawn column by column, one at a time, spread an entity's values the way the whole
population's are, while a real entity (a plane) keeps to one value (its carrier) for most of its
events; a two-sample test on entity summaries tells them apart at once.

What is released, per event column j: the histogram of (link cell, own value m, share bin) over the
entities with at least one event read, m the entity's most common cell of j among its events read
(at most k; ties to the lowest cell) and its share s = (events with m) / (events read), binned in
SHARE_BINS equal parts of (0, 1].

Sensitivity. Each entity contributes once per column, whatever its number of events: adding or
removing one entity (with all its rows, however many beyond k) moves exactly one cell of each
column's table by 1 (none when it has no events), so the d_e tables stacked move by √d_e in L2.
Its events beyond k are not read (reader.py), so they change nothing here. The link cell is the
entity's own parent value: it places the entity in one row, it does not add a cell.

Sampling (post-processing): each entity with events draws (m, share bin) given its link cell, its
share uniform in the bin; each of its events takes m with that probability, else keeps the cell
drawn as before (the event marginal, conditioned as the model conditions it).
"""

from __future__ import annotations

import numpy as np

from dpgan.entities.histograms import draw, table

SHARE_BINS = 5
OWN = "entity own values of the event columns"


def own_cells(owner: np.ndarray, codes: np.ndarray, n_entities: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Each entity's own cell (most common among its events read; lowest on ties) and its share
    bin; entities without events get own cell -1."""
    counts = table(owner, codes, n_entities, size)
    read = counts.sum(axis=1)
    own = np.where(read > 0, counts.argmax(axis=1), -1)
    share = counts.max(axis=1) / np.maximum(read, 1)
    return own, share_bin(share)


def share_bin(share: np.ndarray) -> np.ndarray:
    """The share's bin: SHARE_BINS equal parts of (0, 1] (bin b holds (b/B, (b+1)/B])."""
    return np.clip(np.ceil(share * SHARE_BINS).astype(np.int64) - 1, 0, SHARE_BINS - 1)


def own_tables(
    groups: np.ndarray, owner: np.ndarray, codes: np.ndarray, sizes: list[int], n_groups: int
) -> dict[str, np.ndarray]:
    """The exact (private) tables of the module docstring: `own_j` of shape (n_groups, size_j ·
    SHARE_BINS) (own cell, share bin flattened: one distribution per link cell), one count per
    entity with events."""
    out = {}
    for j, size in enumerate(sizes):
        own, bins = own_cells(owner, codes[:, j], len(groups), size)
        has = own >= 0
        rows = groups[has] * size + own[has]
        own_table = table(rows, bins[has], n_groups * size, SHARE_BINS)
        out[f"own_{j}"] = own_table.reshape(n_groups, size * SHARE_BINS)
    return out


def apply_own_values(
    arrays: dict[str, np.ndarray],
    groups: np.ndarray,
    owner: np.ndarray,
    events: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """`events` with each entity's own value drawn and put on each event with the entity's share
    (post-processing of the released `own_j` probabilities)."""
    events = events.copy()
    for j in range(events.shape[1]):
        flat = draw(arrays[f"own_{j}"][groups], rng)
        own, bin_ = flat // SHARE_BINS, flat % SHARE_BINS
        share = (bin_ + rng.random(len(groups))) / SHARE_BINS
        take = rng.random(len(owner)) < share[owner]
        events[take, j] = own[owner][take]
    return events


__all__ = ["OWN", "SHARE_BINS", "apply_own_values", "own_cells", "own_tables", "share_bin"]
