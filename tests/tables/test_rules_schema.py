"""Rules between columns in the schema (dpgan.tables.schema.rules, rule_checks): the JSON round
trip, and one clear line for every rule that cannot be kept."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from dpgan.errors import InputError
from dpgan.tables.schema.rule_checks import check_condition
from dpgan.tables.schema.rules import Combination, Derived, Inequality
from dpgan.tables.schema.table import Schema

COLUMNS: list[dict[str, Any]] = [
    {"name": "start", "kind": "integer", "min": 0, "max": 100},
    {"name": "end", "kind": "integer", "min": 0, "max": 200},
    {"name": "a", "kind": "continuous", "min": 0, "max": 50},
    {"name": "b", "kind": "continuous", "min": 0, "max": 50, "nullable": True},
    {"name": "total", "kind": "continuous", "min": 0, "max": 100, "nullable": True},
    {"name": "city", "kind": "categorical", "categories": ["Boston", "Albany", "Elsewhere"], "nullable": True},
    {"name": "state", "kind": "categorical", "categories": ["MA", "NY"], "nullable": True},
    {"name": "flag", "kind": "boolean"},
    {"name": "code", "kind": "categorical", "categories": [1, 2]},
    {"name": "y", "kind": "categorical", "categories": ["no", "yes"]},
]
RULES: list[dict[str, Any]] = [
    {"kind": "inequality", "low": "start", "high": "end", "strict": True},
    {"kind": "inequality", "low": "a", "high": "b", "strict": False, "method": "clip"},
    {"kind": "sum", "column": "total", "of": ["a", "b"]},
    {
        "kind": "combination",
        "columns": ["city", "state"],
        "allowed": [["Boston", "MA"], ["Albany", "NY"], [None, None]],
    },
    {"kind": "combination", "columns": ["flag", "code"], "allowed": [[True, "1"], [False, 2]]},
]


def schema_with(*rules: dict[str, Any], columns: list[dict[str, Any]] | None = None, **top: Any) -> Schema:
    return Schema.from_dict({"columns": columns or COLUMNS, "target": "y", "rules": list(rules), **top})


def test_rules_round_trip_through_json(tmp_path):
    schema = schema_with(*RULES)
    path = tmp_path / "schema.json"
    schema.to_json(path)
    again = Schema.from_json(path)
    assert again == schema
    assert again.rules[0] == Inequality("start", "end", strict=True)
    assert again.rules[1].method == "clip"
    assert again.rules[2] == Derived("total", ("a", "b"), (1, 1))
    # the allowed values become the columns' own categories: "1" names the category 1
    assert again.rules[4] == Combination(("flag", "code"), ((True, 1), (False, 2)))
    assert json.loads(path.read_text())["rules"][3]["allowed"][2] == [None, None]


@pytest.mark.parametrize(
    "rule, kind, signs",
    [
        ({"kind": "difference", "column": "total", "of": ["a", "b"]}, "difference", (1, -1)),
        ({"kind": "sum", "column": "total", "of": ["a", "b"], "signs": [-1, 1]}, "sum", (-1, 1)),
        ({"kind": "sum", "column": "total", "of": ["a"]}, "sum", (1,)),
    ],
)
def test_a_difference_or_signed_sum_keeps_its_signs(rule, kind, signs):
    schema = schema_with(rule)
    assert schema.rules[0].signs == signs
    assert schema.to_dict()["rules"][0]["kind"] == kind
    assert Schema.from_dict(schema.to_dict()) == schema


def test_a_schema_without_rules_writes_no_rules_key():
    assert "rules" not in schema_with().to_dict()


BAD = [
    ({"kind": "ratio", "column": "a"}, "'kind' is one of"),
    ({"kind": "inequality", "low": "start", "high": "end", "extra": 1}, "unknown keys"),
    ({"kind": "inequality", "low": "start", "high": "nope"}, "'nope' is not a column of the schema"),
    ({"kind": "inequality", "low": "start", "high": "start"}, "two different columns"),
    ({"kind": "inequality", "low": "start", "high": "city"}, "'city' is categorical; an inequality reads"),
    ({"kind": "inequality", "low": "start", "high": "end", "method": "sort"}, "'method' is one of"),
    ({"kind": "inequality", "low": "start", "high": "end", "strict": "yes"}, "'strict' is true or false"),
    ({"kind": "inequality", "low": "b", "high": "total"}, "'b' is nullable; the gap method needs"),
    ({"kind": "inequality", "low": "a", "high": "start", "method": "swap"}, "swap method needs both columns of one"),
    ({"kind": "inequality", "low": "start", "high": "y"}, "the target 'y' cannot be set by a rule"),
    ({"kind": "sum", "column": "total", "of": ["a", "city"]}, "'city' is categorical; a sum reads"),
    ({"kind": "sum", "column": "start", "of": ["a"]}, "'start' is integer, so every part must be integer"),
    ({"kind": "sum", "column": "a", "of": ["b"]}, "a part is nullable, so 'a' must be nullable too"),
    ({"kind": "sum", "column": "total", "of": ["total", "a"]}, "cannot be one of its own parts"),
    ({"kind": "sum", "column": "total", "of": ["a", "b"], "signs": [1, 2]}, "'signs' lists 1 or -1"),
    ({"kind": "combination", "columns": ["city"], "allowed": [["Boston"]]}, "at least 2 column names"),
    ({"kind": "combination", "columns": ["city", "a"], "allowed": [["Boston", 1]]}, "'a' is continuous"),
    ({"kind": "combination", "columns": ["city", "state"], "allowed": [["Paris", "MA"]]}, "'Paris' is not a category"),
    ({"kind": "combination", "columns": ["city", "state"], "allowed": [["Boston"]]}, "one value per column (2)"),
    ({"kind": "combination", "columns": ["flag", "code"], "allowed": [[None, 1]]}, "'flag' is not nullable"),
    ({"kind": "combination", "columns": ["city", "state"], "allowed": [["Boston", "MA"]] * 2}, "duplicates"),
    ({"kind": "combination", "columns": ["code", "y"], "allowed": [[1, "no"]]}, "the target 'y' cannot be set"),
]


@pytest.mark.parametrize("rule, message", BAD, ids=[m for _, m in BAD])
def test_a_bad_rule_is_refused_in_one_line_naming_it(rule, message):
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        schema_with(rule)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("rule 1")


def test_a_column_set_by_two_rules_is_refused():
    with pytest.raises(InputError, match="rules 1 and 2 both set column 'end'"):
        schema_with(
            {"kind": "inequality", "low": "start", "high": "end"}, {"kind": "sum", "column": "end", "of": ["start"]}
        )


def test_a_cycle_of_rules_is_refused():
    columns = [{"name": n, "kind": "continuous", "min": 0, "max": 10} for n in ("x", "z", "w")]
    cycle = (
        {"kind": "sum", "column": "x", "of": ["z", "w"]},
        {"kind": "difference", "column": "z", "of": ["x", "w"]},
    )
    with pytest.raises(InputError, match="rules 1, 2 form a cycle through 'x', 'z'"):
        Schema.from_dict({"columns": columns, "rules": list(cycle)})
    # a chain is fine: z computed first, then x from it
    chain = ({"kind": "sum", "column": "x", "of": ["z", "w"]}, {"kind": "inequality", "low": "w", "high": "z"})
    assert len(Schema.from_dict({"columns": columns, "rules": list(chain)}).rules) == 2


def test_an_inequality_no_value_can_keep_is_refused():
    columns = [
        {"name": "lo", "kind": "integer", "min": 10, "max": 20},
        {"name": "hi", "kind": "integer", "min": 0, "max": 10},
    ]
    with pytest.raises(InputError, match="no 'hi' within its bounds can exceed 'lo'"):
        Schema.from_dict(
            {"columns": columns, "rules": [{"kind": "inequality", "low": "lo", "high": "hi", "strict": True}]}
        )
    with pytest.raises(InputError, match="can take one value only"):
        Schema.from_dict({"columns": columns, "rules": [{"kind": "inequality", "low": "lo", "high": "hi"}]})


def test_a_geo_column_cannot_be_set_by_a_rule():
    columns = [
        {"name": "lat", "kind": "continuous", "min": 40, "max": 45},
        {"name": "lon", "kind": "continuous", "min": -75, "max": -70},
        {"name": "base", "kind": "continuous", "min": 30, "max": 40},
    ]
    rule = {"kind": "inequality", "low": "base", "high": "lat"}
    with pytest.raises(InputError, match="'lat' is in a geo pair"):
        Schema.from_dict({"columns": columns, "geo": [{"latitude": "lat", "longitude": "lon"}], "rules": [rule]})


def test_an_integer_column_combines_by_its_whole_numbers():
    """A code column (Adult's education-num beside education) is integer: its allowed values are
    whole numbers within its bounds."""
    pair = {"kind": "combination", "columns": ["city", "start"], "allowed": [["Boston", 5], ["Albany", 7.0]]}
    assert schema_with(pair).rules[0].allowed == (("Boston", 5), ("Albany", 7))
    for bad in (5.5, 101, "7"):
        with pytest.raises(InputError, match="is not a whole number within the bounds of 'start'"):
            schema_with({**pair, "allowed": [["Boston", bad]]})


def test_rules_must_be_a_list():
    with pytest.raises(InputError, match="'rules' must be a list"):
        Schema.from_dict({"columns": COLUMNS, "rules": {"kind": "sum"}})


def test_a_condition_column_set_by_a_rule_is_refused():
    schema = schema_with(RULES[0])
    check_condition(schema.rules, "start")  # read, not set: fine
    with pytest.raises(InputError, match="the condition column 'end' is set by rule 1"):
        check_condition(schema.rules, "end")
