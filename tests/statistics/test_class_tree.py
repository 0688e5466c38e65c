"""The class tree (dpgan.statistics.tables.class_tree, class_tree_fit): its three releases in the
ledger within ε, a selection utility that one row moves by at most 1, a selection that finds the
pair dependent given the target, and a sampler that reproduces the tables of a non-private fit."""

from __future__ import annotations

import numpy as np
import pytest

from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget
from dpgan.statistics.tables.class_tree import (
    CLASS_PAIRS_EVENT,
    TRIPLES_EVENT,
    ReleasedClassTree,
    conditional_product,
    release_class_tree,
    triple_counts,
)
from dpgan.statistics.tables.class_tree_fit import fit_class_tree
from dpgan.statistics.tables.exact_tables import ExactTables
from dpgan.statistics.tables.tree_marginals import PICK_EVENT, pair_counts


def coded(rows: int, seed: int = 0) -> tuple[np.ndarray, tuple[int, ...]]:
    """Variables (x0, y, x2, x3, x4): y drives x0 and x2; x3 copies x2 70 % of the time whatever y
    (dependent given y), x4 is free. The target sits second, so no code assumes it last."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, rows)
    x0 = np.where(rng.random(rows) < 0.3 + 0.5 * y, 1, rng.integers(0, 3, rows))
    x2 = np.where(rng.random(rows) < 0.6, y * 2, rng.integers(0, 4, rows))
    x3 = np.where(rng.random(rows) < 0.7, x2 % 3, rng.integers(0, 3, rows))
    x4 = rng.integers(0, 2, rows)
    return np.stack([x0, y, x2, x3, x4], axis=1), (3, 2, 4, 3, 2)


def exact(codes: np.ndarray, levels: tuple[int, ...], edges: list[tuple[int, int]]) -> ReleasedClassTree:
    """The class tree's tables without noise (a non-private fit)."""
    features = (0, 2, 3, 4)
    with_target = [pair_counts(codes, levels, 1, v) for v in features]
    triples = [triple_counts(codes, levels, 1, a, b) for a, b in edges]
    return ReleasedClassTree(levels, 1, features, with_target, 1e-6, edges, triples, 1e-6)


def test_sampler_reproduces_the_tables_of_a_non_private_fit():
    codes, levels = coded(20_000)
    edges = [(2, 3), (0, 2), (4, 0)]  # oriented from feature 0: 0 → 2 → 3, 0 → 4
    model = fit_class_tree(exact(codes, levels, edges))
    drawn = model.sample(200_000, np.random.default_rng(1))
    for a, b in edges:
        real = triple_counts(codes, levels, 1, a, b) / len(codes)
        fake = triple_counts(drawn, levels, 1, a, b) / len(drawn)
        assert np.abs(real - fake).max() < 0.012, (a, b)
    for v in (0, 2, 3, 4):
        real, fake = pair_counts(codes, levels, 1, v) / len(codes), pair_counts(drawn, levels, 1, v) / len(drawn)
        assert np.abs(real - fake).max() < 0.012, v


def released_class_tree(codes, levels, epsilon, seed, accountant="pld"):
    """The class tree's releases (target variable 1) on fresh ledger; (released, ledger)."""
    budget = FitBudget(epsilon, 1e-5, accountant)
    ledger = PrivacyLedger(budget=budget.ledger_budget())
    released = release_class_tree(
        ExactTables.of_codes(codes, levels),
        1,
        rows=float(len(codes)),
        budget=budget,
        spent_share=0.0,
        ledger=ledger,
        rng=np.random.default_rng(seed),
    )
    return released, ledger


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_releases_are_ledger_entries_within_the_budget(accountant):
    codes, levels = coded(3000)
    released, ledger = released_class_tree(codes, levels, 1.0, 0, accountant)
    assert [e.name for e in ledger.entries] == [CLASS_PAIRS_EVENT, *[PICK_EVENT] * 3, TRIPLES_EVENT]
    assert ledger.entries[0].count == 4 and ledger.entries[-1].count == 3
    assert 0.95 < ledger.epsilon(1e-5, accountant) <= 1.0 * (1 + 1e-9)
    assert [t.shape for t in released.triples] == [(2, levels[a], levels[b]) for a, b in released.edges]
    assert fit_class_tree(released).sample(50, np.random.default_rng(0)).shape == (50, 5)


def test_one_row_moves_every_selection_utility_by_at_most_one():
    """The pick's utility, |exact (y, a, b) table − the public model|₁, for neighbouring tables: one
    row (here each of 30 different rows in turn) moves it by at most 1, the score range's half."""
    codes, levels = coded(500)
    rng = np.random.default_rng(4)
    released = {v: pair_counts(codes, levels, 1, v) + rng.normal(0, 3, (2, levels[v])) for v in (0, 2, 3, 4)}
    for row in codes[rng.choice(len(codes), 30, replace=False)]:
        neighbour = np.vstack([codes, row])
        for a, b in [(0, 2), (2, 3), (3, 4)]:
            model = conditional_product(released[a], released[b], 500.0)
            gaps = [np.abs(triple_counts(c, levels, 1, a, b) - model).sum() for c in (codes, neighbour)]
            assert abs(gaps[1] - gaps[0]) <= 1.0 + 1e-9


def test_selection_finds_the_pair_dependent_given_the_target():
    codes, levels = coded(20_000)
    released, _ = released_class_tree(codes, levels, 10.0, 3)
    assert (2, 3) in {tuple(sorted(edge)) for edge in released.edges}


@pytest.mark.parametrize("features", [0, 1])
def test_no_tree_below_two_features(features):
    """With no feature the target's 1-way table, with one its table with the target, takes all of ε."""
    codes = np.random.default_rng(0).integers(0, 2, (400, 1 + features))
    levels = (2,) * (1 + features)
    budget = FitBudget(1.0, 1e-5)
    ledger = PrivacyLedger(budget=budget.ledger_budget())
    released = release_class_tree(
        ExactTables.of_codes(codes, levels),
        0,
        rows=400.0,
        budget=budget,
        spent_share=0.0,
        ledger=ledger,
        rng=np.random.default_rng(0),
    )
    assert [e.name for e in ledger.entries] == [CLASS_PAIRS_EVENT] and released.edges == []
    assert ledger.epsilon(1e-5) == pytest.approx(1.0, rel=0.02)
    assert fit_class_tree(released).sample(10, np.random.default_rng(0)).shape == (10, 1 + features)
