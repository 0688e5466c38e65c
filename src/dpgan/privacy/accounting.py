"""The privacy ledger: every read of private data as a dp-accounting event, and ε(δ) from it.

dp-accounting (Google) is the source of truth for every ε dpgan prints, saves or reports. This
module keeps the list of events, turns each into dp-accounting's RDP curve or PLD, composes them
and converts to ε. The neighbouring relation is add/remove-one record throughout.

Two kinds of entry
------------------
- `LedgerEntry`: a Gaussian mechanism, Poisson-subsampled or one-of-shards, repeated `count`
  times. It is the fast path: calibration searches σ over thousands of compositions of it and the
  progress bar composes it step by step, so its PLD (σ/√c for unsampled repeats, FFT
  self-composition, cached prefixes, a grid widened at small σ) and its RDP curve (cached per
  (σ, q)) are built directly from dp-accounting's Gaussian primitives, exactly as PLDAccountant
  and RdpAccountant build them (tests check both against those accountants).
- `EventEntry` (dpgan.privacy.events): any other dp-accounting `DpEvent` (Laplace, a selection
  by RepeatAndSelect, zCDP, a mixture of Gaussians, ...) with a label, note, count and extra δ.
  Its PLD or RDP curve comes from dp-accounting's PLDAccountant / RdpAccountant themselves (add/
  remove-one, on the ledger's grid and orders), so a new mechanism needs no change here. An entry
  that no accountant supports under add/remove-one (replace-one sampling, non-private events) is
  refused when built; one that the asked accountant cannot account (RDP-only events under "pld")
  is refused by `epsilon_of` and by a budgeted ledger's `add` / `reserve`, naming the entry.
Both compose with each other and with the one-of-shards mixture below (the mixture's "A" is the
composition of every other entry, of either kind).

One-of-shards events (dtgan-g, `sampling="one-of-shards"`)
-----------------------------------------------------------
dtgan-g trains N_d critics WITHOUT noise, critic j on shard j only; a record's shard is a keyed
hash of its content, so neighbouring tables D, D' (one record x added or removed) differ in
exactly one shard k. Each of the T generator steps picks a critic J_t uniformly, independently of
the data, and releases the B clipped gradients at G's output plus Gaussian noise of std σ·2C√B
(`noise_multiplier` = σ: the step's L2 sensitivity is 2C√B, dpgan.training.dp_generator).

Claim. With A the composition of the ledger's other (add/remove) events and G(s) one Gaussian
mechanism of noise multiplier s (G(∞): nothing released), the whole ledger satisfies, for all ε,

    δ(ε) ≤ Σ_{n=0..T} Binomial(n; T, 1/N_d) · δ_{A ∘ G(σ/√n)}(ε).

Proof. Let J = (J_1..J_T) be the selections and R every other random draw except the Gaussian
noise of the releases (critic initialisations and minibatches, G's inputs and conditions, the
shard key). (J, R) is independent of the data; with ideal randomness, one random stream shared by
all of these is equal in law to one independent tape per consumer, so conditioning on (J, R) is
well defined. Fix (J, R) and the outputs of the events in A (they are released before training and
only enter it as inputs). Then critic j's state at any step (weights, Adam moments) is a
deterministic function of shard j, R and the released history (G's trajectory is a function of the
released noisy gradients and of R), and so is the changed shard k = hash_key(x). At a step with
J_t ≠ k the release is f_t(history) + noise with the same f_t under D and D': the same conditional
law. At a step with J_t = k it is h_t(D, history) + N(0, (σ·2C√B)² I) where h_t takes values in B
rows of norm ≤ C, so ‖h_t(D, ·) − h_t(D', ·)‖ ≤ 2C√B whatever the critic's hidden state: a
Gaussian mechanism of noise multiplier σ, chosen adaptively. So, given (J, R), the ledger is an
adaptive composition of A and n = #{t : J_t = k} Gaussian mechanisms of multiplier σ, which is
dominated by A ∘ G(σ/√n) (adaptively composed Gaussian mechanisms are dominated by one Gaussian
with 1/s² = Σ 1/σ_i²: μ-GDP composes as μ² = Σ μ_i², Dong, Roth and Su 2022; dominating pairs
compose adaptively, Zhu, Dong and Wang 2022). The output's law under D is the (J, R)-mixture of
these conditional laws, with the same mixing law under D'. The hockey-stick divergence is jointly
convex, so δ(ε) ≤ E_{J,R}[δ_{A ∘ G(σ/√n)}(ε)], and n ~ Binomial(T, 1/N_d) because the J_t are
independent and uniform and k is fixed. ∎

The argument needs nothing about the critics that were not selected; that is why it replaces
the Wang–Balle–Kasiviswanathan (2019) per-step amplification bound used before (sampling one of
N_d items without replacement, replace-one), which needs the unselected shards' contributions to
have the same law under both neighbours given the released history. Here the hidden critic state
makes that fail: no theorem covered it. The Poisson add/remove model at rate 1/N_d is a realisable
lower bound (privacy README §2 vii) and is never used.

Computation.
- PLD: δ(ε) is linear in the privacy-loss distribution and composition is convolution, so by the
  binomial theorem for convolution powers Σ_n Bin(n; T, q)·PLD(G(σ))^{⊛n} =
  ((1−q)·PLD(∅) + q·PLD(G(σ)))^{⊛T}, and PLD(G(σ))^{⊛n} = PLD(G(σ/√n)). The shard entry is
  therefore dp-accounting's pessimistic Gaussian PLD mixed with the identity at weight q = 1/N_d
  (`compute_mixture`; a mixture of pessimistic PLDs is pessimistic), self-composed T times by FFT
  and composed with A's PLD: the bound above, with no truncation of the binomial beyond
  dp-accounting's own pessimistic 1e-15 tail. Checked against the closed-form Gaussian mixture
  to 1e-4 (measured ≤ 2e-7) in tests/test_accounting.py.
- RDP: per n, RDP_n(α) = RDP_A(α) + n·α/(2σ²) (the curves add; the Gaussian curve from
  dp-accounting), converted to δ_n(ε) by dp-accounting's conversion (Balle et al. 2020;
  rdp-classic: Mironov's min_α exp((α−1)(RDP_n(α) − ε))) and mixed over the binomial. δ_n grows
  with n, so n is grouped into buckets each charged at its largest n (width 1 up to n = 1000,
  then 0.1% of n; the lowest bucket is [0, n_lo] with P(n ≤ n_lo) ≤ 1e-6·δ); the binomial's mass
  above the last bucket (≤ 1e-6·δ) is charged δ_n = 1.
  Converting per n and then mixing is tighter than converting the mixed curve
  (1/(α−1))·log E exp((α−1)·RDP_n(α)) (also valid), since each n gets its own order.
A ledger may hold one kind of shard event (one σ and N_d; several entries of that kind are one
entry with the summed count: each of their steps picks the changed shard independently with
probability 1/N_d). Two kinds would need a
joint distribution of two counts; nothing in dpgan builds such a ledger, so it is refused.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np
from dp_accounting import dp_event
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon as rdp_to_epsilon
from scipy import optimize, stats

from dpgan.errors import BudgetError, InputError
from dpgan.privacy.events import EVENT_MECHANISM, EventEntry, describe, event_pld, event_rdp, supporting_accountants

ACCOUNTANTS = ("pld", "rdp", "rdp-classic")
DEFAULT_ACCOUNTANT = "pld"
PLD_DISCRETIZATION = 1e-4
# TF-Privacy's 2019 order grid; with Mironov's Prop. 3 conversion it reproduces the seed papers'
# printed ε (1.26, 9.6, 3.7). Offered for comparison only: it is valid but looser.
CLASSIC_2019_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)))
# RdpAccountant's default orders (kept explicit so two accountants' curves can be added)
RDP_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024])
POISSON = "poisson"
# one of N_d disjoint shards chosen uniformly per step (dtgan-g): the binomial mixture of the
# module docstring. Never the Poisson add/remove model, which is only a lower bound here.
ONE_OF_SHARDS = "one-of-shards"
SAMPLINGS = (POISSON, ONE_OF_SHARDS)
# RDP mixture over n: buckets (a, b] are charged δ_b; width 1 up to n = 1/BUCKET_WIDTH, then
# BUCKET_WIDTH·n; the binomial mass above the last bucket, at most BINOMIAL_TAIL·δ, is charged 1.
BUCKET_WIDTH = 1e-3
BINOMIAL_TAIL = 1e-6


@dataclass(frozen=True)
class LedgerEntry:
    """One DP release: a Gaussian mechanism, optionally Poisson-subsampled, repeated `count` times.

    `noise_multiplier` is the noise std divided by the L2 sensitivity (σ, not σ·C).
    `sampling="one-of-shards"` with `sampling_rate` = 1/N_d is a dtgan-g generator step (module
    docstring). `extra_delta` is the probability of a failure event that lies outside the
    accountant (the threshold of a DP set-union over unknown categories); it is added to δ,
    never hidden. Any other mechanism is an EventEntry (dpgan.privacy.events; module docstring).
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
        if not (self.noise_multiplier > 0 and math.isfinite(self.noise_multiplier)):
            raise InputError(f"{self.name}: noise multiplier must be a positive number")
        if not 0.0 < self.sampling_rate <= 1.0:
            raise InputError(f"{self.name}: sampling rate must be in (0, 1]")
        if self.sampling == ONE_OF_SHARDS:
            shards = 1.0 / self.sampling_rate
            if abs(shards - round(shards)) > 1e-9 or round(shards) < 1:
                raise InputError(f"{self.name}: one-of-shards needs a sampling rate 1/n")
        if self.count < 0 or int(self.count) != self.count:
            raise InputError(f"{self.name}: count must be a non-negative integer")
        if not 0.0 <= self.extra_delta < 1.0:
            raise InputError(f"{self.name}: extra_delta must be in [0, 1)")

    @property
    def num_shards(self) -> int:
        return int(round(1.0 / self.sampling_rate))

    def to_dp_event(self) -> dp_event.DpEvent:
        """The dp-accounting event of a Poisson entry. A one-of-shards entry has none: it is a
        binomial mixture (module docstring), computed by `epsilon_of` itself."""
        if self.sampling == ONE_OF_SHARDS:
            raise InputError(f"{self.name}: a one-of-shards entry has no dp-accounting event; use epsilon_of")
        event: dp_event.DpEvent = dp_event.GaussianDpEvent(self.noise_multiplier)
        if self.sampling_rate < 1.0:
            event = dp_event.PoissonSampledDpEvent(self.sampling_rate, event)
        if self.count == 0:
            return dp_event.NoOpDpEvent()
        if self.count > 1:
            event = dp_event.SelfComposedDpEvent(event, int(self.count))
        return event

    def describe(self) -> str:
        """One line for reports: the mechanism and its parameters."""
        if self.sampling == ONE_OF_SHARDS:
            return f"Gaussian σ={self.noise_multiplier:.4g}, one of {self.num_shards} shards per step"
        if self.sampling_rate < 1.0:
            return f"Gaussian σ={self.noise_multiplier:.4g}, Poisson q={self.sampling_rate:.4g}"
        return f"Gaussian σ={self.noise_multiplier:.4g}"

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


