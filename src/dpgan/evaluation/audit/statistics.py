"""Statistical lower bounds on ε from a distinguishing test: the one implementation dpgan uses.

Hypothesis-test bound (Kairouz et al. 2015; used for auditing by Jagielski, Ullman and Oprea
2020). For an (ε, δ)-DP mechanism, every test between the worlds OUT (without the canary) and
IN (with it) has FPR + e^ε·FNR ≥ 1 − δ and FNR + e^ε·FPR ≥ 1 − δ. With one-sided Clopper–Pearson
upper bounds FPR⁺ and FNR⁺, each at level α/2 (so both hold together with probability ≥ 1 − α),

    ε_lb = max( log((1 − δ − FPR⁺) / FNR⁺), log((1 − δ − FNR⁺) / FPR⁺) )

is a lower bound on the mechanism's true ε with confidence 1 − α. The threshold of the test is
chosen on one half of the trials and the bound is certified on the other half: choosing it on the
trials that certify it would void the confidence level. With zero errors the bound tops out at
about log(R/3.69) for R held-out trials per world at α = 0.05 (`max_certifiable`).

One-run audit (Steinke, Nasr and Jagielski 2023). m canaries are each included independently
with probability 1/2 in one run; the auditor guesses in/out for r of them and v guesses are
right. Under (ε, δ)-DP, P[W ≥ v] ≤ f(v) + 2mδ·max_{1≤i≤v} (f(v − i) − f(v))/i with
f(k) = P[Binomial(r, e^ε/(1 + e^ε)) ≥ k]; ε_lb is the largest ε whose p-value is still < α.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

THRESHOLD_QUANTILES = np.linspace(0.001, 0.999, 200)


def clopper_pearson_upper(errors: int, trials: int, alpha: float) -> float:
    """One-sided (1 − α) Clopper–Pearson upper bound on a binomial rate."""
    if trials <= 0:
        return 1.0
    if errors >= trials:
        return 1.0
    return float(stats.beta.ppf(1.0 - alpha, errors + 1, trials - errors))


def clopper_pearson_interval(successes: int, trials: int, alpha: float = 0.05) -> tuple[float, float]:
    """Two-sided (1 − α) Clopper–Pearson interval for a binomial rate."""
    if trials <= 0:
        return 0.0, 1.0
    low = 0.0 if successes <= 0 else float(stats.beta.ppf(alpha / 2, successes, trials - successes + 1))
    high = 1.0 if successes >= trials else float(stats.beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return low, high


def epsilon_from_error_counts(
    false_positives: int, n_out: int, false_negatives: int, n_in: int, *, delta: float, alpha: float
) -> float:
    """ε_lb of one fixed test from its errors on n_out OUT trials and n_in IN trials (≥ 0)."""
    fpr = clopper_pearson_upper(false_positives, n_out, alpha / 2)
    fnr = clopper_pearson_upper(false_negatives, n_in, alpha / 2)
    best = 0.0
    for a, b in ((fpr, fnr), (fnr, fpr)):
        if b > 0 and 1.0 - delta - a > 0:
            best = max(best, math.log((1.0 - delta - a) / b))
    return best


def max_certifiable(n_out: int, n_in: int, *, delta: float, alpha: float) -> float:
    """The ceiling of `epsilon_from_error_counts`: its value with no error at all."""
    return epsilon_from_error_counts(0, n_out, 0, n_in, delta=delta, alpha=alpha)


@dataclass(frozen=True)
class SplitBound:
    """A certified lower bound and how it was obtained (for the report)."""

    epsilon: float
    threshold: float | None
    false_positives: int
    false_negatives: int
    n_out: int  # held-out OUT trials
    n_in: int  # held-out IN trials
    ceiling: float  # the bound with zero held-out errors

    def details(self) -> dict[str, Any]:
        """The held-out counts and threshold behind the bound, for an audit's report."""
        return {
            "held_out_trials": {"out": self.n_out, "in": self.n_in},
            "held_out_errors": {"false_positives": self.false_positives, "false_negatives": self.false_negatives},
            "threshold": self.threshold,
        }


def _best_threshold(scores_out: np.ndarray, scores_in: np.ndarray, delta: float, alpha: float) -> float | None:
    """The threshold ('IN iff score > t') with the largest bound on these scores, or None."""
    candidates = np.quantile(np.concatenate([scores_out, scores_in]), THRESHOLD_QUANTILES)
    best, best_t = 0.0, None
    for t in candidates:
        fp, fn = int((scores_out > t).sum()), int((scores_in <= t).sum())
        value = epsilon_from_error_counts(fp, len(scores_out), fn, len(scores_in), delta=delta, alpha=alpha)
        if value > best:
            best, best_t = value, float(t)
    return best_t


def epsilon_lower_bound(
    scores_out: np.ndarray, scores_in: np.ndarray, *, delta: float, alpha: float = 0.05, seed: int = 0
) -> SplitBound:
    """ε_lb at confidence 1 − α: threshold chosen on a random half of each world's scores,
    bound certified on the other half. Larger scores must mean "IN"."""
    rng = np.random.default_rng(seed)
    so = rng.permutation(np.asarray(scores_out, dtype=np.float64))
    si = rng.permutation(np.asarray(scores_in, dtype=np.float64))
    ho, hi = len(so) // 2, len(si) // 2
    held_out, held_in = so[ho:], si[hi:]
    ceiling = max_certifiable(len(held_out), len(held_in), delta=delta, alpha=alpha)
    threshold = _best_threshold(so[:ho], si[:hi], delta, alpha) if ho and hi else None
    if threshold is None:
        return SplitBound(0.0, None, 0, 0, len(held_out), len(held_in), ceiling)
    fp, fn = int((held_out > threshold).sum()), int((held_in <= threshold).sum())
    value = epsilon_from_error_counts(fp, len(held_out), fn, len(held_in), delta=delta, alpha=alpha)
    return SplitBound(value, threshold, fp, fn, len(held_out), len(held_in), ceiling)


def one_run_p_value(canaries: int, guesses: int, correct: int, epsilon: float, delta: float) -> float:
    """Steinke et al.'s bound on P[≥ `correct` right guesses out of `guesses`] under (ε, δ)-DP."""
    p = 1.0 / (1.0 + math.exp(-epsilon))

    def tail(k: int) -> float:  # P[Binomial(guesses, p) ≥ k]
        return float(stats.binom.sf(k - 1, guesses, p))

    at_v = tail(correct)
    worst = max(((tail(correct - i) - at_v) / i for i in range(1, correct + 1)), default=0.0)
    return min(1.0, at_v + 2.0 * canaries * delta * worst)


def one_run_epsilon_lower_bound(
    canaries: int, guesses: int, correct: int, *, delta: float, alpha: float = 0.05
) -> float:
    """The largest ε (to 1e-4) whose one-run p-value is below α; 0 if none is."""
    if guesses <= 0 or one_run_p_value(canaries, guesses, correct, 0.0, delta) >= alpha:
        return 0.0
    low, high = 0.0, 1.0
    while one_run_p_value(canaries, guesses, correct, high, delta) < alpha:
        low, high = high, 2.0 * high
        if high > 1e3:
            return low
    while high - low > 1e-4:
        mid = 0.5 * (low + high)
        if one_run_p_value(canaries, guesses, correct, mid, delta) < alpha:
            low = mid
        else:
            high = mid
    return low
