"""Releasing a label set nobody wrote down: Gaussian partition selection, with a second chance.

One release. Each unit adds at most 1 in L2 to the counts of the labels it holds (one label per
image or series; 1/√m to each of an entity's m labels), so the noisy counts of the labels present
are one Gaussian event at σ, and a label is released when its noisy count clears
τ = 1 + σ·Φ⁻¹(1 − δ_τ): a label that only the added unit holds (count ≤ 1) clears it with
probability ≤ δ_τ, which the ledger adds to δ (`extra_delta`). Labels absent from the data have no
count and are never released. (dpgan.images.labels and dpgan.sequences.dp_schema make this first
release, at a small share of ε.)

The second chance. A small first share keeps the label set cheap on large data, but at ε = 3 its τ
is several hundred units: sklearn's digits (about 180 images per label) released no label. So when
the first release looks incomplete (`needs_second_chance`, a decision on its DP output only: fewer
than two labels kept, or a kept label whose noisy count is below SECOND_CHANCE_MARGIN·τ₁, a sign
that labels of about its size fell below τ₁), the counts of the labels present are released once
more with fresh noise at σ₂, and each label's two noisy counts are combined by inverse-variance
weighting, which is itself a Gaussian estimate with σ_c = (σ₁⁻² + σ₂⁻²)^(-1/2); the labels released
are those the first release kept and those whose combined count clears τ_c = 1 + σ_c·Φ⁻¹(1 − δ_τ).
Privacy: two adaptively composed Gaussian events in the ledger, each with its extra δ_τ (a label
only the added unit holds is released in either stage with probability ≤ 2δ_τ by the union bound).
σ₂ is set so that a label held by `target_units` units is released with probability
RELEASE_PROBABILITY: σ_c = (target_units − 1)/(Φ⁻¹(1 − δ_τ) + Φ⁻¹(RELEASE_PROBABILITY)), unless that
would take the ledger past `max_share` of ε, in which case σ₂ is the one that lands on it. Both
`target_units` and `max_share` are public settings of the data kind (chosen on validation data:
bench/RESULTS.md), never read off the data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpgan.privacy.accounting import LedgerEntry, PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import inverse_variance_mean, noisy_counts, set_union_threshold

RELEASE_PROBABILITY = 0.95
# a kept label whose noisy count is below this many τ₁ calls the second chance: its siblings of about
# its size may have fallen below τ₁ (τ₁ ≈ 1 + 4.75σ₁, so 2τ₁ is τ₁ plus about 4.75σ₁)
SECOND_CHANCE_MARGIN = 2.0


def needs_second_chance(kept_counts: Sequence[float], threshold: float) -> bool:
    """Whether the first release looks incomplete (module docstring); reads DP outputs only."""
    return len(kept_counts) < 2 or min(kept_counts) < SECOND_CHANCE_MARGIN * threshold


@dataclass(frozen=True)
class SecondRelease:
    """The combined noisy counts (one per label present, the caller's order), their σ_c and τ_c."""

    counts: np.ndarray
    noise_multiplier: float
    threshold: float
    stage_sigma: float

    @property
    def released(self) -> np.ndarray:
        return self.counts > self.threshold


def combined_sigma_for(target_units: float, threshold_delta: float) -> float:
    """σ_c at which a label held by `target_units` units clears τ_c with RELEASE_PROBABILITY."""
    from scipy.stats import norm  # here, not at the top: sampling a saved model never selects

    z = float(norm.isf(threshold_delta)) + float(norm.isf(1.0 - RELEASE_PROBABILITY))
    return max(target_units - 1.0, 1e-6) / z


def second_release(
    true_counts: Sequence[float],
    first_counts: Sequence[float],
    first_sigma: float,
    *,
    target_units: float,
    threshold_delta: float,
    cap: ShareTarget,
    extra_delta: float | None = None,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    event: str,
    note: str,
) -> SecondRelease:
    """The second chance (module docstring): a fresh Gaussian release of `true_counts` (the labels
    present, sensitivity 1), charged to `ledger` as `event` with its extra δ, combined with the
    first release's `first_counts` at `first_sigma`. `threshold_delta` is the chance per label that
    one unit's label is released; `extra_delta` (default the same) what the ledger adds to δ for it
    (larger when one unit may hold several labels, as an entity's series do)."""
    charged = threshold_delta if extra_delta is None else extra_delta
    wanted = combined_sigma_for(target_units, threshold_delta)
    if wanted >= first_sigma:  # the first release was already as precise: repeat it at the same σ
        needed = first_sigma
    else:
        needed = 1.0 / np.sqrt(1.0 / wanted**2 - 1.0 / first_sigma**2)
    pending = LedgerEntry("threshold", 1.0, count=0, extra_delta=charged)
    cheapest = cap.sigma(1.0, 1, [*ledger.entries, pending])  # the σ₂ that lands on the cap
    sigma = max(float(needed), cheapest)
    ledger.add(LedgerEntry(event, sigma, count=1, extra_delta=charged, note=note))
    second = noisy_counts(np.asarray(true_counts, dtype=np.float64), sigma, rng)
    combined, combined_sigma = inverse_variance_mean(first_counts, first_sigma, second, sigma)
    threshold = set_union_threshold(combined_sigma, threshold_delta)
    return SecondRelease(combined, combined_sigma, threshold, sigma)


__all__ = [
    "RELEASE_PROBABILITY",
    "SECOND_CHANCE_MARGIN",
    "SecondRelease",
    "combined_sigma_for",
    "needs_second_chance",
    "second_release",
]
