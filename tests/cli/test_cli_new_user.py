"""The command line as a new user with only a CSV meets it: help, early checks, destinations,
schemas without writing JSON by hand, and models that refuse to be edited."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from dpgan.cli import main
from dpgan.tables.fit.preparation import CLASS_EVENT, REPAIR_EVENT, SCHEMA_EVENT

FAST = ["--epochs", "1", "--batch-size", "64", "--accountant", "rdp", "--seed", "0", "--quiet"]


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dpgan.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})},
    )


@pytest.fixture
def csv(tmp_path, adult_small):
    path = tmp_path / "table.csv"
    adult_small.iloc[:400].to_csv(path, index=False)
    return path


def test_version_and_help_show_defaults():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.startswith("dpgan ")
    for command in ("fit", "demo", "sample", "privacy"):
        text = run(command, "--help").stdout
        assert "--epsilon" in text or "-n" in text
    fit_help = run("fit", "--help").stdout
    assert "(default: 1e-05)" in fit_help and "(default: pld)" in fit_help and "--target" in fit_help
    assert "(default: 3.0)" in run("demo", "--help").stdout


def test_bad_arguments_are_refused_before_pytorch_loads(tmp_path):
    """A missing file or a bad ε costs a second: torch and pandas are never imported."""
    probe = (
        "import sys; from dpgan.cli import main; "
        f"codes = [main(['fit', {str(tmp_path / 'nosuch.csv')!r}, '--epsilon', '1', '--out', 'm']), "
        f"main(['fit', {str(tmp_path / 'nosuch.csv')!r}, '--epsilon', '-1', '--out', 'm'])]; "
        "assert codes == [2, 2], codes; assert 'torch' not in sys.modules and 'pandas' not in sys.modules"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "data file not found" in out.stderr and "--epsilon must be a positive number" in out.stderr


def test_destination_is_checked_before_any_data_is_read(tmp_path, csv):
    not_a_model = tmp_path / "photos"
    not_a_model.mkdir()
    (not_a_model / "holiday.jpg").write_text("x")
    out = run("fit", str(csv), "--epsilon", "1", "--out", str(not_a_model), *FAST)
    assert out.returncode == 2 and "not a dpgan model directory" in out.stderr
    assert "DP training" not in out.stderr  # refused before training started


def test_an_existing_model_is_replaced_only_with_overwrite(tmp_path, csv, adult_schema):
    schema = tmp_path / "s.json"
    adult_schema.to_json(schema)
    model = tmp_path / "model"
    args = ["fit", str(csv), "--epsilon", "2", "--schema", str(schema), "--out", str(model), *FAST]
    assert run(*args).returncode == 0
    again = run(*args)
    assert again.returncode == 2 and "--overwrite" in again.stderr
    assert run(*args, "--overwrite").returncode == 0


def test_an_edited_model_is_refused(tmp_path, fitted):
    model = fitted.save(tmp_path / "m")
    meta = json.loads((model / "model.json").read_text())
    meta["ledger"][-1]["noise_multiplier"] *= 10  # would print a much smaller ε
    (model / "model.json").write_text(json.dumps(meta))
    out = run("inspect", str(model))
    assert out.returncode == 2 and "content hash does not match" in out.stderr


def test_inspect_prints_the_ledger_before_the_schema_source(tmp_path, fitted):
    out = run("inspect", str(fitted.save(tmp_path / "m")))
    assert out.returncode == 0
    assert out.stdout.index("ledger") < out.stdout.index("schema:")
    assert out.stdout.index("DP-SGD on the critic") < out.stdout.index("schema:")


def test_sample_names_an_unknown_condition_column(tmp_path, fitted):
    model = fitted.save(tmp_path / "m")
    out = run("sample", str(model), "-n", "5", "--out", str(tmp_path / "s.csv"), "--condition", "nosuch=1")
    assert out.returncode == 2 and "'nosuch' is not a column of this model" in out.stderr


def test_a_csv_and_a_target_are_enough(tmp_path, adult):
    """No schema: the domain is bought with DP, the target names the label model's column, and
    the saved dtypes come from the learned kinds, not from the CSV's values."""
    csv = tmp_path / "table.csv"
    adult[0].iloc[:3000].to_csv(csv, index=False)
    model = tmp_path / "model"
    out = run("fit", str(csv), "--epsilon", "3", "--target", "income", "--out", str(model), *FAST)
    assert out.returncode == 0, out.stderr
    meta = json.loads((model / "model.json").read_text())
    names = [e["name"] for e in meta["ledger"]]
    assert names[:5] == ["row count", CLASS_EVENT, SCHEMA_EVENT, "schema: the target's values (income)", REPAIR_EVENT]
    assert meta["schema"]["target"] == "income" and meta["label_model"]["column"] == "income"
    kinds = {c["name"]: c["kind"] for c in meta["schema"]["columns"]}
    assert kinds["age"] == "integer" and kinds["workclass"] == "categorical"
    assert meta["dtypes"]["age"] in ("int64", "Int64")


