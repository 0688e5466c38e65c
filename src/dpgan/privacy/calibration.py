"""Calibration: the σ that lands a fit on its (ε, δ), or the number of steps a given σ can pay for.

Every answer is checked with the ledger's own accountant (`epsilon_of`, the same composition the
printed ε comes from), so a calibrated fit never prints more than its target. The searches are
monotone bisections/Brent on ε(σ) or ε(T); PLD's σ search runs first on a coarser grid (both grids
are upper bounds on the true ε) and settles on the ledger's grid. dp-accounting's own
`calibrate_dp_mechanism` does the same kind of search for a single event; this module adds the
ledger's prior events, the one-of-shards entry and the cheap RDP bracket for PLD.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dpgan.errors import BudgetError, InputError
from dpgan.privacy.accounting import DEFAULT_ACCOUNTANT, POISSON, Budget, LedgerEntry, check_epsilon_delta, epsilon_of


def _sgd_entry(
    sample_rate: float, noise_multiplier: float, steps: int, name: str, sampling: str = POISSON
) -> LedgerEntry:
    return LedgerEntry(
        name=name, noise_multiplier=noise_multiplier, sampling_rate=sample_rate, count=steps, sampling=sampling
    )


def calibrate_noise_multiplier(
    *,
    sample_rate: float,
    steps: int,
    epsilon: float,
    delta: float,
    accountant: str = DEFAULT_ACCOUNTANT,
    prior: Sequence[LedgerEntry] = (),
    tolerance: float = 1e-4,
    sampling: str = POISSON,
) -> float:
    """Smallest σ (to `tolerance`, rounded up) such that prior + T steps fit (ε, δ).

    The steps are Poisson-subsampled Gaussians, or one-of-shards steps (`sampling`). Bisection on
    a monotone function of σ; each evaluation is a composition of the ledger.
    """
    check_epsilon_delta(epsilon, delta)
    if steps <= 0:
        raise InputError("steps must be positive")

    def eps_at(sigma: float, which: str = accountant) -> float:
        return epsilon_of([*prior, _sgd_entry(sample_rate, sigma, steps, "sgd", sampling)], delta, which)

    if epsilon_of(prior, delta, accountant) >= epsilon:
        raise BudgetError("the preprocessing events alone use up the privacy budget")
    # RDP is cheap at every σ; PLD is slow at small σ. RDP's σ brackets the others: PLD needs
    # a little less, the 2019 conversion a little more.
    try:
        sigma_rdp = _smallest_sigma(lambda s: eps_at(s, "rdp"), epsilon, 0.5, 1.0, tolerance)
    except BudgetError as exc:
        if accountant != "pld":  # RDP's conversion cannot certify a small ε at any σ (its orders end)
            raise BudgetError(f"{exc}, or the pld accountant") from None
        # prior events calibrated under PLD can exceed ε under RDP's looser bound, so no RDP σ
        # exists although a PLD one does: bracket on PLD itself
        return _smallest_sigma(eps_at, epsilon, 0.5, 1.0, max(tolerance, 5e-4))
    if accountant == "rdp":
        return sigma_rdp
    if accountant == "pld":
        return _pld_sigma(eps_at, prior, sample_rate, steps, sampling, epsilon, delta, sigma_rdp, max(tolerance, 5e-4))
    return _smallest_sigma(eps_at, epsilon, sigma_rdp, 1.5 * sigma_rdp, tolerance)


# Calibration's PLD search runs on a grid this many times wider than the ledger's (about 10×
# faster per evaluation); the answer is then checked on the ledger's own grid.
CALIBRATION_COARSENING = 10.0


def _pld_sigma(
    eps_at: Callable[[float], float],
    prior: Sequence[LedgerEntry],
    sample_rate: float,
    steps: int,
    sampling: str,
    epsilon: float,
    delta: float,
    sigma_rdp: float,
    tol: float,
) -> float:
    """PLD's σ: searched on the coarse grid, then settled on the ledger's grid (what `epsilon_of`,
    and so the printed ε, uses).

    Both grids give upper bounds on the true ε; the coarse one is looser (by up to about 1 % of ε),
    so its σ is re-aimed by the two grids' offset at that σ and settled with a few evaluations on
    the ledger's grid (epsilon_of keeps its answers, so none is composed twice). Same σ as a search
    on the ledger's grid alone on every Adult plan measured (bench/results/calibration_time.md). The
    returned σ always satisfies the ledger's own accounting."""

    def coarse(sigma: float) -> float:
        entries = [*prior, _sgd_entry(sample_rate, sigma, steps, "sgd", sampling)]
        return epsilon_of(entries, delta, "pld", pld_coarsening=CALIBRATION_COARSENING)

    upper = _smallest_sigma(coarse, epsilon, 0.8 * sigma_rdp, sigma_rdp, tol)
    step = grid_step(upper, tol)
    while eps_at(upper) > epsilon:  # not seen: the coarse grid is the looser bound
        upper = round(upper + step, 10)
    # The two grids differ by a nearly constant ε offset over a small range of σ: search the coarse
    # grid again for target + offset, then settle on the ledger's grid between that and `upper`.
    offset = coarse(upper) - eps_at(upper)
    guess = _smallest_sigma(coarse, epsilon + offset, 0.9 * upper, upper, tol)
    if guess >= upper:
        return upper
    step = grid_step(guess, tol)
    if eps_at(guess) <= epsilon:
        # a few grid steps down, as the offset predicts; further (the grids' offset is not constant
        # at huge σ, where both are mostly rounding) a search from below `guess`
        for _ in range(WALK_STEPS):
            if guess - step <= 0 or eps_at(round(guess - step, 10)) > epsilon:
                return guess
            guess = round(guess - step, 10)
        return _smallest_sigma(eps_at, epsilon, 0.5 * guess, guess, tol)
    return _smallest_sigma(eps_at, epsilon, guess, upper, tol)


