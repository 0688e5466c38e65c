"""TSTR with every column in turn as the target (dpgan.evaluation.every_column)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.evaluation.every_column import every_column_tstr
from dpgan.schema import ColumnSpec, Schema


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


def test_the_real_rows_as_synthetic_score_what_the_real_rows_score():
    train, test = _rows(600, 0), _rows(300, 1)
    scores = every_column_tstr(train, train.copy(), test, SCHEMA)
    for entry in scores["columns"].values():
        assert entry["tstr"] == entry["trtr"] and entry["diff"] == 0.0
    assert scores["mean_auc"]["columns"] == 2 and scores["mean_r2"]["columns"] == 1
    assert scores["mean_auc"]["trtr"] > 0.9 and scores["mean_r2"]["trtr"] > 0.8


def test_independent_columns_lose_what_every_column_predicts():
    train, test = _rows(600, 0), _rows(300, 1)
    rng = np.random.default_rng(2)
    shuffled = train.apply(lambda column: column.to_numpy()[rng.permutation(len(column))])
    scores = every_column_tstr(train, shuffled, test, SCHEMA)
    assert scores["mean_auc"]["tstr"] < 0.65 < scores["mean_auc"]["trtr"]
    assert scores["mean_r2"]["tstr"] < 0.2 < scores["mean_r2"]["trtr"]


def test_one_synthetic_class_scores_chance_and_missing_cells_are_dropped():
    train, test = _rows(400, 0), _rows(200, 1)
    synthetic = train.copy()
    synthetic["flag"] = "off"
    train.loc[:20, "level"] = np.nan
    train.loc[30:40, "flag"] = None
    test.loc[:10, "level"] = np.nan
    scores = every_column_tstr(train, synthetic, test, SCHEMA)
    flag = scores["columns"]["flag"]
    assert flag["tstr"] == 0.5 and "one class" in flag["note"] and flag["trtr"] > 0.9
    assert scores["columns"]["level"]["tstr"] is not None
