"""The marginals model's cells on a hand schema (dpgan.tables.fit.quantile_cells): which columns are
cut (the schema alone), the dyadic reading of the noisy cells, the bins at the column's quantiles,
one ledger entry of the right count (and none where nothing is cut, for the GAN, or on a DP schema),
neighbouring and empty tables with the same public facts."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import Schema, TabularSynthesizer
from dpgan.tables.fit.quantile_cells import (
    CELLS_EVENT,
    GRID_CELLS,
    counted,
    cut_columns,
    dyadic_mass,
    grid_edges,
    released_schema,
)
from dpgan.tables.schema.columns import MAX_BINS
from test_marginals_model import SCHEMA, table

torch.set_num_threads(1)


def schema_of(*columns: dict, target: str | None = None) -> Schema:
    return Schema.from_dict({"columns": list(columns), "target": target})


def test_the_cut_columns_come_from_the_schema_alone():
    schema = schema_of(
        {"name": "ratio", "kind": "continuous", "min": 0, "max": 5, "bins": 8},
        {"name": "one_bin", "kind": "continuous", "min": 0, "max": 1},
        {"name": "wide_int", "kind": "integer", "min": 0, "max": 100, "bins": 8, "point_masses": [0]},
        {"name": "short_int", "kind": "integer", "min": 0, "max": 20, "bins": 8},  # a bin per level
        {"name": "score", "kind": "continuous", "min": 1, "max": 6, "bins": 5},  # a bin per unit
        {"name": "given", "kind": "continuous", "min": 0, "max": 10, "bins": 2, "bin_edges": [3.0]},
        {"name": "coded", "kind": "integer", "min": 0, "max": 7, "encoding": "binary"},
        {"name": "group", "kind": "categorical", "categories": ["a", "b"]},
    )
    assert cut_columns(schema) == ("ratio", "one_bin", "wide_int")


def test_grid_edges_are_equal_on_the_column_scale():
    linear = schema_of({"name": "x", "kind": "continuous", "min": -2, "max": 6, "bins": 8})["x"]
    np.testing.assert_allclose(grid_edges(linear), np.linspace(-2, 6, GRID_CELLS + 1))
    log = schema_of({"name": "x", "kind": "continuous", "min": 0, "max": 999, "bins": 8, "scale": "log"})["x"]
    edges = grid_edges(log)
    np.testing.assert_allclose(np.diff(np.log1p(edges)), np.log1p(999) / GRID_CELLS)


def test_pure_noise_has_no_mass_and_a_bump_keeps_its_cells():
    rng = np.random.default_rng(0)
    sigma = 10.0
    empty = [dyadic_mass(rng.normal(0, sigma, GRID_CELLS), sigma).sum() for _ in range(200)]
    assert sum(total > 0 for total in empty) <= 2  # a false group clears 4σ about once in 250 columns
    counts = np.zeros(GRID_CELLS)
    counts[10:14] = 500.0
    mass = dyadic_mass(counts + rng.normal(0, sigma, GRID_CELLS), sigma)
    assert mass[:10].sum() == 0 and mass[14:].sum() == 0
    assert mass[10:14].sum() == pytest.approx(2000, abs=5 * sigma * 2)


def test_thin_spread_mass_shows_at_a_coarse_scale():
    """40 rows a cell at σ = 20 clear no single cell's bar (80) but their groups of 4 and more do."""
    rng = np.random.default_rng(1)
    mass = dyadic_mass(np.full(GRID_CELLS, 40.0) + rng.normal(0, 20.0, GRID_CELLS), 20.0)
    assert (mass > 0).mean() > 0.9
    assert mass.sum() == pytest.approx(40.0 * GRID_CELLS, rel=0.1)


def test_bins_are_cut_at_the_quantiles_of_the_released_cells():
    """Exact counts (no noise) of a column held in [0, 1] of its bounds [0, 5], where the schema's
    equal bins put every row in the first two: seven bins at the quantiles of the mass up to its
    99.5 % cell (that cell's end an edge: the support's), then a ladder of two edges past it, at
    1 and 3 times the last bin's width, so the thin tail is drawn near the rows, not up to 5."""
    rng = np.random.default_rng(2)
    values = rng.beta(2, 5, 20_000)
    schema = schema_of({"name": "x", "kind": "continuous", "min": 0, "max": 5, "bins": 8})
    exact = counted(schema, [pd.DataFrame({"x": values})]).counts["x"].astype(float)
    edges = np.array(released_schema(schema, {"x": exact}, sigma=1e-9)["x"].bin_edges)
    assert len(edges) == 9
    np.testing.assert_allclose(edges[:6], np.quantile(values, np.arange(1, 7) / 7), atol=5 / GRID_CELLS)
    assert np.quantile(values, 0.99) < edges[6] <= values.max() + 5 / GRID_CELLS
    np.testing.assert_allclose(np.diff(edges[5:]), np.array([1, 1, 2]) * (edges[6] - edges[5]))
    nothing = released_schema(schema, {"x": np.zeros(GRID_CELLS)}, sigma=1.0)["x"]
    assert nothing == schema["x"]  # no mass: the schema's equal bins stay


