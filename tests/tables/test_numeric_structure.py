"""DP structure discovery of numeric columns from the CSV alone (dpgan.tables.inference.infer):
point masses (0, sentinel codes, spikes) from a histogram of whole numbers, the range from the
quantiles of the grid's mass with the point masses taken out, levels of few-valued integers, and
no "(other)" class made of noise. Each is post-processing of one Gaussian release per column
(two histograms at √2σ), so the ledger is unchanged; neighbouring tables give the same structure
for the same noise draw."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpgan.privacy.mechanisms import GRID_MANTISSAS, bin_index, coarse_bins, public_numeric_grid
from dpgan.tables.inference.column_kinds import NUMERIC, PublicHints, class_counts, decide_kind
from dpgan.tables.inference.domain import (
    OTHER,
    PUBLIC_WHOLES,
    SENTINELS,
    SMALL_WHOLES,
    SPLIT,
    domain_counts,
    grid_resolution,
    release_domain,
)
from dpgan.tables.inference.infer import decide_column, infer_schema_private
from dpgan.tables.inference.numeric import point_masses

SIGMA = 6.0
THRESHOLD = 1.0 + SIGMA * 4.75  # the partition-selection bar at σ for δ ≈ 1e-6 per key


def spec_of(values: pd.Series, seed: int = 0, sigma: float = SIGMA, threshold: float = THRESHOLD):
    kind = decide_kind("x", class_counts(values), sigma=2 * sigma, hints=PublicHints())
    released = release_domain(domain_counts(values, NUMERIC), sigma, threshold, np.random.default_rng(seed))
    return decide_column("x", kind, released, sigma=sigma, rows=float(len(values)), hints=PublicHints()).spec


def money(rows: int = 6000, seed: int = 0) -> pd.Series:
    """A money column: 40 % zeros, 6 % the sentinel 99999999 ("unknown"), the rest lognormal amounts."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(3, rows, p=[0.40, 0.06, 0.54])
    amounts = np.round(rng.lognormal(8, 1.2, rows))
    return pd.Series(np.where(kind == 0, 0, np.where(kind == 1, 99999999, amounts)))


@pytest.mark.parametrize("seed", range(3))
def test_zero_and_a_sentinel_code_become_point_masses_inside_a_log_range(seed):
    values = money(seed=seed)
    spec = spec_of(values, seed)
    assert spec.kind == "integer" and set(spec.point_masses) == {0, 99999999}
    assert spec.scale == "log" and spec.min == 0 and spec.max == 99999999
    amounts = values[(values > 0) & (values < 99999999)]
    assert np.mean((amounts >= spec.min) & (amounts <= spec.max)) == 1.0


def test_the_range_is_the_amounts_not_the_zeros():
    """The bulk at 0 no longer decides the range (Adult's capital-gain came out [0, 1])."""
    rng = np.random.default_rng(1)
    values = pd.Series(np.where(rng.random(8000) < 0.9, 0, np.round(rng.lognormal(8, 0.8, 8000))))
    spec = spec_of(values)
    positive = values[values > 0]
    assert spec.point_masses == (0,) and np.mean(positive <= spec.max) > 0.96 and spec.max > 5000


def test_a_spread_integer_has_no_point_masses_and_a_spike_has_one():
    rng = np.random.default_rng(2)
    age = pd.Series(rng.integers(18, 90, 6000))
    assert spec_of(age).point_masses == ()
    hours = pd.Series(np.where(rng.random(6000) < 0.45, 40, rng.integers(1, 99, 6000)))
    assert 40 in spec_of(hours).point_masses


def test_few_close_levels_get_one_bin_each_and_codes_far_apart_become_categories():
    rng = np.random.default_rng(3)
    grades = pd.Series(rng.choice([1, 2, 3, 4, 5], 5000))
    spec = spec_of(grades)
    assert (spec.kind, spec.min, spec.max, spec.bins) == ("integer", 1.0, 5.0, 4)
    codes = pd.Series(rng.choice([1, 5, 10, 99], 5000, p=[0.4, 0.3, 0.2, 0.1]))
    spec = spec_of(codes)
    assert spec.kind == "categorical" and spec.categories == ("1", "5", "10", "99")  # numeric order, no (other)
    assert sum(spec.frequencies) == pytest.approx(5000, rel=0.05)


def test_a_sentinel_is_a_public_cell_found_below_the_partition_bar():
    """99999 in 2 % of 2,000 rows (40) is under the thresholded keys' bar (≈ 41 at √2σ) but a public cell."""
    rng = np.random.default_rng(4)
    values = pd.Series(np.where(rng.random(2000) < 0.02, 99999, rng.integers(100, 5000, 2000)))
    assert 99999 in SENTINELS
    spec = spec_of(values, sigma=4.0, threshold=1.0 + 4.0 * 4.75)
    assert 99999 in spec.point_masses and spec.max == 99999


