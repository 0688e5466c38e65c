"""DP one-way marginals of the generator's outputs: a warm start and an anchor for G.

When the noise sits on the generator (dtgan-g), the honest shard accounting leaves each step's
gradient noise-dominated (README "Recipes"): G's categorical outputs drift towards a few values
and its numeric positions towards the ends of their bins instead of learning the columns'
distributions. A few cheap Gaussian releases pin those one-way distributions:
- one noisy histogram per softmax span (a category, a numeric column's bins and point masses, a
  null indicator);
- per numeric column, the noisy sums of the position inside the bin (in [-1, 1]) and of its
  square, per bin: with the bin counts they give each bin's mean and spread of positions.
G is first fitted to them (warm start), then a penalty keeps its batch statistics near them while
the noisy critic gradient shapes the joint distribution.

Privacy: adding or removing one record changes one cell of each histogram by 1 and one cell of
each sum by at most 1 (|position| ≤ 1), so each release is a sensitivity-1 Gaussian event at one
σ, recorded together as one ledger entry. Everything computed from them afterwards (the warm
start, the penalty) is post-processing and never passes through the clip-and-noise hook.
Critic-side recipes can use the anchor as well (off by default): their G reads only DP outputs.
The warm start, the penalty and the generator plug-in: dpgan.training.table_anchors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from dpgan.models.output_spans import TANH, OutputSpan, position_bin_pairs
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.releases import charge_gaussian

MARGINALS_EVENT = "Gaussian noisy marginals of G's outputs"
# a noisy frequency below this is floored so that the KL penalty stays finite
MIN_FREQUENCY = 1e-4
# a bin's position moments are used only when its noisy count clears this many noise stds
MIN_COUNT_SIGMAS = 3.0


def marginal_spans(spans: list[OutputSpan], skip_column: str | None = None) -> list[OutputSpan]:
    """The softmax spans whose frequencies are measured; the conditioning column is skipped
    (the generator imposes it from the condition prior)."""
    return [s for s in spans if s.activation != TANH and s.column != skip_column]


def position_pairs(spans: list[OutputSpan]) -> list[tuple[OutputSpan, OutputSpan]]:
    """(position span, bin span) of every numeric column cut into bins, as the generator pairs them."""
    return [(spans[value], spans[mode]) for value, mode in position_bin_pairs(spans)]


@dataclass(frozen=True)
class PositionMoments:
    """Per bin of one numeric column: mean and sd of the position, and how much the bin weighs."""

    value: OutputSpan
    mode: OutputSpan
    mean: torch.Tensor
    sd: torch.Tensor
    weight: torch.Tensor  # the bin's noisy share; 0 for bins whose noisy count is too small
    offset: int = 0  # which coordinate of the value span (a geo pair has two)


def _frequencies(noisy: np.ndarray) -> torch.Tensor:
    noisy = np.maximum(noisy, 0.0)
    freq = noisy / noisy.sum() if noisy.sum() > 0 else np.full(noisy.shape, 1.0 / noisy.size)
    freq = np.maximum(freq, MIN_FREQUENCY)
    return torch.tensor(freq / freq.sum(), dtype=torch.float32)


def span_codes(encoded: torch.Tensor, span: OutputSpan) -> np.ndarray:
    """Each row's cell of a softmax span (its one-hot's position)."""
    return encoded[:, span.start : span.stop].argmax(dim=1).cpu().numpy()


def continued_sums(totals: np.ndarray, codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per-bin sums of `weights` added to the running `totals`, one row at a time in row order.

    Why not `totals + np.bincount(...)`: float sums depend on the order of the additions, and the
    anchor's releases must not depend on how the table was cut into batches. np.bincount adds its
    weights in index order, so putting each bin's running total in front of the batch's rows
    continues the very sequence of additions one call over the whole table makes (0 + total is
    exact): the sums over batches equal, bit for bit, the sum over the table."""
    bins = len(totals)
    return np.bincount(
        np.concatenate([np.arange(bins), codes]).astype(np.int64, copy=False),
        weights=np.concatenate([totals, weights]),
        minlength=bins,
    )


@dataclass
class MarginalCounts:
    """The exact sums the anchor releases: one count vector per measured span, and per coordinate
    of a numeric position the per-bin sums of the position and of its square.

    Every one is a sum over rows of a function of one encoded row, so `add` can be called on the
    whole table or batch by batch (rows in table order) with the same result (`continued_sums`)."""

    spans: list[OutputSpan]
    coordinates: list[tuple[OutputSpan, OutputSpan, int]]  # (position span, bin span, offset)
    histograms: list[np.ndarray]
    sums: list[np.ndarray]
    squares: list[np.ndarray]

    @classmethod
    def empty(cls, spans: list[OutputSpan], skip_column: str | None) -> "MarginalCounts":
        chosen = marginal_spans(spans, skip_column)
        measured = {span.start for span in chosen}
        pairs = [(value, mode) for value, mode in position_pairs(spans) if mode.start in measured]
        coordinates = [(value, mode, k) for value, mode in pairs for k in range(value.width)]
        return cls(
            chosen,
            coordinates,
            [np.zeros(span.width, dtype=np.int64) for span in chosen],
            [np.zeros(mode.value_modes) for _, mode, _ in coordinates],
            [np.zeros(mode.value_modes) for _, mode, _ in coordinates],
        )

    @classmethod
    def of(cls, encoded: torch.Tensor, spans: list[OutputSpan], skip_column: str | None) -> "MarginalCounts":
        counts = cls.empty(spans, skip_column)
        counts.add(encoded)
        return counts

    def add(self, encoded: torch.Tensor) -> None:
        """Add the rows of `encoded` (the next rows of the table, in order)."""
        for i, span in enumerate(self.spans):
            self.histograms[i] += np.bincount(span_codes(encoded, span), minlength=span.width)
        for i, (value, mode, offset) in enumerate(self.coordinates):
            codes = span_codes(encoded, mode)
            position = encoded[:, value.start + offset].cpu().numpy().astype(np.float64)
            inside = codes < mode.value_modes
            self.sums[i] = continued_sums(self.sums[i], codes[inside], position[inside])
            self.squares[i] = continued_sums(self.squares[i], codes[inside], position[inside] ** 2)


