"""The privacy ledger: every read of private data as a dp-accounting event, and ε(δ) from it.

dp-accounting (Google) is the source of truth for every ε dpgan prints, saves or reports. This
module only keeps the list of events, turns it into `DpEvent`s and asks the library's RDP or PLD
accountant. The neighbouring relation is add/remove-one record throughout.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from dp_accounting import dp_event
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant
from dp_accounting.rdp.rdp_privacy_accountant import NeighborRel
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon as rdp_to_epsilon

from dpgan.errors import BudgetError, InputError

ACCOUNTANTS = ("pld", "rdp", "rdp-classic")
DEFAULT_ACCOUNTANT = "pld"
PLD_DISCRETIZATION = 1e-4
# TF-Privacy's 2019 order grid; with Mironov's Prop. 3 conversion it reproduces the seed papers'
# printed ε (1.26, 9.6, 3.7). Offered for comparison only: it is valid but looser.
CLASSIC_2019_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)))
# RdpAccountant's default orders (kept explicit so two accountants' curves can be added)
RDP_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024])
POISSON = "poisson"
# one of n disjoint shards chosen uniformly per step (dtgan-g). A record's shard may change
# arbitrarily, so a step is a replace-one change of one of n items: Wang, Balle and
# Kasiviswanathan's (2019) RDP bound for sampling without replacement under replace-one, added
# to the add/remove RDP of the other events. The Poisson add/remove model of such a step is
# only a *lower* bound (../shared privacy README §2 vii), so it is never used for it.
ONE_OF_SHARDS = "one-of-shards"
SAMPLINGS = (POISSON, ONE_OF_SHARDS)


@dataclass(frozen=True)
class LedgerEntry:
    """One DP release: a Gaussian mechanism, optionally Poisson-subsampled, repeated `count` times.

    `noise_multiplier` is the noise std divided by the L2 sensitivity (σ, not σ·C).
    `extra_delta` is the probability of a failure event that lies outside the accountant (the
    threshold of a DP set-union over unknown categories); it is added to δ, never hidden.
    """

    name: str
    noise_multiplier: float
    sampling_rate: float = 1.0
    count: int = 1
    extra_delta: float = 0.0
    note: str = ""
    sampling: str = POISSON

    def __post_init__(self) -> None:
        if self.sampling not in SAMPLINGS:
            raise InputError(f"{self.name}: sampling must be one of {', '.join(SAMPLINGS)}")
        if self.sampling == ONE_OF_SHARDS:
            shards = 1.0 / self.sampling_rate
            if abs(shards - round(shards)) > 1e-9 or round(shards) < 1:
                raise InputError(f"{self.name}: one-of-shards needs a sampling rate 1/n")
        if not (self.noise_multiplier > 0 and math.isfinite(self.noise_multiplier)):
            raise InputError(f"{self.name}: noise multiplier must be a positive number")
        if not 0.0 < self.sampling_rate <= 1.0:
            raise InputError(f"{self.name}: sampling rate must be in (0, 1]")
        if self.count < 0 or int(self.count) != self.count:
            raise InputError(f"{self.name}: count must be a non-negative integer")
        if not 0.0 <= self.extra_delta < 1.0:
            raise InputError(f"{self.name}: extra_delta must be in [0, 1)")

    @property
    def num_shards(self) -> int:
        return int(round(1.0 / self.sampling_rate))

    def to_dp_event(self) -> dp_event.DpEvent:
        event: dp_event.DpEvent = dp_event.GaussianDpEvent(self.noise_multiplier)
        if self.sampling == ONE_OF_SHARDS and self.num_shards > 1:
            event = dp_event.SampledWithoutReplacementDpEvent(self.num_shards, 1, event)
        elif self.sampling_rate < 1.0:
            event = dp_event.PoissonSampledDpEvent(self.sampling_rate, event)
        if self.count == 0:
            return dp_event.NoOpDpEvent()
        if self.count > 1:
            event = dp_event.SelfComposedDpEvent(event, int(self.count))
        return event

    def to_dict(self) -> dict:
        return {"mechanism": "gaussian", **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict) -> "LedgerEntry":
        if not isinstance(data, dict) or data.get("mechanism") != "gaussian":
            raise InputError(f"unknown ledger event {data!r}")
        missing = {"name", "noise_multiplier", "sampling_rate", "count"} - set(data)
        if missing:
            raise InputError(f"ledger event lacks {sorted(missing)}")
        return cls(
            name=str(data["name"]),
            noise_multiplier=float(data["noise_multiplier"]),
            sampling_rate=float(data["sampling_rate"]),
            count=int(data["count"]),
            extra_delta=float(data.get("extra_delta", 0.0)),
            note=str(data.get("note", "")),
            sampling=str(data.get("sampling", POISSON)),
        )


def check_accountant(accountant: str) -> str:
    if accountant not in ACCOUNTANTS:
        raise InputError(f"accountant must be one of {', '.join(ACCOUNTANTS)}, not {accountant!r}")
    return accountant


def check_epsilon_delta(epsilon: float, delta: float) -> None:
    """Reject budgets that make no sense before any work is done."""
    if not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise InputError(f"epsilon must be a positive finite number, got {epsilon!r}")
    if not isinstance(delta, (int, float)) or not (0.0 < delta < 1.0):
        raise InputError(f"delta must be in (0, 1), got {delta!r}")


def composed_event(entries: Iterable[LedgerEntry]) -> dp_event.DpEvent:
    return dp_event.ComposedDpEvent([e.to_dp_event() for e in entries])


def _rdp_curve(event: dp_event.DpEvent, orders: Sequence[float]) -> np.ndarray:
    """RDP of `event` at `orders`, computed by dp-accounting's RdpAccountant."""
    acc = RdpAccountant(orders=list(orders))
    acc.compose(event)
    # The curve itself is not public API; pinned dp-accounting keeps it in `_rdp`.
    return np.asarray(acc._rdp, dtype=np.float64)  # noqa: SLF001


