"""The ledger events of releases, built in one place: no module outside privacy/ writes a
`LedgerEntry(...)` itself (tests/test_import_rules.py checks it), so what a release is charged as is
decided next to the accountant that composes it.

- `gaussian_event`: one Gaussian mechanism (a count, a histogram, a sum, stacked histograms),
  its noise multiplier σ = noise std / L2 sensitivity, repeated `count` times, with the extra δ of
  a threshold applied to its output (Gaussian partition selection);
- `sampled_steps_event`: Poisson-subsampled (or one-of-shards) Gaussian steps at rate q, the event
  a private step charges (dpgan.privacy.step) and the progress bar composes ahead of it;
- `threshold_pending`: what a partition selection's threshold will add to δ, so that σ is calibrated
  with it before the release is made;
- `pure_dp_event_entry`: a pure ε-DP release (the exponential mechanism of DP checkpoint selection),
  accounted as its dominating pair (dpgan.privacy.events.pure_dp_event);
- `charge_gaussian`: build the Gaussian event and add it to the ledger, which refuses it past the
  budget before anything is released.
The noise itself is drawn by dpgan.privacy.noise (through dpgan.privacy.mechanisms for counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgan.privacy.accounting import POISSON, LedgerEntry, PrivacyLedger

if TYPE_CHECKING:
    from dpgan.privacy.events import EventEntry


def gaussian_event(
    name: str, noise_multiplier: float, *, count: int = 1, extra_delta: float = 0.0, note: str = ""
) -> LedgerEntry:
    """A Gaussian mechanism on the whole data (no subsampling), `count` times."""
    return LedgerEntry(name, noise_multiplier, count=count, extra_delta=extra_delta, note=note)


def sampled_steps_event(
    name: str,
    noise_multiplier: float,
    *,
    sampling_rate: float,
    count: int = 1,
    sampling: str = POISSON,
    note: str = "",
) -> LedgerEntry:
    """`count` Poisson-subsampled (or one-of-shards) Gaussian steps at `sampling_rate`."""
    return LedgerEntry(name, noise_multiplier, sampling_rate=sampling_rate, count=count, sampling=sampling, note=note)


def threshold_pending(extra_delta: float) -> LedgerEntry:
    """The δ a threshold will add, as an entry with no release (count 0): σ calibrations include it."""
    return LedgerEntry("threshold", 1.0, count=0, extra_delta=extra_delta)


def pure_dp_event_entry(name: str, epsilon: float, *, note: str = "") -> EventEntry:
    """One pure ε-DP release (count set by `PrivacyLedger.reserve` when reserved)."""
    from dpgan.privacy.events import EventEntry, pure_dp_event  # dp-accounting: a fit's import, not a load's

    return EventEntry(name, pure_dp_event(epsilon), note=note)


def charge_gaussian(
    ledger: PrivacyLedger,
    name: str,
    noise_multiplier: float,
    *,
    count: int = 1,
    extra_delta: float = 0.0,
    note: str = "",
) -> LedgerEntry:
    """Add a Gaussian event to `ledger` (refused past its budget) before its noise is drawn."""
    entry = gaussian_event(name, noise_multiplier, count=count, extra_delta=extra_delta, note=note)
    ledger.add(entry)
    return entry


__all__ = ["charge_gaussian", "gaussian_event", "pure_dp_event_entry", "sampled_steps_event", "threshold_pending"]
