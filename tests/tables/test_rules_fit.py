"""Rules between columns through a fit: every table model keeps every rule on every sampled row,
the rules cost no ε, a row that breaks a rule decides no public fact, and the evaluation counts
the real rows that broke each rule."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpgan.evaluation.evaluate import evaluate
from dpgan.evaluation.tables.report import render_report
from dpgan.synthesizers import TabularSynthesizer
from dpgan.tables.schema.rule_breaks import broken_rows
from dpgan.tables.schema.table import Schema

CITIES = [("Boston", "MA"), ("Worcester", "MA"), ("Albany", "NY"), ("Buffalo", "NY")]
SCHEMA = {
    "target": "y",
    "columns": [
        {"name": "start", "kind": "integer", "min": 0, "max": 100},
        {"name": "end", "kind": "integer", "min": 0, "max": 200},
        {"name": "a", "kind": "continuous", "min": 0, "max": 50},
        {"name": "b", "kind": "continuous", "min": 0, "max": 50},
        {"name": "total", "kind": "continuous", "min": 0, "max": 100},
        {"name": "city", "kind": "categorical", "categories": [c for c, _ in CITIES]},
        {"name": "state", "kind": "categorical", "categories": ["MA", "NY"]},
        {"name": "y", "kind": "categorical", "categories": ["no", "yes"]},
    ],
    "rules": [
        {"kind": "inequality", "low": "start", "high": "end"},
        {"kind": "sum", "column": "total", "of": ["a", "b"]},
        {"kind": "combination", "columns": ["city", "state"], "allowed": [list(c) for c in CITIES]},
    ],
}
SMALL = {"dtgan-g": {"num_discriminators": 3, "marginal_warmup_steps": 20}}


def table(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    start, a, b, pick = (
        rng.integers(0, 100, rows),
        rng.uniform(0, 50, rows),
        rng.uniform(0, 50, rows),
        rng.integers(0, 4, rows),
    )
    return pd.DataFrame({
        "start": start, "end": start + rng.integers(0, 50, rows), "a": a, "b": b, "total": a + b,
        "city": [CITIES[i][0] for i in pick], "state": [CITIES[i][1] for i in pick],
        "y": rng.choice(["no", "yes"], rows),
    })  # fmt: skip


def with_breaking_row(frame: pd.DataFrame) -> pd.DataFrame:
    """The table plus one row that breaks all three rules."""
    bad = {"start": 90, "end": 3, "a": 10.0, "b": 20.0, "total": 99.0, "city": "Boston", "state": "NY", "y": "yes"}
    return pd.concat([frame, pd.DataFrame([bad])], ignore_index=True)


def fit(frame: pd.DataFrame, schema: Schema, model: str = "dp-gan") -> TabularSynthesizer:
    synth = TabularSynthesizer(
        epsilon=3.0, epochs=1, batch_size=64, recipe=model, accountant="rdp", seed=0, **SMALL.get(model, {})
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return synth.fit(frame, schema=schema)


@pytest.mark.parametrize("model", ["dp-gan", "dp-wgan", "dp-cgan", "dtgan-d", "dtgan-g"])
def test_every_table_model_keeps_every_rule_on_every_sampled_row(model, tmp_path):
    schema = Schema.from_dict(SCHEMA)
    synth = fit(with_breaking_row(table(300)), schema, model)
    rows = synth.sample(2000, seed=1)
    for rule in schema.rules:
        assert not broken_rows(rows, rule).any(), rule.label
    assert rows["total"].to_numpy() == pytest.approx((rows["a"] + rows["b"]).to_numpy())
    loaded = TabularSynthesizer.load(synth.save(tmp_path / "model"))
    assert loaded.schema == schema  # the rules travel in model.json's schema
    pd.testing.assert_frame_equal(loaded.sample(300, seed=2), synth.sample(300, seed=2))


def test_a_row_that_breaks_the_rules_decides_no_public_fact():
    schema = Schema.from_dict(SCHEMA)
    base, neighbour = fit(table(300), schema), fit(with_breaking_row(table(300)), schema)

    def facts(synth: TabularSynthesizer) -> tuple:
        entries = [e.to_dict() for e in synth.ledger.entries]
        return [(e["name"], e["mechanism"], e["count"]) for e in entries], [
            (s.column, s.activation, s.width) for s in synth.encoder.spans
        ]

    assert facts(base) == facts(neighbour)
    assert base.schema == neighbour.schema


def test_rules_cost_no_epsilon_beyond_the_learned_columns_two_way_tables():
    """With and without the rules the ledgers hold the same releases; only the 2-way anchor's entry
    differs, as it measures the pairs of the learned columns (the sum's column is not learned, the
    combination is one column): its table count and the σ its fixed share of ε buys."""
    with_rules = Schema.from_dict(SCHEMA)
    without = Schema.from_dict({**SCHEMA, "rules": []})
    frame = table(300)
    a = [e.to_dict() for e in fit(frame, with_rules).ledger.entries]
    b = [e.to_dict() for e in fit(frame, without).ledger.entries]
    assert [e["name"] for e in a] == [e["name"] for e in b]
    for x, y in zip(a, b):
        if "2-way" not in x["name"]:
            assert x == y
    two_way = [x for x in a if "2-way" in x["name"]]
    assert two_way and two_way[0]["note"].startswith("1 two-way tables")  # (city, state) x y only


def test_the_evaluation_counts_real_rows_breaking_each_rule_and_none_synthetic():
    schema = Schema.from_dict(SCHEMA)
    real = with_breaking_row(table(300))
    synth = fit(real, schema)
    synthetic, test = synth.sample(300, seed=3), with_breaking_row(table(100, seed=5))
    metrics = evaluate(real, synthetic, test, "y", schema=schema, models=["logistic_regression"])
    rules = metrics["rules"]
    assert [r["rule"] for r in rules] == [r.label for r in schema.rules]
    assert [r["real"]["broken"] for r in rules] == [1, 1, 1]
    assert [r["test"]["broken"] for r in rules] == [1, 1, 1]
    assert [r["synthetic"]["broken"] for r in rules] == [0, 0, 0]
    assert "Rules between columns" in render_report(metrics)
    assert evaluate(real, synthetic, test, "y", models=["logistic_regression"])["rules"] is None  # no schema
