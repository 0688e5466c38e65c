"""A DP classifier of the label as the image generator's guide (an auxiliary-classifier term).

Why: under DP noise the critic's label projection has to learn each class's shape from noisy
gradients, and the weights it needs for that are the ones the noise speckles the strokes through
(bench/RESULTS.md §17c: a critic that projects the label on fewer weights draws clean strokes but
loses the label). A small classifier of the label given the pixels, trained once with DP-SGD on the
real images, gives G the label signal directly: each generated image should be classified as the
label it was generated for, while the critic judges the strokes.

Privacy: the classifier is trained by dpgan.training.aux_classifier (Poisson batches, each image's
cross-entropy gradient clipped, Gaussian noise, its own ledger entry, charged before the critic's
σ is calibrated on what is left). This plug-in only evaluates the frozen classifier on generated
images, with public noise and labels drawn from the released label shares: post-processing, no
further charge.
"""

from __future__ import annotations

import torch
from torch import nn

from dpgan.training.mode_seeking import PairedGenerator  # draws its own labels, renders (noise, label)


def guide_loss(G: PairedGenerator, classifier: nn.Module, z: torch.Tensor, codes: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the classifier on G's images against the labels they were drawn for."""
    logits = classifier(G.images(z, codes).flatten(1))
    return nn.functional.cross_entropy(logits, codes)


class ImageLabelGuideHook:
    """The frozen DP classifier as G's plug-in (dpgan.training.gan_loop.GeneratorHook): in each
    generator step it adds weight·∇ of the guide loss on `batch` images drawn from its own generator."""

    def __init__(self, classifier: nn.Module, weight: float, batch: int, generator: torch.Generator) -> None:
        if not weight >= 0:
            raise ValueError("the label guide's weight must be non-negative")
        self.classifier = classifier.requires_grad_(False)
        self.weight, self.batch, self.generator = float(weight), int(batch), generator

    def warm_start(self, G: nn.Module, draw_inputs) -> None:
        """Nothing before the first step."""

    def add_gradient(self, G: PairedGenerator, draw_inputs) -> None:  # type: ignore[override]
        if self.weight == 0:
            return
        z = torch.randn(self.batch, G.noise_dim, generator=self.generator, device=self.generator.device)
        codes = G.draw_codes(self.batch, self.generator)
        if codes is None:
            return
        (self.weight * guide_loss(G, self.classifier, z, codes)).backward()

    def released(self) -> list[torch.Tensor]:
        """The classifier's weights: a DP output (its ledger entry), checked on resume like others."""
        return [p.detach() for p in self.classifier.parameters()]


__all__ = ["ImageLabelGuideHook", "guide_loss"]