WALK_STEPS = 20  # grid steps `_pld_sigma` walks down from its guess before it searches instead


def _smallest_sigma(eps_at: Callable[[float], float], target: float, low: float, high: float, tol: float) -> float:
    """The smallest σ on the grid step·ℕ with eps_at(σ) ≤ target (eps_at decreasing in σ), to one grid step.

    The bracket is widened until eps_at(low) > target ≥ eps_at(high), within [SIGMA_FLOOR,
    SIGMA_CEILING]; Brent's method then finds the crossing to step/4 (about 6 evaluations where
    bisection took 11-13: each is a composition of the ledger), and the grid point above it is
    checked, stepping up while it overshoots. The step is `tol` at the σ of ordinary fits (grid_step)."""
    while (spent := eps_at(high)) > target:
        low, high = high, high * 2.0
        if high > SIGMA_CEILING:
            raise BudgetError(
                f"no noise multiplier brings this release within its ε={target:.3g} (with the releases "
                f"before it the ledger stays at ε={spent:.3g} or more): a larger ε is needed"
            )
    while low > SIGMA_FLOOR and eps_at(low) <= target:
        low, high = low / 2.0, low
    if eps_at(low) <= target:  # even the floor fits (a huge ε): σ stays at the floor, ε below target
        step = grid_step(low, tol)
        sigma = math.ceil(low / step) * step
    else:
        step = grid_step(low, tol)
        # eps_at may be inf (a σ/√count past what PLD builds): capped so Brent's steps stay finite
        from scipy import optimize  # here, not at the top: loading a model never calibrates

        root = optimize.brentq(lambda s: min(eps_at(s), EPSILON_CAP) - target, low, high, xtol=step / 4)
        step = grid_step(root, tol)
        sigma = math.ceil(root / step) * step
    while eps_at(sigma) > target:
        sigma += step
    return sigma