@contextlib.contextmanager
def _quiet_rdp_orders() -> Iterator[None]:
    """dp-accounting logs a warning for every RDP order it drops as non-convergent (small σ).

    Dropping an order keeps ε a valid upper bound (it is a minimum over the remaining orders);
    the warnings would flood a user's terminal during calibration, so they are held back here.
    """
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def epsilon_of(entries: Sequence[LedgerEntry], delta: float, accountant: str = DEFAULT_ACCOUNTANT) -> float:
    """ε at total δ for the composition of `entries`; δ pays first for the entries' extra_delta."""
    check_accountant(accountant)
    accountant_delta = delta - sum(e.extra_delta for e in entries)
    if accountant_delta <= 0:
        return math.inf
    entries = [e for e in entries if e.count > 0]
    if not entries:
        return 0.0
    shard_entries = [e for e in entries if e.sampling == ONE_OF_SHARDS]
    with _quiet_rdp_orders():
        if shard_entries:
            return _epsilon_with_shard_events(entries, accountant_delta, accountant)
        return _epsilon_of_event(composed_event(entries), accountant_delta, accountant, pld_discretization(entries))


def pld_discretization(entries: Sequence[LedgerEntry]) -> float:
    """The PLD grid step for `entries`: 1e-4, widened as 1/σ² below σ ≈ 0.32.

    A Gaussian's privacy loss spans a range that grows as 1/σ², so a fixed step makes the grid, and
    the time, grow as 1/σ² (ε = 1000 took minutes). Widening the step with it keeps the grid's size
    bounded. dp-accounting's PLD rounds pessimistically, so a coarser grid only loosens the bound
    (at σ = 0.15, 1,000 steps: the same ε to 4 decimals, 5 s instead of 26 s)."""
    smallest = min(e.noise_multiplier for e in entries)
    return PLD_DISCRETIZATION * max(1.0, 1.0 / (10.0 * smallest**2))


def _epsilon_with_shard_events(entries: Sequence[LedgerEntry], delta: float, accountant: str) -> float:
    """RDP of the add/remove events plus replace-one RDP of the shard events, then ε.

    Both curves bound the Rényi divergence between the *same* two neighbouring tables, so they
    add. The PLD accountant has no replace-one shard event, so every accountant answers with this
    RDP bound here (valid, if looser than a PLD would be).
    """
    orders = CLASSIC_2019_ORDERS if accountant == "rdp-classic" else RDP_ORDERS
    regular = [e for e in entries if e.sampling != ONE_OF_SHARDS]
    shards = [e for e in entries if e.sampling == ONE_OF_SHARDS]
    rdp = np.zeros(len(orders))
    if regular:
        rdp += _rdp_curve(composed_event(regular), orders)
    acc = RdpAccountant(orders=list(orders), neighboring_relation=NeighborRel.REPLACE_ONE)
    acc.compose(composed_event(shards))
    rdp += np.asarray(acc._rdp, dtype=np.float64)  # noqa: SLF001
    if accountant == "rdp-classic":
        return float(np.min(rdp + math.log(1.0 / delta) / (np.asarray(orders) - 1.0)))
    return float(rdp_to_epsilon(orders, rdp, delta)[0])


