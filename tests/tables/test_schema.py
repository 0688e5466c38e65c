"""Schema parsing and validation: bad input is refused with a clear message, before any budget."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpgan import ColumnSpec, InputError, Schema, datasets
from dpgan.tables.reading.conform import validate_table


def small_schema() -> Schema:
    return Schema(
        (
            ColumnSpec("x", "continuous", min=0.0, max=10.0),
            ColumnSpec("n", "integer", min=0, max=5, nullable=True),
            ColumnSpec("c", "categorical", categories=("a", "b")),
            ColumnSpec("f", "boolean"),
        )
    )


def good_frame() -> pd.DataFrame:
    return pd.DataFrame({"x": [1.0, 2.5], "n": [1, None], "c": ["a", "b"], "f": [True, False]})


def test_bundled_adult_schema_covers_bundled_data(adult, adult_schema):
    train, test = adult
    assert len(train) == 32561 and len(test) == 16281
    validate_table(train, adult_schema)
    validate_table(test, adult_schema)
    assert adult_schema.target == "income"
    assert "?" in adult_schema["workclass"].categories


def test_schema_json_round_trip(tmp_path):
    schema = small_schema()
    path = tmp_path / "s.json"
    schema.to_json(path)
    assert Schema.from_json(path).to_dict() == schema.to_dict()


def test_point_masses_and_scale_survive_json_and_stay_out_of_plain_columns(tmp_path):
    spec = ColumnSpec("gain", "integer", min=0, max=99999, point_masses=(0,), scale="log", bins=8)
    path = tmp_path / "s.json"
    Schema((spec, ColumnSpec("x", "continuous", min=0.0, max=1.0))).to_json(path)
    loaded = Schema.from_json(path)
    assert loaded["gain"].point_masses == (0,) and loaded["gain"].scale == "log" and loaded["gain"].bins == 8
    assert not {"point_masses", "scale", "bins"} & set(loaded["x"].to_dict())  # old layouts stay as they were


def test_bin_edges_survive_json_and_stay_out_of_equal_bins(tmp_path):
    spec = ColumnSpec("gain", "integer", min=0, max=99999, scale="log", bins=3, bin_edges=(99.5, 4999.5))
    path = tmp_path / "s.json"
    Schema((spec, ColumnSpec("x", "continuous", min=0.0, max=1.0, bins=4))).to_json(path)
    loaded = Schema.from_json(path)
    assert loaded["gain"].bin_edges == (99.5, 4999.5) and loaded["gain"] == spec
    assert "bin_edges" not in loaded["x"].to_dict()


def test_valid_frame_passes_and_is_reordered():
    frame = good_frame()[["f", "c", "n", "x"]]
    assert list(validate_table(frame, small_schema()).columns) == ["x", "n", "c", "f"]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda f: f.iloc[0:0], "empty"),
        (lambda f: f.assign(extra=1), "not in the schema"),
        (lambda f: f.drop(columns=["c"]), "missing from the table"),
        (lambda f: f.assign(n=[None, None]), "no values"),
        (lambda f: f.assign(x=[np.nan, 1.0]), "column 'x' has missing values"),
        (lambda f: f.assign(c=["a", "zzz"]), "column 'c' holds values that are not among its schema categories"),
        (lambda f: f.assign(x=["one", "2"]), "column 'x' holds values that are not numbers"),
        (lambda f: f.assign(n=[1.5, 2.0]), "fractional"),
        (lambda f: f.assign(x=[np.inf, 1.0]), "infinite"),
        (lambda f: f.assign(f=["maybe", "no"]), "column 'f' holds values that are not among"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(mutate, message):
    with pytest.raises(InputError, match=message):
        validate_table(mutate(good_frame()), small_schema())


@pytest.mark.parametrize(
    "column, secret",
    [("c", "Alice Smith, HIV+"), ("x", "Alice Smith, HIV+"), ("f", "Alice Smith, HIV+"), ("x", 123456789.0)],
)
def test_refusals_never_print_the_cell_or_a_count(column, secret):
    """A refused table's message names the column and the problem, never the private value."""
    frame = good_frame().astype(object)
    frame.loc[1, column] = secret
    if column == "x" and isinstance(secret, float):
        frame.loc[1, "x"] = np.inf  # an infinity's row count must not be printed either
    with pytest.raises(InputError) as error:
        validate_table(frame, small_schema())
    message = str(error.value)
    assert "Alice" not in message and "HIV" not in message and "123456789" not in message
    assert not any(ch.isdigit() for ch in message), message  # no exact counts


