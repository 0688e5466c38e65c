"""Inequality rules on dates and times (dpgan.tables.schema.rules ORDERED_KINDS): `end ≥ start`
compared on the columns' linear scale, kept on every sampled row and written back as dates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpgan.errors import InputError
from dpgan.tables.codec.encoder import TableEncoder, public_dtypes
from dpgan.tables.schema.rule_breaks import broken_rows, rule_break_counts
from dpgan.tables.schema.table import Schema

START = {"name": "start", "kind": "date", "min": "2020-01-01", "max": "2020-12-31"}
END = {"name": "end", "kind": "date", "min": "2020-01-01", "max": "2021-06-30", "nullable": True}


def schema_for(method: str, strict: bool, end: dict | None = None) -> Schema:
    rule = {"kind": "inequality", "low": "start", "high": "end", "strict": strict, "method": method}
    return Schema.from_dict({"columns": [START, end or END], "rules": [rule]})


def dates(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 365, rows), unit="D")
    end = start + pd.to_timedelta(rng.integers(1, 90, rows), unit="D")
    return pd.DataFrame({"start": start.strftime("%Y-%m-%d"), "end": end.strftime("%Y-%m-%d")}, dtype=object)


@pytest.mark.parametrize("method", ["gap", "clip", "swap"])
@pytest.mark.parametrize("strict", [False, True])
def test_an_inequality_between_two_dates_holds_on_every_row_decoded_from_any_output(method, strict):
    schema = schema_for(method, strict)
    encoder = TableEncoder(schema, public_dtypes(schema))
    rng = np.random.default_rng(1)
    rows = encoder.decode(rng.normal(scale=3.0, size=(3000, encoder.width)).astype(np.float32), rng)
    start, end = pd.to_datetime(rows["start"]), pd.to_datetime(rows["end"])
    present = end.notna()
    assert present.sum() > 100 and rows["end"].isna().any()  # nulls stay possible where declared
    assert ((end > start) if strict else (end >= start))[present].all()
    assert not broken_rows(rows, schema.rules[0], schema).any()
    assert rows["start"].str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()  # written back as the column's dates


def test_two_date_columns_round_trip_through_the_gap():
    schema = schema_for("gap", False)
    encoder = TableEncoder(schema, public_dtypes(schema))
    rows = dates(200)
    back = encoder.decode(encoder.encode(rows), np.random.default_rng(0))
    assert list(back["start"]) == list(rows["start"]) and list(back["end"]) == list(rows["end"])


def test_rule_breaks_compare_date_text_by_date_not_by_text():
    schema = schema_for("clip", False, {**END, "format": "%d/%m/%Y", "max": "2021-06-30"})
    rows = pd.DataFrame({"start": ["2020-03-02", "2020-03-02"], "end": ["10/03/2020", "01/02/2020"]})
    assert broken_rows(rows, schema.rules[0], schema).tolist() == [False, True]
    assert rule_break_counts(rows, schema)[0]["broken"] == 1


def test_an_inequality_needs_two_columns_of_one_temporal_kind():
    stamp = {"name": "end", "kind": "timestamp", "min": "2020-01-01 00:00:00", "max": "2021-06-30 00:00:00"}
    with pytest.raises(InputError, match="inequality compares a date"):
        schema_for("clip", False, stamp)
    count = {"name": "end", "kind": "integer", "min": 0, "max": 10}
    with pytest.raises(InputError, match="inequality compares a date"):
        schema_for("clip", False, count)


def test_a_sum_of_dates_is_refused():
    columns = [START, {**END, "nullable": False}, {"name": "total", "kind": "continuous", "min": 0, "max": 1e6}]
    rule = {"kind": "sum", "column": "total", "of": ["start", "end"]}
    with pytest.raises(InputError, match="a sum reads continuous or integer columns"):
        Schema.from_dict({"columns": columns, "rules": [rule]})