# A ledger entry: the Gaussian fast path or a general dp-accounting event (dpgan.privacy.events).
Entry = LedgerEntry | EventEntry


def entry_from_dict(data: dict) -> Entry:
    """A saved entry of either kind: "mechanism" is "gaussian" (LedgerEntry, every ledger saved
    before general entries existed) or "dp_event" (EventEntry)."""
    if isinstance(data, dict) and data.get("mechanism") == EVENT_MECHANISM:
        return EventEntry.from_dict(data)
    return LedgerEntry.from_dict(data)


def is_shard(entry: Entry) -> bool:
    return isinstance(entry, LedgerEntry) and entry.sampling == ONE_OF_SHARDS


def check_accountable(entries: Iterable[Entry], accountant: str) -> None:
    """InputError naming the first general entry that `accountant` cannot account (add/remove-one)."""
    for e in entries:
        if isinstance(e, EventEntry) and accountant not in supporting_accountants(e.event):
            others = ", ".join(supporting_accountants(e.event))
            raise InputError(
                f"{e.name}: the {accountant} accountant cannot account {describe(e.event)} under add/remove-one "
                f"neighbours; choose {others}"
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


def composed_event(entries: Iterable[Entry]) -> dp_event.DpEvent:
    return dp_event.ComposedDpEvent([e.to_dp_event() for e in entries])


def _rdp_curve(event: dp_event.DpEvent, orders: Sequence[float]) -> np.ndarray:
    """RDP of `event` at `orders`, computed by dp-accounting's RdpAccountant (events.event_rdp)."""
    return event_rdp(event, orders)


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


def split_shard_entry(entries: Iterable[Entry]) -> tuple[list[Entry], LedgerEntry | None]:
    """The add/remove entries (count > 0, in order) and the ledger's one shard kind, merged.

    Entries of one shard kind (σ, N_d) are one entry with the summed count: the binomial argument
    is per step. Two kinds are refused (module docstring)."""
    entries = list(entries)
    regular = [e for e in entries if e.count > 0 and not is_shard(e)]
    shards = [e for e in entries if e.count > 0 and is_shard(e)]
    if not shards:
        return regular, None
    if len({(e.noise_multiplier, e.num_shards) for e in shards}) > 1:
        raise InputError(
            "a ledger may hold one kind of one-of-shards event (one noise multiplier and shard count); "
            f"got {len(shards)} entries of different kinds"
        )
    return regular, replace(shards[0], count=sum(e.count for e in shards))


def epsilon_of(
    entries: Sequence[Entry], delta: float, accountant: str = DEFAULT_ACCOUNTANT, *, pld_coarsening: float = 1.0
) -> float:
    """ε at total δ for the composition of `entries`; δ pays first for the entries' extra_delta.

    `pld_coarsening` > 1 widens PLD's grid that many times: faster and still an upper bound (dp-
    accounting rounds pessimistically), for searches only; a printed ε uses the ledger's grid (1).
    The last few answers are kept (entries are immutable): a fit's final ε is asked by the progress
    bar, the privacy report and the saved model, and is composed once."""
    check_accountant(accountant)
    check_accountable(entries, accountant)
    return _epsilon_of(tuple(entries), float(delta), accountant, float(pld_coarsening))


@functools.lru_cache(maxsize=32)
def _epsilon_of(entries: tuple[Entry, ...], delta: float, accountant: str, pld_coarsening: float) -> float:
    accountant_delta = delta - sum(e.extra_delta for e in entries)
    if accountant_delta <= 0:
        return math.inf
    regular, shard = split_shard_entry(entries)
    if not regular and shard is None:
        return 0.0
    with _quiet_rdp_orders():
        if accountant == "pld":
            ordered = (*regular, shard) if shard is not None else tuple(regular)
            return _pld_epsilon(ordered, accountant_delta, pld_coarsening)
        orders = CLASSIC_2019_ORDERS if accountant == "rdp-classic" else RDP_ORDERS
        return rdp_epsilon(orders, regular_rdp(tuple(regular), orders), shard, accountant_delta, accountant)


def _pld_epsilon(ordered: tuple[Entry, ...], delta: float, coarsening: float) -> float:
    """PLD's ε on the ledger's grid (coarsening 1) or on a grid `coarsening` times wider."""
    discretization = pld_discretization(ordered) * coarsening
    return float(composed_pld(ordered, discretization).get_epsilon_for_delta(delta))


def pld_discretization(entries: Sequence[Entry]) -> float:
    """The PLD grid step for `entries`: 1e-4, widened as 1/σ² below σ ≈ 0.32.

    A Gaussian's privacy loss spans a range that grows as 1/σ², so a fixed step makes the grid, and
    the time, grow as 1/σ² (ε = 1000 took minutes). Widening the step with it keeps the grid's size
    bounded. dp-accounting's PLD rounds pessimistically, so a coarser grid only loosens the bound
    (at σ = 0.15, 1,000 steps: the same ε to 4 decimals, 5 s instead of 26 s). General entries
    (EventEntry) do not widen it: their PLDs are built on whatever grid the Gaussians need."""
    sigmas = [e.noise_multiplier for e in entries if isinstance(e, LedgerEntry)]
    if not sigmas:
        return PLD_DISCRETIZATION
    smallest = min(sigmas)
    return PLD_DISCRETIZATION * max(1.0, 1.0 / (10.0 * smallest**2))


# --- PLD ----------------------------------------------------------------------------------------


def step_pld(entry: LedgerEntry, discretization: float) -> pld_lib.PrivacyLossDistribution:
    """dp-accounting's pessimistic PLD of ONE step of `entry` (its count is ignored).

    Poisson: the subsampled Gaussian, as PLDAccountant builds it. One of N_d shards: the Gaussian
    mixed with the identity (no loss) at weight 1/N_d, whose T-fold composition is the binomial
    mixture of the module docstring."""
    if entry.sampling == ONE_OF_SHARDS:
        gaussian = pld_lib.from_gaussian_mechanism(entry.noise_multiplier, value_discretization_interval=discretization)
        return gaussian.compute_mixture(pld_lib.identity(discretization), entry.sampling_rate)
    return pld_lib.from_gaussian_mechanism(
        entry.noise_multiplier, value_discretization_interval=discretization, sampling_prob=entry.sampling_rate
    )


def entry_pld(entry: Entry, discretization: float) -> pld_lib.PrivacyLossDistribution:
    """The PLD of all `count` steps of `entry`, built exactly as dp-accounting's PLDAccountant does
    (an unsampled Gaussian repeated c times is one Gaussian of multiplier σ/√c); a general entry's
    is the PLDAccountant's own (events.event_pld)."""
    if isinstance(entry, EventEntry):
        return _accounted(entry, event_pld, entry.event, int(entry.count), discretization)
    if entry.sampling == POISSON and entry.sampling_rate == 1.0:
        return pld_lib.from_gaussian_mechanism(
            entry.noise_multiplier / math.sqrt(entry.count), value_discretization_interval=discretization
        )
    return step_pld(entry, discretization).self_compose(int(entry.count))


def composed_pld(entries: tuple[Entry, ...], discretization: float) -> pld_lib.PrivacyLossDistribution:
    """The entries' PLDs composed in order from the identity, as PLDAccountant composes them.

    Every proper prefix is cached, so calibration (the same prior, a new last entry each time)
    composes the prior once; the last entry's PLD is not kept."""
    if not entries:
        return pld_lib.identity(discretization)
    return _prefix_pld(entries[:-1], discretization).compose(entry_pld(entries[-1], discretization))


@functools.lru_cache(maxsize=8)
def _prefix_pld(entries: tuple[Entry, ...], discretization: float) -> pld_lib.PrivacyLossDistribution:
    return composed_pld(entries, discretization)


# --- RDP ----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _step_rdp(noise_multiplier: float, sampling_rate: float, orders: tuple[float, ...]) -> np.ndarray:
    """dp-accounting's RDP curve of one (Poisson-subsampled) Gaussian step."""
    event: dp_event.DpEvent = dp_event.GaussianDpEvent(noise_multiplier)
    if sampling_rate < 1.0:
        event = dp_event.PoissonSampledDpEvent(sampling_rate, event)
    curve = _rdp_curve(event, orders)
    curve.setflags(write=False)
    return curve


def regular_rdp(entries: tuple[Entry, ...], orders: tuple[float, ...]) -> np.ndarray:
    """RDP curve of add/remove entries: count × the step curve, summed in order (as RdpAccountant
    composes a SelfComposedDpEvent); a general entry's step curve is RdpAccountant's own."""
    rdp = np.zeros(len(orders))
    for e in entries:
        if isinstance(e, EventEntry):
            rdp += e.count * _accounted(e, _event_rdp, e.event, orders)
        else:
            rdp += e.count * _step_rdp(e.noise_multiplier, e.sampling_rate, orders)
    return rdp


@functools.lru_cache(maxsize=256)
def _event_rdp(event: dp_event.DpEvent, orders: tuple[float, ...]) -> np.ndarray:
    curve = event_rdp(event, orders)
    curve.setflags(write=False)
    return curve


def _accounted(entry: EventEntry, compute, *args):  # noqa: ANN001, ANN202
    """`compute(*args)`, with dp-accounting's refusal of the event's parameters (a ValueError,
    e.g. a RepeatAndSelect shape it has no formula for) turned into one line naming the entry."""
    try:
        return compute(*args)
    except (ValueError, ArithmeticError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{entry.name}: dp-accounting cannot account {describe(entry.event)}: {first}") from None


def rdp_log_delta(orders: Sequence[float], rdp: np.ndarray, epsilon: float, classic: bool = False) -> np.ndarray:
    """log δ(ε) for each row of `rdp` (shape (..., orders)), vectorised.

    classic=False is dp-accounting's `compute_delta` (Balle et al. 2020 Prop. 12, with the KL
    bound for α near 1), row by row; classic=True is Mironov's Prop. 3, min_α (α−1)(RDP(α) − ε).
    The per-n RDP mixture needs it for hundreds of curves per ε, which the library's loop over
    orders makes too slow for calibration; tests check it equals `compute_delta`."""
    a = np.asarray(orders, dtype=np.float64)
    rdp = np.asarray(rdp, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if classic:
            return np.min((a - 1.0) * (rdp - epsilon), axis=-1)
        kl = np.where(rdp > 0, 0.5 * np.log1p(-np.exp(-rdp)), -np.inf)
        bound = np.where(a > 1.01, (a - 1.0) * (rdp - epsilon + np.log1p(-1.0 / a)) - np.log(a), np.inf)
        return np.min(np.minimum(kl, bound), axis=-1)


@functools.lru_cache(maxsize=64)
def binomial_buckets(trials: int, rate: float, tail: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Buckets of n ~ Binomial(trials, rate) for a mixture whose terms grow with n.

    Returns (tops, weights, mass_above): bucket i holds the n in (tops[i-1], tops[i]] (the first
    [0, tops[0]]) with probability weights[i], and is charged at its top; mass_above ≤ `tail` is
    the probability of n > tops[-1], to be charged at most 1. Buckets have width 1 up to
    n = 1/BUCKET_WIDTH and then BUCKET_WIDTH·n."""
    if rate >= 1.0:
        return np.array([trials], dtype=np.int64), np.array([1.0]), 0.0
    dist = stats.binom(trials, rate)
    low = int(max(0, dist.ppf(tail) - 1))
    high = int(min(trials, dist.isf(tail)))
    while high < trials and dist.sf(high) > tail:
        high += 1
    unit = int(1.0 / BUCKET_WIDTH)
    tops = np.arange(low, min(high, unit) + 1, dtype=np.int64)
    if high > unit:
        start = max(low, unit)
        k = np.arange(int(math.ceil(math.log(high / start) / math.log1p(BUCKET_WIDTH))) + 2)
        wide = np.unique(np.ceil(start * (1.0 + BUCKET_WIDTH) ** k).astype(np.int64))
        tops = np.unique(np.concatenate([tops, np.minimum(wide, high)]))
    below = dist.cdf(tops)
    above = dist.sf(tops)
    # P(prev < n ≤ top), from whichever tail keeps it accurate
    mean = trials * rate
    prev_below = np.concatenate([[0.0], below[:-1]])
    prev_above = np.concatenate([[1.0], above[:-1]])
    weights = np.where(tops <= mean, below - prev_below, prev_above - above)
    weights = np.maximum(weights, 0.0)
    return tops, weights, float(above[-1])


def rdp_epsilon(
    orders: tuple[float, ...], base: np.ndarray, shard: LedgerEntry | None, delta: float, accountant: str
) -> float:
    """ε at δ for the RDP curve `base` of the add/remove events, mixed over the shard entry's n.

    Without a shard entry it is dp-accounting's conversion of `base` (Mironov's for rdp-classic).
    With one, δ(ε) = Σ_buckets P(bucket)·δ(base + n_top·α/(2σ²); ε) + P(n above the buckets),
    solved for ε (module docstring)."""
    classic = accountant == "rdp-classic"
    if shard is None:
        if classic:
            return float(np.min(base + math.log(1.0 / delta) / (np.asarray(orders) - 1.0)))
        return float(rdp_to_epsilon(orders, base, delta)[0])
    unit = _step_rdp(shard.noise_multiplier, 1.0, orders)
    tops, weights, above = binomial_buckets(int(shard.count), shard.sampling_rate, BINOMIAL_TAIL * delta)
    curves = base[None, :] + tops[:, None].astype(np.float64) * unit[None, :]

    def excess(epsilon: float) -> float:
        deltas = np.minimum(np.exp(rdp_log_delta(orders, curves, epsilon, classic)), 1.0)
        return float(weights @ deltas) + above - delta

    if excess(0.0) <= 0:
        return 0.0
    high = 1.0
    while excess(high) > 0:
        high *= 2.0
        if high > 1e7:
            return math.inf
    return float(optimize.brentq(excess, 0.0, high, xtol=1e-12, rtol=1e-10))


@dataclass(frozen=True)
class Budget:
    """The (ε, δ) a ledger may not pass, and the accountant that decides it."""

    epsilon: float
    delta: float
    accountant: str = DEFAULT_ACCOUNTANT

    def __post_init__(self) -> None:
        check_epsilon_delta(self.epsilon, self.delta)
        check_accountant(self.accountant)

    def to_dict(self) -> dict:
        return asdict(self)


class Reservation:
    """Steps of one kind reserved in a ledger: each release charges one; none past the reservation.

    The reserved count is what the ledger's budget checks use until the ledger is saved, so
    releases still to come can never be overtaken by a later addition."""

    def __init__(self, ledger: "PrivacyLedger", index: int, capacity: int) -> None:
        self.ledger, self.index, self.capacity = ledger, index, capacity

    @property
    def used(self) -> int:
        return int(self.ledger.entries[self.index].count)

    def charge(self) -> None:
        """Record one more release; refused (BudgetError) once the reserved steps are spent."""
        entry = self.ledger.entries[self.index]
        if entry.count >= self.capacity:
            raise BudgetError(f"{entry.name}: its {self.capacity} reserved steps are spent; another would pass ε")
        self.ledger.entries[self.index] = replace(entry, count=entry.count + 1)


@dataclass
class PrivacyLedger:
    """The ordered list of DP releases made while fitting one model.

    With a `budget`, nothing is added that would take ε past it (BudgetError, before the release):
    `add` for a release about to be made, `reserve` for steps a private step will charge one by one
    (dpgan.privacy.step). `state_dict` / `from_state_dict` keep it across a checkpoint, with its
    open reservations, so a resumed fit neither forgets nor double-counts what was spent."""

    entries: list[Entry] = field(default_factory=list)
    budget: Budget | None = None
    reserved: dict[int, int] = field(default_factory=dict)  # entry index → reserved steps

    def add(self, entry: Entry) -> None:
        self._check(entry, entry.count)
        self.entries.append(entry)

    def reserve(self, step: Entry, steps: int) -> Reservation:
        """Reserve `steps` releases of `step` (its count is ignored); the ledger's entry starts at 0."""
        if isinstance(steps, bool) or int(steps) != steps or steps < 0:
            raise InputError(f"steps must be a non-negative integer, got {steps!r}")
        self._check(step, int(steps))
        self.entries.append(replace(step, count=0))
        index = len(self.entries) - 1
        self.reserved[index] = int(steps)
        return Reservation(self, index, int(steps))

    def committed(self) -> list[Entry]:
        """The entries with every open reservation counted in full: what the budget must cover."""
        return [
            replace(e, count=max(e.count, self.reserved.get(i, 0))) if i in self.reserved else e
            for i, e in enumerate(self.entries)
        ]

    def _check(self, entry: Entry, count: int) -> None:
        """Refuse an entry no accountant can take (InputError) or that would pass the budget (BudgetError).

        An EventEntry is accountable by some accountant under add/remove-one (its constructor checks);
        with a budget, it must be by the budget's accountant, since that is what decides the ledger."""
        if not isinstance(entry, (LedgerEntry, EventEntry)):
            raise InputError(f"a ledger entry must be a LedgerEntry or an EventEntry, not {type(entry).__name__}")
        if self.budget is None:
            return
        check_accountable([entry], self.budget.accountant)
        spent = epsilon_of([*self.committed(), replace(entry, count=count)], self.budget.delta, self.budget.accountant)
        if spent > self.budget.epsilon * (1 + 1e-9):
            raise BudgetError(
                f"{entry.name}: {count} more release(s) would take ε to {spent:.4f}, past the budget "
                f"{self.budget.epsilon:g} ({self.budget.accountant})"
            )

    @property
    def extra_delta(self) -> float:
        return float(sum(e.extra_delta for e in self.entries))

    def epsilon(self, delta: float, accountant: str = DEFAULT_ACCOUNTANT) -> float:
        return epsilon_of(self.entries, delta, accountant)

    def to_dict(self) -> list[dict]:
        return [e.to_dict() for e in self.entries]

    @classmethod
    def from_dict(cls, data: list[dict]) -> "PrivacyLedger":
        """A saved ledger (no budget). Its general entries were each accountable by some accountant
        when saved (EventEntry checks it again here); asking ε from one that cannot account an
        entry is an InputError naming it (`epsilon_of`), never a silently smaller ledger."""
        if not isinstance(data, (list, tuple)):
            raise InputError("a saved ledger must be a list of entries")
        return cls([entry_from_dict(d) for d in data])

    def state_dict(self) -> dict:
        """Everything needed to go on spending from here (JSON-serialisable)."""
        return {
            "entries": self.to_dict(),
            "budget": None if self.budget is None else self.budget.to_dict(),
            "reserved": {str(i): n for i, n in self.reserved.items()},
        }

    @classmethod
    def from_state_dict(cls, state: dict) -> "PrivacyLedger":
        try:
            budget = None if state.get("budget") is None else Budget(**state["budget"])
            reserved = {int(i): int(n) for i, n in dict(state.get("reserved", {})).items()}
            ledger = cls([entry_from_dict(d) for d in state["entries"]], budget, reserved)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"not a ledger state: {exc}") from None
        if budget is not None:
            check_accountable(ledger.entries, budget.accountant)
        if any(not 0 <= i < len(ledger.entries) for i in reserved):
            raise InputError("not a ledger state: a reservation points past the entries")
        return ledger

    def reservation(self, index: int) -> Reservation:
        """The open reservation of entry `index` (after `from_state_dict`: resume charging it)."""
        if index not in self.reserved:
            raise InputError(f"entry {index} holds no reservation")
        return Reservation(self, index, self.reserved[index])

    def _epsilon_or_none(self, delta: float, accountant: str) -> float | None:
        try:
            check_accountable(self.entries, accountant)
        except InputError:
            return None
        return self.epsilon(delta, accountant)

    def report(self, delta: float, accountant: str = DEFAULT_ACCOUNTANT) -> dict:
        """ε(δ) by every accountant, and each event's own ε for the budget split.

        `accountant` must be able to account every entry (InputError naming the first it cannot);
        in `epsilon_by_accountant` an accountant that cannot (an RDP-only event under "pld", say)
        shows None, never a number for a smaller ledger."""
        epsilon = self.epsilon(delta, accountant)
        split = []
        for e in self.entries:
            split.append(
                {**e.to_dict(), "mechanism_text": e.describe(), "epsilon_alone": epsilon_of([e], delta, accountant)}
            )
        return {
            "delta": delta,
            "accountant": accountant,
            "epsilon": epsilon,
            "epsilon_by_accountant": {name: self._epsilon_or_none(delta, name) for name in ("rdp", "pld")},
            "neighbouring_relation": "add/remove one record",
            "events": split,
        }


class IncrementalAccountant:
    """ε of `prior` plus t repetitions of one step, for growing t (a progress bar's ε).

    `epsilon_after(t)` is `epsilon_of([*prior, replace(step, count=t)], delta, accountant)` up to
    floating-point and dp-accounting's pessimistic tail truncation, and reuses earlier work:
    - pld: the composed PLD is kept; the t − t_prev new steps are one FFT self-composition of the
      step's PLD (cached per t − t_prev: a progress bar asks for the same stride each time) and one
      convolution with the kept PLD. Asking for fewer steps than last time starts from the prior.
    - rdp, rdp-classic: curves add, so the prior's and the step's curves are computed once and a
      call is one conversion; with a one-of-shards step it is the binomial mixture over n, which has
      no running form but is vectorised (module docstring).
    `discretization` replaces epsilon_of's PLD grid step: a coarser one is faster (1e-3: about 10×
    faster on Adult's ledgers, ε up to 0.3% larger; bench/progress_accounting.py) and, dp-accounting's
    rounding being pessimistic, still a valid bound. A progress display can use it; the ledger's
    final ε never does.
    """

    def __init__(
        self,
        prior: Sequence[Entry],
        step: LedgerEntry,
        *,
        delta: float,
        accountant: str = DEFAULT_ACCOUNTANT,
        discretization: float | None = None,
    ) -> None:
        check_accountant(accountant)
        check_accountable(prior, accountant)
        if not isinstance(step, LedgerEntry):
            raise InputError(f"{getattr(step, 'name', 'step')}: the repeated step must be a Gaussian LedgerEntry")
        if not isinstance(delta, (int, float)) or not (0.0 < delta < 1.0):
            raise InputError(f"delta must be in (0, 1), got {delta!r}")
        if discretization is not None and not (0.0 < discretization < 1.0):
            raise InputError(f"discretization must be in (0, 1), got {discretization!r}")
        self.accountant = accountant
        self.step = replace(step, count=1)
        prior_regular, self._prior_shard = split_shard_entry(prior)
        split_shard_entry([*prior, self.step])  # two shard kinds are refused here, not at the first call
        self._delta = delta - sum(e.extra_delta for e in prior) - step.extra_delta
        self._steps = 0
        with _quiet_rdp_orders():
            if accountant == "pld":
                prior_entries = (*prior_regular, *([self._prior_shard] if self._prior_shard else []))
                grid = discretization or pld_discretization([*prior_entries, self.step])
                self._discretization = grid
                self._prior_pld = composed_pld(prior_entries, self._discretization)
                self._pld = self._prior_pld
                self._step_pld = step_pld(self.step, self._discretization)
                self._powers: dict[int, pld_lib.PrivacyLossDistribution] = {}
            else:
                self._orders = CLASSIC_2019_ORDERS if accountant == "rdp-classic" else RDP_ORDERS
                self._base = regular_rdp(tuple(prior_regular), self._orders)
                if self.step.sampling == POISSON:
                    self._unit = _step_rdp(self.step.noise_multiplier, self.step.sampling_rate, self._orders)

    def epsilon_after(self, steps: int) -> float:
        """ε at δ after `steps` steps (and the prior)."""
        if isinstance(steps, bool) or int(steps) != steps or steps < 0:
            raise InputError(f"steps must be a non-negative integer, got {steps!r}")
        steps = int(steps)
        if self._delta <= 0:
            return math.inf
        with _quiet_rdp_orders():
            if self.accountant == "pld":
                return self._pld_epsilon(steps)
            return self._rdp_epsilon(steps)

    def _pld_epsilon(self, steps: int) -> float:
        if steps < self._steps:
            self._pld, self._steps = self._prior_pld, 0
        new = steps - self._steps
        if new > 0:
            if new not in self._powers:
                if len(self._powers) >= 4:
                    self._powers.clear()
                self._powers[new] = self._step_pld.self_compose(new)
            self._pld = self._pld.compose(self._powers[new])
            self._steps = steps
        return float(self._pld.get_epsilon_for_delta(self._delta))

    def _rdp_epsilon(self, steps: int) -> float:
        base, shard = self._base, self._prior_shard
        if self.step.sampling == POISSON:
            base = base + steps * self._unit
        elif steps > 0:
            shard = replace(self.step, count=steps + (shard.count if shard is not None else 0))
        return rdp_epsilon(self._orders, base, shard, self._delta, self.accountant)
