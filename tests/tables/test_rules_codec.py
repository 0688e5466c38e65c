"""How the encoder keeps the schema's rules (dpgan.tables.codec.rules): the learned columns, every
rule on every decoded row whatever the generator outputs, and real rows that break a rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpgan.errors import InputError
from dpgan.tables.codec.encoder import TableEncoder, public_dtypes
from dpgan.tables.reading.conform import REASONS, UNKNOWN_CATEGORY, conform
from dpgan.tables.schema.rule_breaks import broken_rows
from dpgan.tables.schema.table import Schema

COLUMNS = [
    {"name": "start", "kind": "integer", "min": 0, "max": 100},
    {"name": "end", "kind": "integer", "min": 0, "max": 150, "nullable": True},
    {"name": "x", "kind": "continuous", "min": -5, "max": 5},
    {"name": "z", "kind": "integer", "min": 0, "max": 20},
    {"name": "a", "kind": "continuous", "min": 0, "max": 50},
    {"name": "b", "kind": "continuous", "min": 0, "max": 50, "nullable": True},
    {"name": "net", "kind": "continuous", "min": -50, "max": 50, "nullable": True},
    {"name": "city", "kind": "categorical", "categories": ["Boston", "Albany", "Paris"], "nullable": True},
    {"name": "state", "kind": "categorical", "categories": ["MA", "NY"], "nullable": True},
    {"name": "flag", "kind": "boolean"},
    {"name": "level", "kind": "integer", "min": 1, "max": 3},
]
CITIES = [["Boston", "MA"], ["Albany", "NY"], ["Paris", None]]


def schema_for(method: str, strict: bool) -> Schema:
    rules = [
        {"kind": "inequality", "low": "start", "high": "end", "strict": strict, "method": method},
        {
            "kind": "inequality",
            "low": "x",
            "high": "z",
            "strict": strict,
            "method": "clip" if method == "swap" else method,
        },
        {"kind": "difference", "column": "net", "of": ["a", "b"]},
        {"kind": "combination", "columns": ["city", "state"], "allowed": CITIES},
        {"kind": "combination", "columns": ["flag", "level"], "allowed": [[True, 1], [False, 2], [False, 3]]},
    ]
    return Schema.from_dict({"columns": COLUMNS, "rules": rules})


def table(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    start = rng.integers(0, 100, rows)
    a, b = rng.uniform(0, 50, rows), rng.uniform(0, 50, rows)
    pick = rng.integers(0, 3, rows)
    return pd.DataFrame({
        "start": start, "end": start + rng.integers(1, 50, rows), "x": rng.uniform(-5, 5, rows),
        "z": rng.integers(6, 20, rows), "a": a, "b": b, "net": a - b,
        "city": [CITIES[i][0] for i in pick], "state": [CITIES[i][1] for i in pick],
        "flag": pick == 0, "level": pick + 1,
    })  # fmt: skip


def cells(series: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in series.astype(object)]


@pytest.mark.parametrize("method", ["gap", "clip", "swap"])
@pytest.mark.parametrize("strict", [False, True])
def test_every_rule_holds_on_every_row_decoded_from_any_output(method, strict):
    schema = schema_for(method, strict)
    encoder = TableEncoder(schema, public_dtypes(schema))
    rng = np.random.default_rng(1)
    noise = rng.normal(scale=3.0, size=(5000, encoder.width)).astype(np.float32)  # any generator output
    rows = encoder.decode(noise, rng)
    assert list(rows.columns) == schema.names
    for rule in schema.rules:
        assert not broken_rows(rows, rule).any(), rule.label
    assert rows["end"].isna().any() and rows["net"].isna().any()  # nulls stay possible where declared
    assert str(rows["start"].dtype) == "int64" and str(rows["end"].dtype) == "Int64"
    assert str(rows["flag"].dtype) == "bool" and str(rows["level"].dtype) == "int64"
    assert set(zip(cells(rows["city"]), cells(rows["state"]))) <= {tuple(t) for t in CITIES}


def test_the_generator_learns_the_reparametrised_columns():
    gap = TableEncoder(schema_for("gap", False))
    assert [t.spec.name for t in gap.transforms] == [
        "start",
        "end - start",
        "x",
        "z - x",
        "a",
        "b",
        "(city, state)",
        "(flag, level)",
    ]
    assert gap.transforms[1].spec.min == 0 and gap.transforms[1].spec.max == 150
    assert gap.transforms[1].spec.nullable  # null where `end` is
    assert gap.transforms[6].spec.categories == (0, 1, 2)
    clip = TableEncoder(schema_for("clip", False))
    assert [t.spec.name for t in clip.transforms] == [
        "start",
        "end",
        "x",
        "z",
        "a",
        "b",
        "(city, state)",
        "(flag, level)",
    ]


def test_valid_rows_round_trip_through_the_learned_columns():
    schema = schema_for("gap", False)
    encoder = TableEncoder(schema, public_dtypes(schema))
    rows = table(200)
    back = encoder.decode(encoder.encode(rows), np.random.default_rng(0))
    for column in ("start", "end", "z", "city", "state", "flag", "level"):
        assert cells(back[column]) == cells(rows[column]), column
    np.testing.assert_allclose(back["net"], rows["a"] - rows["b"], atol=1e-3)


def test_a_real_row_that_breaks_an_inequality_has_its_gap_clamped_at_zero():
    schema = schema_for("gap", False)
    encoder = TableEncoder(schema, public_dtypes(schema))
    rows = table(3)
    rows.loc[0, "end"] = rows.loc[0, "start"] - 7  # breaks start <= end
    back = encoder.decode(encoder.encode(rows), np.random.default_rng(0))
    assert back.loc[0, "end"] == rows.loc[0, "start"]


def test_conform_drops_a_row_outside_a_combination_and_counts_it_as_an_unknown_category():
    schema = schema_for("gap", False)
    rows = table(50)
    bad = rows.copy()
    bad.loc[len(bad)] = {**rows.iloc[0].to_dict(), "city": "Boston", "state": "NY"}
    clean, with_bad = conform(rows, schema), conform(bad, schema)
    # the neighbouring table maps to the same rows: the extra row goes by a rule of its own cells
    pd.testing.assert_frame_equal(clean.frame, with_bad.frame)
    assert with_bad.repairs[-1, REASONS.index(UNKNOWN_CATEGORY)] and not clean.repairs.any()
    assert with_bad.dropped == 1
    with pytest.raises(InputError, match="combinations outside a rule's allowed list") as caught:
        conform(bad, schema, strict=True)
    assert "Boston" not in str(caught.value)  # no private value in the message


def test_a_null_combination_is_kept_only_where_the_list_allows_it():
    schema = schema_for("gap", False)
    rows = table(4)
    rows.loc[0, ["city", "state"]] = ["Paris", None]  # allowed
    rows.loc[1, ["city", "state"]] = [None, "MA"]  # not allowed
    assert conform(rows, schema).dropped == 1
