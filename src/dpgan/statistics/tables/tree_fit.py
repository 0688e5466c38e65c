"""The marginals tree fitted to its noisy tables, and rows drawn from it: post-processing of the
releases of dpgan.statistics.tables.tree_marginals (no ε, no read of the data).

Fit. A tree-shaped graphical model is fixed by its 1-way and 2-way tables once they agree: the
joint is Π P(a, b) / Π P(v)^(degree − 1). The noisy tables do not agree, so:
1. each variable's distribution is the inverse-variance mean of its own noisy 1-way counts (σ₁ per
   cell) and the margins of its tree tables (a margin sums the other side's w cells: σ₂²·w), then
   negatives to 0 and normalised;
2. each tree table, negatives to 0, is brought to those two margins by iterative proportional
   fitting (IPF_ROUNDS rounds of scaling rows then columns; an empty row or column is first filled
   with the product of the margins, so every margin can be met).
Sampling is ancestral along the tree from a root (variable 0): the root from its 1-way
distribution, each child from P(child | parent) = the pair's table's row of the parent's value.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from dpgan.statistics.tables.tree_marginals import ReleasedTree, normalised_rows, shares

IPF_ROUNDS = 30


@dataclass(frozen=True)
class TreeModel:
    """The fitted tree: each variable's distribution (`one_way`), the edges oriented parent → child in
    sampling order (each child after its parent), and each edge's joint (parent × child), summing to 1."""

    one_way: list[np.ndarray]
    edges: list[tuple[int, int]]
    joints: list[np.ndarray]

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n rows of codes (n × d), ancestral: the root, then each edge's child given its parent."""
        d = len(self.one_way)
        codes = np.zeros((n, d), dtype=np.int64)
        codes[:, 0] = draw(np.broadcast_to(self.one_way[0], (n, self.one_way[0].size)), rng)
        for (parent, child), joint in zip(self.edges, self.joints):
            conditional = normalised_rows(joint, self.one_way[child])
            codes[:, child] = draw(conditional[codes[:, parent]], rng)
        return codes


def draw(probabilities: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row of a (n × w) array of distributions (inverse CDF of one uniform each)."""
    cumulative = np.cumsum(probabilities, axis=1)
    cumulative /= cumulative[:, -1:]
    return np.minimum((rng.random((len(probabilities), 1)) > cumulative).sum(axis=1), probabilities.shape[1] - 1)


def oriented(d: int, edges: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """The tree's edges as (index in `edges`, parent, child), breadth first from variable 0."""
    return oriented_over(range(d), edges)


def oriented_over(nodes: Iterable[int], edges: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """`oriented` for a tree spanning `nodes` (the class tree's features), from the smallest."""
    nodes = sorted(nodes)
    neighbours: dict[int, list[tuple[int, int]]] = {v: [] for v in nodes}
    for index, (a, b) in enumerate(edges):
        if a not in neighbours or b not in neighbours:
            raise ValueError("the edges do not form a spanning tree of the variables")
        neighbours[a].append((index, b))
        neighbours[b].append((index, a))
    if not nodes:
        return []
    seen, queue, order = {nodes[0]}, deque([nodes[0]]), []
    while queue:
        parent = queue.popleft()
        for index, child in sorted(neighbours[parent], key=lambda item: item[1]):
            if child not in seen:
                seen.add(child)
                order.append((index, parent, child))
                queue.append(child)
    if len(order) != len(nodes) - 1 or len(edges) != len(nodes) - 1:
        raise ValueError("the edges do not form a spanning tree of the variables")
    return order


def fitted_one_way(released: ReleasedTree) -> list[np.ndarray]:
    """Step 1 of the fit: each variable's distribution from all its noisy tables."""
    estimates = []
    for v, own in enumerate(released.one_way):
        weighted, weight = own / released.one_way_sigma**2, 1.0 / released.one_way_sigma**2
        for (a, b), table in zip(released.edges, released.pairs):
            if v in (a, b):
                margin, other = (table.sum(axis=1), b) if v == a else (table.sum(axis=0), a)
                precision = 1.0 / (released.pair_sigma**2 * released.levels[other])
                weighted, weight = weighted + margin * precision, weight + precision
        estimates.append(shares(weighted / weight))
    return estimates


def ipf(table: np.ndarray, rows: np.ndarray, columns: np.ndarray, rounds: int = IPF_ROUNDS) -> np.ndarray:
    """Step 2 of the fit: `table` (negatives to 0) scaled to the margins `rows` and `columns`."""
    joint = np.maximum(np.asarray(table, dtype=np.float64), 0.0)
    product = np.outer(rows, columns)
    empty_rows, empty_columns = joint.sum(axis=1) <= 0, joint.sum(axis=0) <= 0
    joint[empty_rows, :] = product[empty_rows, :]
    joint[:, empty_columns] = product[:, empty_columns]
    for _ in range(rounds):
        have = joint.sum(axis=1)
        joint *= np.divide(rows, have, out=np.zeros_like(rows), where=have > 0)[:, None]
        have = joint.sum(axis=0)
        joint *= np.divide(columns, have, out=np.zeros_like(columns), where=have > 0)[None, :]
    total = joint.sum()
    return joint / total if total > 0 else product


def fit_tree(released: ReleasedTree) -> TreeModel:
    """The tree model of the noisy tables (module docstring), oriented for ancestral sampling."""
    one_way = fitted_one_way(released)
    edges, joints = [], []
    for index, parent, child in oriented(len(one_way), released.edges):
        table = released.pairs[index]
        if released.edges[index] != (parent, child):
            table = table.T
        edges.append((parent, child))
        joints.append(ipf(table, one_way[parent], one_way[child]))
    return TreeModel(one_way, edges, joints)


__all__ = ["IPF_ROUNDS", "TreeModel", "draw", "fit_tree", "fitted_one_way", "ipf", "oriented", "oriented_over"]
