"""Utility and fidelity metrics on cases whose answers are known, and the metrics.json structure."""

from __future__ import annotations

import json
import sys
import types

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon

from dpgan.errors import InputError
from dpgan.evaluation import evaluate
from dpgan.evaluation.tables.fidelity import (
    association_matrix,
    column_kinds,
    correlation_ratio,
    fidelity,
    js_divergence,
    pearson,
    scaled_wasserstein,
    theils_u,
)
from dpgan.evaluation.tables.ml_efficacy import FeatureEncoder, ml_efficacy, unlisted_as_other

FAST = ["decision_tree", "logistic_regression"]  # the slower models are covered once, in the key test


@pytest.fixture(scope="module")
def slices(adult) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    train, test = adult
    real = train.sample(400, random_state=1)
    other = train.drop(real.index).sample(400, random_state=2)  # disjoint from `real`
    return real.reset_index(drop=True), other.reset_index(drop=True), test.sample(400, random_state=3)


def independent_frame(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "a": rng.choice(["x", "y", "z"], n),
            "b": rng.choice(["p", "q", "r", "s"], n),
            "u": rng.normal(size=n),
            "v": rng.uniform(size=n),
        }
    )


# ---------------------------------------------------------------- fidelity: known answers


def test_identical_tables_have_zero_divergence_and_association_diff(slices):
    real = slices[0]
    result = fidelity(real, real.copy(), column_kinds(real))
    assert result["jsd_mean"] == 0.0
    assert result["wd_mean"] == 0.0
    assert result["association_diff"] == 0.0
    assert all((e.get("jsd") or 0.0) == 0.0 and (e.get("wd") or 0.0) == 0.0 for e in result["per_column"].values())


def test_different_tables_have_positive_divergence(slices):
    real, other, _ = slices
    result = fidelity(real, other, column_kinds(real))
    assert result["jsd_mean"] > 0.0 and result["wd_mean"] > 0.0 and result["association_diff"] > 0.0


def test_independent_columns_have_near_zero_association():
    frame = independent_frame(20_000, np.random.default_rng(0))
    assert theils_u(frame["a"], frame["b"]) < 0.005
    assert theils_u(frame["b"], frame["a"]) < 0.005
    assert correlation_ratio(frame["a"], frame["u"]) < 0.03
    assert abs(pearson(frame["u"], frame["v"])) < 0.03
    matrix = association_matrix(frame, column_kinds(frame))
    off_diagonal = matrix[~np.eye(4, dtype=bool)]
    assert np.abs(off_diagonal).max() < 0.03
    assert np.allclose(np.diag(matrix), 1.0)


def test_dependent_columns_have_full_association():
    x = pd.Series(np.repeat(["a", "b", "c", "d"], 50))
    coarse = x.map({"a": "lo", "b": "lo", "c": "hi", "d": "hi"})
    # x determines coarse (U = 1); coarse leaves one of two equally likely x values open (U = 1/2)
    assert theils_u(coarse, x) == pytest.approx(1.0)
    assert theils_u(x, coarse) == pytest.approx(0.5)
    values = x.map({"a": 0.0, "b": 1.0, "c": 2.0, "d": 3.0})
    assert correlation_ratio(x, values) == pytest.approx(1.0)
    assert pearson(values, 2 * values + 1) == pytest.approx(1.0)
    assert pearson(values, -values) == pytest.approx(-1.0)


def test_js_divergence_known_values_base_2():
    assert js_divergence(pd.Series(["a"] * 10), pd.Series(["b"] * 10)) == pytest.approx(1.0)
    half, one = pd.Series(["a", "b"] * 5), pd.Series(["a"] * 10)
    assert js_divergence(half, one) == pytest.approx(jensenshannon([0.5, 0.5], [1.0, 0.0], base=2) ** 2)
    assert js_divergence(half, one) == pytest.approx(0.311278, abs=1e-6)


def test_categories_match_across_dtypes_after_a_csv_round_trip():
    assert js_divergence(pd.Series([1, 2, 2]), pd.Series(["1", "2", "2"])) == 0.0


def test_shifted_column_has_wasserstein_equal_to_shift_over_range():
    real = pd.Series(np.linspace(0.0, 10.0, 101))
    assert scaled_wasserstein(real, real + 2.0) == pytest.approx(0.2)
    assert scaled_wasserstein(real * 1000, real * 1000 + 500.0) == pytest.approx(0.05)


# ---------------------------------------------------------------- utility


def test_features_are_scaled_by_the_real_range_and_unseen_categories_ignored():
    real = pd.DataFrame({"n": [10.0, 20.0, 30.0], "c": ["a", "b", "a"]})
    synthetic = pd.DataFrame({"n": [40.0], "c": ["z"]})
    encoder = FeatureEncoder({"n": "continuous", "c": "categorical"}, ["n", "c"]).fit(real, synthetic)
    test = pd.DataFrame({"n": [20.0, 40.0], "c": ["never seen", "z"]})
    # columns: n scaled by the REAL range [10, 30]; one-hot over a, b, z (union of the training sets)
    np.testing.assert_allclose(encoder.transform(test), [[0.5, 0, 0, 0], [1.5, 0, 0, 1]])