@pytest.mark.parametrize(
    "column, message",
    [
        ({"name": "a", "kind": "continuous", "min": 1, "max": 0}, "smaller"),
        ({"name": "a", "kind": "continuous", "min": 0}, "finite"),
        ({"name": "a", "kind": "categorical", "categories": []}, "non-empty"),
        ({"name": "a", "kind": "categorical", "categories": ["x", "x"]}, "duplicates"),
        ({"name": "a", "kind": "text"}, "kind must be"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 3, "colour": 1}, "unknown schema keys"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 3, "point_masses": [5]}, "within 'min' and 'max'"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 3, "point_masses": [1.5]}, "must be integers"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 3, "point_masses": [1, 1]}, "duplicates"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 3, "point_masses": ["0"]}, "finite numbers"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 3, "point_masses": 0}, "must be a list"),
        ({"name": "a", "kind": "continuous", "min": 0, "max": 3, "scale": "sqrt"}, "'scale' must be one of"),
        ({"name": "a", "kind": "categorical", "categories": ["x"], "point_masses": [0]}, "numeric columns only"),
        ({"name": "a", "kind": "boolean", "scale": "log"}, "numeric columns only"),
        ({"name": "a", "kind": "boolean", "bins": 3}, "numeric columns only"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 3, "bins": 0}, "whole number from 1"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 3, "bins": 2.5}, "whole number from 1"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 3, "bins": 10**6}, "whole number from 1"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 9, "bins": 3, "bin_edges": [4]}, "bins - 1 inner edges"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 9, "bins": 3, "bin_edges": [5, 4]}, "increase strictly"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 9, "bins": 3, "bin_edges": [0, 4]}, "increase strictly"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 9, "bins": 3, "bin_edges": [4, 12]}, "increase strictly"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 9, "bins": 2, "bin_edges": ["4"]}, "finite numbers"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 9, "bins": 2, "bin_edges": 4}, "must be a list"),
        ({"name": "a", "kind": "boolean", "bin_edges": [0.5]}, "numeric columns only"),
        ({"name": "a", "kind": "integer", "min": 0, "max": 3, "encoding": "binary", "bins": 2, "bin_edges": [1]}, "no"),
    ],
)
def test_bad_schema_is_refused(column, message):
    with pytest.raises(InputError, match=message):
        Schema.from_dict({"columns": [column]})


def test_corrupt_schema_file_is_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        Schema.from_json(path)
    with pytest.raises(InputError, match="not found"):
        Schema.from_json(tmp_path / "missing.json")


def test_bundled_schema_is_valid_json_with_public_source():
    data = json.loads(datasets.adult_schema_path().read_text())
    assert "not read from the data" in data["source"]


@pytest.mark.parametrize(
    "kind, low, high, masses, smallest_positive, expected",
    [
        ("integer", 17, 90, (), 17, {"bins": 8}),
        ("integer", 1, 16, (), 1, {"bins": 15}),  # one bin per level
        ("integer", 0, 99999, (0, 99999), 114, {"bins": 8, "point_masses": (0, 99999), "scale": "log"}),
        ("continuous", 0.0, 50.0, (0,), 1.0, {"bins": 8, "point_masses": (0.0,)}),
        ("continuous", 0.0, 50.0, (), 1.0, {"bins": 8}),  # no value holds enough rows
        ("continuous", -5.0, 5000.0, (0, 9999), 0.01, {"bins": 8, "point_masses": (0.0,)}),  # outside: left out
    ],
)
def test_numeric_encoding_hints(kind, low, high, masses, smallest_positive, expected):
    from dpgan.tables.schema.encoding_hints import numeric_encoding

    assert numeric_encoding(kind, low, high, masses, smallest_positive) == expected
    ColumnSpec("x", kind, min=low, max=high, **expected)  # and they make a valid column


def test_schema_read_off_the_data_gets_the_same_hints(adult):
    from dpgan.tables.inference.infer import infer_schema_without_privacy

    schema, _ = infer_schema_without_privacy(adult[0])
    gain = schema["capital-gain"]
    # 0 and the three amounts that each hold over 0.5 % of the rows (the bench's hand schema has 0 alone)
    assert gain.point_masses == (0, 7298, 7688, 15024) and gain.scale == "log" and schema["education-num"].bins == 15