def test_small_whole_numbers_are_public_cells_so_a_flag_or_score_shows_its_levels():
    """With a bar no count can clear, only public cells are released: the small whole numbers
    (a 0/1 flag, a 1..6 score) show and make levels; 11 and 12 never do."""
    rng = np.random.default_rng(5)
    flag = pd.Series(rng.choice([0, 1], 3000, p=[0.7, 0.3]))
    released = release_domain(domain_counts(flag, NUMERIC), SIGMA, 1e9, np.random.default_rng(0))
    assert set(released.wholes) == {0, 1}
    spec = spec_of(flag, threshold=1e9)
    assert (spec.kind, spec.min, spec.max) == ("integer", 0.0, 1.0)
    scores = pd.Series(rng.choice([1, 2, 3, 4, 5, 6, 11, 12], 4000))
    released = release_domain(domain_counts(scores, NUMERIC), SIGMA, 1e9, np.random.default_rng(1))
    assert set(released.wholes) == {1, 2, 3, 4, 5, 6}
    assert set(SMALL_WHOLES) <= set(PUBLIC_WHOLES) and set(SENTINELS) <= set(PUBLIC_WHOLES)


def test_point_masses_need_a_share_and_a_spike():
    edges = public_numeric_grid()
    bins = np.zeros(len(edges) - 1)
    seven = int(bin_index(np.array([7.0]), edges)[0])  # the bin [7, 10): three integers
    bins[seven] = 900.0
    assert point_masses({7: 100.0}, numbers=100_000.0, bins=bins, integer=True, edges=edges) == {}  # 0.1 %: too small
    assert point_masses({7: 900.0}, numbers=10_000.0, bins=bins, integer=True, edges=edges) == {7: 900.0}  # alone
    spread = bins.copy()
    spread[seven - 1 : seven + 2] = 2700.0  # 900 per integer all around: 7 is a common value, not a spike
    assert point_masses({7: 900.0}, numbers=10_000.0, bins=spread, integer=True, edges=edges) == {}


def test_the_target_gets_no_third_class_made_of_noise_and_a_feature_keeps_other():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "label": rng.choice(["yes", "no"], 4000),
            "country": rng.choice([f"c{i}" for i in range(60)] + ["US"] * 60, 4000),  # half US, 60 rare ones
        }
    )
    schema, _ = infer_schema_private(
        frame, hints=PublicHints(target="label"), noise_multiplier=SIGMA, threshold_delta=1e-6,
        estimated_rows=4000.0, rng=np.random.default_rng(0),
    )  # fmt: skip
    assert schema["label"].categories == ("no", "yes")  # the target: no third class made of noise
    assert "US" in schema["country"].categories and OTHER in schema["country"].categories  # a feature keeps it


@pytest.mark.parametrize("seed", range(4))
def test_neighbouring_tables_give_the_same_structure(seed):
    """One more row (a new amount, a zero, a sentinel) moves the counts by one: σ ≫ 1 and the
    same draw give the same point masses, range, scale and levels."""
    base = money(3000, seed=7)
    variants = [base, pd.concat([base, pd.Series([123457.0])]), pd.concat([base, pd.Series([0.0])])]
    variants.append(pd.concat([base, pd.Series([99999999.0])]))
    specs = [spec_of(v.reset_index(drop=True), seed, sigma=20.0, threshold=1.0 + 20.0 * 4.75) for v in variants]
    shape = [(s.kind, s.min, s.max, s.point_masses, s.scale, s.bins) for s in specs]
    assert all(item == shape[0] for item in shape[1:]), shape


def test_the_two_histograms_compose_to_one_gaussian_at_sigma():
    """Two releases at √2σ, each of sensitivity 1, have the privacy of one at σ (μ² adds)."""
    assert 2 * (1 / (SPLIT * SIGMA)) ** 2 == pytest.approx((1 / SIGMA) ** 2)
    assert math.isclose(SPLIT, math.sqrt(2.0))


