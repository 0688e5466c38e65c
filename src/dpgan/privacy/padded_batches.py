"""Poisson batches of one public shape: the sampled units padded to a fixed size, with a mask.

Why (issue 34): a Poisson batch's size changes every step, so every step has new tensor shapes,
which defeats CUDA graphs and compiled kernels; on a GPU a small critic's step is then bound by
kernel launches, not by arithmetic. Padding each draw to one size P gives every step the same shapes.

What is released does not change. The draw is the Poisson sampler's own (the same generator calls,
so the same units for a seed); the pad adds P − |B| positions whose mask is 0. A backend multiplies
each unit's clipping factor by its mask, so a padded position adds exactly 0 to the clipped sum:
Σ_i mask_i · clip(g_i) = Σ_{i ∈ B} clip(g_i). The noise (σ·C, one draw) and the divisor (q·N̂, public)
never read |B| or P. So the padded release equals the unpadded one, up to the order of a
floating-point sum that now holds zeros.

P is public: `pad_size` reads only the expected batch size q·N̂ (N̂ the released row count, q fixed
in advance) and public constants. When a draw holds more than P units (`PaddedDraw.overflow`), the
step runs unpadded, as the engine always has. That choice reads |B|, which is private, but releases
nothing: both paths output the same function of the sampled units and the noise (the clipped sum
plus one Gaussian draw, over the same divisor), so the output's distribution, given the data, is the
same whichever path ran; |B| itself is never output. (How long a step takes is outside dpgan's
threat model, as for every other data-dependent branch-free computation here.) P is set so that an
overflow is rare: |B| ~ Binomial(N, q), and Bernstein's inequality gives
P[|B| ≥ qN + t] ≤ exp(−t² / (2(qN(1 − q) + t/3))); `pad_size` adds `tail_sigmas` standard deviations
and a margin for N̂'s own noise (N may exceed N̂), and `overflow_bound` states the bound for a given N.

Status: every per-unit backend takes the mask (dpgan.privacy.grad_sample.CriticUnitLoss.mask) and
the critic loop pads with `static_shapes` (dpgan.training.critic_step.critic_release's `pad_to`,
with P from `pad_size`); the captured step comes next (bench/notes/22). This form still reads |B| on
the host once per step (the size of `nonzero`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from dpgan.privacy.sampling import PoissonSampler

# the pad's distance above the expected batch, in its binomial standard deviations: with the margin
# for N̂ below, an overflow has probability under 1e-7 per step (`overflow_bound`)
TAIL_SIGMAS = 6.0


def pad_size(
    expected_batch: float, sample_rate: float, count_margin: float = 0.0, tail_sigmas: float = TAIL_SIGMAS
) -> int:
    """The public pad P for batches of expected size `expected_batch` = q·N̂: the expectation with
    `count_margin` more rows (N̂'s noise: N may exceed N̂), plus `tail_sigmas` binomial standard
    deviations and a few units for the tail's skew, rounded up to a multiple of 8 (kernel-friendly)."""
    if not (expected_batch >= 0 and 0.0 < sample_rate <= 1.0 and count_margin >= 0 and tail_sigmas >= 0):
        raise ValueError("pad_size needs a non-negative expectation and margin and a rate in (0, 1]")
    mean = expected_batch + sample_rate * count_margin
    spread = math.sqrt(mean * (1.0 - sample_rate))
    return int(math.ceil((mean + tail_sigmas * spread + tail_sigmas**2 / 3.0 + 1.0) / 8.0) * 8)


def overflow_bound(units: int, sample_rate: float, pad: int) -> float:
    """Bernstein's bound on P[Binomial(units, q) > pad]: exp(−t² / (2(Nq(1 − q) + t/3))), t = pad − Nq."""
    mean = units * sample_rate
    t = pad + 1 - mean
    if t <= 0:
        return 1.0
    return min(1.0, math.exp(-(t * t) / (2.0 * (mean * (1.0 - sample_rate) + t / 3.0))))


@dataclass(frozen=True)
class PaddedDraw:
    """One step's units: `indices` of length P (the sampled ones first, then position 0 repeated)
    and `mask` (1.0 for a sampled unit, 0.0 for padding); `units` = |B|. With `overflow` the draw did
    not fit: `indices` holds the |B| sampled units alone and `mask` is all ones (the unpadded path)."""

    indices: torch.Tensor
    mask: torch.Tensor
    units: int
    overflow: bool


class PaddedSampler:
    """The Poisson sampler's draws, padded to `pad` (module docstring). Same generator calls as the
    wrapped sampler: for one seed the sampled units are the same, step after step."""

    def __init__(self, sampler: PoissonSampler, pad: int) -> None:
        if pad < 1:
            raise ValueError("the pad must hold at least one unit")
        self.sampler, self.pad = sampler, int(pad)

    def sample(self) -> PaddedDraw:
        drawn = self.sampler.sample()
        units = int(drawn.numel())
        if units > self.pad:
            return PaddedDraw(drawn, torch.ones(units, device=drawn.device), units, True)
        indices = torch.zeros(self.pad, dtype=drawn.dtype, device=drawn.device)
        indices[:units] = drawn
        mask = torch.zeros(self.pad, device=drawn.device)
        mask[:units] = 1.0
        return PaddedDraw(indices, mask, units, False)


__all__ = ["TAIL_SIGMAS", "PaddedDraw", "PaddedSampler", "overflow_bound", "pad_size"]