def _epsilon_of_event(
    event: dp_event.DpEvent, accountant_delta: float, accountant: str, discretization: float
) -> float:
    if accountant == "pld":
        acc = PLDAccountant(value_discretization_interval=discretization)
        acc.compose(event)
        return float(acc.get_epsilon(accountant_delta))
    if accountant == "rdp":
        acc = RdpAccountant()
        acc.compose(event)
        return float(acc.get_epsilon(accountant_delta))
    orders = np.asarray(CLASSIC_2019_ORDERS)
    rdp = _rdp_curve(event, orders)
    return float(np.min(rdp + math.log(1.0 / accountant_delta) / (orders - 1.0)))


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
    """Smallest σ (to `tolerance`, rounded up) such that prior + T Poisson-Gaussian steps fit (ε, δ).

    Bisection on a monotone function of σ; each evaluation is a dp-accounting composition.
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
    except BudgetError:
        if accountant != "pld" or sampling == ONE_OF_SHARDS:
            raise
        # prior events calibrated under PLD can exceed ε under RDP's looser bound, so no RDP σ
        # exists although a PLD one does: bracket on PLD itself
        return _smallest_sigma(eps_at, epsilon, 0.5, 1.0, max(tolerance, 5e-4))
    if accountant == "rdp" or (sampling == ONE_OF_SHARDS and accountant == "pld"):
        return sigma_rdp
    if accountant == "pld":
        return _smallest_sigma(eps_at, epsilon, 0.8 * sigma_rdp, sigma_rdp, max(tolerance, 5e-4))
    return _smallest_sigma(eps_at, epsilon, sigma_rdp, 1.5 * sigma_rdp, tolerance)


def _smallest_sigma(eps_at: Callable[[float], float], target: float, low: float, high: float, tol: float) -> float:
    """Bisection for the smallest σ with eps_at(σ) ≤ target, widening the bracket as needed."""
    while eps_at(high) > target:
        low, high = high, high * 2.0
        if high > 1e5:
            raise BudgetError(f"no noise multiplier reaches ε={target}")
    while low > 1e-3 and eps_at(low) <= target:
        low, high = low / 2.0, low
    while high - low > tol:
        mid = 0.5 * (low + high)
        if eps_at(mid) > target:
            low = mid
        else:
            high = mid
    return math.ceil(high / tol) * tol


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


@dataclass
class PrivacyLedger:
    """The ordered list of DP releases made while fitting one model."""

    entries: list[LedgerEntry] = field(default_factory=list)

    def add(self, entry: LedgerEntry) -> None:
        self.entries.append(entry)

    @property
    def extra_delta(self) -> float:
        return float(sum(e.extra_delta for e in self.entries))

    def epsilon(self, delta: float, accountant: str = DEFAULT_ACCOUNTANT) -> float:
        return epsilon_of(self.entries, delta, accountant)

    def to_dict(self) -> list[dict]:
        return [e.to_dict() for e in self.entries]

    @classmethod
    def from_dict(cls, data: list[dict]) -> "PrivacyLedger":
        return cls([LedgerEntry.from_dict(d) for d in data])

    def report(self, delta: float, accountant: str = DEFAULT_ACCOUNTANT) -> dict:
        """ε(δ) by every accountant, and each event's own ε for the budget split."""
        split = []
        for e in self.entries:
            split.append({**e.to_dict(), "epsilon_alone": epsilon_of([e], delta, accountant)})
        return {
            "delta": delta,
            "accountant": accountant,
            "epsilon": self.epsilon(delta, accountant),
            "epsilon_by_accountant": {
                "rdp": self.epsilon(delta, "rdp"),
                "pld": self.epsilon(delta, "pld"),
            },
            "neighbouring_relation": "add/remove one record",
            "events": split,
        }