def test_a_tiny_table_fits_with_a_warning(tmp_path):
    tiny = tmp_path / "tiny.csv"
    pd.DataFrame({"x": [1.0], "c": ["a"]}).to_csv(tiny, index=False)
    out = run("fit", str(tiny), "--epsilon", "1", "--out", str(tmp_path / "m"), *FAST)
    assert out.returncode == 0, out.stderr
    assert "dpgan: warning: the table has about" in out.stderr


def test_hints_are_checked_and_refused_with_a_schema(tmp_path, csv, adult_schema):
    out = run("fit", str(csv), "--epsilon", "1", "--bounds", "age=90:17", "--out", str(tmp_path / "m"))
    assert out.returncode == 2 and "LOW < HIGH" in out.stderr
    out = run("fit", str(csv), "--epsilon", "1", "--categorical", "nosuch", "--out", str(tmp_path / "m"), *FAST)
    assert out.returncode == 2 and "not in the table" in out.stderr
    schema = tmp_path / "s.json"
    adult_schema.to_json(schema)
    out = run("fit", str(csv), "--epsilon", "1", "--schema", str(schema), "--bounds", "age=0:99", "--out", "m")
    assert out.returncode == 2 and "without a schema" in out.stderr


def test_schema_template_reads_no_values_and_must_be_filled_in(tmp_path, adult_small):
    data = tmp_path / "t.parquet"
    adult_small.iloc[:5].to_parquet(data)
    template = tmp_path / "template.json"
    assert main(["schema", str(data), "--template", "--target", "income", "--out", str(template)]) == 0
    doc = json.loads(template.read_text())
    assert {c["name"]: c["kind"] for c in doc["columns"]}["age"] == "integer"  # Parquet declares int64
    assert doc["target"] == "income" and all(c.get("min") is None for c in doc["columns"])
    out = run("fit", str(data), "--epsilon", "1", "--schema", str(template), "--out", str(tmp_path / "m"))
    assert out.returncode == 2 and "column 'age'" in out.stderr  # its bounds are still empty


def test_a_schema_bought_once_is_counted_by_the_fit_that_uses_it(tmp_path, csv):
    schema = tmp_path / "s.json"
    assert (
        main(["schema", str(csv), "--epsilon", "0.5", "--target", "income", "--seed", "0", "--out", str(schema)]) == 0
    )
    doc = json.loads(schema.read_text())
    assert [e["name"] for e in doc["ledger"]][0] == "row count" and "dpgan schema" in doc["source"]
    model = tmp_path / "m"
    out = run("fit", str(csv), "--epsilon", "3", "--schema", str(schema), "--out", str(model), *FAST)
    assert out.returncode == 0, out.stderr
    meta = json.loads((model / "model.json").read_text())
    assert [e["name"] for e in meta["ledger"]][: len(doc["ledger"])] == [e["name"] for e in doc["ledger"]]
    assert meta["epsilon"] <= 3.0
