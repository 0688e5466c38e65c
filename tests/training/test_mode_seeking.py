"""The mode-seeking term (dpgan.training.mode_seeking): what it measures, that it moves only G,
and that a fit with it spends exactly what a fit without it spends (it reads no private image)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from dpgan.errors import InputError
from dpgan.fit import KindData
from dpgan.images.fit_kind import ImageKind
from dpgan.models.image_units import ImageUnitGenerator
from dpgan.synthesizers import ImageSynthesizer
from dpgan.training.mode_seeking import ModeSeekingHook, ModeSeekingPlugin, mode_seeking_loss

FAST = {"epochs": 1.0, "batch_size": 64, "max_sample_rate": 0.1, "width": 4}


class _Fixed(torch.nn.Module):
    """A 'generator' whose image ignores z (a collapsed mode) or copies it (as diverse as z)."""

    noise_dim = 4

    def __init__(self, collapsed: bool) -> None:
        super().__init__()
        self.collapsed = collapsed
        self.scale = torch.nn.Parameter(torch.ones(()))

    def draw_codes(self, n, generator):
        return None

    def images(self, z, codes):
        base = torch.zeros_like(z) if self.collapsed else z
        return (self.scale * base).reshape(len(z), 1, 2, 2)


def test_collapsed_generator_scores_far_worse_than_a_diverse_one():
    z1, z2 = torch.randn(32, 4), torch.randn(32, 4)
    collapsed = float(mode_seeking_loss(_Fixed(True), z1, z2, None).detach())
    diverse = float(mode_seeking_loss(_Fixed(False), z1, z2, None).detach())
    assert diverse == pytest.approx(1.0, rel=1e-3)  # images differ exactly as much as the noises
    assert collapsed > 1e4 * diverse


def test_hook_adds_a_gradient_to_G_only_and_zero_weight_adds_nothing():
    G = ImageUnitGenerator((1, 8, 8), 3, width=4, noise_dim=8)
    hook = ModeSeekingHook(1.0, 16, torch.Generator().manual_seed(0))
    hook.add_gradient(G, lambda: (torch.zeros(1, 8), None))
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in G.parameters())
    G.zero_grad(set_to_none=True)
    ModeSeekingHook(0.0, 16, torch.Generator()).add_gradient(G, lambda: (torch.zeros(1, 8), None))
    assert all(p.grad is None for p in G.parameters())
    with pytest.raises(ValueError):
        ModeSeekingHook(-1.0, 16, torch.Generator())


def test_fit_with_the_term_charges_the_same_ledger_and_changes_G():
    data = load_digits()
    images = np.round(data.images[:300] * 255 / 16).astype(np.uint8)
    classes = [str(d) for d in range(10)]
    plain = ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, classes=classes, mode_seeking=0, **FAST).fit(
        images, data.target[:300]
    )
    seeking = ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, classes=classes, mode_seeking=1.0, **FAST).fit(
        images, data.target[:300]
    )
    assert [(e.name, e.noise_multiplier, e.sampling_rate, e.count) for e in plain.ledger.entries] == [
        (e.name, e.noise_multiplier, e.sampling_rate, e.count) for e in seeking.ledger.entries
    ]
    assert not np.array_equal(plain.sample(8, seed=1)[0], seeking.sample(8, seed=1)[0])


def test_bad_weight_is_one_clear_line():
    with pytest.raises(InputError, match="mode_seeking"):
        ImageSynthesizer(recipe="dcgan", epsilon=1.0, mode_seeking=-0.5)


def mode_seeking_weights(synth: ImageSynthesizer) -> list[float]:
    """The weights of the mode-seeking plug-ins the image kind gives the pipeline for these settings."""
    kind = ImageKind(synth.recipe, synth.networks, synth.config, conditional=False)
    data = KindData(torch.zeros(1, 1), 1.0, SimpleNamespace(n_labels=0))
    return [plugin.weight for plugin in kind.plugins(data) if isinstance(plugin, ModeSeekingPlugin)]


def test_dcgan_uses_the_term_by_default_and_other_recipes_do_not():
    assert mode_seeking_weights(ImageSynthesizer(recipe="dcgan", epsilon=1.0)) == [0.3]
    assert mode_seeking_weights(ImageSynthesizer(recipe="dcgan", epsilon=1.0, mode_seeking=0)) == []
    assert mode_seeking_weights(ImageSynthesizer(epsilon=1.0, recipe="dp-cgan")) == []
    with pytest.raises(InputError, match="has no setting 'mode_seeking'"):  # it takes no plug-ins: not a silent no-op
        ImageSynthesizer(epsilon=1.0, recipe="noise-layer", mode_seeking=0.5)
