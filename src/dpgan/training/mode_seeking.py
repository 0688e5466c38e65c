"""A mode-seeking term for the generator (Mao et al. 2019, MSGAN): free of privacy cost.

Under DP noise the critic's signal is weak and a conditional generator tends to give one image
per label whatever its noise z (measured on MNIST-5k: bench/RESULTS.md §17). MSGAN adds to G's
loss λ / (d(G(z₁, c), G(z₂, c)) / d(z₁, z₂) + ε): two noise draws with the same label should give
images that differ in proportion to how much their noises differ.

Privacy: the term reads G, public noise and labels drawn from the released label shares, never a
private image or the critic: it is post-processing of what G already is (a GeneratorHook may read
only public inputs and DP outputs), so nothing is charged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch

from dpgan.training.context import FitContext
from dpgan.training.fake_rows import InputsFn

EPSILON = 1e-5


class PairedGenerator(Protocol):
    """A generator that draws its own labels and can render a given (noise, label) pair."""

    noise_dim: int

    def draw_codes(self, n: int, generator: torch.Generator | None) -> torch.Tensor | None: ...

    def images(self, z: torch.Tensor, codes: torch.Tensor | None) -> torch.Tensor: ...


def mode_seeking_loss(G: PairedGenerator, z1: torch.Tensor, z2: torch.Tensor, codes: torch.Tensor | None):
    """1 / (mean|G(z₁,c) − G(z₂,c)| / mean|z₁ − z₂| + ε): large when two noises give one image."""
    x1, x2 = G.images(z1, codes), G.images(z2, codes)
    ratio = (x1 - x2).abs().mean() / (z1 - z2).abs().mean()
    return 1.0 / (ratio + EPSILON)


class ModeSeekingHook:
    """The MSGAN term as a generator plug-in (dpgan.training.gan_loop.GeneratorHook): in each
    generator step it adds λ·∇ of the term on `batch` pairs, drawn from its own generator."""

    def __init__(self, weight: float, batch: int, generator: torch.Generator) -> None:
        if not weight >= 0:
            raise ValueError("the mode-seeking weight must be non-negative")
        self.weight, self.batch, self.generator = float(weight), int(batch), generator

    def warm_start(self, G: torch.nn.Module, draw_inputs: InputsFn) -> None:
        """Nothing to fit before training."""

    def add_gradient(self, G: PairedGenerator, draw_inputs: InputsFn) -> None:  # type: ignore[override]
        if self.weight == 0:
            return
        z1 = torch.randn(self.batch, G.noise_dim, generator=self.generator, device=self.generator.device)
        z2 = torch.randn(self.batch, G.noise_dim, generator=self.generator, device=self.generator.device)
        codes = G.draw_codes(self.batch, self.generator)
        (self.weight * mode_seeking_loss(G, z1, z2, codes)).backward()

    def released(self) -> list[torch.Tensor]:
        """It holds no DP value."""
        return []


@dataclass(frozen=True)
class ModeSeekingPlugin:
    """The MSGAN term as a plug-in of the fit pipeline (dpgan.fit): public only, it spends nothing;
    its pairs are drawn from a generator seeded by the fit's."""

    weight: float
    pairs: int
    share: float = 0.0

    def release(self, ctx: FitContext, data: object, generator: torch.nn.Module) -> Sequence[ModeSeekingHook]:
        return (ModeSeekingHook(self.weight, self.pairs, ctx.torch_generator()),)


__all__ = ["ModeSeekingHook", "ModeSeekingPlugin", "mode_seeking_loss"]
