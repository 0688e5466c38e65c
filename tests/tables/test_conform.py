"""The private path is total: cells that do not fit the schema are mapped by a per-row rule and
counted, never a reason for the fit to fail or to print a private value."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpgan import ColumnSpec, InputError, Schema, TabularSynthesizer
from dpgan.privacy.mechanisms import noisy_indicator_counts
from dpgan.tables.fit.preparation import REPAIR_EVENT
from dpgan.tables.reading.conform import (
    INFINITE_VALUE,
    MISSING_IN_COMPLETE,
    NOT_A_NUMBER,
    OUT_OF_BOUNDS,
    REASONS,
    UNKNOWN_CATEGORY,
    conform,
)

SECRET = "Alice Smith, HIV+"


def schema(nullable_x: bool = False, other: bool = False) -> Schema:
    cats = ("a", "b", "(other)") if other else ("a", "b")
    return Schema(
        (
            ColumnSpec("x", "continuous", min=0.0, max=10.0, nullable=nullable_x),
            ColumnSpec("n", "integer", min=0, max=5),
            ColumnSpec("c", "categorical", categories=cats, other_category="(other)" if other else None),
            ColumnSpec("f", "boolean", nullable=True),
        ),
        target="c",
    )


def frame() -> pd.DataFrame:
    return pd.DataFrame({"x": [1.0, 2.5, 3.0], "n": [1, 2, 3], "c": ["a", "b", "a"], "f": [True, False, None]})


def reasons_of(conformed, row: int) -> set[str]:
    return {reason for reason, hit in zip(REASONS, conformed.repairs[row]) if hit}


def test_a_clean_table_passes_unchanged():
    out = conform(frame(), schema())
    assert out.dropped == 0 and not out.repairs.any()
    assert out.frame["x"].tolist() == [1.0, 2.5, 3.0] and out.frame["c"].tolist() == ["a", "b", "a"]


@pytest.mark.parametrize(
    "column, value, nullable_x, other, reason, kept, becomes",
    [
        ("c", SECRET, False, True, UNKNOWN_CATEGORY, True, "(other)"),  # unknown → other
        ("c", SECRET, False, False, UNKNOWN_CATEGORY, False, None),  # no other, not nullable → row dropped
        ("c", None, False, True, MISSING_IN_COMPLETE, True, "(other)"),
        ("x", "seven", True, False, NOT_A_NUMBER, True, None),  # word → null in a nullable column
        ("x", "seven", False, False, NOT_A_NUMBER, False, None),  # → dropped in a complete one
        ("x", np.inf, True, False, INFINITE_VALUE, True, None),
        ("x", None, False, False, MISSING_IN_COMPLETE, False, None),
        ("x", 1e9, False, False, OUT_OF_BOUNDS, True, 10.0),  # clamped
        ("f", "maybe", False, False, UNKNOWN_CATEGORY, True, None),  # boolean column is nullable
    ],
)
def test_each_bad_cell_is_mapped_by_a_rule_of_its_own_row(column, value, nullable_x, other, reason, kept, becomes):
    bad = frame().astype(object)
    bad.loc[1, column] = value
    out = conform(bad, schema(nullable_x, other))
    assert reasons_of(out, 1) == {reason}
    assert not out.repairs[[0, 2]].any()  # other rows untouched
    assert out.dropped == (0 if kept else 1)
    if kept:
        cell = out.frame.loc[1, column]
        assert (cell is None or (isinstance(cell, float) and np.isnan(cell))) if becomes is None else cell == becomes


def test_strict_mode_refuses_without_the_value():
    bad = frame().astype(object)
    bad.loc[1, "c"] = SECRET
    with pytest.raises(InputError, match="column 'c' holds values that are not among") as error:
        conform(bad, schema(), strict=True)
    assert "Alice" not in str(error.value)
    assert conform(bad, schema(other=True)).dropped == 0  # the default maps it


def test_categories_match_by_text_as_well():
    """A CSV gives text: '1' must match a schema's integer category 1 and 'True' a boolean."""
    spec = Schema((ColumnSpec("k", "categorical", categories=(1, 2)), ColumnSpec("f", "boolean")))
    out = conform(pd.DataFrame({"k": ["1", "2.0"], "f": ["True", "false"]}), spec)
    assert out.frame["k"].tolist() == [1, 2] and out.frame["f"].tolist() == [True, False]
    assert not out.repairs.any()


def test_repair_counts_are_released_only_with_noise():
    """The count vector has L2 sensitivity √k: the mechanism adds noise σ√k to each of the k sums."""
    indicators = np.zeros((1000, 5))
    indicators[:7, 0] = 1
    draws = np.array([noisy_indicator_counts(indicators, 2.0, np.random.default_rng(s)) for s in range(4000)])
    assert draws.mean(axis=0) == pytest.approx([7, 0, 0, 0, 0], abs=0.3)
    assert draws.std(axis=0) == pytest.approx([2.0 * np.sqrt(5)] * 5, rel=0.05)
    with pytest.raises(ValueError):
        noisy_indicator_counts(np.full((3, 2), 2.0), 1.0, np.random.default_rng(0))


def test_whether_a_fit_runs_never_depends_on_one_row(adult_small, adult_schema):
    """Neighbouring tables: one adds a row whose every cell is outside the schema. Both fit; the
    poison is counted (noisily) in the ledger and never printed."""
    poison = adult_small.iloc[:1].copy().astype(object)
    for column in poison.columns:
        poison[column] = SECRET
    neighbours = [adult_small.iloc[:300], pd.concat([adult_small.iloc[:300], poison], ignore_index=True)]
    for table in neighbours:
        synth = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, accountant="rdp", seed=0, label_model=False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            synth.fit(table, schema=adult_schema)
        report = synth.privacy_report()
        assert [e["name"] for e in report["events"]][:2] == ["row count", REPAIR_EVENT]
        assert set(report["training"]["preprocessing_repairs"]) == set(REASONS)
        shown = " ".join(str(w.message) for w in caught) + str(report)
        assert "Alice" not in shown and "HIV" not in shown
    with pytest.raises(InputError, match="column 'age' holds values that are not numbers"):
        TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, accountant="rdp").fit(
            neighbours[1], schema=adult_schema, strict=True
        )


def test_a_table_whose_every_row_is_dropped_still_fits_on_noise_alone():
    """If the mapping drops every row, training runs on an empty table (pure-noise releases, as
    accounted) instead of failing: a failure would tell whether such rows were all there is."""
    words = pd.DataFrame({"x": ["seven"] * 40, "n": [1] * 40, "c": ["a"] * 40, "f": [True] * 40})
    synth = TabularSynthesizer(epsilon=1.0, epochs=1, batch_size=16, accountant="rdp", seed=0)
    synth.fit(words, schema=schema())  # x is complete, so every row goes
    assert synth.training["steps"] > 0 and synth.label_model is not None
    assert len(synth.sample(10, seed=0)) == 10
