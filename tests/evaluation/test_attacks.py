"""Privacy attacks find leaks where there are leaks and none where there are none.

Each attack is checked on two stand-in "synthesizers" with known answers: one that memorises
(returns its training rows) and one that cannot leak (an independent sample, or a fixed
distribution that ignores its data). The retraining attacks also run once on a real tiny dpgan
model (ε = 1e6, effectively non-private) to check the wiring to `TabularSynthesizer`.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import InputError, TabularSynthesizer
from dpgan.evaluation.attacks import (
    AttackConfig,
    AttackEncoder,
    attribute_attack,
    craft_outlier,
    dcr_attack,
    logan_attack,
    logan_from_scores,
    run_attacks,
    shadow_membership_attack,
)
from dpgan.evaluation.attacks.scoring import top_n_precision
from dpgan.evaluation.tables.attacks.dcr import nearest_distances

logging.getLogger("absl").setLevel(logging.ERROR)  # dp-accounting's RDP convergence chatter at huge ε


def toy(n: int, rng: np.random.Generator, k: int = 4) -> pd.DataFrame:
    """k standard normal columns, a skewed categorical, and a binary target that depends on x0."""
    X = rng.normal(size=(n, k))
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(k)])
    frame["colour"] = rng.choice(["red", "green", "blue", "grey"], size=n, p=[0.4, 0.3, 0.2, 0.1])
    frame["label"] = np.where(X[:, 0] + rng.normal(size=n) > 0, "yes", "no")
    return frame


class Memoriser:
    """Returns its training rows (all of them when asked for as many rows as it was given)."""

    def fit(self, data: pd.DataFrame, schema=None) -> "Memoriser":
        self.data = data.reset_index(drop=True)
        return self

    def sample(self, n: int, *, seed: int | None = None) -> pd.DataFrame:
        order = np.random.default_rng(seed).permutation(len(self.data))
        return self.data.iloc[np.resize(order, n)].reset_index(drop=True)


class FixedDistribution:
    """Ignores its training data: samples the toy distribution. Nothing about members can leak."""

    def fit(self, data: pd.DataFrame, schema=None) -> "FixedDistribution":
        return self

    def sample(self, n: int, *, seed: int | None = None) -> pd.DataFrame:
        return toy(n, np.random.default_rng(seed))


def memoriser(*, rows: int, seed: int) -> Memoriser:
    return Memoriser()


def fixed_distribution(*, rows: int, seed: int) -> FixedDistribution:
    return FixedDistribution()


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    return {"train": toy(400, rng), "holdout": toy(400, rng), "independent": toy(400, rng)}


# ---------------------------------------------------------------- DCR
def test_dcr_memorised_rows_are_closer_to_train_and_give_membership_away(tables):
    train, holdout = tables["train"], tables["holdout"]
    encoder = AttackEncoder.build([train, holdout])
    result = dcr_attack(train, holdout, train, encoder=encoder, config=AttackConfig(), rng=np.random.default_rng(0))
    assert result["share_closer_to_train"] > 0.98
    assert result["exact_copies_of_train"] == 1.0
    assert result["dcr_train"]["median"] == 0.0 < result["dcr_holdout"]["median"]
    assert result["auc"] > 0.95 and result["top_n_precision"] > 0.95


def test_dcr_independent_sample_is_no_closer_to_train_than_to_holdout(tables):
    train, holdout = tables["train"], tables["holdout"]
    encoder = AttackEncoder.build([train, holdout])
    result = dcr_attack(
        train, holdout, tables["independent"], encoder=encoder, config=AttackConfig(), rng=np.random.default_rng(0)
    )
    assert abs(result["share_closer_to_train"] - 0.5) < 0.08
    assert abs(result["auc"] - 0.5) < 0.08
    assert result["exact_copies_of_train"] == 0.0


def test_dcr_against_a_smaller_holdout_compares_equal_sizes_and_says_what_a_copy_would_score(tables):
    train, holdout = tables["train"], tables["holdout"].iloc[:100]
    encoder = AttackEncoder.build([train, holdout])
    result = dcr_attack(train, holdout, train, encoder=encoder, config=AttackConfig(), rng=np.random.default_rng(0))
    assert result["rows"]["train"] == result["rows"]["holdout"] == result["members"] == result["non_members"] == 100
    assert result["train_coverage"] == 0.25 and result["share_if_copied"] == 0.625
    assert abs(result["share_closer_to_train"] - 0.625) < 0.08  # only a quarter of the copies can be compared
    assert result["exact_copies_of_train"] == 1.0  # copies are searched in the whole table
    assert result["auc"] > 0.95  # the membership score searches all synthetic rows: not diluted


def test_nearest_distance_of_a_copied_row_is_exactly_zero():
    rng = np.random.default_rng(1)
    reference = rng.random((1000, 30)) * 1e3
    queries = np.vstack([reference[17], reference[999] + 1.0])
    distances = nearest_distances(queries, reference)
    assert distances[0] == 0.0
    assert distances[1] == pytest.approx(np.sqrt(30.0), rel=1e-6)


# ------------------------------------------------------ attribute inference
def test_attribute_inference_finds_a_memorised_table_and_not_an_independent_one():
    # 60 rows, 45 features + a categorical: a least-squares fit on the members fits most of their noise,
    # so a model fitted on a copy of them infers their sensitive value far better than a non-member's.
    # (Thresholds hold with margin on seeds 0-19; seed 3 is fixed here.)
    rng = np.random.default_rng(3)
    train, holdout, independent = toy(60, rng, k=45), toy(60, rng, k=45), toy(60, rng, k=45)
    encoder = AttackEncoder.build([train, holdout])
    config = AttackConfig(sensitive="x1")

    def attack(synthetic: pd.DataFrame) -> dict:
        return attribute_attack(
            train, holdout, synthetic, encoder=encoder, sensitive="x1", config=config, rng=np.random.default_rng(0)
        )

    copied, fresh = attack(train), attack(independent)
    assert copied["real"]["advantage"] > 0.02  # the raw table leaks members: the baseline is meaningful
    assert copied["synthetic"]["advantage"] == pytest.approx(copied["real"]["advantage"])
    assert copied["privacy_gain"] == pytest.approx(0.0, abs=1e-9)
    assert copied["synthetic"]["members"]["mae"] < 0.5 * copied["synthetic"]["non_members"]["mae"]
    assert copied["auc"] > 0.75
    assert abs(fresh["synthetic"]["advantage"]) < 0.05
    assert fresh["privacy_gain"] > 0.02
    assert fresh["auc"] < 0.7


def test_attribute_inference_of_a_categorical_column_reports_accuracy(tables):
    train, holdout = tables["train"], tables["holdout"]
    encoder = AttackEncoder.build([train, holdout])
    result = attribute_attack(
        train, holdout, train, encoder=encoder, sensitive="label", config=AttackConfig(), rng=np.random.default_rng(0)
    )
    assert result["kind"] == "categorical"
    # label depends on x0: a logistic model infers it well above the 50% base rate, members or not
    assert result["synthetic"]["members"]["accuracy"] > 0.65
    assert result["synthetic"]["non_members"]["accuracy"] > 0.65
    assert 0.0 <= result["auc"] <= 1.0


# ------------------------------------------------ shadow-model membership
@pytest.fixture(scope="module")
def huge_outlier() -> pd.DataFrame:
    return pd.DataFrame({**{f"x{i}": [1000.0] for i in range(4)}, "colour": ["grey"], "label": ["yes"]})


SHADOW = AttackConfig(n_shadow=6, n_test_runs=10, n_syn_sets=5, shadow_train_size=50, attack_trees=50)


def test_shadow_attack_detects_a_huge_outlier_in_a_memorising_synthesizer(tables, huge_outlier):
    encoder = AttackEncoder.build([tables["holdout"], tables["train"]])
    result = shadow_membership_attack(
        tables["holdout"], tables["train"], [("huge outlier", huge_outlier)], factory=memoriser, encoder=encoder,
        config=SHADOW, rng=np.random.default_rng(0),
    )  # fmt: skip
    assert result["accuracy"] > 0.95
    assert result["advantage"] > 0.9 and result["auc"] > 0.95
    assert result["privacy_gain"] < 0.08  # (P_real − P_fake)/2 with P_fake near 1
    assert result["settings"]["fits"] == 2 * (SHADOW.n_shadow + SHADOW.n_test_runs)


def test_shadow_attack_is_at_chance_when_the_synthesizer_ignores_its_data(tables, huge_outlier):
    encoder = AttackEncoder.build([tables["holdout"], tables["train"]])
    result = shadow_membership_attack(
        tables["holdout"], tables["train"], [("huge outlier", huge_outlier)], factory=fixed_distribution,
        encoder=encoder, config=SHADOW, rng=np.random.default_rng(0),
    )  # fmt: skip
    assert 0.3 < result["accuracy"] < 0.7
    assert abs(result["p_success"] - 0.5) < 0.1
    assert 0.2 < result["privacy_gain"] < 0.3


def test_shadow_sets_with_and_without_the_target_have_equal_size(tables, huge_outlier):
    seen: list[pd.DataFrame] = []

    class Recorder(Memoriser):
        def fit(self, data: pd.DataFrame, schema=None) -> "Recorder":
            seen.append(data)
            return super().fit(data)

    config = AttackConfig(n_shadow=2, n_test_runs=1, n_syn_sets=2, shadow_train_size=30, attack_trees=5)
    encoder = AttackEncoder.build([tables["holdout"], tables["train"]])
    shadow_membership_attack(
        tables["holdout"], tables["train"], [("t", huge_outlier)], factory=lambda *, rows, seed: Recorder(),
        encoder=encoder, config=config, rng=np.random.default_rng(0),
    )  # fmt: skip
    assert len(seen) == 6 and {len(s) for s in seen} == {30}
    with_target = [bool((s["x0"] == 1000.0).any()) for s in seen]
    assert with_target == [False, True] * 3


def test_crafted_outlier_takes_column_maxima_and_rarest_categories(tables):
    reference = tables["holdout"]
    crafted = craft_outlier(reference, AttackEncoder.build([reference]))
    assert len(crafted) == 1 and list(crafted.columns) == list(reference.columns)
    assert crafted.loc[0, "x2"] == reference["x2"].max()
    assert crafted.loc[0, "colour"] == reference["colour"].value_counts().idxmin()


# ------------------------------------------------------------------ LOGAN
def test_logan_with_an_injected_memorising_critic_ranks_members_first(tables):
    members, non_members = tables["train"].iloc[:100], tables["holdout"].iloc[:100]
    encoder = AttackEncoder.build([members, non_members])
    memory = encoder.transform(members)

    def critic(frame: pd.DataFrame) -> np.ndarray:  # high score for rows it has seen
        return -nearest_distances(encoder.transform(frame), memory)

    result = logan_from_scores(members, non_members, critic)
    assert result["top_n_precision"] == 1.0 and result["auc"] == 1.0
    blind = logan_from_scores(members, non_members, lambda frame: np.zeros(len(frame)))
    assert blind["top_n_precision"] == 0.5 and blind["auc"] == 0.5


def test_top_n_precision_shares_ties_instead_of_trusting_the_sort_order():
    labels = np.array([1, 1, 0, 0])
    assert top_n_precision(labels, np.array([2.0, 1.0, 1.0, 0.0])) == 0.75
    assert top_n_precision(labels, np.array([0.0, 0.0, 0.0, 0.0])) == 0.5


@pytest.fixture(scope="module")
def adult_slices(adult) -> dict[str, pd.DataFrame]:
    train, test = adult
    return {
        "train": train.sample(160, random_state=1).reset_index(drop=True),
        "holdout": test.sample(160, random_state=2).reset_index(drop=True),
    }


def tiny_nonprivate_synthesizer(*, rows: int, seed: int) -> TabularSynthesizer:
    """ε = 1e6: noise negligible, so the critic is free to memorise."""
    return TabularSynthesizer(
        epsilon=1e6, delta=1e-5, epochs=3, batch_size=32, accountant="rdp", seed=seed,
        generator_hidden=(32, 32), critic_hidden=(64, 64),
    )  # fmt: skip


def test_logan_on_a_tiny_nonprivate_dpgan_fit_returns_a_valid_roc(adult_slices, adult_schema):
    torch.set_num_threads(1)
    config = AttackConfig(logan_train_size=120)
    result = logan_attack(
        adult_slices["train"], adult_slices["holdout"], factory=tiny_nonprivate_synthesizer, config=config,
        schema=adult_schema, rng=np.random.default_rng(0),
    )  # fmt: skip
    assert result["skipped"] is False
    assert result["members"] == result["non_members"] == 120
    assert 0.0 <= result["auc"] <= 1.0 and 0.0 <= result["top_n_precision"] <= 1.0
    fpr, tpr = np.array(result["roc"]["fpr"]), np.array(result["roc"]["tpr"])
    assert fpr[0] == tpr[0] == 0.0 and fpr[-1] == tpr[-1] == 1.0
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)


# -------------------------------------------------------------- run_attacks
def test_without_model_dir_the_retraining_attacks_are_skipped_with_the_reason(tables):
    stages: list[tuple[str, int, int]] = []
    result = run_attacks(
        tables["train"], tables["holdout"], tables["independent"], target="label",
        progress=lambda stage, done, total: stages.append((stage, done, total)),
    )  # fmt: skip
    assert set(result) == {"dcr", "attribute", "membership", "logan"}
    for name in ("membership", "logan"):
        assert result[name]["skipped"] is True
        assert "model_dir" in result[name]["reason"]
    assert result["dcr"]["skipped"] is False and result["attribute"]["skipped"] is False
    assert result["attribute"]["sensitive"] == "x0"  # the first numeric column that is not the target
    for key in ("dcr", "attribute"):
        assert len(result[key]["roc"]["fpr"]) == len(result[key]["roc"]["tpr"]) > 1
    json.dumps(result, allow_nan=False)
    finished = {stage for stage, done, total in stages if done == total}
    assert {"attacks: distance to closest record", "attacks: attribute inference"} <= finished


def test_run_attacks_with_an_injected_factory_runs_the_shadow_attack(tables):
    config = AttackConfig(
        run=("membership",), n_targets=2, n_shadow=3, n_test_runs=2, n_syn_sets=3, shadow_train_size=40,
        attack_trees=20,
    )  # fmt: skip
    result = run_attacks(
        tables["train"], tables["holdout"], tables["train"], target="label", config=config,
        synthesizer_factory=memoriser, progress=lambda *_: None,
    )  # fmt: skip
    assert result["dcr"] == {"skipped": True, "reason": "not requested (AttackConfig.run)"}
    membership = result["membership"]
    assert [t["target"] for t in membership["per_target"]][0] == "crafted outlier"
    assert membership["per_target"][1]["target"].startswith("training record (row ")
    assert membership["settings"]["fits"] == 2 * 2 * (3 + 2)
    assert 0.0 <= membership["accuracy"] <= 1.0
    json.dumps(result, allow_nan=False)


def test_run_attacks_with_a_saved_model_retrains_its_recipe(adult_slices, adult_schema, tmp_path):
    torch.set_num_threads(1)
    model = tiny_nonprivate_synthesizer(rows=len(adult_slices["train"]), seed=0)
    model.fit(adult_slices["train"], schema=adult_schema)
    path = model.save(tmp_path / "model")
    synthetic = model.sample(160, seed=1)
    config = AttackConfig(
        n_targets=1, n_shadow=2, n_test_runs=1, n_syn_sets=2, shadow_train_size=60, attack_trees=10,
        logan_train_size=60, epochs=1, dcr_max_rows=100,
    )  # fmt: skip
    result = run_attacks(
        adult_slices["train"], adult_slices["holdout"], synthetic, target="income", model_dir=path, config=config,
        progress=lambda *_: None,
    )  # fmt: skip
    json.dumps(result, allow_nan=False)
    assert all(result[name]["skipped"] is False for name in ("dcr", "attribute", "membership", "logan"))
    recipe = result["membership"]["settings"]["synthesizer"]
    assert recipe["epsilon"] == 1e6 and recipe["accountant"] == "rdp" and recipe["epochs"] == 1.0
    assert recipe["sample_rate"] == pytest.approx(model.training["sample_rate"])
    assert result["attribute"]["sensitive"] == "age"
    for name in ("membership", "logan"):
        assert 0.0 <= result[name]["auc"] <= 1.0


def test_attack_config_rejects_bad_knobs():
    with pytest.raises(InputError, match="n_shadow"):
        AttackConfig(n_shadow=0)
    with pytest.raises(InputError, match="unknown attacks"):
        AttackConfig(run=("dcr", "telepathy"))
    with pytest.raises(InputError, match="accountant"):
        AttackConfig(accountant="moments")
