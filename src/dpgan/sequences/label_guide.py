"""A DP classifier of the label as the generator's guide (DTGAN's classification loss, for series).

Why: on the water district-days the critic alone teaches G each district's days slowly: its label
enters one noisy critic score among the values, and the generator's days drift towards any
district's (RESULTS §15: realistic days, label link lost). A classifier of the label given the
values, trained with DP-SGD on the real series, gives G a direct signal: each generated series
should be classified as the label it was generated for.

Privacy: the classifier is trained by dpgan.training.aux_classifier (Poisson batches, each series'
cross-entropy gradient clipped, Gaussian noise, its own ledger entry); this plug-in only evaluates
the frozen classifier on generated series: post-processing. One series is one record, so the plug-in
is for the series unit (entity-level units would need the classifier's unit to be the entity).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


def guide_loss(units: torch.Tensor, n_values: int, classifier: nn.Module) -> torch.Tensor:
    """Cross-entropy of the classifier's prediction on each generated series against the label it
    was generated with (the one-hot channels, soft during training; the target is not differentiated,
    so the plug-in moves the values, not the labels)."""
    batch, per_unit, length = units.shape[:3]
    values = units[..., :n_values].reshape(batch * per_unit, length * n_values)
    targets = units[:, :, 0, n_values:].reshape(batch * per_unit, -1).detach()
    log_probabilities = torch.log_softmax(classifier(values), dim=1)
    return -(targets * log_probabilities).sum(dim=1).mean()


@dataclass
class LabelGuideHook:
    """The frozen DP classifier as G's plug-in (dpgan.training.gan_loop.GeneratorHook)."""

    classifier: nn.Module
    n_values: int
    weight: float = 1.0

    def warm_start(self, G: nn.Module, draw_inputs) -> None:
        """Nothing before the first step: the critic first teaches what a series looks like."""

    def add_gradient(self, G: nn.Module, draw_inputs) -> None:
        if self.weight > 0:
            z, condition = draw_inputs()
            (self.weight * guide_loss(G(z, None, condition), self.n_values, self.classifier)).backward()

    def released(self) -> list[torch.Tensor]:
        return [p.detach() for p in self.classifier.parameters()]


__all__ = ["LabelGuideHook", "guide_loss"]
