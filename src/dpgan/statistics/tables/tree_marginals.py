"""A DP tree of 2-way marginals over discrete variables, chosen and measured as MST does
(McKenna, Miklau, Sheldon 2021): the releases of the tables' "marginals" statistics model.

Each row is d discrete codes (a table's categories, a numeric column's bins, point masses and null
slot; dpgan.tables.codec.discrete makes them from the public codec). Three releases, in order:
1. the 1-way tables: one histogram per variable, each sensitivity 1 (one row adds 1 to one cell
   of each), Gaussian at one σ: one ledger entry of d releases;
2. the tree, d − 1 picks, each its own ledger entry: a pick is the exponential mechanism over the
   pairs that join two parts of the forest so far (Kruskal's greedy maximum spanning tree), its
   utility the L1 gap between the pair's exact count table and N̂ times the product of the two noisy
   1-way shares. One row moves every table's L1 gap by at most 1, up or down, so the utilities
   share the interval [−1, 1]: score range 2 (dpgan.privacy.mechanisms.exponential_probabilities).
   The candidates at each pick depend only on the picks before it (public);
3. the tree's d − 1 tables, each sensitivity 1, Gaussian at one σ: one ledger entry of d − 1
   releases, calibrated to all of ε that is left (the model's last release).
Each entry is charged before its noise is drawn; the ledger refuses one that would pass ε.
The releases read the rows only through their exact count tables (dpgan.statistics.tables.exact_tables:
from codes in memory, or summed over a stream's blocks and torchrun's ranks); the fit
(dpgan.statistics.tables.tree_fit) is post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpgan.privacy.accounting import PrivacyLedger, epsilon_of
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.mechanisms import exponential_mechanism, noisy_counts
from dpgan.privacy.releases import charge_gaussian, pure_dp_event_entry
from dpgan.statistics.tables.exact_tables import ExactTables

ONE_WAY_EVENT = "Gaussian noisy 1-way marginals (marginals model)"
PICK_EVENT = "exponential mechanism: one edge of the marginals tree"
PAIRS_EVENT = "Gaussian noisy 2-way marginals of the tree's edges (marginals model)"
# The model's split of the ε left after the data releases (cumulative shares of it): the 1-way
# tables reach ONE_WAY_SHARE, the picks SELECT_SHARE, the tree's tables the rest. MST's split is
# thirds; chosen on the validation splits (bench/notes/38-table-marginals.md)
ONE_WAY_SHARE = 1.0 / 3.0
SELECT_SHARE = 2.0 / 3.0
SCORE_RANGE = 2.0  # a row moves every pair's L1 gap within [−1, 1] (module docstring)


@dataclass(frozen=True)
class ReleasedTree:
    """What the three releases gave: the noisy 1-way counts (σ₁ per cell), the tree's edges (pairs
    of variable indices, in pick order) and their noisy 2-way counts (σ₂ per cell)."""

    levels: tuple[int, ...]
    one_way: list[np.ndarray]
    one_way_sigma: float
    edges: list[tuple[int, int]]
    pairs: list[np.ndarray]
    pair_sigma: float


def pair_counts(codes: np.ndarray, levels: tuple[int, ...], a: int, b: int) -> np.ndarray:
    """The exact (levels[a] × levels[b]) count table of variables a and b of codes in memory."""
    return ExactTables.of_codes(codes, levels).counts((a, b))


def shares(noisy: np.ndarray) -> np.ndarray:
    """Noisy counts → a distribution: negatives to 0, normalised (uniform when nothing is left)."""
    kept = np.maximum(np.asarray(noisy, dtype=np.float64), 0.0)
    total = kept.sum()
    return kept / total if total > 0 else np.full(kept.shape, 1.0 / kept.size)


def normalised_rows(table: np.ndarray, fallback: np.ndarray | float) -> np.ndarray:
    """Each slice along the last axis divided by its sum: a conditional distribution; a slice with no
    mass takes `fallback` (broadcast against the table)."""
    mass = table.sum(axis=-1, keepdims=True)
    return np.where(mass > 0, table / np.where(mass > 0, mass, 1.0), fallback)


def pick_tree(
    gaps: dict[tuple[int, int], float],
    nodes: list[int],
    epsilon: float,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    note: str,
) -> list[tuple[int, int]]:
    """Kruskal's spanning tree of `nodes` by the exponential mechanism: len(nodes) − 1 picks at
    `epsilon`, each among the pairs of `gaps` joining two components (public: the picks before it),
    each charged to `ledger` before its draw; the utilities are the pairs' gaps (score range 2)."""
    component = {v: v for v in nodes}
    edges: list[tuple[int, int]] = []
    for _ in range(len(nodes) - 1):
        candidates = [pair for pair in gaps if component[pair[0]] != component[pair[1]]]
        ledger.add(pure_dp_event_entry(PICK_EVENT, epsilon, note=note))
        a, b = candidates[exponential_mechanism(np.array([gaps[p] for p in candidates]), epsilon, SCORE_RANGE, rng)]
        edges.append((a, b))
        old, new = component[b], component[a]
        component = {v: new if c == old else c for v, c in component.items()}
    return edges


