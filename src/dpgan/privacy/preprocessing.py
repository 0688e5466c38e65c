"""The budget of the private reads before training, and the noisy row count.

Every pre-training read (the row count, the column histograms of a schema learned with DP, a
condition's frequencies, the count of cells mapped into the schema) is a Gaussian release of
sensitivity 1. They share one base σ, each scaled by a public factor for how much precision it
needs (the row count only sets q and the steps, so it takes 2σ and costs a quarter of a
histogram: k Gaussians of multipliers σ·sᵢ compose exactly like one of multiplier
(Σ 1/(σ·sᵢ)²)^(-1/2)), chosen so that together they cost `fraction`·ε. Knowing nothing of data
kinds, this module serves any synthesizer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dpgan.errors import BudgetError, InputError
from dpgan.privacy.accounting import LedgerEntry, epsilon_of
from dpgan.privacy.calibration import FitBudget, analytic_gaussian_sigma
from dpgan.privacy.mechanisms import noisy_count

# how much noise each read takes, in units of the base σ (public constants)
ROW_COUNT_SCALE = 2.0
REPAIR_COUNT_SCALE = 2.0
# the target's histogram decides which labels exist at all: it gets 0.35 of the noise (8× the cost).
# At 0.5 hmda's 12 % "deny = yes" (1,429 training rows, ε = 1) cleared the partition threshold in one
# seed of three, and a synthetic label of one class scores AUC 0.5; at 0.35 in all three (TSTR AUC
# 0.575 → 0.640), while chile, churn, flchain and Lending Club moved by −0.006 to −0.002 (validation
# splits, 3 seeds: bench/results/target_scale_0{50,35}_validation.jsonl, bench/notes/21)
TARGET_HISTOGRAM_SCALE = 0.35


@dataclass(frozen=True)
class PreprocessingPlan:
    """The base σ of the pre-training reads (a read with scale s adds noise of multiplier σ·s),
    and the δ that their thresholds may fail with."""

    noise_multiplier: float
    threshold_delta: float

    def sigma(self, scale: float = 1.0) -> float:
        return self.noise_multiplier * scale


def plan_preprocessing(
    *,
    budget: FitBudget,
    fraction: float,
    events: Mapping[float, int],
    keyed_histograms: int = 0,
    threshold_delta_fraction: float = 0.1,
) -> PreprocessingPlan:
    """The base σ for sensitivity-1 Gaussian releases, `events[s]` of them at multiplier σ·s, so
    that together they cost `fraction`·ε of the fit's `budget` (by its δ and accountant).

    `keyed_histograms` of them release keys not known in advance (partition selection); their
    thresholds' failure probability, `threshold_delta_fraction`·δ in all, is charged as extra δ.
    """
    if not 0.0 < fraction <= 1.0:
        raise InputError("preprocessing_fraction must be in (0, 1)")
    if sum(events.values()) < 1 or any(s <= 0 or c < 0 for s, c in events.items()):
        raise InputError("a plan needs at least one event, each with a positive scale")
    epsilon, delta, accountant = budget.epsilon, budget.delta, budget.accountant
    threshold_delta = threshold_delta_fraction * delta if keyed_histograms else 0.0
    target = fraction * epsilon

    threshold = [LedgerEntry("thr", 1.0, count=0, extra_delta=threshold_delta)] if threshold_delta else []

    def cost(sigma: float) -> float:
        """What the ledger will say: every event as its own entry."""
        entries = [LedgerEntry("pre", sigma * scale, count=count) for scale, count in events.items()]
        return epsilon_of([*entries, *threshold], delta, accountant)

    # Unsampled Gaussians compose into one Gaussian: c releases at multiplier σ·s are, together,
    # one release at σ/√(Σ c/s²), whose exact (ε, δ) curve is analytic. The search runs on it and
    # then settles on the ledger's own accountant (a few evaluations instead of ~45).
    merged_scale = 1.0 / math.sqrt(sum(count / scale**2 for scale, count in events.items()))

    if accountant == "pld":
        sigma = analytic_gaussian_sigma(target, delta - threshold_delta) / merged_scale
        over = cost(sigma) - target  # the ledger's PLD rounds up: aim below by what it adds
        if 0 < over < target:
            sigma = analytic_gaussian_sigma(target - over, delta - threshold_delta) / merged_scale
        while cost(sigma) > target:  # settle on the ledger's own accountant
            sigma *= 1.0001
    else:  # an RDP evaluation is a closed form, so bisecting the ledger's own cost is cheap
        low, high = 0.1, 1.0
        while cost(high) > target:
            low, high = high, high * 2.0
            if high > 1e7:
                raise BudgetError("the privacy budget is too small for the preprocessing reads")
        for _ in range(40):
            mid = 0.5 * (low + high)
            low, high = (mid, high) if cost(mid) > target else (low, mid)
        sigma = high
    return PreprocessingPlan(sigma, threshold_delta)


def private_row_count(num_rows: int, sigma: float, rng: np.random.Generator) -> tuple[int, LedgerEntry]:
    """N̂ = N + N(0, σ²), at least 1; used for q, the step count and the schema's thresholds."""
    estimate = max(1, int(round(noisy_count(num_rows, sigma, rng))))
    return estimate, LedgerEntry("row count", sigma, note="Gaussian noisy count; sets q = L/N and the steps")
