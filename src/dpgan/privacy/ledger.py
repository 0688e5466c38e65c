"""The privacy ledger: the ordered list of a fit's DP releases, its budget and reservations.

Composition (ε(δ) from the entries) is dpgan.privacy.accounting's, through dp-accounting; this
module only holds, checks, saves and loads the list, and asks the accountant when a number is
needed (`epsilon_of`: the checks here, the composition in dpgan.privacy.composition). It imports
nothing of dp-accounting itself, so a saved model loads its ledger (strictly:
every entry parsed and checked) without the second of imports dp-accounting and scipy take; the
accountant is imported on the first ε asked (a fit, `privacy_report`, the budget checks).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from dpgan.errors import BudgetError, InputError
from dpgan.privacy.fresh_stack import on_fresh_stack
from dpgan.privacy.ledger_entry import (
    DEFAULT_ACCOUNTANT,
    Entry,
    LedgerEntry,
    check_accountable,
    check_accountant,
    check_epsilon_delta,
    entry_from_dict,
)

if TYPE_CHECKING:
    from dpgan.privacy.events import EventEntry  # noqa: F401 (named in docstrings and Entry)


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
    # dp-accounting and scipy load here, on the first ε asked: on a fresh frame stack, so that their
    # import's loops run at the same depth from every entry point (dpgan.privacy.fresh_stack)
    composition = on_fresh_stack(importlib.import_module, "dpgan.privacy.composition")
    return composition.composed_epsilon(tuple(entries), float(delta), accountant, float(pld_coarsening))


def _is_event_entry(entry: object) -> bool:
    """Whether `entry` is a general dp-accounting entry; only a non-Gaussian entry imports them."""
    from dpgan.privacy.events import EventEntry

    return isinstance(entry, EventEntry)


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
        if not isinstance(entry, LedgerEntry) and not _is_event_entry(entry):
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


# the ledger, and the checks a facade runs on its (ε, δ) and accountant before any read
__all__ = [
    "DEFAULT_ACCOUNTANT",
    "Budget",
    "PrivacyLedger",
    "Reservation",
    "check_accountant",
    "check_epsilon_delta",
    "epsilon_of",
]
