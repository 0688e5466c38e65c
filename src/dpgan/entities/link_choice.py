"""The link column chosen with DP: the exponential mechanism over the parents' categorical columns.

The link is the parent column the events per entity and the event columns are conditioned on
(statistics.py). When the user names none, the candidates are the parents' categorical and boolean
columns (public: the schema); with two or more, one is drawn by the exponential mechanism
(dpgan.privacy.mechanisms.exponential_mechanism) at LINK_SHARE of the fit's ε, one pure-DP entry in
the ledger (LINK_CHOICE). A named link, or a single candidate, spends nothing.

The utility of a candidate c: how well c's value predicts its entity's history, as the number of
entities (and events, weighing 1/k) that the best rule "value of c → cell" gets right,

    u_c = Σ_v max_b N_c(v, b) + Σ_j Σ_v max_x W_cj(v, x),

N_c(v, b) the entities with c = v whose count of events is in log2 bucket b, W_cj(v, x) the events
read (at most k per entity, each weighing 1/k) of entities with c = v whose column j is in cell x.

Sensitivity. Adding one entity (with c = v) changes only row v of each table: N_c(v, ·) gains 1 in
one cell, so its maximum gains 0 or 1; W_cj(v, ·) gains at most k·(1/k) = 1 in all, so its maximum
gains between 0 and 1. So every candidate's utility moves by an amount in the one interval
[0, 1 + d_e] (removing: [-(1 + d_e), 0]), the shared interval of `exponential_probabilities`: the
mechanism at ε/R with R = 1 + d_e is ε-DP (not ε/(2Δ)). tests/entities checks the bound on
neighbours that add an entity with far more than k events.

Why this utility and not mutual information: its sensitivity is a small constant whatever the data,
and it rewards a column for the entities it separates, not for its number of categories alone (a
category with few entities adds at most those few to u_c).
"""

from __future__ import annotations

import numpy as np

from dpgan.entities.histograms import table
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.mechanisms import exponential_mechanism
from dpgan.privacy.releases import pure_dp_event_entry

LINK_SHARE = 0.05  # of the fit's ε, for the choice (pure ε-DP), when there is a choice
LINK_CHOICE = "entity link column (exponential mechanism)"


def link_candidates(numeric: list[bool]) -> list[int]:
    """The parent columns that may be the link: the categorical and boolean ones (schema order)."""
    return [j for j, is_numeric in enumerate(numeric) if not is_numeric]


def link_tables(
    parent_codes: np.ndarray,
    sizes: list[int],
    candidates: list[int],
    count_buckets: np.ndarray,
    n_buckets: int,
    owner: np.ndarray,
    event_codes: np.ndarray,
    event_sizes: list[int],
) -> dict[str, np.ndarray]:
    """The exact tables N_c and W_cj (unweighted event counts) of every candidate: sums over entities,
    so the tables of blocks of entities add up to the whole's (dpgan.entities.parquet), and only
    then are their rows' maxima taken (`utilities_of`)."""
    out = {}
    for i, c in enumerate(candidates):
        value = parent_codes[:, c]
        out[f"{i}/counts"] = table(value, count_buckets, sizes[c], n_buckets)
        for j, size in enumerate(event_sizes):
            out[f"{i}/{j}"] = table(value[owner], event_codes[:, j], sizes[c], size)
    return out


def utilities_of(tables: dict[str, np.ndarray], n_candidates: int, n_event_columns: int, k: int) -> np.ndarray:
    """u_c from the whole tables of `link_tables` (events weighing 1/k)."""
    out = np.zeros(n_candidates)
    for i in range(n_candidates):
        out[i] = _rows_max(tables[f"{i}/counts"], 1.0)
        for j in range(n_event_columns):
            out[i] += _rows_max(tables[f"{i}/{j}"], 1.0 / k)
    return out


def link_score_range(n_event_columns: int) -> float:
    """R = 1 + d_e: the interval every candidate's utility moves in when one entity comes or goes."""
    return 1.0 + n_event_columns


def choose_link(
    utilities: np.ndarray,
    candidates: list[int],
    n_event_columns: int,
    epsilon: float,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> int:
    """One candidate by the exponential mechanism at `epsilon`, charged to `ledger` first (refused
    there past the budget before anything is drawn)."""
    score_range = link_score_range(n_event_columns)
    note = f"ε = {epsilon:.4g} over {len(candidates)} parent columns; R = 1 + d_e = {score_range:g}"
    ledger.add(pure_dp_event_entry(LINK_CHOICE, epsilon, note=note))
    return candidates[exponential_mechanism(utilities, epsilon, score_range, rng)]


def _rows_max(counts: np.ndarray, weight: float) -> float:
    """Σ over rows of the (weighted) 2-way table's largest cell."""
    return float(counts.max(axis=1).sum()) * weight


__all__ = [
    "LINK_CHOICE",
    "LINK_SHARE",
    "choose_link",
    "link_candidates",
    "link_score_range",
    "link_tables",
    "utilities_of",
]
