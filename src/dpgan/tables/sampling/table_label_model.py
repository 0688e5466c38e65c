"""The label model read off the 2-way anchor's DP tables (naive Bayes; its weights and the argument:
dpgan.statistics.tables.naive_bayes), as the DP-SGD label model's linear classifier: the same file
format and sampling code (dpgan.tables.sampling.label_model). Post-processing, no ε of its own; its
prior is matched on G's own rows (`match_prior`), public noise through released models.
"""

from __future__ import annotations

import torch

from dpgan.statistics.tables.naive_bayes import naive_bayes_weights
from dpgan.statistics.tables.pair_marginals import PairAnchor
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.sampling.label_model import LabelModel, label_span
from dpgan.training.aux_classifier import AuxClassifier


def naive_bayes_label_model(anchor: PairAnchor, encoder: TableEncoder, column: str) -> LabelModel | None:
    """The linear classifier of `column` from its DP tables with every other column; None when the
    anchor measured none (the column is the condition, or the anchor is off)."""
    start, stop = label_span(encoder, column)
    released = naive_bayes_weights(anchor, encoder.width, start, stop)
    if released is None:
        return None
    weight, bias = released
    classes = stop - start
    classifier = AuxClassifier(encoder.width - classes, classes, hidden=())
    with torch.no_grad():
        linear = classifier.net[0]
        linear.weight.copy_(weight)
        linear.bias.copy_(bias)
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
