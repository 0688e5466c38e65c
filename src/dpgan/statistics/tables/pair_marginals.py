"""DP two-way marginals of the generator's outputs: a hybrid in which G learns how columns depend
on each other from the workload that MST and AIM fit.

Why: on a small table a DP critic step is mostly noise (RESULTS §14), and G learns each column's
distribution (the one-way anchor, dpgan.statistics.tables.marginals) but not how the columns go together:
its association difference stays at that of a copy with each column shuffled. The 2-way tables
of every pair of softmax spans (categories, a numeric column's bins, null indicators) carry that
dependence, and one Gaussian release per pair measures them.

G is fitted to them as a graphical model would be, but through its own outputs: for a batch of
noise z, G's category probabilities p_a(z), p_b(z) for two spans give the 2-way table of the rows
it samples, E_z[p_a(z) ⊗ p_b(z)] (its hard samples are Gumbel-max draws, independent given z). The
penalty is the squared distance between that table and the noisy one, summed over pairs: with
Gaussian noise, the least-squares fit is the maximum-likelihood one, and it needs no floor for the
cells the noise pushed below zero. G must use z to lower it: a product of one-way tables does not.

Privacy: adding or removing one record changes one cell of each pair's table by 1, so each table
is a sensitivity-1 Gaussian release at one σ; the P tables are recorded together as one ledger
entry of P releases (L2 sensitivity √P). The warm start and the penalty read only those tables
and public noise: post-processing, never through the clip-and-noise hook.
The warm start, the penalty and the generator plug-in: dpgan.training.table_anchors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from dpgan.models.output_spans import OutputSpan
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import inverse_variance_mean, noisy_counts
from dpgan.privacy.releases import charge_gaussian
from dpgan.statistics.tables.marginals import marginal_spans, span_codes
from dpgan.statistics.tables.pair_selection import choose, worth_probing

PAIRS_EVENT = "Gaussian noisy 2-way marginals of G's outputs"
PROBE_EVENT = "Gaussian noisy 2-way marginals of G's outputs: every pair, to choose which to measure"


def span_pairs(spans: list[OutputSpan], skip_column: str | None = None) -> list[tuple[OutputSpan, OutputSpan]]:
    """Every pair of softmax spans of two different columns (a column's own spans, e.g. its bins
    and its null indicator, are exclusive by construction); the conditioning column is skipped."""
    chosen = marginal_spans(spans, skip_column)
    return [(a, b) for i, a in enumerate(chosen) for b in chosen[i + 1 :] if a.column != b.column]


@dataclass
class PairCounts:
    """The exact (flattened, row-major) count table of every measured pair. Each cell is a sum
    over rows of an indicator of one encoded row, so `add` on the whole table or batch by batch
    (integer sums, exact in any order) gives the same tables."""

    pairs: list[tuple[OutputSpan, OutputSpan]]
    tables: list[np.ndarray]

    @classmethod
    def empty(cls, spans: list[OutputSpan], skip_column: str | None) -> "PairCounts":
        pairs = span_pairs(spans, skip_column)
        return cls(pairs, [np.zeros(a.width * b.width, dtype=np.int64) for a, b in pairs])

    @classmethod
    def for_pairs(cls, pairs: list[tuple[OutputSpan, OutputSpan]]) -> "PairCounts":
        return cls(list(pairs), [np.zeros(a.width * b.width, dtype=np.int64) for a, b in pairs])

    def add(self, encoded: torch.Tensor) -> None:
        """Add the rows of `encoded` (each span's cells are read once per call)."""
        codes: dict[int, np.ndarray] = {}
        for (a, b), table in zip(self.pairs, self.tables):
            for span in (a, b):
                if span.start not in codes:
                    codes[span.start] = span_codes(encoded, span)
            table += np.bincount(codes[a.start] * b.width + codes[b.start], minlength=a.width * b.width)


def release_pair_tables(counts: PairCounts, noise_multiplier: float, rng: np.random.Generator) -> list[np.ndarray]:
    """One Gaussian noisy count table per pair (σ per cell), shaped (width_a, width_b), in pair order."""
    return [
        noisy_counts(table, noise_multiplier, rng).reshape(a.width, b.width)
        for (a, b), table in zip(counts.pairs, counts.tables)
    ]


def noisy_pair_tables(
    encoded: torch.Tensor,
    pairs: list[tuple[OutputSpan, OutputSpan]],
    noise_multiplier: float,
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """`release_pair_tables` of the whole table's counts."""
    counts = PairCounts.for_pairs(pairs)
    counts.add(encoded)
    return release_pair_tables(counts, noise_multiplier, rng)


def table_shares(noisy: list[np.ndarray]) -> list[torch.Tensor]:
    """Noisy counts → shares of one noisy total (the mean of the tables' sums: every table counts
    the same rows, so averaging P noisy totals divides their noise by √P). Negative cells stay:
    the least-squares penalty needs no floor, and clipping would bias every sparse table."""
    total = noisy_total(noisy)
    return [torch.tensor(t / total, dtype=torch.float32) for t in noisy]


def noisy_total(noisy: list[np.ndarray]) -> float:
    """The row count the tables share (their sums' mean; at least 1)."""
    return max(float(np.mean([t.sum() for t in noisy])), 1.0) if noisy else 1.0


@dataclass(frozen=True)
class PairLayout:
    """Where each measured span sits in the side-by-side softmax vector, and which blocks are pairs."""

    spans: list[OutputSpan]
    offsets: dict[int, int]  # span.start → its first index in the side-by-side vector
    mask: torch.Tensor

    @classmethod
    def of(cls, pairs: list[tuple[OutputSpan, OutputSpan]]) -> "PairLayout":
        spans = sorted({s.start: s for pair in pairs for s in pair}.values(), key=lambda s: s.start)
        offsets, width = {}, 0
        for span in spans:
            offsets[span.start], width = width, width + span.width
        mask = torch.zeros(width, width)
        for a, b in pairs:
            mask[offsets[a.start] : offsets[a.start] + a.width, offsets[b.start] : offsets[b.start] + b.width] = 1.0
        return cls(spans, offsets, mask)

    def place(self, pairs: list[tuple[OutputSpan, OutputSpan]], tables: list[torch.Tensor]) -> torch.Tensor:
        """The pairs' tables written into their blocks of one W × W matrix."""
        target = torch.zeros_like(self.mask)
        for (a, b), table in zip(pairs, tables):
            i, j = self.offsets[a.start], self.offsets[b.start]
            target[i : i + a.width, j : j + b.width] = table
        return target


class PairAnchor:
    """The DP 2-way tables of G's outputs (how G uses them: dpgan.training.table_anchors)."""

    def __init__(
        self, pairs: list[tuple[OutputSpan, OutputSpan]], targets: list[torch.Tensor], noise_share: float = 0.0
    ) -> None:
        if len(pairs) != len(targets):
            raise ValueError("one target per pair")
        self.pairs, self.targets = pairs, targets
        # a cell's noise in share units (σ / the noisy row count): how far a small cell can be trusted
        self.noise_share = noise_share
        self.layout = PairLayout.of(pairs)
        self.target = self.layout.place(pairs, targets)

    @classmethod
    def measure(
        cls,
        encoded: torch.Tensor,
        spans: list[OutputSpan],
        skip_column: str | None,
        noise_multiplier: float,
        rng: np.random.Generator,
    ) -> "PairAnchor":
        """All `releases(spans, skip_column)` tables at one σ, each sensitivity 1."""
        counts = PairCounts.empty(spans, skip_column)
        counts.add(encoded)
        return cls.release(counts, noise_multiplier, rng)

    @classmethod
    def release(cls, counts: PairCounts, noise_multiplier: float, rng: np.random.Generator) -> "PairAnchor":
        """The counts' tables released at σ (one sensitivity-1 Gaussian release per pair)."""
        noisy = release_pair_tables(counts, noise_multiplier, rng)
        return cls(counts.pairs, table_shares(noisy), noise_multiplier / noisy_total(noisy))

    @staticmethod
    def releases(spans: list[OutputSpan], skip_column: str | None) -> int:
        return len(span_pairs(spans, skip_column))


def measure_pair_anchor(
    counts: PairCounts,
    *,
    share: ShareTarget,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    probe: ShareTarget | None = None,
    target_column: str | None = None,
) -> PairAnchor:
    """G's DP 2-way tables from the table's exact `counts` (whole table or summed over batches),
    calibrated so that the ledger reaches `share`. With `probe` (the ledger's target after a probe
    of every pair) and a table wide enough for the choice to drop pairs
    (dpgan.statistics.tables.pair_selection), every pair is released once at the probe's σ, the target's
    pairs and the most dependent others are released again and kept: two entries. Otherwise one
    entry of P sensitivity-1 releases. A table with fewer than two columns has no pair and spends
    nothing. Each entry is charged before its noise is drawn."""
    releases = len(counts.pairs)
    if releases == 0:
        return PairAnchor([], [])
    note = "two-way tables of categories, bins and null indicators; sensitivity 1 each"
    if probe is None or not worth_probing(counts.pairs, target_column):
        sigma = share.sigma(1.0, releases, ledger.entries)
        charge_gaussian(ledger, PAIRS_EVENT, sigma, count=releases, note=f"{releases} {note}")
        return PairAnchor.release(counts, sigma, rng)
    probe_sigma = probe.sigma(1.0, releases, ledger.entries)
    charge_gaussian(ledger, PROBE_EVENT, probe_sigma, count=releases, note=f"{releases} {note}")
    probed = release_pair_tables(counts, probe_sigma, rng)
    chosen = choose(counts.pairs, probed, probe_sigma, noisy_total(probed), target_column)
    sigma = share.sigma(1.0, len(chosen), ledger.entries)
    charge_gaussian(ledger, PAIRS_EVENT, sigma, count=len(chosen), note=f"{len(chosen)} chosen {note}")
    pairs = [counts.pairs[i] for i in chosen]
    measured = release_pair_tables(PairCounts(pairs, [counts.tables[i] for i in chosen]), sigma, rng)
    both = [inverse_variance_mean(probed[i], probe_sigma, table, sigma) for i, table in zip(chosen, measured)]
    tables = [table for table, _ in both]
    noise = both[0][1]  # the same for every kept table: the two σ are the pairs' common ones
    return PairAnchor(pairs, table_shares(tables), noise / noisy_total(tables))
