"""The rows a table's statistics model reads: all of them, or a Poisson sample of about its budget.

The marginals model reads each row once, to count it (dpgan.tables.fit.marginals), so its cost is
one pass over the rows: ten times the rows, ten times the conform, encode and count work. Past
some size more rows stop helping (the tree's fit, not the noise, limits it: on flights' 202,066
training rows the CSV-only default scored the same TSTR AUC as on ten copies of them,
bench/notes/37-scale.md). So when the noisy row count N̂ exceeds the model's row budget R
(`TrainingConfig.max_examples`: the examples a statistics model reads are its rows, once each;
its default, dpgan.tables.registration.MARGINALS_MAX_ROWS, says how it was chosen),
every read after N̂ (the DP schema's counts and the model's counts) takes a Poisson sample of the
rows, each kept independently with probability q = R / N̂; the files are still read, but the
per-row work runs on about R rows whatever the table's size.

Privacy. q is a function of N̂ (released, DP) and a public setting, so choosing it is
post-processing; the coins come from a seed drawn from the fit's secret generator, and only when
q < 1 (whether it is drawn depends on N̂ alone). Each release is then a mechanism M applied to the
sample S_q(D). For neighbours D and D' = D ∪ {x}, coupling the coins of the rows they share,
S_q(D') is S_q(D) with probability 1 − q and S_q(D) ∪ {x} otherwise, so the pair
(M(S_q(D')), M(S_q(D))) is dominated by (q·P + (1 − q)·Q, Q) where (P, Q) dominates M (Zhu, Dong and
Wang 2022, Poisson subsampling), and (Q, q·P + (1 − q)·Q) the other way; the hockey-stick
divergence is jointly convex and zero between Q and itself, so these pairs are dominated by (P, Q)
and (Q, P) themselves. The
ledger charges every release as if it read all the rows: a valid bound (amplification by the
sampling is not claimed, so the printed ε is never below what the code earns). The schema's
estimated rows and the model's row count are then q·N̂ (post-processing of N̂).

One seed serves every pass: each pass draws the same coins in the same order (a fresh generator
from the seed, one coin per row as the rows come), so the DP schema and the model read the same
sample, whether the table is held in memory or read in record batches (`Generator.random` gives
the same numbers drawn at once or in consecutive pieces).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.tables.schema.table import Schema

# A fit's row budget for a read: given the released schema (None before it is released), the rows
# the model reading it may take (0: all of them). FitSettings.row_budget is the one the fits use.
RowBudget = Callable[[Schema | None], int]


@dataclass(frozen=True)
class RowSample:
    """A Poisson sample of the rows at `rate` (< 1), its coins from `seed` (secret)."""

    rate: float
    seed: int

    def coins(self) -> SampleCoins:
        """A pass's coins: the same for every pass, in row order."""
        return SampleCoins(np.random.default_rng(self.seed), self.rate)


class SampleCoins:
    """One pass over the rows: `keep(n)` says which of the next `n` rows the sample holds."""

    def __init__(self, generator: np.random.Generator, rate: float) -> None:
        self._generator, self._rate = generator, rate

    def keep(self, rows: int) -> np.ndarray:
        return self._generator.random(rows) < self._rate

    def frame(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The sampled rows of the next `len(frame)` rows, in order, renumbered from 0."""
        return frame.loc[self.keep(len(frame))].reset_index(drop=True)


def draw_row_sample(rows: int, budget: int, rng: np.random.Generator) -> RowSample | None:
    """The sample for N̂ = `rows` and a row budget (0: none), or None when every row is read
    (no draw from `rng` then, so a fit under its budget draws what it drew before the budget)."""
    if budget <= 0 or rows <= budget:
        return None
    return RowSample(budget / rows, int(rng.integers(0, 2**63 - 1)))


def model_sample(sample: RowSample | None, row_budget: RowBudget | None, schema: Schema) -> RowSample | None:
    """The sample the conform pass reads (the model's rows): the schema pass's when the model for
    the released `schema` takes a row budget (the marginals model), else None (the GAN reads every row)."""
    return sample if sample is not None and row_budget is not None and row_budget(schema) > 0 else None


def read_rate(sample: RowSample | None) -> float:
    """The rate the rows were read at: the sample's, 1 without one."""
    return 1.0 if sample is None else sample.rate


def sampled_batches(batches: Iterator[pd.DataFrame], sample: RowSample | None) -> Iterator[pd.DataFrame]:
    """A pass over record batches, each cut to the sample's rows (all of them without one)."""
    if sample is None:
        yield from batches
        return
    coins = sample.coins()
    for batch in batches:
        yield coins.frame(batch)


def sampled_rows(rows: int, sample: RowSample | None) -> int:
    """The rows the sample is expected to hold: q·N̂ (N̂ itself without a sample)."""
    return rows if sample is None else max(1, round(rows * sample.rate))


__all__ = [
    "RowBudget",
    "RowSample",
    "SampleCoins",
    "draw_row_sample",
    "model_sample",
    "read_rate",
    "sampled_batches",
    "sampled_rows",
]
