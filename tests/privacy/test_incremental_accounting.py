"""IncrementalAccountant: the ε of prior + t steps, updated as t grows, equals epsilon_of's."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from dpgan.errors import InputError
from dpgan.privacy.accounting import ACCOUNTANTS, IncrementalAccountant, LedgerEntry, epsilon_of

DELTA = 1e-5
PRIOR = [
    LedgerEntry("row count", 30.0),
    LedgerEntry("categories", 8.0, count=3, extra_delta=1e-7),
    LedgerEntry("label model", 3.0, 0.06, 160),
    LedgerEntry("unused", 1.0, count=0),
]
POISSON_STEP = LedgerEntry("DP-SGD on the critic", 2.0, 0.02, 1)
SHARD_STEP = LedgerEntry("DP on the generator", 6.0, 0.05, 1, sampling="one-of-shards")
# PLD: the same PLDs composed in another grouping (FFT rounding, 1e-15 tail truncations)
TOLERANCE = {"pld": 1e-6, "rdp": 1e-12, "rdp-classic": 1e-12}
SCHEDULE = [0, 40, 80, 120, 200, 201, 400, 120, 160]  # growing, a repeat stride, one step, then back


@pytest.mark.parametrize("accountant", ACCOUNTANTS)
@pytest.mark.parametrize("step", [POISSON_STEP, SHARD_STEP], ids=["poisson", "one-of-shards"])
def test_epsilon_after_equals_epsilon_of_along_a_progress_schedule(accountant, step):
    inc = IncrementalAccountant(PRIOR, step, delta=DELTA, accountant=accountant)
    for steps in SCHEDULE:
        expected = epsilon_of([*PRIOR, replace(step, count=steps)], DELTA, accountant)
        assert inc.epsilon_after(steps) == pytest.approx(expected, rel=TOLERANCE[accountant]), steps


@pytest.mark.parametrize("accountant", ACCOUNTANTS)
def test_a_shard_entry_in_the_prior_is_kept_and_merged_with_a_step_of_its_kind(accountant):
    prior = [*PRIOR, replace(SHARD_STEP, count=100)]
    for step in (POISSON_STEP, SHARD_STEP):
        inc = IncrementalAccountant(prior, step, delta=DELTA, accountant=accountant)
        for steps in (0, 50, 150):
            expected = epsilon_of([*prior, replace(step, count=steps)], DELTA, accountant)
            assert inc.epsilon_after(steps) == pytest.approx(expected, rel=TOLERANCE[accountant])


def test_epsilon_grows_with_steps_and_extra_delta_is_paid():
    inc = IncrementalAccountant(PRIOR, POISSON_STEP, delta=DELTA, accountant="rdp")
    values = [inc.epsilon_after(t) for t in (0, 10, 100, 1000)]
    assert all(a < b for a, b in zip(values, values[1:]))
    gone = IncrementalAccountant([LedgerEntry("thr", 1.0, count=0, extra_delta=DELTA)], POISSON_STEP, delta=DELTA)
    assert gone.epsilon_after(5) == math.inf
    assert IncrementalAccountant([], POISSON_STEP, delta=DELTA).epsilon_after(0) == 0.0


def test_bad_input_is_refused():
    inc = IncrementalAccountant(PRIOR, POISSON_STEP, delta=DELTA)
    for steps in (-1, 2.5, True):
        with pytest.raises(InputError):
            inc.epsilon_after(steps)
    with pytest.raises(InputError):
        IncrementalAccountant(PRIOR, POISSON_STEP, delta=DELTA, accountant="gdp")
    with pytest.raises(InputError):
        IncrementalAccountant(PRIOR, POISSON_STEP, delta=0.0)
    with pytest.raises(InputError, match="one kind"):  # refused up front, not at the first refresh
        IncrementalAccountant([replace(SHARD_STEP, count=5)], replace(SHARD_STEP, noise_multiplier=2.0), delta=DELTA)


def test_a_coarser_pld_grid_is_a_slightly_larger_valid_bound():
    """For a progress display: 10× the grid step moves ε up (pessimistic rounding), and by little."""
    fine = IncrementalAccountant(PRIOR, POISSON_STEP, delta=DELTA).epsilon_after(300)
    coarse = IncrementalAccountant(PRIOR, POISSON_STEP, delta=DELTA, discretization=1e-3).epsilon_after(300)
    assert fine <= coarse <= fine * 1.01
    with pytest.raises(InputError):
        IncrementalAccountant(PRIOR, POISSON_STEP, delta=DELTA, discretization=0.0)
