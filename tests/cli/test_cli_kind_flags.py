"""A flag the chosen kind (or model) would not read is one line, never a silent no-op; and a fit that
names no image recipe is the `gaussian` recipe, which trains no GAN and has none of the loop's settings."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from dpgan import kinds
from dpgan.cli import main
from dpgan.cli.kind_flags import EVERY_KIND, flag_readers
from dpgan.cli.parser import build_parser
from dpgan.cli.settings_flags import settings_classes
from dpgan.errors import InputError
from dpgan.images.settings import ImageSettings
from dpgan.recipes.images import DEFAULT_IMAGE_RECIPE, GAUSSIAN_SETTINGS, IMAGE_MODELS
from dpgan.setting import flag_fields
from dpgan.synthesizers import ImageSynthesizer, SequenceSynthesizer

KINDS = ("table", "sequence", "image")
FLAG_KINDS = flag_readers()  # dest → the kinds whose registration lists it
VALUES = {  # a well-formed value for each flag that takes one (the refusal comes before any is read)
    "schema": "s.json", "bounds": "a=0:1", "categories": "a=x,y", "target": "t", "categorical": "a",
    "memory_budget_mb": "64", "public_data": "p.csv", "public_warm_start_steps": "5", "checkpoint": "ck",
    "checkpoint_every": "5", "condition_column": "c", "geo": "a,b", "recipe": "dcgan", "id_column": "sid",
    "value_columns": "v", "time_column": "t", "length": "5", "label_column": "l", "entity_column": "e",
    "max_series_per_entity": "2", "classes": "a,b", "image_shape": "1x8x8", "pixel_range": "0:255",
    "events": "e.csv", "key": "id", "hierarchy": "zip=prefix:3", "max_events": "8", "time_min": "0", "time_max": "9",
    "time_format": "integer",
}  # fmt: skip


def _fit_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["fit"]


def test_every_fit_flag_is_said_to_be_every_kinds_a_kinds_or_a_settings_field():
    settings = {f.name for kind in kinds.kinds() for cls in settings_classes(kind) for f in flag_fields(cls)}
    dests = {a.dest for a in _fit_parser()._actions if a.dest != "help"}
    assert dests - settings - EVERY_KIND - set(FLAG_KINDS) == set()
    assert set(FLAG_KINDS) <= dests and not set(FLAG_KINDS) & EVERY_KIND


def test_each_kind_reads_the_flags_it_did_before_the_registry():
    """The registrations list what the hand table FLAG_KINDS (27 rows) listed, kind by kind."""
    table = {"schema", "bounds", "categories", "target", "categorical", "strict", "stream", "memory_budget_mb",
             "schema_from_data_without_dp", "keep_identifier_columns", "key", "hierarchy", "public_data",
             "public_warm_start_steps",
             "checkpoint", "checkpoint_every", "condition_column", "geo", "recipe"}  # fmt: skip
    sequence = {"schema", "bounds", "categories", "id_column", "value_columns", "time_column", "length",
                "label_column", "entity_column", "max_series_per_entity"}  # fmt: skip
    image = {"recipe", "classes", "unconditional", "image_shape", "pixel_range"}
    expected = {"table": table, "sequence": sequence, "image": image}
    assert {name: set(kinds.kind(name).flags) for name in KINDS} == expected
    entity = {"schema", "bounds", "categories", "time_column", "events", "key", "max_events", "time_min", "time_max",
              "time_format"}  # fmt: skip
    assert set(kinds.kind("entity").flags) == entity  # the entity kind's (issue 52): five of its own, --key shared
    assert len(FLAG_KINDS) == 35  # 28, issue 51's --key (tables and entities) and --hierarchy, the entity's five


CASES = [(dest, kind) for dest, readers in FLAG_KINDS.items() for kind in KINDS if kind not in readers]


@pytest.mark.parametrize("dest, kind", CASES, ids=[f"{d}-{k}" for d, k in CASES])
def test_a_flag_the_kind_does_not_read_is_one_line_before_any_read(tmp_path, capsys, dest, kind):
    flag = "--" + dest.replace("_", "-")
    given = [flag] if _fit_parser().get_default(dest) is False else [flag, VALUES[dest]]
    args = ["fit", str(tmp_path / "missing"), "--kind", kind, "--epsilon", "1", "--out", str(tmp_path / "m")]
    assert main([*args, *given]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{flag} applies to --kind" in err and f"not to --kind {kind}" in err
    assert not (tmp_path / "m").exists()


def test_the_default_image_recipe_trains_no_gan_and_refuses_the_loops_settings():
    assert ImageSynthesizer(epsilon=1.0).recipe.name == DEFAULT_IMAGE_RECIPE == "gaussian"
    with pytest.raises(InputError, match=r"the gaussian model has no settings 'epochs', 'max_steps' \(its settings: "):
        ImageSynthesizer(epsilon=1.0, max_steps=5, epochs=2.0)
    with pytest.raises(InputError, match=r"no setting 'n_critic' .*'n_critic' is a setting of dcgan, dp-cgan"):
        ImageSynthesizer(epsilon=1.0, n_critic=3)
    with pytest.raises(InputError, match="unknown setting"):  # an unknown name keeps its own line
        ImageSynthesizer(epsilon=1.0, max_steps=5, colour="blue")
    assert ImageSynthesizer(epsilon=1.0, recipe="dcgan", max_steps=5).config.max_steps == 5


# the settings only a GAN recipe reads (the special list images/settings.py kept before each model
# declared its own settings: dpgan.model_catalog)
GAN_ONLY = (
    "width", "generator_width", "generator_upsampling", "critic_norm", "critic_projection",
    "mlp_generator_hidden", "mlp_critic_hidden", "activation_bound", "mode_seeking", "label_guide",
    "label_guide_fraction", "label_guide_weight", "label_guide_epochs", "label_guide_hidden",
    "gaussian_warm_start", "gaussian_warm_start_fraction", "gaussian_warm_start_steps", "gaussian_anchor",
)  # fmt: skip


def test_the_gaussian_recipe_reads_every_image_setting_but_the_gan_s():
    gans = {name for entry in IMAGE_MODELS if entry.trains for name in entry.settings}
    assert gans - set(GAUSSIAN_SETTINGS) == set(GAN_ONLY)
    assert gans | set(GAUSSIAN_SETTINGS) == set(ImageSettings.__dataclass_fields__)


@pytest.mark.parametrize("name", GAN_ONLY)
def test_the_default_image_recipe_refuses_each_setting_only_a_gan_reads(name):
    default = ImageSettings.__dataclass_fields__[name].default
    value = {"generator_width": 8, "mode_seeking": 0.5, "label_guide": True}.get(name, default)
    with pytest.raises(InputError, match=f"the gaussian model has no setting '{name}'"):
        ImageSynthesizer(epsilon=1.0, **{name: value})
    if default is None:  # None is "the recipe's": not a setting given
        assert ImageSynthesizer(epsilon=1.0, **{name: None}).recipe.name == "gaussian"
    reader = next(entry.name for entry in IMAGE_MODELS if name in entry.settings)
    ImageSynthesizer(epsilon=1.0, recipe=reader, **{name: value})  # a GAN reads it


@pytest.mark.parametrize("model", ["gaussian", "gaussian-copula"])
def test_a_series_model_of_dp_statistics_refuses_the_loops_settings(model):
    with pytest.raises(InputError, match=f"the {model} model has no setting 'batch_size'"):
        SequenceSynthesizer(epsilon=1.0, model=model, batch_size=64)
    assert SequenceSynthesizer(epsilon=1.0, model="gan", batch_size=64).config.batch_size == 64
    assert SequenceSynthesizer(epsilon=1.0, model="gaussian+gan", batch_size=64).config.batch_size == 64


def test_the_cli_fits_the_default_image_recipe_and_refuses_its_loop_flags(tmp_path, capsys):
    rng = np.random.default_rng(0)
    np.savez(
        tmp_path / "d.npz", images=rng.integers(0, 256, (300, 8, 8), dtype=np.uint8), labels=rng.integers(0, 2, 300)
    )
    fit = ["fit", str(tmp_path / "d.npz"), "--kind", "image", "--epsilon", "2", "--classes", "0,1", "--seed", "0"]
    assert main([*fit, "--quiet", "--out", str(tmp_path / "m")]) == 0
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["recipe"] == "gaussian" and meta["training"]["steps"] == 0
    capsys.readouterr()
    assert main([*fit, "--max-steps", "5", "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "the gaussian model has no setting 'max_steps'" in err and "dcgan" in err
    assert not (tmp_path / "bad").exists()
