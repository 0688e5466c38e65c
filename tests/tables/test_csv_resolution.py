"""The CSV-only path's resolution (issue 51): a narrow band far from zero gets a range at the scale of
its spread (a second, finer release), a column 8.5 % null is not learned complete at ε = 1, a
75 %-zero column keeps its tail, and a yes/no column gets no `(other)` made of noise. Each is checked
at the noise a default CSV-only fit adds (σ from the preprocessing plan), and each new DP read on
neighbouring tables: one more row and the same noise draws give the same schema."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from csv_only_schema import learn_csv_only as learn  # at the σ of the table each symptom was seen in
from dpgan.privacy.mechanisms import FINE_CELLS, fine_cell_edges, fine_cell_index, public_numeric_grid, share_noise
from dpgan.tables.inference.domain import FINE_SHARE, OTHER, domain_counts, release_domain


def structure(schema) -> list[tuple]:
    """What the releases decide (the released counts themselves, `frequencies`, move by one)."""
    return [
        (c.name, c.kind, c.min, c.max, c.nullable, c.categories, c.point_masses, c.scale, c.bins)
        for c in schema.columns
    ]


def city(rows: int = 5000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"lat": np.round(rng.normal(41.88, 0.04, rows), 6), "lon": np.round(rng.normal(-87.6, 0.04, rows), 6)}
    )


def credit(rows: int = 3340, seed: int = 0) -> pd.DataFrame:
    """Income 8.5 % null, Debt 75 % zeros and a long tail, Records yes/no (the reserved table's shapes)."""
    rng = np.random.default_rng(seed)
    income = np.where(rng.random(rows) < 0.085, np.nan, np.round(rng.lognormal(4.8, 0.5, rows)))
    debt = np.where(rng.random(rows) < 0.75, 0.0, np.round(rng.lognormal(7.5, 1.0, rows)))
    return pd.DataFrame({"Income": income, "Debt": debt, "Records": np.where(rng.random(rows) < 0.17, "yes", "no")})


@pytest.mark.parametrize("seed", (0, 1, 2, 4))
def test_a_narrow_band_far_from_zero_gets_a_range_at_its_spread(seed):
    """A city 0.15° across at ε = 3 on 5,000 rows: the grid alone gave [30, 50] and [−100, −50]. The
    fine release misses the band on about 1 seed in 10 (seeds 0-39: 4 misses before the class
    histogram's fifth cell, 3 after); seed 3 is one of them once that cell's draw shifts the noise."""
    frame = city(seed=seed)
    schema = learn(frame, seed, epsilon=3.0, columns=10)
    for name in ("lat", "lon"):
        spec, values = schema[name], frame[name]
        spread = float(values.quantile(0.99) - values.quantile(0.01))
        assert spec.max - spec.min <= 4 * spread, (name, spec.min, spec.max, spread)
        assert np.mean((values >= spec.min) & (values <= spec.max)) >= 0.99


def test_a_column_with_a_few_percent_nulls_gets_a_null_slot_at_small_epsilon():
    """8.5 % null of 3,340 rows at ε = 1 (σ ≈ 74; the class count's noise ≈ 208, its 3σ bar ≈ 620
    rows, so it was learned complete and its null rows dropped): found in nearly every draw, while a
    complete column gets a slot rarely."""
    frame = credit()
    found = sum(learn(frame, seed, epsilon=1.0, columns=14)["Income"].nullable for seed in range(10))
    assert found >= 8
    false = sum(learn(frame, seed, epsilon=1.0, columns=14)["Debt"].nullable for seed in range(10, 40))
    assert false <= 3


@pytest.mark.parametrize("seed", range(4))
def test_a_zero_heavy_column_keeps_its_tail(seed):
    """75 % zeros: the other quarter (about 300..20,000) was on a grid too fine for it, and the
    range came out [0, 1]. The grid's resolution now reads the numbers less the spike at 0."""
    frame = credit(seed=seed)
    spec = learn(frame, seed, epsilon=1.0, columns=14)["Debt"]
    positive = frame["Debt"][frame["Debt"] > 0]
    assert 0 in spec.point_masses and spec.max >= positive.median()
    assert np.mean(positive <= spec.max) >= 0.8


@pytest.mark.parametrize("seed", range(4))
def test_a_yes_no_column_gets_no_other_class_made_of_noise(seed):
    schema = learn(credit(seed=seed), seed, epsilon=1.0, columns=14)
    assert schema["Records"].categories == ("no", "yes") and schema["Records"].other_category is None


def test_a_feature_with_more_values_keeps_other_and_a_binary_one_with_a_real_rest_too():
    """The strict rule is for two released values only: a third value that clears the noise gets
    `(other)` (its rows are kept), and a column of many values keeps `(other)` as before."""
    rng = np.random.default_rng(3)
    three = np.where(rng.random(3340) < 0.6, "no", np.where(rng.random(3340) < 0.5, "yes", "maybe"))
    rows = pd.DataFrame({"answer": three})
    rows.loc[rows.index[:300], "answer"] = [f"rare{i}" for i in range(300)]  # 9 % in values under the bar
    schema = learn(rows, 0, epsilon=1.0, columns=14)
    assert OTHER in schema["answer"].categories


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    "extra", [{"lat": 41.9, "lon": -87.61}, {"lat": 45.0, "lon": -80.0}, {"lat": None, "lon": None}]
)
def test_neighbouring_tables_give_the_same_fine_range(seed, extra):
    """One more row (inside the band, at the edge of the grid's range, or null) moves one fine cell,
    one grid bin and one null cell by one: the same draws give the same ranges and null slots."""
    base = city(seed=seed)
    neighbour = pd.concat([base, pd.DataFrame([extra])], ignore_index=True)
    specs = [structure(learn(frame, seed, epsilon=3.0, columns=10)) for frame in (base, neighbour)]
    assert specs[0] == specs[1]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    "extra", [{"Income": None, "Debt": 0.0, "Records": "no"}, {"Income": 90.0, "Debt": 15000.0, "Records": "yes"}]
)
def test_neighbouring_tables_give_the_same_null_slots_tail_and_classes(seed, extra):
    """One more row (a null income, or a new debt) and the same draws: the same null slots (the
    combined null count moves by at most one), Debt's range and Records' classes. (A value not in the
    table before adds a noisy key, which shifts the draws of the keys after it: the pattern of
    dpgan.tables.inference.domain.release_values, unchanged here.)"""
    base = credit(seed=seed)
    neighbour = pd.concat([base, pd.DataFrame([extra])], ignore_index=True)
    specs = [structure(learn(frame, seed, epsilon=1.0, columns=14)) for frame in (base, neighbour)]
    assert specs[0] == specs[1]


