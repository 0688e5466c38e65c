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

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

from dp_accounting.pld import privacy_loss_distribution as pld_lib

from dpgan.errors import BudgetError, InputError
from dpgan.privacy.events import EventEntry
from dpgan.privacy.ledger_entry import (
    ACCOUNTANTS,
    BINOMIAL_TAIL,
    BUCKET_WIDTH,
    CLASSIC_2019_ORDERS,
    DEFAULT_ACCOUNTANT,
    ONE_OF_SHARDS,
    PLD_DISCRETIZATION,
    POISSON,
    RDP_ORDERS,
    Entry,
    LedgerEntry,
    check_accountable,
    check_accountant,
    check_epsilon_delta,
    composed_event,
    entry_from_dict,
    split_shard_entry,
)
from dpgan.privacy.pld_accounting import (
    MAX_DISCRETIZATION,
    composed_pld,
    entry_pld,
    pld_discretization,
    pld_epsilon,
    prefix_pld,
    step_pld,
)
from dpgan.privacy.rdp_accounting import (
    binomial_buckets,
    quiet_rdp_orders,
    rdp_epsilon,
    rdp_log_delta,
    regular_rdp,
    step_rdp,
)


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
    with quiet_rdp_orders():
        if accountant == "pld":
            ordered = (*regular, shard) if shard is not None else tuple(regular)
            return pld_epsilon(ordered, accountant_delta, pld_coarsening)
        orders = CLASSIC_2019_ORDERS if accountant == "rdp-classic" else RDP_ORDERS
        return rdp_epsilon(orders, regular_rdp(tuple(regular), orders), shard, accountant_delta, accountant)


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
        if discretization is not None and not (0.0 < discretization <= 5 * MAX_DISCRETIZATION):
            raise InputError(f"discretization must be in (0, {5 * MAX_DISCRETIZATION:g}], got {discretization!r}")
        self.accountant = accountant
        self.step = replace(step, count=1)
        prior_regular, self._prior_shard = split_shard_entry(prior)
        split_shard_entry([*prior, self.step])  # two shard kinds are refused here, not at the first call
        self._delta = delta - sum(e.extra_delta for e in prior) - step.extra_delta
        self._steps = 0
        self._unbounded = False
        with quiet_rdp_orders():
            if accountant == "pld":
                prior_entries = (*prior_regular, *([self._prior_shard] if self._prior_shard else []))
                ledger_grid = pld_discretization([*prior_entries, self.step])
                if ledger_grid > MAX_DISCRETIZATION:  # past what dp-accounting builds: ε is inf (pld_epsilon)
                    self._unbounded = True
                    return
                self._discretization = discretization or ledger_grid
                self._prior_pld = composed_pld(prior_entries, self._discretization)
                self._pld = self._prior_pld
                self._step_pld = step_pld(self.step, self._discretization)
                self._powers: dict[int, pld_lib.PrivacyLossDistribution] = {}
            else:
                self._orders = CLASSIC_2019_ORDERS if accountant == "rdp-classic" else RDP_ORDERS
                self._base = regular_rdp(tuple(prior_regular), self._orders)
                if self.step.sampling == POISSON:
                    self._unit = step_rdp(self.step.noise_multiplier, self.step.sampling_rate, self._orders)

    def epsilon_after(self, steps: int) -> float:
        """ε at δ after `steps` steps (and the prior)."""
        if isinstance(steps, bool) or int(steps) != steps or steps < 0:
            raise InputError(f"steps must be a non-negative integer, got {steps!r}")
        steps = int(steps)
        if self._delta <= 0 or self._unbounded:
            return math.inf
        with quiet_rdp_orders():
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


# one interface: the ledger, ε(δ), and the entries and accountant sides it is built from
__all__ = [
    "ACCOUNTANTS",
    "BINOMIAL_TAIL",
    "BUCKET_WIDTH",
    "CLASSIC_2019_ORDERS",
    "DEFAULT_ACCOUNTANT",
    "ONE_OF_SHARDS",
    "PLD_DISCRETIZATION",
    "POISSON",
    "RDP_ORDERS",
    "Budget",
    "Entry",
    "EventEntry",
    "IncrementalAccountant",
    "LedgerEntry",
    "PrivacyLedger",
    "Reservation",
    "binomial_buckets",
    "check_accountant",
    "check_epsilon_delta",
    "composed_event",
    "composed_pld",
    "entry_from_dict",
    "entry_pld",
    "epsilon_of",
    "pld_discretization",
    "prefix_pld",
    "rdp_epsilon",
    "rdp_log_delta",
    "regular_rdp",
    "step_pld",
    "step_rdp",
]
