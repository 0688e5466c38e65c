"""Dates in an evaluation: read as their number and their calendar parts, not as text labels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.evaluation.evaluate import evaluate
from dpgan.evaluation.tables.dates import temporal_columns, with_date_parts
from dpgan.evaluation.tables.report import render_report
from dpgan.tables.schema.table import Schema


def dated(rows: int, seed: int) -> pd.DataFrame:
    """A label that depends on the weekday only: TSTR can learn it from the date's parts."""
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 365, rows), unit="D")
    stamps = days + pd.to_timedelta(rng.integers(0, 86400, rows), unit="s")
    return pd.DataFrame(
        {
            "day": days.strftime("%d/%m/%Y"),
            "stamp": stamps.strftime("%Y-%m-%d %H:%M:%S"),
            "x": rng.normal(size=rows),
            "weekend": np.where(days.day_of_week >= 5, "yes", "no"),
        }
    )


def test_the_parts_follow_the_cell_rule_without_a_schema():
    real = dated(300, 0)
    kinds = {"day": "categorical", "stamp": "categorical", "x": "continuous", "weekend": "categorical"}
    found = temporal_columns(real, kinds, None)
    assert found == {"day": ("date", "%d/%m/%Y"), "stamp": ("timestamp", "%Y-%m-%d %H:%M:%S")}
    frames, new_kinds = with_date_parts({"real": real}, kinds, found)
    frame = frames["real"]
    assert new_kinds["day"] == "continuous" and new_kinds["day.weekday"] == "categorical"
    assert "stamp.hour" in frame and "day.hour" not in frame
    weekday = pd.to_datetime(real["day"], format="%d/%m/%Y").dt.day_of_week.astype(str)
    assert (frame["day.weekday"] == weekday).all()


def test_evaluate_scores_dates_by_their_parts():
    real, test = dated(600, 1), dated(300, 2)
    schema = Schema.from_dict(
        {
            "columns": [
                {"name": "day", "kind": "date", "min": "2021-01-01", "max": "2022-01-01", "format": "%d/%m/%Y"},
                {"name": "stamp", "kind": "timestamp", "min": "2021-01-01", "max": "2022-01-01"},
                {"name": "x", "kind": "continuous", "min": -4, "max": 4},
                {"name": "weekend", "kind": "categorical", "categories": ["no", "yes"]},
            ]
        }
    )
    metrics = evaluate(real, real.copy(), test, "weekend", schema=schema, models=["decision_tree"])
    assert metrics["columns"]["day"] == "continuous" and metrics["columns"]["day.weekday"] == "categorical"
    per_column = metrics["fidelity"]["per_column"]
    assert per_column["day.weekday"]["jsd"] == 0.0 and "wd" in per_column["day"]
    # the weekday decides the label: a tree on the parts learns it (the raw text could not generalise)
    assert metrics["utility"]["decision_tree"]["accuracy"]["tstr"] > 0.95
    assert "day.weekday" in render_report(metrics)