# σ searches stay in [SIGMA_FLOOR, SIGMA_CEILING]. The ceiling is met near the smallest ε a fit
# takes (MIN_EPSILON's shares over a hundred releases need σ ~ 1e5-1e6). Below the floor a
# Gaussian's privacy loss spans more than 1e6 nats, beyond the largest ε dpgan accounts
# (epsilon_range.MAX_EPSILON): a release whose share would allow less noise keeps σ at the floor
# and spends less than its share. The PLD grid still builds at the floor (pld_accounting).
SIGMA_CEILING = 1e9
SIGMA_FLOOR = 1e-3
# A fixed grid tol·ℕ suits the σ of ordinary fits (0.25 to 1000: every fit at 0.01 ≲ ε ≲ 30, whose
# σ it leaves as they always were). Below, it would be coarse (tol = 5e-4 at σ = 2e-3 is 25 %,
# paid for in ε): the grid is the power of ten under RELATIVE_STEP·σ. Above LARGE_SIGMA it would be
# needlessly fine (σ ≈ 6e5 for ε = 1e-3's shares): the power of ten under σ/LARGE_SIGMA·tol.
RELATIVE_STEP = 2e-3
LARGE_SIGMA = 1e3
EPSILON_CAP = 1e12  # stands for ε = inf inside Brent's search (far above MAX_EPSILON)


def grid_step(sigma: float, tol: float) -> float:
    """The σ grid's step near `sigma`: `tol` on [tol/RELATIVE_STEP, LARGE_SIGMA], outside a power of ten ∝ σ."""
    if sigma > LARGE_SIGMA:
        return max(tol, 10.0 ** math.floor(math.log10(min(sigma, SIGMA_CEILING) / LARGE_SIGMA * tol)))
    if sigma * RELATIVE_STEP >= tol:
        return tol
    return 10.0 ** math.floor(math.log10(max(sigma, SIGMA_FLOOR / 2.0) * RELATIVE_STEP))


def max_steps(
    *,
    sample_rate: float,
    noise_multiplier: float,
    epsilon: float,
    delta: float,
    accountant: str = DEFAULT_ACCOUNTANT,
    prior: Sequence[LedgerEntry] = (),
    limit: int = 10_000_000,
    sampling: str = POISSON,
) -> int:
    """Largest T such that prior + T Poisson-Gaussian steps stay within (ε, δ); 0 if none fits."""
    check_epsilon_delta(epsilon, delta)

    def fits(steps: int, which: str = accountant) -> bool:
        entries = [*prior, _sgd_entry(sample_rate, noise_multiplier, steps, "sgd", sampling)]
        return epsilon_of(entries, delta, which) <= epsilon

    if not fits(1):
        return 0
    low, high = 1, 2
    if accountant == "pld" and fits(2, "rdp"):  # RDP's answer is a cheap lower start for PLD
        low = max_steps(
            sample_rate=sample_rate,
            noise_multiplier=noise_multiplier,
            epsilon=epsilon,
            delta=delta,
            accountant="rdp",
            prior=prior,
            limit=limit,
            sampling=sampling,
        )
        low = low if fits(low) else 1
        high = max(2, int(low * 1.25) + 1)
    while fits(high):
        low, high = high, high * 2
        if high > limit:
            if fits(limit):
                return limit
            high = limit
            break
    while high - low > 1:
        mid = (low + high) // 2
        if fits(mid):
            low = mid
        else:
            high = mid
    return low


@dataclass(frozen=True)
class TrainingBudget:
    """What a fit's private loop may run: σ and T, one of them chosen to land on (ε, δ)."""

    noise_multiplier: float
    steps: int


def sigma_and_steps(
    *,
    sample_rate: float,
    steps: int,
    budget: FitBudget,
    prior: Sequence[LedgerEntry] = (),
    sampling: str = POISSON,
    cap_steps: bool = True,
) -> TrainingBudget:
    """The one calibration a fit asks for, on its `budget`: σ for `steps` steps (no σ fixed), or,
    with the budget's fixed σ, the most steps it pays for (at most `steps` when `cap_steps`).
    Refused (BudgetError) when not a single step fits."""
    epsilon, delta, accountant = budget.epsilon, budget.delta, budget.accountant
    if budget.noise_multiplier is None:
        sigma = calibrate_noise_multiplier(
            sample_rate=sample_rate, steps=steps, epsilon=epsilon, delta=delta, accountant=accountant, prior=prior,
            sampling=sampling,
        )  # fmt: skip
        return TrainingBudget(sigma, steps)
    noise_multiplier = budget.noise_multiplier
    paid = max_steps(
        sample_rate=sample_rate, noise_multiplier=noise_multiplier, epsilon=epsilon, delta=delta,
        accountant=accountant, prior=prior, sampling=sampling,
    )  # fmt: skip
    if cap_steps:
        paid = min(paid, steps)
    if paid == 0:
        raise BudgetError("this noise multiplier cannot pay for a single step within ε")
    return TrainingBudget(noise_multiplier, paid)


