"""Naive Bayes read off the 2-way anchor's DP tables: a label model's weights, post-processing, no ε of its own.

Why: the DP-SGD label model (dpgan.tables.sampling.label_model) takes a quarter of ε, and on a table of a
thousand or two rows its noisy gradient steps learn less than the tables already hold: the 2-way
anchor releases the target's table with every other column (categories, numeric bins, null
indicators) once, the same workload MST fits. P(target | row) ∝ P(target) Π_s P(s | target) over the
row's cell s of each of those tables is naive Bayes; with one-hot inputs it is a linear model,
log P(target) + x · log P(s | target), so it is stored and applied as the DP-SGD model's linear
classifier (same file format, same sampling code: dpgan.tables.sampling.table_label_model puts these
weights into it). Reading released tables is post-processing:
the ledger gets no entry, and the quarter of ε the DP-SGD model would have spent stays with the GAN.

Negative noisy cells are set to 0 and every cell gets a pseudo-count of half a noise standard
deviation, so a cell the noise could have made empty never decides a label alone.
"""

from __future__ import annotations

import torch

from dpgan.statistics.tables.pair_marginals import PairAnchor

PSEUDO_COUNT_NOISE = 0.5  # pseudo-count per cell, in noise standard deviations
MIN_SHARE = 1e-6


def naive_bayes_weights(
    anchor: PairAnchor, width: int, start: int, stop: int
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The linear classifier's weight (classes × the row's other slots) and bias (the log DP prior) of
    the target whose one-hot is slots [start, stop) of an encoded row `width` slots wide, from its DP
    tables with every other column; None when the anchor measured none (the column is the condition,
    or the anchor is off)."""
    classes = stop - start
    pseudo = max(PSEUDO_COUNT_NOISE * anchor.noise_share, MIN_SHARE)
    weight = torch.zeros(classes, width - classes)
    priors = []
    for (a, b), table in zip(anchor.pairs, anchor.targets):
        if start not in (a.start, b.start):
            continue
        other = b if a.start == start else a
        by_class = (table if a.start == start else table.T).double()  # classes × the other's cells
        cells = by_class.clamp_min(0.0) + pseudo
        priors.append(by_class.sum(dim=1))  # unclipped: clipping noise at 0 would pull it to uniform
        offset = other.start if other.start < start else other.start - classes  # the target's slots are dropped
        weight[:, offset : offset + other.width] = (cells / cells.sum(dim=1, keepdim=True)).log().float()
    if not priors:
        return None
    prior = torch.stack(priors).mean(dim=0).clamp_min(pseudo)
    return weight, (prior / prior.sum()).log().float()


__all__ = ["MIN_SHARE", "PSEUDO_COUNT_NOISE", "naive_bayes_weights"]
