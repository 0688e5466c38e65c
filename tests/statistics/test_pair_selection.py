"""Which 2-way tables the anchor measures (dpgan.statistics.tables.pair_selection): a DP probe of every
pair, the target's pairs always and the most dependent others, two ledger entries that reach the
anchor's share, and a choice whose size neighbouring tables cannot change."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import Schema, TabularSynthesizer
from dpgan.models.output_spans import OutputSpan
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.mechanisms import inverse_variance_mean
from dpgan.statistics.tables.pair_marginals import PAIRS_EVENT, PROBE_EVENT, PairCounts, measure_pair_anchor
from dpgan.statistics.tables.pair_selection import choose, chosen_count, dependence, worth_probing
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.settings import TableSettings

torch.set_num_threads(1)


def _span(column: str, start: int, width: int = 3) -> OutputSpan:
    return OutputSpan("softmax", start, width, column)


def _counts(frame: pd.DataFrame, width: int = 3) -> PairCounts:
    """Exact pair tables of integer-coded columns (values 0..width-1), one span each."""
    spans = [_span(c, i * width, width) for i, c in enumerate(frame.columns)]
    pairs = [(a, b) for i, a in enumerate(spans) for b in spans[i + 1 :]]
    tables = [
        np.bincount(frame[a.column].to_numpy() * width + frame[b.column].to_numpy(), minlength=width * width)
        for a, b in pairs
    ]
    return PairCounts(pairs, tables)


def _frame(rows: int = 4000, seed: int = 0, columns: int = 16) -> pd.DataFrame:
    """y the target, x1 nearly a copy of y, x2 and x3 tied to each other, the rest independent noise."""
    rng = np.random.default_rng(seed)
    y, x2 = rng.integers(0, 3, rows), rng.integers(0, 3, rows)
    noisy = lambda v: np.where(rng.random(rows) < 0.9, v, rng.integers(0, 3, rows))  # noqa: E731
    tied = {"y": y, "x1": noisy(y), "x2": x2, "x3": noisy(x2)}
    return pd.DataFrame({**tied, **{f"x{i}": rng.integers(0, 3, rows) for i in range(4, columns)}})


def test_dependence_is_near_zero_for_independent_columns_and_large_for_tied_ones():
    rng = np.random.default_rng(1)
    independent = np.outer([300.0, 500, 200], [400.0, 400, 200]) / 1000.0
    tied = np.diag([300.0, 500, 200])
    assert abs(dependence(independent, 0.0, 1000.0)) < 1e-12 and dependence(tied, 0.0, 1000.0) > 0.1
    # the noise's expected part is taken out: pure noise on independent counts averages near zero
    sigma = 20.0
    draws = [dependence(independent + rng.normal(0, sigma, (3, 3)), sigma, 1000.0) for _ in range(4000)]
    raw = [d + 4 * sigma**2 / 1000.0**2 for d in draws]
    assert abs(np.mean(draws)) < 0.15 * np.mean(raw)


def test_the_choice_keeps_the_targets_pairs_and_the_most_dependent_others():
    counts = _counts(_frame())
    pairs = counts.pairs
    targets, others = chosen_count(pairs, "y")
    assert (len(pairs), targets, others) == (120, 15, 14) and worth_probing(pairs, "y")
    tables = [t.reshape(3, 3).astype(float) for t in counts.tables]
    chosen = [pairs[i] for i in choose(pairs, tables, 0.0, 4000.0, "y")]
    names = {(a.column, b.column) for a, b in chosen}
    assert sum("y" in n for n in names) == 15 and len(chosen) == 29
    assert ("x2", "x3") in names  # the one dependent pair among the features
    assert chosen_count(pairs, None) == (0, 15)  # without a target: a tree over all 16 spans
    # fifteen columns keep 27 of 105 pairs, more than a quarter: every pair at once, no probe
    narrow = _counts(_frame(columns=15)).pairs
    assert not worth_probing(narrow, "y") and worth_probing(narrow, None)


def test_the_choices_size_is_public_neighbouring_tables_keep_it():
    frame = _frame(800)
    base, neighbour = _counts(frame), _counts(frame.iloc[1:])
    assert chosen_count(base.pairs, "y") == chosen_count(neighbour.pairs, "y")


def test_combining_two_releases_weighs_them_by_their_precision():
    value, noise = inverse_variance_mean(np.array([10.0]), 1.0, np.array([20.0]), 2.0)
    assert value[0] == pytest.approx((10 / 1 + 20 / 4) / (1 + 1 / 4)) and noise == pytest.approx((1 + 1 / 4) ** -0.5)


@pytest.mark.parametrize("select", [True, False])
def test_the_probe_and_the_chosen_tables_reach_the_anchors_share(select):
    counts = _counts(_frame())
    shares = FitBudget(2.0, 1e-5)
    ledger = PrivacyLedger()
    anchor = measure_pair_anchor(
        counts, share=shares.at(0.3), ledger=ledger, rng=np.random.default_rng(0),
        probe=shares.at(0.3 * 0.25) if select else None, target_column="y",
    )  # fmt: skip
    names = [e.name for e in ledger.entries]
    assert names == ([PROBE_EVENT, PAIRS_EVENT] if select else [PAIRS_EVENT])
    assert ledger.entries[-1].count == (29 if select else 120) == len(anchor.pairs)
    assert ledger.epsilon(1e-5, shares.accountant) == pytest.approx(0.3 * 2.0, rel=1e-3)
    assert all(abs(float(t.sum()) - 1.0) < 0.2 for t in anchor.targets)  # shares of one noisy total


def test_a_fit_probes_then_measures_the_chosen_pairs():
    frame = _frame(600, columns=16).astype(str)
    schema = Schema(tuple(ColumnSpec(c, "categorical", categories=("0", "1", "2")) for c in frame.columns), target="y")
    tiny = {"generator_hidden": (16,), "critic_hidden": (16,)}
    synth = TabularSynthesizer(epsilon=2.0, epochs=1, seed=0, batch_size=64, **tiny)
    synth.fit(frame, schema=schema)
    events = {e["name"]: e for e in synth.privacy_report()["events"]}
    assert events[PROBE_EVENT]["count"] == 120 and events[PAIRS_EVENT]["count"] == 29
    assert synth.privacy_report()["epsilon"] <= 2.0 * (1 + 1e-9)
    saved = synth.settings.to_dict()
    assert saved["pair_selection"] is True
    del saved["pair_selection"]  # a model saved before the choice existed measured every pair
    assert TableSettings.from_dict(saved).pair_selection is False