def pick_epsilon(ledger: PrivacyLedger, picks: int, target: float, budget: FitBudget) -> float:
    """The ε of each of `picks` exponential-mechanism picks that brings the ledger to `target` ε
    (bisection on the accountant's composition; each pick is pure ε-DP)."""
    low, high = 1e-6, max(target, 1e-6)

    def spent(epsilon: float) -> float:
        # `picks` entries, not one of count `picks`: dp-accounting 0.6.0's PLD composes a
        # RandomizedResponse event (pure ε-DP's dominating pair) once whatever its count
        entries = [pure_dp_event_entry(PICK_EVENT, epsilon)] * picks
        return epsilon_of([*ledger.entries, *entries], budget.delta, budget.accountant, pld_coarsening=4.0)

    if spent(low) > target:
        return low
    for _ in range(30):
        middle = np.sqrt(low * high)
        low, high = (middle, high) if spent(middle) <= target else (low, middle)
        if high / low < 1.01:
            break
    return low


def choose_tree(
    tables: ExactTables,
    one_way: list[np.ndarray],
    rows: float,
    epsilon: float,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> list[tuple[int, int]]:
    """d − 1 edges of a spanning tree, each picked by the exponential mechanism at `epsilon` among
    the pairs joining two components (each pick charged before its draw)."""
    d = len(tables.levels)
    gaps: dict[tuple[int, int], float] = {}
    for a in range(d):
        for b in range(a + 1, d):
            product = rows * np.outer(shares(one_way[a]), shares(one_way[b]))
            gaps[(a, b)] = float(np.abs(tables.counts((a, b)) - product).sum())
    note = f"pure ε-DP, score range {SCORE_RANGE:g}: L1 gap to the product of the noisy 1-way shares"
    return pick_tree(gaps, list(range(d)), epsilon, ledger, rng, note)


def release_tree(
    tables: ExactTables,
    *,
    rows: float,
    budget: FitBudget,
    spent_share: float,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> ReleasedTree:
    """The three releases (module docstring) on the ε left after `spent_share`; `rows` is the
    released row count N̂ (public); `tables` gives the exact counts (from codes in memory or summed
    over a stream's blocks). One variable: its 1-way table on all of ε, no tree."""
    levels = tables.levels
    d = len(levels)
    left = 1.0 - spent_share
    last = budget.whole_target()
    first = budget.at(spent_share + ONE_WAY_SHARE * left) if d > 1 else last
    sigma_one = first.sigma(1.0, d, ledger.entries)
    charge_gaussian(ledger, ONE_WAY_EVENT, sigma_one, count=d, note=f"{d} histograms; sensitivity 1 each")
    one_way = [noisy_counts(tables.counts((v,)), sigma_one, rng) for v in range(d)]
    if d == 1:
        return ReleasedTree(levels, one_way, sigma_one, [], [], 0.0)
    select_to = budget.at(spent_share + SELECT_SHARE * left).epsilon
    epsilon = pick_epsilon(ledger, d - 1, select_to, budget)
    edges = choose_tree(tables, one_way, rows, epsilon, ledger, rng)
    sigma_two = last.sigma(1.0, d - 1, ledger.entries)
    charge_gaussian(ledger, PAIRS_EVENT, sigma_two, count=d - 1, note=f"{d - 1} tables; sensitivity 1 each")
    pairs = [noisy_counts(tables.counts(edge), sigma_two, rng) for edge in edges]
    return ReleasedTree(levels, one_way, sigma_one, edges, pairs, sigma_two)


__all__ = ["ONE_WAY_EVENT", "ONE_WAY_SHARE", "PAIRS_EVENT", "PICK_EVENT", "SELECT_SHARE", "ReleasedTree",
           "choose_tree", "normalised_rows", "pair_counts", "pick_epsilon", "pick_tree", "release_tree",
           "shares"]  # fmt: skip