def analytic_gaussian_sigma(epsilon: float, delta: float) -> float:
    """The smallest noise multiplier of ONE Gaussian mechanism that is (ε, δ)-DP, exactly
    (Balle & Wang 2018, Thm. 8): δ(ε; σ) = Φ(1/(2σ) − εσ) − e^ε·Φ(−1/(2σ) − εσ), decreasing in σ.

    A search proxy, not an accountant: callers check its answer with the ledger's accountant, whose
    PLD discretisation is slightly pessimistic (calibration of unsampled Gaussian releases)."""
    check_epsilon_delta(epsilon, delta)
    from scipy import optimize, stats  # here, not at the top: loading a model never calibrates

    def excess(sigma: float) -> float:
        a, b = 1.0 / (2.0 * sigma) - epsilon * sigma, -1.0 / (2.0 * sigma) - epsilon * sigma
        return float(stats.norm.cdf(a) - math.exp(epsilon + stats.norm.logcdf(b))) - delta

    low, high = 1e-3, 1.0
    while excess(high) > 0:
        low, high = high, high * 2.0
        if high > SIGMA_CEILING:
            raise BudgetError(f"no noise multiplier reaches ε={epsilon:.3g}: a larger ε is needed")
    while excess(low) <= 0:  # ε above ~1e5: σ ≈ 1/√(2ε) is below the first bracket (issue 49)
        low, high = low / 2.0, low
        if low < 1e-9:
            raise BudgetError(f"ε={epsilon:.3g} is beyond the Gaussian mechanism's calibration")
    xtol = 1e-12 if low >= 1e-3 else 1e-9 * low  # the same search as before wherever it had a root
    return float(optimize.brentq(excess, low, high, xtol=xtol, rtol=1e-12))


# The GAN always keeps at least this share of ε: no earlier release may take more than the rest.
MAX_EARLIER_SHARE = 0.9


@dataclass(frozen=True)
class ShareTarget:
    """Where the ledger must stand after one more release: `fraction` of the fit's (ε, δ)."""

    epsilon: float
    delta: float
    accountant: str

    def sigma(self, sample_rate: float, steps: int, prior: Sequence[LedgerEntry]) -> float:
        """σ at which `steps` more Poisson-Gaussian releases bring `prior` to this target."""
        return calibrate_noise_multiplier(
            sample_rate=sample_rate,
            steps=steps,
            epsilon=self.epsilon,
            delta=self.delta,
            accountant=self.accountant,
            prior=prior,
        )


@dataclass(frozen=True)
class FitBudget:
    """The one budget of a fit, from the facade to the engine: the user's (ε, δ) target, how ε is
    computed (the accountant), a fixed σ (then the GAN trains for as many steps as it pays for) and
    the seed (experiments only). The facade builds it from the numbers the user passes; everything
    below reads it, and every other form of the budget is one of its methods: the ledger's cap
    (`ledger_budget`), a release's target at a cumulative share (`at`) or at all of ε
    (`whole_target`)."""

    epsilon: float
    delta: float
    accountant: str = DEFAULT_ACCOUNTANT
    noise_multiplier: float | None = None
    seed: int | None = None

    def ledger_budget(self) -> Budget:
        """The ledger's cap: the one place a fit's (ε, δ, accountant) becomes the `Budget` its
        ledger refuses to pass (a table's ledger, opened with a schema's purchase, too)."""
        return Budget(self.epsilon, self.delta, self.accountant)

    def at(self, fraction: float) -> ShareTarget:
        """Where the ledger may stand after a release before the GAN: `fraction` of ε cumulatively
        (the releases before it included), capped at MAX_EARLIER_SHARE so the GAN keeps the rest."""
        return ShareTarget(min(MAX_EARLIER_SHARE, fraction) * self.epsilon, self.delta, self.accountant)

    def whole_target(self) -> ShareTarget:
        """The target of a release that is the whole model: all of ε, after whatever the ledger
        already holds (a statistics model's last release, calibrated on the ledger it joins)."""
        return ShareTarget(self.epsilon, self.delta, self.accountant)
