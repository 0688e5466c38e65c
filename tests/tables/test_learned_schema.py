"""What a released table model learned, per column (issue 51: no column silently lost): every column
of the model's public schema, its key too, with its kind, range (dates in their own format), null
slot, categories kept and `(other)`, point masses, a code's hierarchy and the rules it is in; read
off model.json alone, so `dpgan inspect` shows it without loading pandas, and a row of the data
decides nothing in it."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dpgan import TabularSynthesizer
from dpgan.cli import main
from dpgan.inspection import inspect_learned
from dpgan.tables.schema.learned import learned_columns, model_learned
from dpgan.tables.schema.table import Schema

SCHEMA = {
    "target": "y",
    "columns": [
        {"name": "id", "role": "key", "format": "P-####"},
        {"name": "start", "kind": "date", "min": "2022-01-01", "max": "2022-12-31", "format": "%d/%m/%Y"},
        {"name": "end", "kind": "date", "min": "2022-01-01", "max": "2023-03-31", "format": "%d/%m/%Y"},
        {"name": "zip", "kind": "categorical", "categories": ["02139", "02138", "021*", "(other)"],
         "other_category": "(other)", "hierarchy": {"prefix": [3]}},
        {"name": "income", "kind": "integer", "min": 0, "max": 200000, "nullable": True, "bins": 8},
        {"name": "debt", "kind": "continuous", "min": 0, "max": 5000, "point_masses": [0], "scale": "log"},
        {"name": "job", "kind": "categorical", "categories": ["clerk", "nurse", "(other)"],
         "other_category": "(other)"},
        {"name": "y", "kind": "boolean"},
    ],
    "rules": [{"kind": "inequality", "low": "start", "high": "end"}],
}  # fmt: skip


def table(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.integers(0, 365, rows), unit="D")
    end = start + pd.to_timedelta(rng.integers(0, 60, rows), unit="D")
    return pd.DataFrame({
        "id": [f"P-{i:04d}" for i in range(rows)],
        "start": start.strftime("%d/%m/%Y"), "end": end.strftime("%d/%m/%Y"),
        "zip": rng.choice(["02139", "02138", "02141", "10001"], rows),
        "income": np.where(rng.random(rows) < 0.1, np.nan, rng.integers(20_000, 90_000, rows)),
        "debt": np.where(rng.random(rows) < 0.75, 0.0, rng.exponential(800, rows).round(2)),
        "job": rng.choice(["clerk", "nurse", "pilot", "baker"], rows),
        "y": rng.choice([True, False], rows),
    })  # fmt: skip


def fit(frame: pd.DataFrame, schema: Schema | None = None, **kwargs) -> TabularSynthesizer:
    synth = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, accountant="rdp", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return synth.fit(frame, schema=schema, progress=False, **kwargs)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return fit(table(300), Schema.from_dict(SCHEMA)).save(tmp_path_factory.mktemp("learned") / "model")


def by_name(entries: list[dict]) -> dict[str, dict]:
    return {e["name"]: e for e in entries}


def test_every_column_is_listed_with_what_was_learned():
    entries = learned_columns(Schema.from_dict(SCHEMA).to_dict())
    assert [e["name"] for e in entries] == ["id", "start", "end", "zip", "income", "debt", "job", "y"]
    got = by_name(entries)
    assert got["id"]["kind"] == "key" and "never learned" in got["id"]["text"]
    start = got["start"]  # a date: its range in its own format, its resolution, its rule
    assert start["kind"] == "date" and start["range"] == ["01/01/2022", "31/12/2022"]
    assert start["format"] == "%d/%m/%Y" and start["resolution"] == "day" and start["rules"] == ["start <= end"]
    assert "01/01/2022 to 31/12/2022" in start["text"] and "rule start <= end" in start["text"]
    code = got["zip"]  # digit strings with leading zeros and a hierarchy: a code
    assert code["kind"] == "code" and code["categories"] == 2 and code["parent_cells"] == 1 and code["other"] is True
    assert code["hierarchy"] == "a rare code falls back to its first 3 characters"
    assert "2 codes and 1 parent cell kept, an (other) class" in code["text"]
    assert got["income"]["nullable"] is True and "a null slot" in got["income"]["text"]
    assert got["income"]["range"] == [0, 200000] and "0 to 200,000" in got["income"]["text"]
    debt = got["debt"]  # zero-heavy: its point mass, its scale, never null
    assert debt["point_masses"] == [0] and debt["scale"] == "log" and debt["nullable"] is False
    assert "point mass at 0" in debt["text"] and "never null" in debt["text"]
    assert got["job"]["kind"] == "categorical" and got["job"]["categories"] == 2 and got["job"]["other"] is True
    assert got["y"]["kind"] == "boolean" and got["y"]["target"] is True
    assert model_learned({"schema": SCHEMA})["rules"] == ["start <= end"]


def test_the_block_is_read_from_the_released_model(model_dir):
    learned = inspect_learned(model_dir)
    saved = json.loads((model_dir / "model.json").read_text())["schema"]
    assert learned == model_learned({"schema": saved})
    assert [e["name"] for e in learned["columns"]] == ["id", "start", "end", "zip", "income", "debt", "job", "y"]
    assert learned["source"] == "user" and learned["rules"] == ["start <= end"]


def test_inspect_prints_the_block_and_its_json(model_dir, capsys):
    assert main(["inspect", str(model_dir)]) == 0
    out = capsys.readouterr().out
    assert "what the model learned, per column" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ") and line.split()}
    assert "date 01/01/2022 to 31/12/2022" in lines["start"] and "code" in lines["zip"]
    assert "a null slot" in lines["income"] and "point mass at 0" in lines["debt"] and "key" in lines["id"]
    assert "rules kept on every sampled row: start <= end" in out
    assert main(["inspect", str(model_dir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "epsilon" in report and [e["name"] for e in report["learned"]["columns"]][:3] == ["id", "start", "end"]


def test_a_neighbouring_table_gives_the_same_block():
    """The block is public: one more row, however odd, changes nothing in it (a hand schema)."""
    schema = Schema.from_dict(SCHEMA)
    base = table(300)
    odd = pd.DataFrame([{"id": "P-9999", "start": "31/12/2022", "end": "01/01/2022", "zip": "99999",
                         "income": None, "debt": 1e9, "job": "astronaut", "y": True}])  # fmt: skip
    one, two = fit(base, schema), fit(pd.concat([base, odd], ignore_index=True), schema)
    assert model_learned({"schema": one.schema.to_dict()}) == model_learned({"schema": two.schema.to_dict()})


def test_a_csv_only_fit_loses_no_column():
    """Without a schema (DP-learned): the date stays a date, the zip a code, every column listed."""
    synth = fit(table(2000).drop(columns=["id"]).astype({"y": str}), target="y")
    got = by_name(model_learned({"schema": synth.schema.to_dict()})["columns"])
    assert list(got) == ["start", "end", "zip", "income", "debt", "job", "y"]
    assert got["start"]["kind"] == got["end"]["kind"] == "date" and got["start"]["format"] == "%d/%m/%Y"
    assert got["zip"]["kind"] == "code" and got["income"]["kind"] in ("integer", "continuous")
