"""The class tree (dpgan.statistics.tables.class_tree) fitted to its noisy tables, and rows drawn
from it: post-processing of its releases (no ε, no read of the data).

Fit.
1. Each feature's (y × x) counts: the inverse-variance mean of its own noisy table (σ₁² per cell)
   and the margins of the tree's (y, a, b) tables it is in (a margin sums the other side's w cells:
   σ₃²·w per cell).
2. P(y): the inverse-variance mean of those tables' y margins (a table of l_x cells a row: its
   margin's variance is l_x times its cells'), negatives to 0, normalised.
3. P(x | y): each row of a feature's counts, negatives to 0, normalised (an empty row takes the
   feature's pooled distribution); P(y, x) = P(y) P(x | y), so every feature agrees on P(y).
4. Each tree table, one y slice at a time, brought to P(a | y) and P(b | y) by IPF (tree_fit.ipf)
   and scaled by P(y), so the joints agree with step 3.
Sampling is ancestral: y from P(y), the root feature (the smallest index) from P(x | y), each child
from P(child | parent, y), the row of its slice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpgan.statistics.tables.class_tree import ReleasedClassTree
from dpgan.statistics.tables.tree_fit import draw, ipf, oriented_over
from dpgan.statistics.tables.tree_marginals import normalised_rows, shares


@dataclass(frozen=True)
class ClassTreeModel:
    """The fitted class tree. `one_way[target]` is P(y); `one_way[x]` for a feature is P(y, x) (y × x);
    `edges` are oriented parent → child (each child after its parent) and `joints` their P(y, parent,
    child) (y × parent × child). Every table sums to 1."""

    target: int
    one_way: list[np.ndarray]
    edges: list[tuple[int, int]]
    joints: list[np.ndarray]

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n rows of codes (n × d): y, the root feature given y, each child given its parent and y."""
        d = len(self.one_way)
        codes = np.zeros((n, d), dtype=np.int64)
        prior = self.one_way[self.target]
        y = draw(np.broadcast_to(prior, (n, prior.size)), rng)
        codes[:, self.target] = y
        features = [v for v in range(d) if v != self.target]
        if not features:
            return codes
        given = {v: _given_y(self.one_way[v]) for v in features}
        root = features[0]
        codes[:, root] = draw(given[root][y], rng)
        for (parent, child), joint in zip(self.edges, self.joints):
            conditional = normalised_rows(joint, given[child][:, None, :])
            codes[:, child] = draw(conditional[y, codes[:, parent]], rng)
        return codes


def _given_y(joint: np.ndarray) -> np.ndarray:
    """P(x | y) from P(y, x): each row normalised; a row with no mass takes x's pooled distribution."""
    return normalised_rows(joint, shares(joint.sum(axis=0))[None, :])


def fitted_with_target(released: ReleasedClassTree) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """Steps 1-3 of the fit: P(y) and each feature's P(y, x)."""
    levels = released.levels
    counts: dict[int, np.ndarray] = {}
    variances: dict[int, float] = {}
    for v, own in zip(released.features, released.with_target):
        weighted, weight = own / released.one_sigma**2, 1.0 / released.one_sigma**2
        for (a, b), table in zip(released.edges, released.triples):
            if v in (a, b):
                margin, other = (table.sum(axis=2), b) if v == a else (table.sum(axis=1), a)
                precision = 1.0 / (released.triple_sigma**2 * levels[other])
                weighted, weight = weighted + margin * precision, weight + precision
        counts[v], variances[v] = weighted / weight, 1.0 / weight
    if not counts:
        return shares(released.with_target[0]), {}
    precisions = {v: 1.0 / (variances[v] * levels[v]) for v in counts}
    margin = sum(counts[v].sum(axis=1) * precisions[v] for v in counts) / sum(precisions.values())
    prior = shares(margin)
    joints = {}
    for v, table in counts.items():
        kept = np.maximum(table, 0.0)
        joints[v] = prior[:, None] * _given_y(kept)
    return prior, joints


def fit_class_tree(released: ReleasedClassTree) -> ClassTreeModel:
    """The class tree model of the noisy tables (module docstring), oriented for ancestral sampling."""
    prior, with_target = fitted_with_target(released)
    one_way = [prior if v == released.target else with_target[v] for v in range(len(released.levels))]
    edges, joints = [], []
    for index, parent, child in oriented_over(released.features, released.edges):
        table = released.triples[index]
        if released.edges[index] != (parent, child):
            table = table.transpose(0, 2, 1)
        given_parent, given_child = _given_y(with_target[parent]), _given_y(with_target[child])
        slices = [prior[y] * ipf(table[y], given_parent[y], given_child[y]) for y in range(len(prior))]
        edges.append((parent, child))
        joints.append(np.stack(slices))
    return ClassTreeModel(released.target, one_way, edges, joints)


__all__ = ["ClassTreeModel", "fit_class_tree", "fitted_with_target"]
