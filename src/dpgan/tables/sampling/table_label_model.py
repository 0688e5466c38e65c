"""A label model read off the 2-way anchor's DP tables: naive Bayes, post-processing, no ε of its own.

Why: the DP-SGD label model (dpgan.tables.sampling.label_model) takes a quarter of ε, and on a table of a
thousand or two rows its noisy gradient steps learn less than the tables already hold: the 2-way
anchor releases the target's table with every other column (categories, numeric bins, null
indicators) once, the same workload MST fits. P(target | row) ∝ P(target) Π_s P(s | target) over the
row's cell s of each of those tables is naive Bayes; with one-hot inputs it is a linear model,
log P(target) + x · log P(s | target), so it is stored and applied as the DP-SGD model's linear
classifier (same file format, same sampling code). Reading released tables is post-processing:
the ledger gets no entry, and the quarter of ε the DP-SGD model would have spent stays with the GAN.

Negative noisy cells are set to 0 and every cell gets a pseudo-count of half a noise standard
deviation, so a cell the noise could have made empty never decides a label alone.
"""

from __future__ import annotations

import torch

from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.sampling.label_model import LabelModel, label_span
from dpgan.training.aux_classifier import AuxClassifier
from dpgan.training.pair_marginals import PairAnchor

PSEUDO_COUNT_NOISE = 0.5  # pseudo-count per cell, in noise standard deviations
MIN_SHARE = 1e-6


def naive_bayes_label_model(anchor: PairAnchor, encoder: TableEncoder, column: str) -> LabelModel | None:
    """The linear classifier of `column` from its DP tables with every other column; None when the
    anchor measured none (the column is the condition, or the anchor is off)."""
    start, stop = label_span(encoder, column)
    classes = stop - start
    pseudo = max(PSEUDO_COUNT_NOISE * anchor.noise_share, MIN_SHARE)
    weight = torch.zeros(classes, encoder.width - classes)
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
    classifier = AuxClassifier(encoder.width - classes, classes, hidden=())
    with torch.no_grad():
        linear = classifier.net[0]
        linear.weight.copy_(weight)
        linear.bias.copy_((prior / prior.sum()).log().float())
    classifier.eval()
    classifier.requires_grad_(False)
    return LabelModel(column, start, stop, (), classifier)


def match_prior(model: LabelModel, encoded: torch.Tensor, iterations: int = 200) -> None:
    """Shift the classifier's bias so that its mean prediction over `encoded` rows (G's own rows,
    re-encoded: public noise through released models, post-processing) equals its DP prior.

    Naive Bayes counts correlated evidence more than once, so its posteriors are too extreme and
    the labels it draws drift to the majority class (on an Adult slice: 9 % >50K where the prior
    says 24 %). The shift δ minimises the convex mean_i logsumexp(l_i + δ) − prior · δ, whose
    gradient is the mean posterior minus the prior (a prior shift, as Saerens et al. 2002), so at
    its minimum the drawn labels have the prior's shares; each row's ranking is unchanged."""
    linear = model.classifier.net[0]
    with torch.no_grad():
        prior = torch.softmax(linear.bias.double(), dim=0)
        logits = model.classifier(drop_rows(encoded, model)).double()
    shift = torch.zeros_like(prior, requires_grad=True)
    optimiser = torch.optim.LBFGS([shift], max_iter=iterations, tolerance_grad=1e-10, line_search_fn="strong_wolfe")

    def objective() -> torch.Tensor:
        optimiser.zero_grad()
        value = torch.logsumexp(logits + shift, dim=1).mean() - (prior * shift).sum()
        value.backward()
        return value

    optimiser.step(objective)
    with torch.no_grad():
        linear.bias.add_(shift.detach().float())


def drop_rows(encoded: torch.Tensor, model: LabelModel) -> torch.Tensor:
    """The rows without the target's slots: what the classifier reads."""
    return torch.cat([encoded[:, : model.start], encoded[:, model.stop :]], dim=1).float()


__all__ = ["match_prior", "naive_bayes_label_model"]
