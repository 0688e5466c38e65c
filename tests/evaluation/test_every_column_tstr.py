"""TSTR with every column in turn as the target (dpgan.evaluation.tables.every_column)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpgan.errors import InputError
from dpgan.evaluation.tables.every_column import every_column_tstr
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.table import Schema


def _rows(n: int, seed: int) -> pd.DataFrame:
    """Columns that depend on each other: a group sets a level, the level sets a flag."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b", "c"], n)
    level = np.select([group == "a", group == "b"], [0.0, 5.0], 10.0) + rng.normal(0, 1, n)
    flag = np.where(level + rng.normal(0, 1, n) > 6, "on", "off")
    return pd.DataFrame({"group": group, "level": level, "flag": flag})


SCHEMA = Schema(
    (
        ColumnSpec("group", "categorical", categories=("a", "b", "c")),
        ColumnSpec("level", "continuous", min=-5.0, max=15.0, nullable=True),
        ColumnSpec("flag", "categorical", categories=("off", "on"), nullable=True),
    )
)


@pytest.mark.parametrize("max_rows", [5000, 250])
def test_the_real_rows_as_synthetic_score_what_the_real_rows_score(max_rows: int):
    """Same model, same rows: TSTR == TRTR per column, also when the row cap draws a subset."""
    train, test = _rows(600, 0), _rows(300, 1)
    scores = every_column_tstr(train, train.copy(), test, SCHEMA, max_rows=max_rows)
    for entry in scores["columns"].values():
        assert entry["tstr"] == entry["trtr"] and entry["diff"] == 0.0 and "note" not in entry
    assert scores["mean_auc"]["columns"] == 2 and scores["mean_r2"]["columns"] == 1
    assert scores["mean_auc"]["trtr"] > 0.9 and scores["mean_r2"]["trtr"] > 0.8


def test_the_row_cap_changes_the_rows_used_and_the_seed_fixes_them():
    train, test = _rows(600, 0), _rows(300, 1)
    synthetic = _rows(600, 3)
    first = every_column_tstr(train, synthetic, test, SCHEMA, seed=4, max_rows=200)
    assert first == every_column_tstr(train, synthetic, test, SCHEMA, seed=4, max_rows=200)
    assert first != every_column_tstr(train, synthetic, test, SCHEMA, seed=4, max_rows=5000)


def test_independent_columns_lose_what_every_column_predicts():
    train, test = _rows(600, 0), _rows(300, 1)
    rng = np.random.default_rng(2)
    shuffled = train.apply(lambda column: column.to_numpy()[rng.permutation(len(column))])
    scores = every_column_tstr(train, shuffled, test, SCHEMA)
    assert scores["mean_auc"]["tstr"] < 0.65 < scores["mean_auc"]["trtr"]
    assert scores["mean_r2"]["tstr"] < 0.2 < scores["mean_r2"]["trtr"]
    fresh = every_column_tstr(train, _rows(600, 5), test, SCHEMA)  # the same dependence, other rows
    assert fresh["mean_auc"]["tstr"] > scores["mean_auc"]["tstr"] + 0.25


def test_one_synthetic_class_scores_chance_and_still_counts_in_the_mean():
    train, test = _rows(400, 0), _rows(200, 1)
    synthetic = train.copy()
    synthetic["flag"] = "off"
    scores = every_column_tstr(train, synthetic, test, SCHEMA)
    flag = scores["columns"]["flag"]
    assert flag["tstr"] == 0.5 and "one class" in flag["note"] and flag["trtr"] > 0.9
    assert flag["diff"] == pytest.approx(flag["trtr"] - 0.5)
    assert scores["mean_auc"]["columns"] == 2
    assert scores["mean_auc"]["tstr"] == pytest.approx((0.5 + scores["columns"]["group"]["tstr"]) / 2)


def test_a_synthetic_column_left_empty_scores_chance_for_regression_too():
    train, test = _rows(400, 0), _rows(200, 1)
    synthetic = train.copy()
    synthetic["level"] = np.nan
    level = every_column_tstr(train, synthetic, test, SCHEMA)["columns"]["level"]
    assert level["tstr"] == 0.0 and "fewer than two rows" in level["note"] and level["trtr"] > 0.8


def test_one_class_in_the_real_test_rows_gives_no_reference_and_no_mean_entry():
    train, test = _rows(400, 0), _rows(200, 1)
    test["flag"] = "on"
    scores = every_column_tstr(train, train.copy(), test, SCHEMA)
    flag = scores["columns"]["flag"]
    assert flag["tstr"] is None and flag["trtr"] is None and "real test rows hold one class" in flag["note"]
    assert scores["mean_auc"]["columns"] == 1


def test_missing_cells_in_features_and_targets_are_handled():
    train, test, synthetic = _rows(400, 0), _rows(200, 1), _rows(400, 2)
    for frame in (train, test, synthetic):
        frame.loc[:20, "level"] = np.nan
        frame.loc[30:40, "flag"] = None
    scores = every_column_tstr(train, synthetic, test, SCHEMA)
    for entry in scores["columns"].values():
        assert entry["tstr"] is not None and entry["trtr"] is not None and "note" not in entry
    # the missing cells are features for "group": still predictable from what is left
    assert scores["columns"]["group"]["tstr"] > 0.8
    # rows without a target are left out: the scores equal those of the frames without them
    kept = [f[f["level"].notna()] for f in (train, synthetic, test)]
    alone = every_column_tstr(*kept, SCHEMA)["columns"]["level"]
    assert alone["tstr"] == scores["columns"]["level"]["tstr"]


def test_bad_input_is_an_input_error():
    train, test = _rows(100, 0), _rows(50, 1)
    with pytest.raises(InputError, match="synthetic table lacks 1"):
        every_column_tstr(train, train.drop(columns="flag"), test, SCHEMA)
    with pytest.raises(InputError, match="max_rows"):
        every_column_tstr(train, train, test, SCHEMA, max_rows=1)