def test_identical_training_sets_score_the_same(slices):
    real, _, test = slices
    result = ml_efficacy(real, real.copy(), test, "income", column_kinds(real), models=FAST)
    assert result["positive_label"] == ">50K"  # the minority class of the real training set
    for per_metric in result["scores"].values():
        for entry in per_metric.values():
            assert entry["diff"] == 0.0 and entry["tstr"] is not None


def test_labels_shuffled_away_from_features_lose_utility(slices):
    real, _, test = slices
    broken = real.copy()
    broken["income"] = np.random.default_rng(0).permutation(broken["income"].to_numpy())
    result = ml_efficacy(real, broken, test, "income", column_kinds(real), models=["logistic_regression"])
    auc = result["scores"]["logistic_regression"]["roc_auc"]
    assert auc["trtr"] > 0.8
    assert abs(auc["tstr"] - 0.5) < 0.12
    assert auc["diff"] == pytest.approx(auc["trtr"] - auc["tstr"]) and auc["diff"] > 0.2


def test_single_class_synthetic_is_scored_as_the_constant_predictor(slices):
    """Left out, a synthetic set that lost a class would drop from a bench's mean: it scores as
    "always that class" instead (AUC 0.5, accuracy the class's share of the test rows)."""
    real, _, test = slices
    single = real[real["income"] == "<=50K"]
    metrics = evaluate(real, single, test, "income", models=FAST)
    share = float((test["income"] == "<=50K").mean())
    for scores in metrics["utility"].values():
        assert scores["roc_auc"]["tstr"] == pytest.approx(0.5) and scores["accuracy"]["tstr"] == pytest.approx(share)
        assert scores["roc_auc"]["trtr"] > 0.6 and scores["roc_auc"]["diff"] > 0.1
    assert any("single class" in note for note in metrics["utility_summary"]["notes"])
    assert metrics["balanced_rf_accuracy"]["synthetic"] is None
    assert metrics["balanced_rf_accuracy"]["real"] > 0.5


def test_multiclass_target_uses_macro_scores(slices):
    real, other, test = slices
    metrics = evaluate(real, other, test, "race", models=["decision_tree"])
    summary = metrics["utility_summary"]
    assert summary["positive_label"] is None and len(summary["classes"]) > 2
    scores = metrics["utility"]["decision_tree"]
    metrics = ("accuracy", "balanced_accuracy", "f1", "roc_auc", "average_precision")
    assert all(0.0 <= scores[m]["tstr"] <= 1.0 for m in metrics)


def test_regression_target_reports_r2_and_mae(slices):
    real, other, test = slices
    metrics = evaluate(real, other, test, "hours-per-week", models=["linear_regression", "decision_tree"])
    assert metrics["utility_summary"]["task"] == "regression"
    linear = metrics["utility"]["linear_regression"]
    assert set(linear) == {"r2", "mae"}
    assert 0.0 < linear["r2"]["trtr"] < 1.0
    assert 3.0 < linear["mae"]["trtr"] < 15.0  # hours per week, in the column's own unit
    assert linear["mae"]["diff"] == pytest.approx(linear["mae"]["trtr"] - linear["mae"]["tstr"])
    assert metrics["balanced_rf_accuracy"]["real"] is None  # classification only


# ---------------------------------------------------------------- evaluate(): structure and errors


def test_metrics_have_the_documented_keys_and_are_strict_json(slices):
    real, other, test = slices
    metrics = evaluate(real, other, test, "income")
    assert set(metrics) >= {"utility", "balanced_rf_accuracy", "fidelity", "privacy", "attacks"}
    assert set(metrics["utility"]) == {"decision_tree", "random_forest", "logistic_regression", "mlp"}
    for per_metric in metrics["utility"].values():
        assert set(per_metric) == {"accuracy", "balanced_accuracy", "f1", "roc_auc", "average_precision"}
        for entry in per_metric.values():
            assert set(entry) == {"tstr", "trtr", "diff"}
            assert 0.0 <= entry["tstr"] <= 1.0 and 0.0 <= entry["trtr"] <= 1.0
    assert 0.5 < metrics["balanced_rf_accuracy"]["real"] < 1.0
    assert 0.5 < metrics["balanced_rf_accuracy"]["synthetic"] < 1.0
    fid = metrics["fidelity"]
    assert {"jsd_mean", "wd_mean", "association_diff", "per_column", "association_real"} <= set(fid)
    assert set(fid["per_column"]) == set(real.columns)
    assert len(fid["association_synthetic"]["matrix"]) == real.shape[1]
    assert metrics["privacy"] is None and metrics["attacks"] is None
    json.dumps(metrics, allow_nan=False)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r, s, t: (r.iloc[:0], s, t), "real table is empty"),
        (lambda r, s, t: (r, s.drop(columns=["age"]), t), "synthetic table's columns do not match"),
        (lambda r, s, t: (r, s, t.assign(extra=1)), "test table's columns do not match"),
        (lambda r, s, t: (r, s.assign(age="old"), t), "holds cells that are not numbers"),
    ],
)
def test_bad_tables_raise_one_clear_input_error(slices, change, message):
    real, synthetic, test = change(*slices)
    with pytest.raises(InputError, match=message):
        evaluate(real, synthetic, test, "income")


