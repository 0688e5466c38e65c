"""Evaluation of keys and code hierarchies: keys never scored, codes scored at each level."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.evaluation.evaluate import evaluate
from dpgan.evaluation.tables.code_levels import at_level
from dpgan.evaluation.tables.report import render_report
from dpgan.tables.schema.hierarchy import Hierarchy
from dpgan.tables.schema.table import Schema

SCHEMA = Schema.from_dict(
    {"columns": [{"name": "id", "role": "key"},
                 {"name": "zip", "kind": "categorical", "categories": ["02139", "021*", "0*", "10001", "(other)"],
                  "other_category": "(other)", "hierarchy": {"prefix": [3, 1]}},
                 {"name": "y", "kind": "categorical", "categories": ["a", "b"]}]}
)  # fmt: skip


def frame(rows: int, seed: int, fallback: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    codes = rng.choice(["02139", "02199", "10001"], rows)
    if fallback:  # what a model with a prefix hierarchy writes for the rare code
        codes = np.where(codes == "02199", "021*", codes)
    y = np.where(codes == "10001", "a", "b")
    return pd.DataFrame({"id": np.arange(rows) * 7 + seed, "zip": codes, "y": y})


def test_a_fallen_back_code_matches_its_real_codes_at_the_prefix_level():
    prefix = Hierarchy(prefix=(3, 1))
    assert [at_level(v, prefix, 0) for v in ("02139", "021*", "0*")] == ["021*", "021*", "0*"]
    assert [at_level(v, prefix, 1) for v in ("02139", "021*", "0*")] == ["0*", "0*", "0*"]
    parents = Hierarchy.from_dict({"parents": [{"02139": "Cambridge"}, {"Cambridge": "MA"}]})
    assert [at_level(v, parents, 1) for v in ("02139", "Cambridge", "MA", "10001")] == ["MA", "MA", "MA", "10001"]


def test_keys_are_left_out_and_codes_scored_by_level(tmp_path):
    """Before: the schema's key column made evaluate refuse the tables ('columns not in the schema')."""
    real, synthetic, test = frame(400, 0, False), frame(400, 1, True), frame(200, 2, False)
    metrics = evaluate(real, synthetic, test, "y", schema=SCHEMA, models=["logistic_regression"])
    assert "id" not in metrics["columns"] and "id" not in metrics["fidelity"]["per_column"]
    zip_entry = metrics["fidelity"]["per_column"]["zip"]
    codes, prefix3, prefix1 = zip_entry["jsd"], *zip_entry["jsd_by_level"]
    assert codes > 0.1 and prefix3 < 0.01 and prefix1 < 0.01  # the fallback is exact at its level
    page = render_report(metrics)
    assert "JSD cut to its hierarchy" in page