def test_an_integer_column_is_cut_between_whole_numbers():
    """Values 100..299 of bounds 0..640: the support's ends (99.5, 299.5), a cut between them, the
    ladder above (1 and 3 times the last bin's width) and below (once: three times passes 0)."""
    schema = schema_of({"name": "n", "kind": "integer", "min": 0, "max": 640, "bins": 4})
    values = np.random.default_rng(3).integers(100, 300, 5_000)
    exact = counted(schema, [pd.DataFrame({"n": values})]).counts["n"].astype(float)
    edges = np.array(released_schema(schema, {"n": exact}, sigma=1e-9)["n"].bin_edges)
    np.testing.assert_array_equal(edges % 1, 0.5)
    below, support, above = edges[edges < 99.5], edges[(edges >= 99.5) & (edges <= 299.5)], edges[edges > 299.5]
    assert len(support) == 3 and support[0] == 99.5 and 180 < support[1] < 220 and support[2] == 299.5
    np.testing.assert_allclose(above, [299.5 + (299.5 - support[1]), 299.5 + 3 * (299.5 - support[1])], atol=1)
    np.testing.assert_allclose(below, [99.5 - (support[1] - 99.5)][: len(below)], atol=1)


def test_point_masses_and_nulls_are_not_counted_in_the_cells():
    schema = schema_of({"name": "x", "kind": "integer", "min": 0, "max": 100, "bins": 8, "point_masses": [0],
                        "nullable": True})  # fmt: skip
    frame = pd.DataFrame({"x": pd.array([0, 0, 0, 50, None, 100], dtype="Int64")})
    counts = counted(schema, [frame]).counts["x"]
    assert counts.sum() == 2 and counts[GRID_CELLS // 2] == 1 and counts[-1] == 1


def fit(frame: pd.DataFrame, schema: dict | None, model: str = "marginals", epsilon: float = 1.0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(model=model, epsilon=epsilon, seed=0, **kw)
        return synth.fit(frame, None if schema is None else Schema.from_dict(schema), target="label")


def events(synth: TabularSynthesizer) -> list[tuple[str, int]]:
    return [(e["name"], e["count"]) for e in synth.privacy_report()["events"]]


def test_a_hand_schema_fit_charges_one_cells_entry_per_cut_column_within_epsilon():
    synth = fit(table(), SCHEMA)
    entries = events(synth)
    assert (CELLS_EVENT, 2) in entries  # amount and age: the two cut columns
    assert [name for name, _ in entries].index(CELLS_EVENT) == 2  # after N̂ and the repairs, before the model's
    assert 0.999 <= synth.privacy_report()["epsilon"] <= 1.0 * (1 + 1e-9)
    released = synth.schema
    assert released["amount"].bin_edges and released["age"].bin_edges
    assert released["group"] == Schema.from_dict(SCHEMA)["group"]


@pytest.mark.parametrize(("schema", "model"), [(None, "marginals"), (SCHEMA, "dp-gan")], ids=["dp-schema", "gan"])
def test_no_cells_on_a_dp_schema_or_for_the_gan(schema, model):
    kw = {"max_steps": 2} if model == "dp-gan" else {}
    synth = fit(table(300), schema, model=model, **kw)
    assert CELLS_EVENT not in [name for name, _ in events(synth)]


def test_no_cut_column_no_entry_and_no_draw():
    only_categories = {"target": "label", "columns": [SCHEMA["columns"][0], SCHEMA["columns"][3]]}
    synth = fit(table()[["group", "label"]], only_categories)
    assert CELLS_EVENT not in [name for name, _ in events(synth)]


def test_neighbouring_and_empty_tables_give_the_same_public_facts():
    """An odd row more, or no rows at all: the same entries (the cut columns are the schema's) and
    the same ε; the cuts themselves are released values."""
    frame = table()
    odd = pd.DataFrame({"group": ["zz"], "amount": [1e9], "age": [200.0], "label": ["yes"]})
    facts = []
    for data in (frame, pd.concat([frame, odd], ignore_index=True), frame.iloc[:0]):
        synth = fit(data, SCHEMA)
        facts.append((events(synth), round(synth.privacy_report()["epsilon"], 9)))
    assert facts[0] == facts[1] == facts[2]


def test_the_cells_follow_a_concentrated_column_at_a_large_epsilon():
    """amount (a gamma, mostly below 60) in bounds [0, 200]: the cuts sit where the rows are, the
    seventh past nearly all of them (the support's end; the ladder above it)."""
    frame = table(6000)
    synth = fit(frame, SCHEMA, epsilon=20.0)
    edges = np.array(synth.schema["amount"].bin_edges)
    truth = np.quantile(frame["amount"], np.arange(1, 7) / 7)
    np.testing.assert_allclose(edges[:6], truth, atol=2 * 200 / GRID_CELLS)
    assert np.quantile(frame["amount"], 0.99) < edges[6] <= frame["amount"].max() + 200 / GRID_CELLS


def test_a_schema_of_many_bins_stays_within_the_bin_cap():
    """256 bins asked (the schema's cap): the ends and their ladders still fit under it."""
    schema = schema_of({"name": "x", "kind": "continuous", "min": 0, "max": 1000, "bins": MAX_BINS})
    values = np.random.default_rng(4).normal(500, 50, 50_000)
    exact = counted(schema, [pd.DataFrame({"x": values})]).counts["x"].astype(float)
    cut = released_schema(schema, {"x": exact}, sigma=1e-9)["x"]
    assert cut.bin_edges and cut.bins <= MAX_BINS