def test_unknown_target_is_an_input_error(slices):
    with pytest.raises(InputError, match="target 'salary' is not a column"):
        evaluate(*slices, "salary")


def test_attacks_missing_module_is_an_input_error(slices, monkeypatch):
    monkeypatch.setitem(sys.modules, "dpgan.evaluation.attacks", None)  # makes the import fail
    with pytest.raises(InputError, match="attacks are not available"):
        evaluate(*slices, "income", models=["decision_tree"], attacks=True)


def test_attack_results_are_passed_through(slices, monkeypatch):
    seen = {}

    def run_attacks(real_train, holdout, synthetic, *, target, schema, model_dir, progress):
        seen.update(rows=(len(real_train), len(holdout), len(synthetic)), target=target, model_dir=model_dir)
        return {"membership": {"auc": np.float64(0.5), "roc": {"fpr": [0.0, 1.0], "tpr": [0.0, 1.0]}}}

    monkeypatch.setitem(sys.modules, "dpgan.evaluation.attacks", types.SimpleNamespace(run_attacks=run_attacks))
    metrics = evaluate(*slices, "income", models=["decision_tree"], attacks=True)
    assert seen == {"rows": (400, 400, 400), "target": "income", "model_dir": None}
    assert metrics["attacks"]["membership"]["auc"] == 0.5
    assert type(metrics["attacks"]["membership"]["auc"]) is float  # numpy unwrapped for JSON


def test_balanced_rf_scores_every_training_set_on_the_same_balanced_test_rows(adult, monkeypatch):
    """The real-vs-synthetic gap is a paired difference: the balanced test rows must not depend on
    the training table or the seed (they once did, through a shared random stream)."""
    from dpgan.evaluation.tables import utility

    seen = []
    monkeypatch.setattr(utility, "_rf_accuracy", lambda train, test, *a, **k: seen.append((train, test)) or 0.5)
    train, test = adult[0].iloc[:3000], adult[1].iloc[:2000]
    skewed = pd.concat([train, train[train["income"] == ">50K"]])  # other class sizes, other draws
    for frame, seed in [(train, 0), (skewed, 0), (train, 1), (skewed, 2)]:
        utility.balanced_rf_accuracy(frame, test, "income", seed=seed)
    tests = [t for _, t in seen]
    assert all(t.index.equals(tests[0].index) for t in tests)
    counts = tests[0]["income"].value_counts()
    assert counts.nunique() == 1 and counts.iloc[0] == test["income"].value_counts().min()
    assert not seen[0][0].index.equals(seen[2][0].index)  # the seed still varies the training subset


def test_a_features_unreleased_values_are_read_as_other_by_the_synthetic_models():
    """A DP schema that released only "a" of a feature calls the rest "(other)": the TSTR models
    read the test's "b" and "c" as "(other)" (as conform maps real rows into that schema), so they
    score the rows they were trained for; the TRTR models and the target are left as they are."""
    rng = np.random.default_rng(0)
    feature = rng.choice(["a", "b", "c"], 900, p=[0.4, 0.3, 0.3])
    label = np.where(feature == "a", "good", "bad")
    real = pd.DataFrame({"feature": feature, "noise": rng.normal(size=900), "label": label})
    synthetic = real.assign(feature=np.where(feature == "a", "a", "(other)"))
    kinds = {"feature": "categorical", "noise": "continuous", "label": "categorical"}
    train, test = real.iloc[:600], real.iloc[600:]
    result = ml_efficacy(train, synthetic.iloc[:600], test, "label", kinds, models=["logistic_regression"])
    scores = result["scores"]["logistic_regression"]
    assert scores["accuracy"]["tstr"] > 0.99 and scores["accuracy"]["trtr"] > 0.99
    mapped = unlisted_as_other(test, synthetic, ["feature", "label"], kinds)
    assert set(mapped["feature"]) == {"a", "(other)"} and mapped["label"].equals(test["label"])
    assert unlisted_as_other(test, real, ["feature"], kinds).equals(test)  # no "(other)" in the synthetic set
