"""A DP tree of 3-way marginals given a class variable (a tree-augmented naive Bayes, TAN): the
releases of the tables' "marginals" model when the schema names a target.

Why. MST's tree (dpgan.statistics.tables.tree_marginals) keeps the d − 1 strongest pairs; the
target is then joined to one or two features and every other feature reaches it only through a
chain of noisy tables, so a classifier trained on the synthetic rows loses most of what predicts
the target (bench/notes/38: AUC 0.59 against the GAN's 0.71 on hmda). Conditioning every table on
the target keeps each feature's relation to it (P(x | y) for every x), and the tree among the
features is chosen given it: P(y) Π P(x_i | x_parent(i), y). The target is public (the user's
`target`, or the schema's); which variable codes it is the public codec's.

Three releases, in order, each charged to the ledger before its noise is drawn:
1. the (y, x) table of every feature x: d − 1 tables (with no feature, y's 1-way table), each
   sensitivity 1 (one row adds 1 to one cell of each), one Gaussian entry;
2. the tree over the features, d − 2 picks, each its own pure-DP entry: the exponential mechanism
   over the pairs (a, b) joining two parts of the forest, utility the L1 gap between the exact
   (y, a, b) count table and N̂ · P̂(y) P̂(a | y) P̂(b | y) from the noisy tables of step 1 (public
   by then). One row moves the exact table by 1 in one cell, so every utility moves within
   [−1, 1]: score range 2, as in MST;
3. the tree's d − 2 tables (y, a, b), each sensitivity 1, one Gaussian entry on the ε left.
The fit and sampling (dpgan.statistics.tables.class_tree_fit) are post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.releases import charge_gaussian
from dpgan.statistics.tables.exact_tables import ExactTables
from dpgan.statistics.tables.tree_marginals import (
    ONE_WAY_SHARE,
    SCORE_RANGE,
    SELECT_SHARE,
    normalised_rows,
    pick_epsilon,
    pick_tree,
    shares,
)

CLASS_PAIRS_EVENT = "Gaussian noisy 2-way marginals of the target with each variable (marginals model)"
TRIPLES_EVENT = "Gaussian noisy 3-way marginals of the target with the tree's edges (marginals model)"


@dataclass(frozen=True)
class ReleasedClassTree:
    """What the releases gave: `features` (every variable but the class `target`, in order), their
    noisy (y × x) tables (σ₁ per cell; with no feature, y's own 1-way table), the tree's edges over the
    features (pick order) and their noisy (y × a × b) tables (σ₃ per cell)."""

    levels: tuple[int, ...]
    target: int
    features: tuple[int, ...]
    with_target: list[np.ndarray]
    one_sigma: float
    edges: list[tuple[int, int]]
    triples: list[np.ndarray]
    triple_sigma: float


def triple_counts(codes: np.ndarray, levels: tuple[int, ...], y: int, a: int, b: int) -> np.ndarray:
    """The exact (levels[y] × levels[a] × levels[b]) count table of codes in memory."""
    return ExactTables.of_codes(codes, levels).counts((y, a, b))


def conditional_product(with_a: np.ndarray, with_b: np.ndarray, rows: float) -> np.ndarray:
    """N̂ · P(y) P(a | y) P(b | y) from two noisy (y × ·) tables: each made a distribution, P(y) the
    mean of their y margins (a y with no mass on one side gives that side uniform)."""
    joint_a, joint_b = shares(with_a), shares(with_b)
    prior = (joint_a.sum(axis=1) + joint_b.sum(axis=1)) / 2.0
    given_a = normalised_rows(joint_a, 1.0 / joint_a.shape[1])
    given_b = normalised_rows(joint_b, 1.0 / joint_b.shape[1])
    return rows * prior[:, None, None] * given_a[:, :, None] * given_b[:, None, :]


def choose_class_tree(
    tables: ExactTables,
    released: dict[int, np.ndarray],
    target: int,
    rows: float,
    epsilon: float,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> list[tuple[int, int]]:
    """The features' spanning tree, one exponential-mechanism pick at `epsilon` per edge (each
    charged before its draw) among the pairs joining two components."""
    features = sorted(released)
    gaps: dict[tuple[int, int], float] = {}
    for i, a in enumerate(features):
        for b in features[i + 1 :]:
            model = conditional_product(released[a], released[b], rows)
            gaps[(a, b)] = float(np.abs(tables.counts((target, a, b)) - model).sum())
    note = f"pure ε-DP, score range {SCORE_RANGE:g}: L1 gap to the target-conditioned product"
    return pick_tree(gaps, features, epsilon, ledger, rng, note)


def release_class_tree(
    tables: ExactTables,
    target: int,
    *,
    rows: float,
    budget: FitBudget,
    spent_share: float,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> ReleasedClassTree:
    """The three releases (module docstring) on the ε left after `spent_share`; `rows` is the
    released N̂. With one feature there is no tree (its table takes all of ε); with none, y's
    1-way table does. `tables` gives the exact counts (dpgan.statistics.tables.exact_tables)."""
    levels = tables.levels
    features = tuple(v for v in range(len(levels)) if v != target)
    left = 1.0 - spent_share
    last = budget.whole_target()
    tree = len(features) > 1
    first = budget.at(spent_share + ONE_WAY_SHARE * left) if tree else last
    measured = max(len(features), 1)
    sigma_one = first.sigma(1.0, measured, ledger.entries)
    note = f"{measured} tables; sensitivity 1 each"
    charge_gaussian(ledger, CLASS_PAIRS_EVENT, sigma_one, count=measured, note=note)
    if not features:
        own = noisy_counts(tables.counts((target,)), sigma_one, rng)
        return ReleasedClassTree(levels, target, (), [own], sigma_one, [], [], 0.0)
    with_target = [noisy_counts(tables.counts((target, v)), sigma_one, rng) for v in features]
    if not tree:
        return ReleasedClassTree(levels, target, features, with_target, sigma_one, [], [], 0.0)
    epsilon = pick_epsilon(ledger, len(features) - 1, budget.at(spent_share + SELECT_SHARE * left).epsilon, budget)
    released = dict(zip(features, with_target))
    edges = choose_class_tree(tables, released, target, rows, epsilon, ledger, rng)
    sigma_three = last.sigma(1.0, len(edges), ledger.entries)
    note = f"{len(edges)} tables; sensitivity 1 each"
    charge_gaussian(ledger, TRIPLES_EVENT, sigma_three, count=len(edges), note=note)
    triples = [noisy_counts(tables.counts((target, a, b)), sigma_three, rng) for a, b in edges]
    return ReleasedClassTree(levels, target, features, with_target, sigma_one, edges, triples, sigma_three)


__all__ = ["CLASS_PAIRS_EVENT", "TRIPLES_EVENT", "ReleasedClassTree", "choose_class_tree", "conditional_product",
           "release_class_tree", "triple_counts"]  # fmt: skip
