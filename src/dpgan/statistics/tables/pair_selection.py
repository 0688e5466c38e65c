"""Which two-way tables the 2-way anchor measures: the target's pairs, and the others a cheap DP
probe of every pair shows to be dependent, as MST and AIM choose their cliques.

Why: measuring every pair of a table's d columns is P = d(d−1)/2 Gaussian releases sharing one
share of ε, so each table's noise grows with √P (Lending Club's 24 columns: 276 tables, a noise std
per cell near 3 % of its 6,000 rows at ε = 1). Most pairs of a wide
table are close to independent: the one-way anchor and G already give them their product, and a
noisy table pulls G towards the noise. Fewer, chosen tables get less noise each.

How, in two Gaussian releases of sensitivity-1 tables (one ledger entry each):
1. the probe: every pair's table at σ_p (PROBE_SHARE of the anchor's share of ε);
2. each pair's dependence, read off its probe table T̃ (post-processing): the squared distance in
   share units between T̃ and the product of its own margins, Σ(T̃ − r̃c̃ᵀ/ΣT̃)² / N̂², less the
   part the noise adds on average ((rows − 1)(columns − 1)·σ_p² / N̂², as a chi-square's degrees of
   freedom), which would otherwise favour the pairs with most cells. It is the quantity the
   anchor's least-squares penalty fits, so the pairs chosen are those where G, left alone, would be
   furthest off;
3. the chosen: every pair of the target (public: the user named it; the naive-Bayes label model
   reads them all), and the `spans − 1` other pairs of largest dependence (a tree's worth of edges,
   as MST measures), measured again at σ_m with the rest of the share; a chosen table is the
   inverse-variance mean of its two releases. The others are dropped.
When the choice would keep more than a quarter of the pairs (a narrow table), there is no probe:
one release of every pair at σ, as before. The choice reads only released tables; the number kept
is public (it counts spans and the target's).
"""

from __future__ import annotations

import numpy as np

from dpgan.models.output_spans import OutputSpan

# the probe's share of the anchor's share of ε (cumulative: the probe's target is this fraction)
PROBE_SHARE = 0.25
# the choice runs only when it keeps at most 1/MIN_DROP_RATIO of the pairs: then a kept table's
# noise variance is about 3.25 times lower than with every pair measured at once (1 − PROBE_SHARE of
# the budget over a quarter of the tables, plus the probe's). Chosen on the validation splits at
# ε = 1, 3 seeds, hand schemas (bench/notes/21): on churn (20 columns, 37 of 190 pairs kept) and
# Lending Club (24, 46 of 276) the choice lowered the 2-way error (0.106 → 0.101, 0.179 → 0.166) and
# kept the TSTR AUC (−0.005, −0.003, seed spread ±0.004, ±0.015); on hmda (23 of 78) and chile (13 of
# 28) it raised the 2-way error (0.140 → 0.170, 0.228 → 0.242): a narrow table loses more pairs than
# it gains precision. It saves no time: the probe counts every pair
MIN_DROP_RATIO = 4.0

Pair = tuple[OutputSpan, OutputSpan]


def forced(pair: Pair, column: str | None) -> bool:
    """Whether the pair is measured whatever the probe says: one of its spans is the target's."""
    return column is not None and column in (pair[0].column, pair[1].column)


def chosen_count(pairs: list[Pair], column: str | None) -> tuple[int, int]:
    """(pairs of the target, other pairs to keep): public, from the spans alone."""
    target = sum(forced(p, column) for p in pairs)
    spans = {s.start for p in pairs for s in p if not (column is not None and s.column == column)}
    return target, max(len(spans) - 1, 0)


def worth_probing(pairs: list[Pair], column: str | None) -> bool:
    """Whether the choice keeps at most 1/MIN_DROP_RATIO of the pairs (else every pair is measured
    at once, without a probe). Public: it counts spans."""
    target, others = chosen_count(pairs, column)
    return len(pairs) >= MIN_DROP_RATIO * (target + others)


def dependence(table: np.ndarray, sigma: float, total: float) -> float:
    """The pair's squared dependence in share units of `total`, less the noise's expected part: the
    residual after the table's own margins keeps (rows − 1)(columns − 1) of its cells' noise, as
    in a chi-square test."""
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    expected = np.outer(rows, cols) / (float(table.sum()) or 1.0)
    freedom = (table.shape[0] - 1) * (table.shape[1] - 1)
    return float((((table - expected) ** 2).sum() - freedom * sigma**2) / max(total, 1.0) ** 2)


def choose(pairs: list[Pair], probe: list[np.ndarray], sigma: float, total: float, column: str | None) -> list[int]:
    """Indices (in `pairs` order) of the target's pairs and the others of largest dependence."""
    _, others = chosen_count(pairs, column)
    scored = [(dependence(t, sigma, total), i) for i, (p, t) in enumerate(zip(pairs, probe)) if not forced(p, column)]
    best = {i for _, i in sorted(scored, key=lambda s: (-s[0], s[1]))[:others]}
    return [i for i, p in enumerate(pairs) if forced(p, column) or i in best]


__all__ = [
    "MIN_DROP_RATIO",
    "PROBE_SHARE",
    "choose",
    "chosen_count",
    "dependence",
    "forced",
    "worth_probing",
]
