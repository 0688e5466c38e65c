"""The ledger side every private step shares: its steps reserved when it is built, one charged per release.

A step reserves its steps in the ledger up front (refused there if they would take the ledger past
ε) and charges one per release (refused past the reservation), so the ledger's count is the count
of releases that happened. σ = 0 with no ledger is the benches' non-private control: nothing is
reserved or charged, and nothing it computes may be released. Used by `PrivateStep`
(dpgan.privacy.step) and `GeneratorHookStep` (dpgan.privacy.generator_hook).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dpgan.errors import InputError
from dpgan.privacy.accounting import LedgerEntry, PrivacyLedger, Reservation

Recorder = Callable[[dict[str, Any]], None]


@dataclass
class StepCharge:
    """The ledger side every step shares: one reservation, one charge per release (none for the
    non-private control, σ = 0, which has no ledger and must never be released)."""

    reservation: Reservation | None
    recorder: Recorder | None = None
    releases: int = field(default=0, init=False)

    def __call__(self, record: dict[str, Any]) -> None:
        if self.reservation is not None:
            self.reservation.charge()
        self.releases += 1
        if self.recorder is not None:
            self.recorder(record)

    def restore(self, releases: int) -> None:
        """Resume from a checkpoint taken after `releases` releases: charge them to this fresh
        reservation (refused past it), so the ledger counts them once, as the killed fit did."""
        if self.releases:
            raise InputError("a private step can be restored only before its first release")
        if isinstance(releases, bool) or int(releases) != releases or releases < 0:
            raise InputError(f"releases must be a non-negative integer, got {releases!r}")
        for _ in range(int(releases)):
            if self.reservation is not None:
                self.reservation.charge()
            self.releases += 1


def reserve_steps(ledger: PrivacyLedger | None, entry_args: dict[str, Any], steps: int) -> Reservation | None:
    """Reserve the steps, or (σ = 0 and no ledger) nothing: the benches' non-private control."""
    sigma = entry_args["noise_multiplier"]
    if sigma == 0.0 and ledger is None:
        return None
    if ledger is None or not (sigma > 0 and math.isfinite(sigma)):
        raise InputError("a private step needs a positive noise multiplier and a ledger to charge")
    return ledger.reserve(LedgerEntry(count=0, **entry_args), steps)


__all__ = ["Recorder", "StepCharge", "reserve_steps"]
