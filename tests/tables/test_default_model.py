"""The model a table fit gets when it names none (dpgan.recipes.default_table_recipe): the marginals
model for a target that is a class (a hand schema's, or on the DP schema's path), the GAN for a
numeric target, no target, the non-private schema path, or when the fit asks for what only the GAN does; the choice
read from public facts (the hints) or from the DP schema's release (post-processing), in memory,
streamed and on the command line."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import Schema, TabularSynthesizer
from dpgan.cli import main
from dpgan.recipes import DEFAULT_RECIPE, MARGINALS, default_table_recipe
from dpgan.tables.fit.options import RELEASED, target_kind
from dpgan.tables.fit.plan import FitSettings
from dpgan.tables.fit.quantile_cells import CELLS_EVENT

torch.set_num_threads(1)


def table(rows: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, rows)
    return pd.DataFrame(
        {
            "group": [f"g{g}" for g in group],
            "amount": np.round(rng.gamma(2.0 + group, 10.0), 2),
            "label": np.where(rng.random(rows) < 0.2 + 0.25 * group, "yes", "no"),
        }
    )


SCHEMA = {
    "target": "label",
    "columns": [
        {"name": "group", "kind": "categorical", "categories": ["g0", "g1", "g2"]},
        {"name": "amount", "kind": "continuous", "min": 0, "max": 200},
        {"name": "label", "kind": "categorical", "categories": ["no", "yes"]},
    ],
}


def quiet_fit(synth: TabularSynthesizer, data, **kwargs) -> TabularSynthesizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return synth.fit(data, **kwargs)


@pytest.mark.parametrize(
    "schema, hints, expected",
    [
        (SCHEMA, {}, "class"),
        ({**SCHEMA, "target": "amount"}, {}, "numeric"),
        ({k: v for k, v in SCHEMA.items() if k != "target"}, {}, None),
        (SCHEMA, {"target": "amount"}, "numeric"),  # the hint names the schema's target
        (None, {"target": "label"}, RELEASED),
        (None, {"target": "label", "categorical": ["label"]}, "class"),
        (None, {"target": "label", "categories": {"label": ["no", "yes"]}}, "class"),
        (None, {"target": "amount", "bounds": {"amount": (0, 200)}}, "numeric"),
        (None, {}, None),
    ],
)
def test_the_target_kind_comes_from_public_arguments(schema, hints, expected):
    parsed = None if schema is None else Schema.from_dict(schema)
    assert target_kind(parsed, hints.pop("target", None), **hints) == expected


def test_the_rule_gives_the_gan_whenever_the_gan_is_asked_for_or_the_schema_is_not_private():
    assert default_table_recipe(True, True, ()) is MARGINALS
    assert default_table_recipe(False, True, ()).name == DEFAULT_RECIPE
    assert default_table_recipe(True, False, ()).name == DEFAULT_RECIPE  # schema_from_data_without_dp
    assert default_table_recipe(True, True, ("max_steps",)).name == DEFAULT_RECIPE


def without_target(schema: dict) -> dict:
    return {key: value for key, value in schema.items() if key != "target"}


@pytest.mark.parametrize(
    "init, hints, expected",
    [
        ({}, {"target": "label", "categorical": ["label"]}, "marginals"),
        ({"geo_pairs": ()}, {"target": "label", "categorical": ["label"]}, "marginals"),  # its own setting
        ({"max_steps": 2}, {"target": "label", "categorical": ["label"]}, DEFAULT_RECIPE),
        ({"noise_multiplier": 2.0, "max_steps": 2}, {"target": "label"}, DEFAULT_RECIPE),
        ({"model": "dp-gan", "max_steps": 2}, {"target": "label", "categorical": ["label"]}, DEFAULT_RECIPE),
    ],
)
def test_a_csv_only_fit_that_names_no_model_gets_the_rule(init, hints, expected):
    synth = quiet_fit(TabularSynthesizer(epsilon=1.0, seed=0, **init), table(), **hints)
    assert synth.recipe.name == synth.training["recipe"] == expected
    assert synth.privacy_report()["epsilon"] <= 1.0


@pytest.mark.parametrize(
    "schema, target",
    [(without_target(SCHEMA), None), (SCHEMA, "amount")],
    ids=["no-target", "numeric"],
)
def test_a_hand_schema_without_a_class_target_keeps_the_gan(schema, target):
    """The choice alone (a full default GAN fit is minutes): what fit takes before its first read."""
    synth = TabularSynthesizer(epsilon=1.0, seed=0)
    synth._take_default_model(target_kind(Schema.from_dict(schema), target), None, hand_schema=True)
    assert synth.recipe.name == DEFAULT_RECIPE and not synth.default_on_release
    assert synth.config.max_examples > 0  # the GAN's schedule, not the marginals model's


def test_a_hand_schema_with_a_class_target_gets_the_marginals_model_and_its_cells():
    """The schema's target is a class: the marginals model, its numeric bins cut at DP quantiles
    (one ledger entry for the one cut column) and the non-private schema path keeps the GAN."""
    synth = quiet_fit(TabularSynthesizer(epsilon=1.0, seed=0), table(), schema=Schema.from_dict(SCHEMA))
    assert synth.recipe.name == synth.training["recipe"] == "marginals"
    assert [(e["name"], e["count"]) for e in synth.privacy_report()["events"]].count((CELLS_EVENT, 1)) == 1
    assert synth.privacy_report()["epsilon"] <= 1.0 * (1 + 1e-9)
    non_private = TabularSynthesizer(epsilon=1.0, seed=0, schema_from_data_without_dp=True)
    non_private._take_default_model("class", None, hand_schema=False)
    assert non_private.recipe.name == DEFAULT_RECIPE


def test_a_public_warm_start_gets_the_gan_and_is_refused_beside_the_marginals_model():
    synth = TabularSynthesizer(epsilon=1.0, seed=0)
    synth._take_default_model("class", table(50), hand_schema=False)
    assert synth.recipe.name == DEFAULT_RECIPE
    with pytest.raises(Exception, match="warm-starts a GAN") as caught:
        TabularSynthesizer(model="marginals", epsilon=1.0).fit(table(), SCHEMA, public_data=table(50))
    assert "\n" not in str(caught.value)


def test_csv_only_the_released_schema_chooses_and_the_record_says_which(tmp_path):
    """Only the target named: the DP schema's kind of it decides, after its release (the ledger
    holds the schema's releases, then the model's), and the choice is what the record and the
    model file say."""
    synth = quiet_fit(TabularSynthesizer(epsilon=1.0, seed=0), table(), target="label")
    assert synth.recipe is MARGINALS and synth.training["recipe"] == "marginals"
    assert synth.privacy_report()["epsilon"] <= 1.0
    synth.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "model.json").read_text())["recipe"] == "marginals"
    streamed_path = tmp_path / "t.parquet"
    table().to_parquet(streamed_path)
    streamed = quiet_fit(TabularSynthesizer(epsilon=1.0, seed=0), streamed_path, target="label")
    assert streamed.recipe is MARGINALS and streamed.training.get("streamed")


@pytest.mark.parametrize("released_class", [True, False])
def test_the_settings_resolve_once_on_the_released_schema(released_class):
    synth = TabularSynthesizer(epsilon=1.0, seed=0)
    synth.default_on_release = True
    settings = FitSettings.of(synth)
    schema = Schema.from_dict(SCHEMA if released_class else {**SCHEMA, "target": "amount"})
    resolved = settings.resolved(schema)
    assert not resolved.default_on_release
    assert resolved.recipe.name == ("marginals" if released_class else DEFAULT_RECIPE)
    assert resolved.resolved(Schema.from_dict({**SCHEMA, "target": "amount"})) is resolved  # chosen once
    assert "default_on_release" not in settings.identity()  # a resume checkpoint's identity unchanged


def test_command_line_default_and_the_models_listing(tmp_path, capsys):
    table().to_csv(tmp_path / "t.csv", index=False)
    args = ["fit", str(tmp_path / "t.csv"), "--epsilon", "1", "--seed", "0", "--quiet"]
    assert main([*args, "--target", "label", "--out", str(tmp_path / "m")]) == 0
    assert json.loads((tmp_path / "m" / "model.json").read_text())["recipe"] == "marginals"
    assert "; model marginals (the default)" in capsys.readouterr().out  # the user is told which model ran
    assert main(["models", "--kind", "table"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any("marginals (default when the target is a class)" in line for line in lines)
    assert any(line.split()[1:3] == ["dp-gan", "(default)"] for line in lines)
