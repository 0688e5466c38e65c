"""The evaluation's per-column block (issue 51): what the model learned and, beside it, what that
learned schema misses on the real rows, in the issue's words; each note appears where the real
rows show the gap and not otherwise."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpgan import TabularSynthesizer
from dpgan.evaluation.evaluate import evaluate
from dpgan.evaluation.tables.learned_columns import learned_entry, learned_lines
from dpgan.evaluation.tables.report import render_report
from dpgan.tables.schema.table import Schema

SCHEMA = Schema.from_dict({
    "target": "y",
    "columns": [
        {"name": "day", "kind": "date", "min": "2022-01-01", "max": "2022-12-31", "format": "%Y-%m-%d"},
        {"name": "zip", "kind": "categorical", "categories": ["02139", "021*", "(other)"],
         "other_category": "(other)", "hierarchy": {"prefix": [3]}},
        {"name": "income", "kind": "continuous", "min": 0, "max": 100},
        {"name": "job", "kind": "categorical", "categories": ["clerk", "(other)"], "other_category": "(other)"},
        {"name": "y", "kind": "categorical", "categories": ["no", "yes"]},
    ],
})  # fmt: skip


def clean(rows: int = 200) -> pd.DataFrame:
    """Rows the schema holds whole: nothing missed."""
    rng = np.random.default_rng(0)
    days = pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.integers(0, 365, rows), unit="D")
    return pd.DataFrame({
        "day": days.strftime("%Y-%m-%d"), "zip": ["02139"] * rows, "income": rng.uniform(0, 100, rows),
        "job": ["clerk"] * rows, "y": rng.choice(["no", "yes"], rows),
    })  # fmt: skip


def notes(frame: pd.DataFrame, synthetic: pd.DataFrame | None = None) -> dict[str, list[str]]:
    learned = learned_entry(SCHEMA, None, frame, clean() if synthetic is None else synthetic)
    return {e["name"]: e["missed"] for e in learned["columns"]}


def test_rows_the_schema_holds_whole_miss_nothing():
    assert notes(clean()) == {name: [] for name in SCHEMA.names}
    assert learned_lines(learned_entry(SCHEMA, None, clean(), clean())) == [
        "learned columns: every column held whole on the real rows"
    ]


def test_nulls_the_model_has_no_slot_for():
    real = clean()
    real.loc[:16, "income"] = np.nan  # 17 of 200 rows: 8.5 %
    assert notes(real)["income"] == ["learned as never null (8.5 % null in the real data)"]
    assert notes(real)["day"] == []  # the other columns are untouched


def test_values_outside_the_learned_range():
    real = clean()
    real.loc[:5, "income"] = 150.0  # 6 of 200: 3 %
    real.loc[0, "day"] = "2023-02-01"  # a date after the learned range
    real.loc[1, "day"] = "soon"  # not a date in any public format (01.02.2022 would read)
    got = notes(real)
    assert got["income"] == ["range 0 to 100: 3.0 % of real values outside"]
    assert got["day"] == [
        "0.5 % of real cells do not read as a date",
        "range 2022-01-01 to 2022-12-31: 0.5 % of real values outside",
    ]


def test_categories_folded_into_other_and_codes_that_fall_back_to_their_parent():
    real, synthetic = clean(), clean()
    real.loc[:7, "job"] = [f"job{i}" for i in range(8)]  # 8 rare jobs, 4 % of the rows
    real.loc[:9, "zip"] = "02141"  # not kept itself: falls back to 021*
    real.loc[10:11, "zip"] = "10001"  # no kept parent: (other)
    synthetic.loc[:23, "job"] = "(other)"  # 12 % of the synthetic rows
    got = notes(real, synthetic)
    assert got["job"] == [
        "categories folded into (other): 8 (covering 4.0 % of real rows)",
        "(other) holds 12.0 % of synthetic rows / 4.0 % of real",
    ]
    assert got["zip"] == [
        "5.0 % of real rows fall back to a parent code (the hierarchy)",
        "categories folded into (other): 1 (covering 1.0 % of real rows)",
        "(other) holds 0.0 % of synthetic rows / 1.0 % of real",
    ]


def test_no_schema_and_no_model_gives_no_block():
    assert learned_entry(None, None, clean(), clean()) is None


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    synth = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, accountant="rdp", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth.fit(clean(300), schema=SCHEMA, progress=False)
    return synth.save(tmp_path_factory.mktemp("learned") / "model")


def test_the_report_lists_every_column_of_the_model_with_its_gaps(model_dir):
    real = clean()
    real.loc[:16, "income"] = np.nan
    synthetic = TabularSynthesizer.load(model_dir).sample(200, seed=1)
    metrics = evaluate(real, synthetic, clean(100), "y", model_dir=model_dir, models=["logistic_regression"])
    learned = metrics["learned"]
    assert learned["from"] == "the model's public schema"
    assert [e["name"] for e in learned["columns"]] == SCHEMA.names
    by_name = {e["name"]: e for e in learned["columns"]}
    assert by_name["income"]["missed"] == ["learned as never null (8.5 % null in the real data)"]
    assert by_name["income"]["real"]["null"] == pytest.approx(0.085)
    html = render_report(metrics)
    assert "What the model learned, per column" in html
    assert "learned as never null (8.5 % null in the real data)" in html
    assert "date 2022-01-01 to 2022-12-31" in html


def test_evaluate_on_the_command_line_reads_codes_by_the_models_schema(model_dir, tmp_path, capsys):
    """Given only --model, `02139` in the CSVs stays a code (read as a number it was `2139`, a value
    the model does not keep, so every row read as folded into (other))."""
    from dpgan.cli import main

    paths = {}
    for name, frame in (("real", clean()), ("synthetic", clean()), ("test", clean(100))):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    code = main(["evaluate", "--real", str(paths["real"]), "--synthetic", str(paths["synthetic"]),
                 "--test", str(paths["test"]), "--target", "y", "--model", str(model_dir),
                 "--out", str(tmp_path / "eval"), "--quiet"])  # fmt: skip
    assert code == 0
    assert "learned columns: every column held whole on the real rows" in capsys.readouterr().out
