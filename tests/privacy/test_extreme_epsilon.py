"""Any target ε from 1e-3 to 1e9 fits or is refused in one line (issue 49): calibration at the
extreme targets lands on the target, and the command line's refusal names the supported range."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from dpgan import TabularSynthesizer
from dpgan.cli import main
from dpgan.errors import InputError
from dpgan.privacy.accounting import LedgerEntry, epsilon_of, pld_discretization
from dpgan.privacy.calibration import analytic_gaussian_sigma, calibrate_noise_multiplier
from dpgan.privacy.epsilon_range import MAX_EPSILON, MIN_EPSILON

DELTA = 1e-5


@pytest.mark.parametrize(("accountant", "targets"), [("pld", (1e-3, 1e5, 1e6)), ("rdp", (0.01, 1.0, 1e3, 1e6))])
def test_sigma_at_extreme_targets_spends_at_most_the_target_and_falls_as_epsilon_grows(accountant, targets):
    """Ten Poisson steps at q = 0.05: σ calibrated for every target meets it under the ledger's own
    accountant, and a larger ε never asks for more noise."""
    sigmas = []
    for epsilon in targets:
        sigma = calibrate_noise_multiplier(
            sample_rate=0.05, steps=10, epsilon=epsilon, delta=DELTA, accountant=accountant
        )
        assert epsilon_of([LedgerEntry("sgd", sigma, 0.05, 10)], DELTA, accountant) <= epsilon
        sigmas.append(sigma)
    assert all(a > b for a, b in zip(sigmas, sigmas[1:])), sigmas


def test_a_small_share_over_hundreds_of_releases_still_finds_its_sigma():
    """ε = 1e-3's shares are 1e-4 and less: 400 unsampled releases need σ ≈ 2e5 (refused before
    issue 49 at 1e5), and the σ found spends at most the share."""
    sigma = calibrate_noise_multiplier(sample_rate=1.0, steps=400, epsilon=1e-4, delta=DELTA, accountant="pld")
    assert sigma > 1e5
    assert epsilon_of([LedgerEntry("pairs", sigma, count=400)], DELTA, "pld") <= 1e-4


@pytest.mark.parametrize("epsilon", [1e4, 1e5, 1e6, MAX_EPSILON])
def test_analytic_gaussian_sigma_brackets_huge_epsilon(epsilon):
    """σ below the search's first bracket (1e-3) is found, and it is the exact root: a little less
    noise passes δ under the ledger's PLD, which may only be more pessimistic."""
    sigma = analytic_gaussian_sigma(epsilon, DELTA)
    assert 0 < sigma < 0.01
    assert epsilon_of([LedgerEntry("one", sigma * 1.0001)], DELTA, "pld") <= epsilon * 1.001
    assert epsilon_of([LedgerEntry("one", sigma * 0.95)], DELTA, "pld") > epsilon


def test_pld_grid_widens_for_the_gaussian_it_builds_and_is_unbounded_past_what_it_can_build():
    """c unsampled releases at σ are built as one Gaussian at σ/√c: the grid widens for that σ (at
    σ/√c = 0.06 the fine grid took seconds per build); a ledger past what dp-accounting's grid can
    hold has ε = inf (an upper bound every budget refuses), not an OverflowError."""
    assert pld_discretization([LedgerEntry("pairs", 0.6, count=100)]) == pytest.approx(1e-4 / (10 * 0.06**2))
    assert pld_discretization([LedgerEntry("sgd", 0.6, 0.05, 100)]) == 1e-4  # sampled steps: σ itself
    assert epsilon_of([LedgerEntry("tiny", 1e-5)], DELTA, "pld") == math.inf
    assert math.isfinite(epsilon_of([LedgerEntry("small", 1e-3)], DELTA, "pld"))


@pytest.mark.parametrize("epsilon", [1e-4, 2e6, 1e9, math.inf])
def test_a_synthesizer_refuses_epsilon_outside_the_range_naming_it(epsilon):
    with pytest.raises(InputError, match=re.escape(f"between {MIN_EPSILON:g} and {MAX_EPSILON:g}")):
        TabularSynthesizer(epsilon=epsilon, delta=DELTA)


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory) -> Path:
    """A public-looking table of 120 rows: two numbers and two categories."""
    rows = 120
    frame = pd.DataFrame(
        {
            "age": [20 + (7 * i) % 50 for i in range(rows)],
            "hours": [10 + (11 * i) % 60 for i in range(rows)],
            "job": [("a", "b", "c")[i % 3] for i in range(rows)],
            "income": [("low", "high")[(i // 3) % 2] for i in range(rows)],
        }
    )
    path = tmp_path_factory.mktemp("extreme") / "small.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("epsilon", [1e-3, 1e5, MAX_EPSILON])
def test_the_command_line_fits_at_the_ends_of_the_range_within_the_target(epsilon, small_csv, tmp_path, capsys):
    out = tmp_path / "model"
    code = main(
        [
            "fit",
            str(small_csv),
            "--epsilon",
            f"{epsilon:g}",
            "--max-steps",
            "2",
            "--seed",
            "1",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    model = TabularSynthesizer.load(out)
    assert model.ledger.epsilon(DELTA, "pld") <= epsilon


@pytest.mark.parametrize("epsilon", ["1e9", "1.5e6", "inf", "1e-4"])
def test_the_command_line_refuses_epsilon_outside_the_range_in_one_line(epsilon, small_csv, tmp_path, capsys):
    out = tmp_path / "model"
    code = main(["fit", str(small_csv), "--epsilon", epsilon, "--max-steps", "2", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("dpgan: error: --epsilon must be between 0.001 and 1e+06")
    assert not out.exists()
