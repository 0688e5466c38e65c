"""The marginals tree (dpgan.statistics.tables.tree_marginals, tree_fit): its three releases in the
ledger within ε, a selection that finds the dependent pairs, a fit whose tables agree, and an
ancestral sampler that reproduces the tables it was fitted to."""

from __future__ import annotations

import numpy as np
import pytest

from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget
from dpgan.statistics.tables.exact_tables import ExactTables
from dpgan.statistics.tables.tree_fit import fit_tree, ipf, oriented
from dpgan.statistics.tables.tree_marginals import (
    ONE_WAY_EVENT,
    PAIRS_EVENT,
    PICK_EVENT,
    ReleasedTree,
    pair_counts,
    release_tree,
)


def chain(rows: int, seed: int = 0) -> tuple[np.ndarray, tuple[int, ...]]:
    """Codes of a chain a → b → c (b copies a 80 % of the time, c copies b 70 %) and a free d."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, rows)
    b = np.where(rng.random(rows) < 0.8, a, rng.integers(0, 3, rows))
    c = np.where(rng.random(rows) < 0.7, b % 2, rng.integers(0, 2, rows))
    d = rng.integers(0, 4, rows)
    return np.stack([a, b, c, d], axis=1), (3, 3, 2, 4)


def exact_tree(codes: np.ndarray, levels: tuple[int, ...], edges: list[tuple[int, int]]) -> ReleasedTree:
    """The tree's tables without noise (a non-private fit, to check the fit and the sampler)."""
    one_way = [np.bincount(codes[:, v], minlength=w).astype(float) for v, w in enumerate(levels)]
    pairs = [pair_counts(codes, levels, a, b) for a, b in edges]
    return ReleasedTree(levels, one_way, 1e-6, edges, pairs, 1e-6)


def test_sampler_reproduces_the_two_way_tables_of_a_non_private_fit():
    codes, levels = chain(20_000)
    edges = [(0, 1), (2, 1), (1, 3)]  # b's neighbours: the tree is oriented from variable 0
    model = fit_tree(exact_tree(codes, levels, edges))
    drawn = model.sample(200_000, np.random.default_rng(1))
    for a, b in [*edges, (0, 2)]:  # (0, 2) is not an edge: the chain implies it through b
        real = pair_counts(codes, levels, a, b) / len(codes)
        fake = pair_counts(drawn, levels, a, b) / len(drawn)
        # sampling error of a share p over 200k rows is below 0.0012; the real table's over 20k, 0.0036
        assert np.abs(real - fake).max() < 0.012, (a, b)
    # and a product of the margins would miss the chain's dependence by far more
    real = pair_counts(codes, levels, 0, 1) / len(codes)
    assert np.abs(real - np.outer(real.sum(1), real.sum(0))).max() > 0.1


def test_ipf_meets_both_margins_and_fills_an_empty_row():
    table = np.array([[5.0, -2.0, 1.0], [0.0, 0.0, -1.0], [2.0, 2.0, 2.0]])
    rows, columns = np.array([0.5, 0.2, 0.3]), np.array([0.3, 0.3, 0.4])
    joint = ipf(table, rows, columns)
    assert (joint >= 0).all()
    np.testing.assert_allclose(joint.sum(axis=1), rows, atol=1e-6)
    np.testing.assert_allclose(joint.sum(axis=0), columns, atol=1e-6)


def test_oriented_refuses_edges_that_are_not_a_spanning_tree():
    assert [(p, c) for _, p, c in oriented(3, [(2, 1), (0, 1)])] == [(0, 1), (1, 2)]
    with pytest.raises(ValueError):
        oriented(4, [(0, 1), (1, 0), (2, 3)])


def released_tree(codes, levels, epsilon, seed, accountant="pld"):
    """MST's releases on a fresh ledger; (released, ledger)."""
    budget = FitBudget(epsilon, 1e-5, accountant)
    ledger = PrivacyLedger(budget=budget.ledger_budget())
    released = release_tree(
        ExactTables.of_codes(codes, levels),
        rows=float(len(codes)),
        budget=budget,
        spent_share=0.0,
        ledger=ledger,
        rng=np.random.default_rng(seed),
    )
    return released, ledger


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_releases_are_ledger_entries_within_the_budget(accountant):
    codes, levels = chain(3000)
    released, ledger = released_tree(codes, levels, 1.0, 0, accountant)
    names = [e.name for e in ledger.entries]
    assert names == [ONE_WAY_EVENT, *[PICK_EVENT] * 3, PAIRS_EVENT]  # each pick its own entry
    assert ledger.entries[0].count == 4 and ledger.entries[-1].count == 3
    spent = ledger.epsilon(1e-5, accountant)
    assert 0.95 < spent <= 1.0 * (1 + 1e-9)  # the last release takes what is left
    assert len(released.edges) == 3 and len(released.pairs) == 3


def test_selection_finds_the_dependent_pairs():
    codes, levels = chain(20_000)
    released, _ = released_tree(codes, levels, 10.0, 3)
    chosen = {tuple(sorted(edge)) for edge in released.edges}
    assert {(0, 1), (1, 2)} <= chosen  # the chain's edges; d joins anywhere


def test_one_variable_spends_all_of_epsilon_on_its_histogram():
    codes = np.random.default_rng(0).integers(0, 5, (500, 1))
    budget = FitBudget(1.0, 1e-5)
    ledger = PrivacyLedger(budget=budget.ledger_budget())
    released = release_tree(
        ExactTables.of_codes(codes, (5,)),
        rows=500.0,
        budget=budget,
        spent_share=0.0,
        ledger=ledger,
        rng=np.random.default_rng(0),
    )
    assert [e.name for e in ledger.entries] == [ONE_WAY_EVENT] and released.edges == []
    assert fit_tree(released).sample(10, np.random.default_rng(0)).shape == (10, 1)
