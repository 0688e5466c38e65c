"""The ledger's PLD side: each entry's privacy-loss distribution built as dp-accounting's
PLDAccountant builds it, composed in order with cached prefixes, on a grid widened at small σ.
The one-of-shards step is the Gaussian mixed with the identity (accounting.py's docstring)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from dp_accounting.pld import privacy_loss_distribution as pld_lib

from dpgan.privacy.events import EventEntry, event_pld
from dpgan.privacy.ledger_entry import ONE_OF_SHARDS, PLD_DISCRETIZATION, POISSON, Entry, LedgerEntry, accounted

# The widest grid step dpgan builds a PLD on. dp-accounting's pessimistic PMF divides by
# expm1(step), which overflows past ~709; the ledger's step passes MAX_DISCRETIZATION only for a
# Gaussian of σ/√count < 3e-4, whose ε alone is above 4e6, more than any fit spends
# (epsilon_range.MAX_EPSILON). Such a ledger's ε is reported as inf: a true upper bound, refused by
# every budget check, where the library would raise OverflowError.
MAX_DISCRETIZATION = 100.0


def pld_epsilon(ordered: tuple[Entry, ...], delta: float, coarsening: float) -> float:
    """PLD's ε on the ledger's grid (coarsening 1) or on a grid `coarsening` times wider; inf when
    the ledger's grid is past MAX_DISCRETIZATION."""
    grid = pld_discretization(ordered)
    if grid > MAX_DISCRETIZATION:
        return math.inf
    return float(composed_pld(ordered, coarsened(grid, coarsening)).get_epsilon_for_delta(delta))


def coarsened(grid: float, coarsening: float) -> float:
    """A search's or progress bar's grid: `coarsening` times the ledger's `grid`, but not past
    5·MAX_DISCRETIZATION (still below expm1's overflow; a finer grid is still an upper bound)."""
    return min(grid * coarsening, max(grid, 5.0 * MAX_DISCRETIZATION))


def pld_discretization(entries: Sequence[Entry]) -> float:
    """The PLD grid step for `entries`: 1e-4, widened as 1/σ² below σ ≈ 0.32.

    A Gaussian's privacy loss spans a range that grows as 1/σ², so a fixed step makes the grid, and
    the time, grow as 1/σ² (ε = 1000 took minutes). Widening the step with it keeps the grid's size
    bounded. dp-accounting's PLD rounds pessimistically, so a coarser grid only loosens the bound
    (at σ = 0.15, 1,000 steps: the same ε to 4 decimals, 5 s instead of 26 s). General entries
    (EventEntry) do not widen it: their PLDs are built on whatever grid the Gaussians need."""
    sigmas = [built_sigma(e) for e in entries if isinstance(e, LedgerEntry)]
    if not sigmas:
        return PLD_DISCRETIZATION
    smallest = min(sigmas)
    return PLD_DISCRETIZATION * max(1.0, 1.0 / (10.0 * smallest**2))


def built_sigma(entry: LedgerEntry) -> float:
    """The multiplier of the Gaussian whose PLD `entry_pld` builds: σ/√c for c unsampled repeats
    (they are built as one Gaussian), σ for a sampled or one-of-shards step. The grid is widened
    for this σ, not the entry's: 105 pair tables at σ = 0.6 are one Gaussian at σ = 0.06, whose
    fine-grid PLD took 4 s to build (issue 49)."""
    if entry.sampling == POISSON and entry.sampling_rate == 1.0 and entry.count > 1:
        return entry.noise_multiplier / math.sqrt(entry.count)
    return entry.noise_multiplier


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
        return accounted(entry, event_pld, entry.event, int(entry.count), discretization)
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
    return prefix_pld(entries[:-1], discretization).compose(entry_pld(entries[-1], discretization))


@functools.lru_cache(maxsize=8)
def prefix_pld(entries: tuple[Entry, ...], discretization: float) -> pld_lib.PrivacyLossDistribution:
    return composed_pld(entries, discretization)
