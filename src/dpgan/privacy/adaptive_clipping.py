"""Adaptive clipping by private quantile estimation (Andrew, Thakkar, McMahan, Ramaswamy 2021; issue 14, option 2).

Each release also reports, noised, how many of its units had a (pre-clip) norm ‖v_i‖ ≤ C, and C
moves geometrically towards the γ-quantile of the units' norms:

    b_i = 1[‖v_i‖ ≤ C],   b̃ = (Σ_i (b_i − ½) + N(0, σ_b²)) / (q·N̂) + ½,   C ← C·exp(−η·(b̃ − γ)).

The centred count Σ_i (b_i − ½) is what is released: adding or removing a unit moves it by exactly
½ whatever b_i is (an uncentred count Σ_i b_i would move by 1, and adding back |B|/2 would read
the private batch size). q·N̂ is the public expected batch size, so b̃ is post-processing of the
noisy count, and C_t, a function of earlier releases only, is public when release t runs.

Claim: releasing the clipped sum S = Σ_i clip_C(v_i) with noise N(0, (σ_Δ·C)² I) and the centred
count K with noise N(0, σ_b²), in the same step on the same Poisson batch, is jointly the Gaussian
mechanism with noise multiplier σ = (σ_Δ⁻² + (2σ_b)⁻²)^(−½), Poisson-sampled at q.
Proof: stack the two releases as one vector (S, K) and whiten it, dividing S by σ_Δ·C and K by
σ_b (public constants: an invertible post-processing). The noise becomes N(0, I). One unit moves
the whitened vector by (clip_C(v_i)/(σ_Δ·C), ±½/σ_b), of L2 norm ≤ (σ_Δ⁻² + (2σ_b)⁻²)^½ = 1/σ.
A Gaussian mechanism with unit noise and L2 sensitivity 1/σ is, by rotation invariance of the
isotropic Gaussian, the one-dimensional shift of 1/σ against N(0, 1): the Gaussian(σ) mechanism.
Subsampling is the same Poisson batch for both parts, so the step's event is Gaussian(σ) at q,
exactly what the ledger charges for a step without adaptive clipping. Hence, for the ledger's σ and
a chosen σ_b, the gradient gets σ_Δ = (σ⁻² − (2σ_b)⁻²)^(−½), which needs 2σ_b > σ (the count's
noise must leave some of the budget to the gradient); the paper's default is σ_b = q·N̂/20.
tests/privacy/test_adaptive_clipping.py checks the formula against dp_accounting's composition.

With grouped clipping (dpgan.privacy.grouped_clipping) the gradient part is a Gaussian(σ_Δ)
mechanism after its own whitening, so the same argument holds with b_i read off the whole norm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from dpgan.errors import InputError

COUNT_KEY = "__adaptive_clip_count__"
DEFAULT_COUNT_NOISE_SHARE = 1.0 / 20.0  # σ_b = q·N̂/20 (Andrew et al.)


@dataclass(frozen=True)
class AdaptiveClipping:
    """C follows the γ-quantile of the units' norms at rate η (module docstring); `count_noise` σ_b,
    0 for the paper's q·N̂/20."""

    quantile: float
    learning_rate: float = 0.2
    count_noise: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 < self.quantile < 1.0:
            raise InputError("the adaptive clipping quantile must be in (0, 1)")
        if not (0.0 < self.learning_rate < math.inf and 0.0 <= self.count_noise < math.inf):
            raise InputError("the adaptive clipping rate must be positive and its count noise ≥ 0")

    def count_std(self, expected_batch_size: float) -> float:
        """σ_b: the given one, or q·N̂/20."""
        return self.count_noise or expected_batch_size * DEFAULT_COUNT_NOISE_SHARE

    def gradient_multiplier(self, noise_multiplier: float, expected_batch_size: float) -> float:
        """σ_Δ = (σ⁻² − (2σ_b)⁻²)^(−½), so that gradient and count together are Gaussian(σ); 0 for σ = 0."""
        if noise_multiplier == 0.0:
            return 0.0  # the non-private control: nothing is released under a claim
        count_multiplier = 2.0 * self.count_std(expected_batch_size)
        if not noise_multiplier < count_multiplier:
            raise InputError(
                f"adaptive clipping's count noise σ_b = {count_multiplier / 2:g} is too small for σ = "
                f"{noise_multiplier:g}: it needs 2σ_b > σ (raise the count noise or the batch size)"
            )
        return (noise_multiplier**-2 - count_multiplier**-2) ** -0.5

    @staticmethod
    def centred_count(norms: torch.Tensor, max_norm: float) -> torch.Tensor:
        """Σ_i (1[‖v_i‖ ≤ C] − ½) as a (1,) float64 tensor (a non-finite norm counts as above C)."""
        below = (norms <= max_norm).to(torch.float64)
        return (below - 0.5).sum().reshape(1)

    @staticmethod
    def fraction(noisy_count: float, expected_batch_size: float) -> float:
        """b̃ = noisy centred count / q·N̂ + ½: the noisy share of units with ‖v_i‖ ≤ C."""
        return noisy_count / expected_batch_size + 0.5

    def updated(self, max_norm: float, noisy_count: float, expected_batch_size: float) -> float:
        """C·exp(−η·(b̃ − γ)): post-processing of the release."""
        fraction = self.fraction(noisy_count, expected_batch_size)
        return max_norm * math.exp(-self.learning_rate * (fraction - self.quantile))


__all__ = ["COUNT_KEY", "AdaptiveClipping"]