def test_the_numeric_release_is_split_into_parts_that_compose_to_one_gaussian():
    """The grid, the whole numbers and the fine release (each sensitivity 1: one cell per row in
    each, the null cell included) at their shares: their 1/σ² add to the ledger's one Gaussian at σ."""
    sigma = 7.0
    parts = [share_noise(sigma, (1 - FINE_SHARE) / 2)] * 2 + [share_noise(sigma, FINE_SHARE)]
    assert sum(p**-2 for p in parts) == pytest.approx(sigma**-2)
    assert sum(share_noise(sigma, s) ** -2 for s in (1 - FINE_SHARE, FINE_SHARE)) == pytest.approx(sigma**-2)


def test_fine_cells_partition_the_line_and_the_fine_release_is_made_once():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(41.88, 0.04, 1000), [-1e11, 0.0, 1e11, 30.0, 49.9999]])
    index = fine_cell_index(values)
    edges = public_numeric_grid()
    bins = index // FINE_CELLS
    assert np.all((index >= 0) & (index < (len(edges) - 1) * FINE_CELLS))
    inner = (values > edges[0]) & (values < edges[-1])
    cells = fine_cell_edges(int(bins[inner].min()), int(bins[inner].max()))
    first = int(bins[inner].min()) * FINE_CELLS
    local = index[inner] - first
    assert np.all(cells[local] <= values[inner]) and np.all(values[inner] < cells[local + 1])
    released = release_domain(
        domain_counts(pd.Series(values[:1000]), "numeric"), 20.0, np.inf, rng, wholes=False, rows=1000.0
    )
    assert released.refine is not None
    released.refine(30.0, 50.0)
    with pytest.raises(RuntimeError, match="once"):
        released.refine(30.0, 50.0)


def score(rows: int = 1620, seed: int = 0) -> pd.DataFrame:
    """A standardised score on both sides of 0, few rows near it: Chile's statusquo (−1.8..1.6, half
    below 0), drawn uniformly inside the bins of its training split's histogram."""
    rng = np.random.default_rng(seed)
    edges = np.array([-1.8, -1.5, -1.0, -0.5, -0.2, 0.0, 0.2, 0.5, 1.0, 1.5, 1.6])
    weights = np.array([2, 415, 240, 95, 55, 104, 123, 189, 307, 82], dtype=np.float64)
    bins = rng.choice(len(weights), size=rows, p=weights / weights.sum())
    values = edges[bins] + rng.random(rows) * (edges[bins + 1] - edges[bins])
    return pd.DataFrame({"score": np.round(values, 5)})


def test_a_column_on_both_sides_of_zero_keeps_both():
    """The log grid has nine bins between −1 and 0.1, so the two halves were two runs and the lighter
    one was cut off as isolated noise ([−2, −0.2] in 3 of these 20 draws at ε = 1; Chile's own
    column in 8 of 20): each half's magnitudes now sit next to the other's."""
    frame = score()
    for seed in range(20):
        spec = learn(frame, seed, epsilon=1.0, columns=8)["score"]
        inside = np.mean((frame["score"] >= spec.min) & (frame["score"] <= spec.max))
        assert spec.min <= -1.5 and spec.max >= 1.5 and inside >= 0.99, (seed, spec.min, spec.max)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("extra", [0.0, -1.7, 1.5, None])
def test_neighbouring_tables_give_the_same_range_on_both_sides_of_zero(seed, extra):
    """One more row (at 0, at either end, or null) moves one grid bin by one: the same draws give
    the same range."""
    base = score(seed=seed)
    neighbour = pd.concat([base, pd.DataFrame({"score": [extra]})], ignore_index=True)
    assert structure(learn(base, seed, 1.0, 8)) == structure(learn(neighbour, seed, 1.0, 8))