@pytest.mark.parametrize("per_decade", sorted(GRID_MANTISSAS))
def test_a_coarse_grid_counts_each_value_where_the_fine_one_does(per_decade):
    """Summing the fine grid's counts gives the coarse grid's histogram of the same values (extremes
    in the end bins included): each row still lands in exactly one cell, sensitivity 1."""
    rng = np.random.default_rng(per_decade)
    values = np.concatenate([rng.lognormal(3, 4, 5000) * rng.choice([-1, 1], 5000), [0.0, 0.005, -3e10, 4e10, 1.0]])
    fine, coarse = public_numeric_grid(), public_numeric_grid(per_decade)
    direct = np.bincount(bin_index(values, coarse), minlength=len(coarse) - 1)
    summed = coarse_bins(np.bincount(bin_index(values, fine), minlength=len(fine) - 1), per_decade)
    np.testing.assert_array_equal(summed, direct)
    assert set(coarse.tolist()) <= set(fine.tolist())


def test_the_grid_coarsens_for_small_tables_only():
    """σ ≈ 63 on 791 rows (AER CreditCard at ε = 1) gets a bin a decade; 20,000 rows keep six."""
    assert grid_resolution(791.0, 63.0) == 1
    assert grid_resolution(1429.0, 65.0) == 3
    assert grid_resolution(20000.0, 60.0) == 6
    assert grid_resolution(20000.0, 0.0) == 6
    sizes = [grid_resolution(rows, 60.0) for rows in (100.0, 1000.0, 2000.0, 5000.0, 1e5)]
    assert sizes == sorted(sizes)  # never finer for fewer rows


def test_a_small_tables_money_column_gets_a_range_not_the_wide_default():
    """800 rows, σ = 63: a share (0.0001–0.5) and an amount (a quarter zeros, the rest 1–3,000
    spread over three decades) show no fine bin above the noise, but their decades do."""
    rng = np.random.default_rng(11)
    amount = np.where(rng.random(800) < 0.25, 0.0, np.round(rng.lognormal(5, 1.3, 800), 2))
    frame = pd.DataFrame({"share": np.round(rng.lognormal(-3, 1.2, 800).clip(1e-4, 0.6), 6), "amount": amount})
    for seed in range(3):
        schema, notes = infer_schema_private(
            frame, hints=PublicHints(), noise_multiplier=63.0, threshold_delta=1e-6, estimated_rows=800.0,
            rng=np.random.default_rng(seed),
        )  # fmt: skip
        assert not [n for n in notes if "range could not be found" in n]
        for name in ("share", "amount"):
            spec, values = schema[name], frame[name]
            assert spec.max <= 1e5 and spec.min >= -1.0, (name, spec)
            assert spec.min <= values[values > 0].median() <= spec.max, (name, spec)  # the non-zero bulk is inside


def test_a_target_with_one_released_class_keeps_other_for_the_rest():
    """hmda's `deny` at ε = 1: 12 % "yes" of 1,400 rows stays under the partition bar. Without
    (other) its rows were dropped and the synthetic label had one class; with it the rest is a class."""
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"deny": np.where(rng.random(1400) < 0.12, "yes", "no")})
    schema, _ = infer_schema_private(
        frame, hints=PublicHints(target="deny"), noise_multiplier=40.0, threshold_delta=1e-6,
        estimated_rows=1400.0, rng=np.random.default_rng(1),  # 0 draws "yes" above the bar since the 5-cell classes
    )  # fmt: skip
    assert schema["deny"].categories == ("no", OTHER)
    assert schema["deny"].frequencies[1] > 0.05 * 1400


@pytest.mark.parametrize("extra", [0.0, 2999.5, 1e7])
def test_neighbouring_small_tables_give_the_same_coarse_structure(extra):
    """On the coarse grid too: one more row (a zero, an amount, an outlier) and the same noise draw
    leave the resolution (read from N̂ and σ, not the rows), range and encoding as they were."""
    rng = np.random.default_rng(12)
    base = pd.DataFrame({"amount": np.where(rng.random(800) < 0.25, 0.0, np.round(rng.lognormal(5, 1.3, 800), 2))})
    neighbour = pd.concat([base, pd.DataFrame({"amount": [extra]})], ignore_index=True)
    specs = [
        infer_schema_private(
            frame, hints=PublicHints(), noise_multiplier=63.0, threshold_delta=1e-6, estimated_rows=800.0,
            rng=np.random.default_rng(4),
        )[0]["amount"]
        for frame in (base, neighbour)
    ]  # fmt: skip
    assert specs[0] == specs[1]
    assert grid_resolution(800.0, 63.0) == 1  # the coarse grid is what this compares


def test_one_released_value_is_a_point_mass_not_a_column_of_one_level():
    """A noisy count of numbers that came out low can make one value look like all of them: the
    column keeps a point mass and a range, not the constant range of one level."""
    from dpgan.tables.inference.numeric import levels_of

    assert levels_of({0: 559.0}, numbers=545.6) is None
    assert levels_of({0: 300.0, 1: 250.0}, numbers=545.6) == [0, 1]