def noisy_histograms(counts: list[np.ndarray], noise_multiplier: float, rng: np.random.Generator) -> list[np.ndarray]:
    """One Gaussian noisy count vector per span (σ per cell)."""
    return [noisy_counts(c, noise_multiplier, rng) for c in counts]


def noisy_position_moments(
    counts: MarginalCounts, bin_counts: list[np.ndarray], noise_multiplier: float, rng: np.random.Generator
) -> list[PositionMoments]:
    """Noisy per-bin sums of the position and its square (two releases per coordinate: one for a
    numeric column, two for a geo pair), divided by the bins' noisy counts (already released with
    the histograms). Each row adds to one bin's sums a value in [-1, 1]: sensitivity 1 each."""
    moments = []
    for (value, mode, offset), sums, squares, noisy_bins in zip(
        counts.coordinates, counts.sums, counts.squares, bin_counts
    ):
        bins = mode.value_modes
        first = noisy_counts(sums, noise_multiplier, rng)
        second = noisy_counts(squares, noise_multiplier, rng)
        released = np.asarray(noisy_bins[:bins], dtype=np.float64)
        usable = released > MIN_COUNT_SIGMAS * noise_multiplier
        safe = np.maximum(released, 1.0)
        mean = np.clip(first / safe, -1.0, 1.0)
        sd = np.sqrt(np.clip(second / safe - mean**2, 0.0, 1.0))
        weight = np.where(usable, np.maximum(released, 0.0), 0.0)
        weight = weight / weight.sum() if weight.sum() > 0 else weight
        moments.append(
            PositionMoments(
                value,
                mode,
                *(torch.tensor(a, dtype=torch.float32) for a in (mean, sd, weight)),  # type: ignore[arg-type]
                offset,
            )
        )
    return moments


class MarginalAnchor:
    """The DP one-way statistics of G's outputs (how G uses them: dpgan.training.table_anchors)."""

    def __init__(
        self,
        spans: list[OutputSpan],
        targets: list[torch.Tensor],
        positions: list[PositionMoments] = (),  # type: ignore[assignment]
    ) -> None:
        if len(spans) != len(targets):
            raise ValueError("one target per span")
        self.spans, self.targets, self.positions = spans, targets, list(positions)

    @classmethod
    def measure(
        cls,
        encoded: torch.Tensor,
        spans: list[OutputSpan],
        skip_column: str | None,
        noise_multiplier: float,
        rng: np.random.Generator,
    ) -> "MarginalAnchor":
        """All releases at one σ: `releases(spans, skip_column)` of them, each sensitivity 1."""
        return cls.release(MarginalCounts.of(encoded, spans, skip_column), noise_multiplier, rng)

    @classmethod
    def release(cls, counts: MarginalCounts, noise_multiplier: float, rng: np.random.Generator) -> "MarginalAnchor":
        """The counts' Gaussian releases, in a fixed order: the histograms, then per coordinate
        the position sums and the sums of squares."""
        histograms = noisy_histograms(counts.histograms, noise_multiplier, rng)
        by_start = {span.start: noisy for span, noisy in zip(counts.spans, histograms)}
        bin_counts = [by_start[mode.start] for _, mode, _ in counts.coordinates]
        positions = noisy_position_moments(counts, bin_counts, noise_multiplier, rng)
        return cls(counts.spans, [_frequencies(h) for h in histograms], positions)

    @staticmethod
    def releases(spans: list[OutputSpan], skip_column: str | None) -> int:
        """How many sensitivity-1 Gaussian releases `measure` makes (the ledger's count)."""
        chosen = {span.start for span in marginal_spans(spans, skip_column)}
        return len(chosen) + 2 * sum(value.width for value, mode in position_pairs(spans) if mode.start in chosen)


def measure_anchor(
    counts: MarginalCounts,
    *,
    share: ShareTarget,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> MarginalAnchor:
    """G's DP one-way statistics from the table's exact `counts` (`MarginalCounts`, whole table or
    summed over batches), calibrated so that the ledger reaches `share`; recorded as one entry of
    k sensitivity-1 releases."""
    releases = len(counts.spans) + 2 * len(counts.coordinates)
    sigma = share.sigma(1.0, releases, ledger.entries)
    anchor = MarginalAnchor.release(counts, sigma, rng)
    note = (
        f"{len(anchor.spans)} histograms (categories, bins, nulls) and {2 * len(anchor.positions)} per-bin "
        "sums of numeric positions and their squares; sensitivity 1 each"
    )
    charge_gaussian(ledger, MARGINALS_EVENT, sigma, count=releases, note=note)
    return anchor
