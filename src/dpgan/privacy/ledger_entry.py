"""The entries of the privacy ledger and the names the accountants share.

`LedgerEntry` is the Gaussian fast path (a Gaussian mechanism, Poisson-subsampled or one-of-shards,
repeated `count` times); `EventEntry` (dpgan.privacy.events) any other dp-accounting event. Both are
composed by dpgan.privacy.accounting (the ledger, ε(δ)) through the PLD and RDP sides
(pld_accounting.py, rdp_accounting.py); the one-of-shards argument is accounting.py's docstring.
Nothing here composes: it defines, saves, loads and checks entries.

Nothing here imports dp-accounting at module level (about a second of imports with its scipy):
a saved model whose ledger holds only Gaussian entries loads, samples and states its ε from the
stored report without it. dp-accounting is imported when an entry becomes a dp-accounting event,
when a general (EventEntry) entry is read, or when ε is composed (dpgan.privacy.accounting).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, TypeAlias

from dpgan.errors import InputError
from dpgan.privacy.accounting_names import (
    ACCOUNTANTS,
    BINOMIAL_TAIL,
    BUCKET_WIDTH,
    CLASSIC_2019_ORDERS,
    DEFAULT_ACCOUNTANT,
    EVENT_MECHANISM,
    ONE_OF_SHARDS,
    PLD_DISCRETIZATION,
    POISSON,
    RDP_ORDERS,
    SAMPLINGS,
)

if TYPE_CHECKING:
    from dp_accounting import dp_event

    from dpgan.privacy.events import EventEntry


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
        from dp_accounting import dp_event

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
Entry: TypeAlias = "LedgerEntry | EventEntry"


def entry_from_dict(data: dict) -> Entry:
    """A saved entry of either kind: "mechanism" is "gaussian" (LedgerEntry, every ledger saved
    before general entries existed) or "dp_event" (EventEntry)."""
    if isinstance(data, dict) and data.get("mechanism") == EVENT_MECHANISM:
        from dpgan.privacy.events import EventEntry

        return EventEntry.from_dict(data)
    return LedgerEntry.from_dict(data)


def is_shard(entry: Entry) -> bool:
    return isinstance(entry, LedgerEntry) and entry.sampling == ONE_OF_SHARDS


def check_accountable(entries: Iterable[Entry], accountant: str) -> None:
    """InputError naming the first general entry that `accountant` cannot account (add/remove-one).

    A Gaussian entry is accountable by every accountant, so a ledger of them never imports
    dp-accounting here."""
    general = [e for e in entries if not isinstance(e, LedgerEntry)]
    if not general:
        return
    from dpgan.privacy.events import describe, supporting_accountants

    for e in general:
        if accountant not in supporting_accountants(e.event):
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
    from dp_accounting import dp_event

    return dp_event.ComposedDpEvent([e.to_dp_event() for e in entries])


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


def accounted(entry: EventEntry, compute, *args):  # noqa: ANN001, ANN202
    """`compute(*args)`, with dp-accounting's refusal of the event's parameters (a ValueError,
    e.g. a RepeatAndSelect shape it has no formula for) turned into one line naming the entry."""
    from dpgan.privacy.events import describe

    try:
        return compute(*args)
    except (ValueError, ArithmeticError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{entry.name}: dp-accounting cannot account {describe(entry.event)}: {first}") from None


# the entries, and the shared names they are read with (accounting_names.py), from one place
__all__ = [
    "ACCOUNTANTS",
    "BINOMIAL_TAIL",
    "BUCKET_WIDTH",
    "CLASSIC_2019_ORDERS",
    "DEFAULT_ACCOUNTANT",
    "EVENT_MECHANISM",
    "ONE_OF_SHARDS",
    "PLD_DISCRETIZATION",
    "POISSON",
    "RDP_ORDERS",
    "SAMPLINGS",
    "Entry",
    "LedgerEntry",
    "accounted",
    "check_accountable",
    "check_accountant",
    "check_epsilon_delta",
    "composed_event",
    "entry_from_dict",
    "is_shard",
    "split_shard_entry",
]
