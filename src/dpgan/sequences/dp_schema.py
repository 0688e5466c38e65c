"""DP estimates of what a sequence schema leaves unknown: value bounds and the label set.

Invariant 5 (no free metadata): a bound or a label set the user did not give is bought with a
Gaussian release in the fit's ledger before anything is scaled, never read off the series. Both
releases count privacy units (one series, or one entity with all its complete series), so their
neighbour is the fit's: adding or removing one unit.

Bounds (one release for every unknown bound of every value column). Each unit contributes its own
minimum of a column to one bin of that column's "minima" histogram, and its maximum to one bin of
the "maxima" histogram, over the public grid of dpgan.privacy.mechanisms.public_numeric_grid
(fixed before seeing data). With k histograms released (one per unknown bound: k = 2·F when F
columns lack both), adding or removing a unit changes each histogram by 1 in one bin, so the
stacked counts move by at most √k in L2: Gaussian noise of std σ·√k is one Gaussian event at σ
(mechanisms.noisy_stacked_histograms). The bounds are post-processing of the noisy counts: a bin
is kept when its noisy count clears z noise stds, low is the lower edge of the lowest kept bin of
the minima histogram and high the upper edge of the highest kept bin of the maxima histogram, each
one bin wider (the tabular margin, dpgan.tables.inference.infer; a range that starts or ends at 0 keeps
that edge). Unlike the tabular rule no "heaviest run" is taken: minima of labelled series often
form several runs (one per label level), and the heaviest would clip all the others. Without it a
single empty bin pushed over the bar by noise would widen a bound by decades, so z is set for the
whole release: an empty bin among all k·bins clears it with probability FALSE_BIN_RATE in all
(z ≈ 4 for k = 2, against the tabular 3). Both bounds are grid edges, never a value of the data;
values beyond them are clipped when the series are scaled. When nothing clears the bar the fit
stops with a clear error asking for public bounds; it never falls back to exact values.

Labels (Gaussian partition selection, as for a table's unknown categories). Each unit holds m
distinct labels among its complete series (m = 1 for one series; with an entity column at most
`max_series_per_entity` of them, chosen at random when it holds more) and adds 1/√m to the count of
each: its contribution has L2 norm ≤ 1, so the noisy counts of labels present in the data are one
Gaussian event at σ. A label is released when its noisy count clears τ = 1 + σ·Φ⁻¹(1 − δ_τ/M), M the
public cap on m: a label that only the added unit holds has count ≤ 1/√m ≤ 1 and crosses τ with
probability ≤ δ_τ/M, so any of its m ≤ M labels does with probability ≤ δ_τ, which the ledger adds to
δ (`extra_delta`). Labels absent from the data have no count and are never released. Series whose
label is not released are dropped (dpgan.sequences.codec.encode), and counted with the dropped units.
When this first release looks incomplete (fewer than two labels kept, or one kept near the
threshold: a decision on its output only), the counts are released once more and combined with the
first (dpgan.privacy.partition_selection's second chance): a label held by LABEL_TARGET_UNITS
units is then released with probability 0.95, for at most SECOND_LABELS_SHARE more of ε.

Budget: BOUNDS_SHARE of ε for the bounds, LABELS_SHARE for the labels, each only when used, as
cumulative shares of the ledger (dpgan.privacy.calibration.FitBudget.at) before the unit counts and
the GAN, which is calibrated on what is left.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget, ShareTarget
from dpgan.privacy.mechanisms import (
    bin_index,
    noisy_counts,
    noisy_stacked_histograms,
    public_numeric_grid,
    set_union_threshold,
)
from dpgan.privacy.partition_selection import RELEASE_PROBABILITY, needs_second_chance, second_release
from dpgan.privacy.releases import charge_gaussian, threshold_pending
from dpgan.sequences.reader import RawSeries
from dpgan.sequences.schema import DP, SequenceSchema

BOUNDS_SHARE = 0.04  # of ε, for the minima and maxima histograms (only when a bound is unknown)
LABELS_SHARE = 0.04  # of ε, for the label set (only when it is unknown)
LABEL_THRESHOLD_DELTA = 0.1  # of δ: the probability that a label only one unit holds is released
# the label set's second chance (dpgan.privacy.partition_selection): a label of this many units is
# released with probability 0.95 when the first release kept fewer than two labels, spending at
# most SECOND_LABELS_SHARE more of ε (public settings, chosen on validation data: bench/RESULTS.md §19)
LABEL_TARGET_UNITS = 50.0
SECOND_LABELS_SHARE = 0.15
LABELS_AGAIN_EVENT = "label set again (second chance, combined with the first)"
BOUNDS_EVENT = "value bounds (unit minima and maxima histograms)"
LABELS_EVENT = "label set (Gaussian partition selection)"
# the chance that any empty bin of the bounds release clears the bar (sets z, module docstring)
FALSE_BIN_RATE = 0.01
MARGIN_BINS = 1
_INTEGER = re.compile(r"-?[0-9]+")


@runtime_checkable
class SummedSeries(Protocol):
    """Series read in blocks (dpgan.sequences.series_file): the releases' sums, added over every block
    and every rank before the noise, instead of a RawSeries held whole. Each is a sum of per-unit
    contributions, so the sum over blocks is the one-array sum and the release is the same."""

    def bound_histograms(self, schema: SequenceSchema) -> np.ndarray: ...  # pragma: no cover - protocol

    def label_sums(
        self, schema: SequenceSchema, cap: int, rng: np.random.Generator
    ) -> dict[str, float]: ...  # pragma: no cover - protocol


@dataclass(frozen=True)
class SchemaRelease:
    """The completed schema and the cumulative share of ε its releases brought the ledger to."""

    schema: SequenceSchema
    share: float


def complete_schema(
    raw: RawSeries | SummedSeries,
    schema: SequenceSchema,
    *,
    budget: FitBudget,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> SchemaRelease:
    """Release what `schema` lacks (bounds, then the label set), each recorded in `ledger` at its
    cumulative share of the fit's `budget` (the first releases of a series fit)."""
    share = 0.0
    if not all(v.known for v in schema.values):
        share += BOUNDS_SHARE
        schema = release_bounds(raw, schema, target=budget.at(share), ledger=ledger, rng=rng)
    if schema.label is not None and not schema.categories:
        share += LABELS_SHARE
        second_cap = budget.at(share + SECOND_LABELS_SHARE)
        schema, again = release_labels(
            raw, schema, target=budget.at(share), ledger=ledger, rng=rng, second_cap=second_cap
        )
        share += SECOND_LABELS_SHARE if again else 0.0
    return SchemaRelease(schema, share)


