"""The image label guide's plug-in: it moves G towards images its frozen classifier gives the
drawn label, reads no image, and draws only from its own generator."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from dpgan.images.label_guide import ImageLabelGuideHook, guide_loss
from dpgan.models.image_units import ImageUnitGenerator


def brightness_classifier() -> nn.Module:
    """Class 1 for bright images, class 0 for dark ones (a fixed linear map of the mean pixel)."""
    classifier = nn.Linear(64, 2)
    with torch.no_grad():
        classifier.weight.copy_(torch.stack([-torch.ones(64), torch.ones(64)]) / 8)
        classifier.bias.zero_()
    return classifier


def test_the_guide_moves_g_towards_the_drawn_labels_and_leaves_the_classifier_frozen():
    torch.manual_seed(0)
    G = ImageUnitGenerator((1, 8, 8), 2, noise_dim=8, width=4)
    classifier = brightness_classifier()
    frozen = [p.clone() for p in classifier.parameters()]
    hook = ImageLabelGuideHook(classifier, 1.0, 64, torch.Generator().manual_seed(1))
    probe = torch.Generator().manual_seed(2)
    z, codes = torch.randn(256, 8, generator=probe), torch.randint(0, 2, (256,), generator=probe)
    with torch.no_grad():
        before = float(guide_loss(G, classifier, z, codes))
    optimizer = torch.optim.Adam(G.parameters(), lr=1e-2)
    for _ in range(30):
        optimizer.zero_grad()
        hook.add_gradient(G, draw_inputs=None)
        optimizer.step()
    with torch.no_grad():
        after = float(guide_loss(G, classifier, z, codes))
    assert after < 0.7 * before
    assert all(torch.equal(a, b) for a, b in zip(frozen, classifier.parameters()))
    assert all(p.grad is None for p in classifier.parameters())
    # the hook's draws come from its own generator: two hooks seeded alike give equal gradients
    grads = []
    for _ in range(2):
        G.zero_grad()
        ImageLabelGuideHook(classifier, 1.0, 16, torch.Generator().manual_seed(5)).add_gradient(G, None)
        grads.append(torch.cat([p.grad.flatten() for p in G.parameters()]))
    torch.testing.assert_close(grads[0], grads[1], rtol=0, atol=0)


def test_a_zero_weight_adds_nothing_and_a_negative_one_is_refused():
    G = ImageUnitGenerator((1, 8, 8), 2, noise_dim=8, width=4)
    ImageLabelGuideHook(brightness_classifier(), 0.0, 8, torch.Generator()).add_gradient(G, None)
    assert all(p.grad is None for p in G.parameters())
    with pytest.raises(ValueError, match="non-negative"):
        ImageLabelGuideHook(brightness_classifier(), -1.0, 8, torch.Generator())