# ---------------------------------------------------------------- bounds


def unit_extremes(raw: RawSeries) -> tuple[np.ndarray, np.ndarray]:
    """(units, F) minima and maxima of each unit's complete series, per value column."""
    lows, highs = raw.values.min(axis=1, initial=np.inf), raw.values.max(axis=1, initial=-np.inf)
    if raw.entities is None or len(raw.values) == 0:
        return lows, highs
    order = np.argsort(raw.entities, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(raw.entities[order]) != 0])
    return np.minimum.reduceat(lows[order], starts, axis=0), np.maximum.reduceat(highs[order], starts, axis=0)


def release_bounds(
    raw: RawSeries | SummedSeries,
    schema: SequenceSchema,
    *,
    target: ShareTarget,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> SequenceSchema:
    """Every unknown bound from one Gaussian release of k histograms (module docstring)."""
    wanted = wanted_bounds(schema)
    histograms = raw.bound_histograms(schema) if isinstance(raw, SummedSeries) else bound_histograms(raw, schema)
    sigma = target.sigma(1.0, 1, ledger.entries)
    noisy = noisy_stacked_histograms(histograms, sigma, rng)
    note = (
        f"{len(wanted)} histograms of per-{schema.unit} minima/maxima over the public grid; "
        f"one {schema.unit} adds 1 to one bin of each (L2 sensitivity √{len(wanted)})"
    )
    charge_gaussian(ledger, BOUNDS_EVENT, sigma, note=note)
    bar = bin_bar(sigma * math.sqrt(len(wanted)), noisy.size)
    found: dict[tuple[int, str], float] = {}
    for (f, side), counts in zip(wanted, noisy):
        edge = extreme_edge(counts, bar, side)
        name = schema.values[f].name
        if edge is None:
            raise InputError(
                f"value column {name!r}: its {side} bound does not show above the DP noise at this ε "
                f"(too few {schema.units}); give public bounds: --bounds {name}=LOW:HIGH"
            )
        found[(f, side)] = edge
    columns = []
    for f, v in enumerate(schema.values):
        if v.known:
            columns.append(v)
            continue
        low, high = found.get((f, "min"), v.min), found.get((f, "max"), v.max)
        assert low is not None and high is not None
        if not low < high:
            raise InputError(
                f"value column {v.name!r}: the DP estimates of its bounds are inconsistent at this ε; "
                f"give public bounds: --bounds {v.name}=LOW:HIGH"
            )
        if v.scale == "log" and low < 0:
            raise InputError(
                f"value column {v.name!r}: a log scale needs a lower bound ≥ 0, but the DP estimate is below 0; "
                f"give a public 'min' or use a linear scale"
            )
        columns.append(replace(v, min=low, max=high, source=DP))
    return replace(schema, values=tuple(columns))


def wanted_bounds(schema: SequenceSchema) -> list[tuple[int, str]]:
    """The unknown bounds, (value column, "min" or "max"), in the release's order (public)."""
    return [(f, side) for f, v in enumerate(schema.values) for side in ("min", "max") if getattr(v, side) is None]


def bound_histograms(raw: RawSeries, schema: SequenceSchema) -> np.ndarray:
    """(k, bins) float64 counts: each unit's minimum (maximum) of a column in one bin of the public
    grid, one histogram per unknown bound. A sum over units: blocks of units add up to it."""
    edges = public_numeric_grid()
    lows, highs = unit_extremes(raw)
    return np.stack(
        [
            np.bincount(bin_index((lows if side == "min" else highs)[:, f], edges), minlength=len(edges) - 1)
            for f, side in wanted_bounds(schema)
        ]
    ).astype(np.float64)


def bin_bar(std: float, cells: int) -> float:
    """The count a bin must clear: z·std with P(N(0, std²) > z·std) = FALSE_BIN_RATE / cells, so
    that among `cells` empty bins one clears it with probability ≤ FALSE_BIN_RATE (union bound)."""
    from scipy.stats import norm  # here, not at the top: sampling a saved model never releases bounds

    return std * float(norm.isf(FALSE_BIN_RATE / cells))


def extreme_edge(counts: np.ndarray, bar: float, side: str) -> float | None:
    """The lower edge of the lowest bin above `bar` ("min") or the upper edge of the highest
    ("max"), MARGIN_BINS wider outwards, but never across 0; None when no bin clears the bar."""
    edges = public_numeric_grid()
    above = np.flatnonzero(counts > bar)
    if len(above) == 0:
        return None
    if side == "min":
        low = int(above[0])
        for _ in range(MARGIN_BINS):
            if low > 0 and edges[low] != 0.0:
                low -= 1
        return float(edges[low])
    high = int(above[-1])
    for _ in range(MARGIN_BINS):
        if high < len(counts) - 1 and edges[high + 1] != 0.0:
            high += 1
    return float(edges[high + 1])


# ---------------------------------------------------------------- labels


def label_contributions(raw: RawSeries, cap: int, rng: np.random.Generator) -> dict[str, float]:
    """Σ over units of 1/√m for each label a unit holds (m ≤ `cap` distinct labels per unit, chosen
    at random when it holds more): every unit's contribution has L2 norm ≤ 1. The choice draws from
    a child of `rng` (one draw from it whatever the data's size), so the noise that follows is the
    same for neighbouring inputs under one seed."""
    assert raw.labels is not None
    labels = pd.Series(raw.labels, dtype=object)  # one canonical text per kept series (the reader's rule)
    units = raw.entities if raw.entities is not None else np.arange(len(labels))
    pairs = pd.DataFrame({"unit": units, "key": labels.map(str).to_numpy()}).drop_duplicates()
    choice = np.random.default_rng(int(rng.integers(0, 2**63 - 1)))
    pairs = pairs.assign(draw=choice.random(len(pairs))).sort_values(["unit", "draw"], kind="stable")
    pairs = pairs[pairs.groupby("unit").cumcount() < cap]
    held = pairs.groupby("unit")["key"].transform("size").to_numpy(dtype=np.float64)
    weights = pd.Series(1.0 / np.sqrt(held), index=pairs.index)
    return {str(k): float(w) for k, w in weights.groupby(pairs["key"]).sum().items()}


def release_labels(
    raw: RawSeries | SummedSeries,
    schema: SequenceSchema,
    *,
    target: ShareTarget,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    second_cap: ShareTarget | None = None,
) -> tuple[SequenceSchema, bool]:
    """The label set by Gaussian partition selection (module docstring), recorded with its extra δ,
    with the second chance of dpgan.privacy.partition_selection (up to `second_cap`) when the first
    release looks incomplete. Returns the schema and whether the second release ran."""
    assert schema.label is not None
    cap = schema.max_series_per_entity if schema.entity is not None else 1
    sums = raw.label_sums(schema, cap, rng) if isinstance(raw, SummedSeries) else label_contributions(raw, cap, rng)
    threshold_delta = LABEL_THRESHOLD_DELTA * target.delta
    pending = threshold_pending(threshold_delta)
    sigma = target.sigma(1.0, 1, [*ledger.entries, pending])
    threshold = set_union_threshold(sigma, threshold_delta / cap)
    keys = sorted(sums)
    noisy = noisy_counts(np.array([sums[k] for k in keys]), sigma, rng) if keys else np.zeros(0)
    note = (
        f"weighted label counts, one {schema.unit} adds 1/√m to each of its m ≤ {cap} labels (L2 ≤ 1); "
        f"released above τ={threshold:.4g}, extra δ for a label only one {schema.unit} holds"
    )
    charge_gaussian(ledger, LABELS_EVENT, sigma, extra_delta=threshold_delta, note=note)
    released = [k for k, c in zip(keys, noisy) if c > threshold]
    again = second_cap is not None and needs_second_chance([c for c in noisy if c > threshold], threshold)
    if again:  # decided by the first release's output only
        assert second_cap is not None
        second = second_release(
            [sums[k] for k in keys],
            noisy,
            sigma,
            target_units=LABEL_TARGET_UNITS,
            threshold_delta=threshold_delta / cap,
            extra_delta=threshold_delta,
            cap=second_cap,
            ledger=ledger,
            rng=rng,
            event=LABELS_AGAIN_EVENT,
            note=f"the weighted label counts again (fresh noise), combined with the first; a label of "
            f"{LABEL_TARGET_UNITS:g} {schema.units} is released with probability {RELEASE_PROBABILITY:g}",
        )
        released = [k for k, r in zip(keys, second.released) if r or k in released]
    if len(released) < 2:
        raise InputError(
            f"label column {schema.label!r}: fewer than two labels are frequent enough to release with DP at "
            f"this ε (a decision on the DP release only); give them: --categories {schema.label}=A,B,..."
        )
    return replace(schema, categories=public_order(released), categories_source=DP), again


def public_order(keys: list[str]) -> tuple[object, ...]:
    """Released labels as values, in an order that depends on the released text alone: whole
    numbers (every label spelt as one) as ints in numeric order, otherwise text in text order."""
    if all(_INTEGER.fullmatch(k) and str(int(k)) == k for k in keys):
        return tuple(sorted(int(k) for k in keys))
    return tuple(sorted(keys))


__all__ = [
    "BOUNDS_EVENT",
    "BOUNDS_SHARE",
    "LABELS_AGAIN_EVENT",
    "LABELS_EVENT",
    "LABELS_SHARE",
    "LABEL_TARGET_UNITS",
    "SECOND_LABELS_SHARE",
    "SchemaRelease",
    "SummedSeries",
    "bin_bar",
    "bound_histograms",
    "complete_schema",
    "extreme_edge",
    "label_contributions",
    "release_bounds",
    "release_labels",
    "unit_extremes",
    "wanted_bounds",
]
