"""One vocabulary for choosing the model, and settings owned by the model (dpgan.model_catalog).

- every kind's registration lists its models (name, family, one line, the default), and `dpgan
  models` prints them from the registry, a test kind's included;
- `model=` / `--model` chooses the model of every kind; `recipe=` / `--recipe` stays another word
  for it (tables, images), the same model; both naming two models is one line;
- a setting given that the chosen model does not read is one line, the same for every kind's
  models (a statistics model given a GAN's setting, a GAN given a statistics model's), in Python
  and on the command line; a default left alone is never refused.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import fields

import numpy as np
import pytest

import vector_kind
from dpgan import kinds
from dpgan.cli import build_parser, main
from dpgan.cli.settings_flags import settings_classes
from dpgan.cli.tables import synth_kwargs
from dpgan.errors import InputError
from dpgan.model_catalog import FAMILIES
from dpgan.sequences.settings import SequenceSettings
from dpgan.synthesizers import ImageSynthesizer, SequenceSynthesizer, TabularSynthesizer


@pytest.fixture
def vector():
    kinds.register(vector_kind.VECTOR)
    yield vector_kind.VECTOR
    kinds.unregister(vector_kind.NAME)


# ------------------------------------------------------------------ the registry's models


@pytest.mark.parametrize("name", ["table", "sequence", "image"])
def test_each_kind_lists_its_models_with_one_default_and_settings_it_has(name):
    kind = kinds.kind(name)
    entries = kind.model_entries()
    assert entries and len({m.name for m in entries}) == len(entries)
    assert sum(m.default for m in entries) == 1 and kind.model().default
    assert all(m.family in FAMILIES and m.description and "\n" not in m.description for m in entries)
    known = {f.name for cls in settings_classes(kind) for f in fields(cls)}
    for entry in entries:  # every setting a model says it reads is a field of the kind's settings or the loop's
        assert set(entry.reads()) <= known, (entry.name, set(entry.reads()) - known)
        assert entry.trains == (entry.family != "statistics")


def test_the_registry_s_defaults_are_the_facades():
    assert kinds.kind("table").model().name == TabularSynthesizer(epsilon=1.0).recipe.name == "dp-gan"
    assert kinds.kind("image").model().name == ImageSynthesizer(epsilon=1.0).recipe.name == "gaussian"
    assert kinds.kind("sequence").model().name == SequenceSettings().model == "gaussian-copula"
    assert {m.name for m in kinds.kind("sequence").model_entries()} == {"gan", "gaussian+gan", "gaussian",
                                                                          "gaussian-copula", "independent"}  # fmt: skip


def test_dpgan_models_lists_every_kind_s_models_one_line_each(vector, capsys):
    assert main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for kind in kinds.kinds():  # the built-in kinds and the test kind, all from the registry
        for entry in kind.model_entries():
            name = f"{entry.name} (default)" if entry.default else entry.name
            found = [line for line in lines if line.split()[:1] == [kind.name] and f" {name} " in line]
            assert len(found) == 1, (kind.name, entry.name)
            assert entry.family in found[0] and found[0].endswith(entry.description)
    assert any(line.split()[:3] == ["vector", "mean", "(default)"] for line in lines)
    assert main(["models", "--kind", "vector"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("vector")]
    assert len(rows) == 1 and "statistics" in rows[0]


def test_the_fit_help_names_the_one_word_and_dpgan_models(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["fit", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--model NAME the model to fit, by its name, one word for every kind" in text
    assert "marginals for tables when the target is a class, dp-gan for tables otherwise, gaussian-copula" in text
    assert "`dpgan models` lists each kind's models" in text
    assert "--recipe NAME another word for --model" in text


# ------------------------------------------------------------------ model= and recipe=, --model and --recipe


def test_model_and_recipe_are_one_word_in_python():
    for facade, name in ((TabularSynthesizer, "dp-wgan"), (ImageSynthesizer, "dcgan")):
        by_model, by_recipe = facade(epsilon=1.0, model=name), facade(epsilon=1.0, recipe=name)
        assert by_model.recipe == by_recipe.recipe and by_model.recipe.name == name
        assert by_model.config == by_recipe.config
        assert facade(epsilon=1.0, model=name, recipe=name).recipe.name == name  # the same model twice: fine
        with pytest.raises(InputError, match="name two models: give one"):
            facade(epsilon=1.0, model=name, recipe="dp-cgan")
    assert SequenceSynthesizer(epsilon=1.0, model="gan").networks.model == "gan"


def _parse(*flags: str) -> argparse.Namespace:
    return build_parser().parse_args(["fit", "t.csv", "--epsilon", "1", "--out", "m", *flags])


def test_model_and_recipe_flags_reach_the_table_facade_alike():
    by_model, by_recipe = synth_kwargs(_parse("--model", "dtgan-d")), synth_kwargs(_parse("--recipe", "dtgan-d"))
    assert by_model == by_recipe and by_model["model"] == "dtgan-d"
    a, b = TabularSynthesizer(**by_model), TabularSynthesizer(**by_recipe)
    assert a.recipe.name == b.recipe.name == "dtgan-d" and a.config == b.config and a.settings == b.settings


def _images(tmp_path):
    rng = np.random.default_rng(0)
    images, labels = rng.integers(0, 256, (300, 8, 8), dtype=np.uint8), rng.integers(0, 2, 300)
    np.savez(tmp_path / "d.npz", images=images, labels=labels)
    return ["fit", str(tmp_path / "d.npz"), "--kind", "image", "--epsilon", "2", "--classes", "0,1", "--seed", "0"]


def test_model_and_recipe_flags_fit_the_same_image_model(tmp_path):
    fit = [*_images(tmp_path), "--quiet"]
    assert main([*fit, "--model", "gaussian", "--out", str(tmp_path / "a")]) == 0
    assert main([*fit, "--recipe", "gaussian", "--out", str(tmp_path / "b")]) == 0
    for name in ("model.json", "statistics.safetensors"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert json.loads((tmp_path / "a" / "model.json").read_text())["recipe"] == "gaussian"


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--model", "dcgan", "--recipe", "dp-cgan"], "--model 'dcgan' and --recipe 'dp-cgan' name two models"),
        (["--model", "dp-wgan"], "--model dp-wgan is not a model of --kind image (its models: dcgan, dp-cgan"),
        (["--recipe", "gaussian-copula"], "gaussian-copula is a model of --kind sequence"),
    ],
)
def test_a_model_the_kind_has_not_or_two_names_is_one_line_before_any_read(tmp_path, capsys, flags, words):
    assert main([*_images(tmp_path), "--out", str(tmp_path / "m"), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and words in err and not (tmp_path / "m").exists()


# ------------------------------------------------------------------ settings the model has not


@pytest.mark.parametrize(
    ("settings", "words"),
    [  # a statistics model given a GAN's setting
        ({"model": "gaussian-copula", "critic_hidden": (8,)}, "the gaussian-copula model has no setting 'critic_"),
        ({"model": "gaussian", "critic": "lstm"}, "the gaussian model has no setting 'critic'"),
        ({"model": "independent", "epochs": 3.0}, "the independent model has no setting 'epochs' (its settings: none"),
        # a GAN given a statistics model's setting, or a plug-in of another model
        ({"model": "gan", "copula_bins": 16}, "the gan model has no setting 'copula_bins'"),
        ({"model": "gan", "gaussian_basis": 0.3}, "the gan model has no setting 'gaussian_basis'"),
        ({"model": "gaussian+gan", "step_anchor": True}, "the gaussian+gan model has no setting 'step_anchor'"),
    ],
)
def test_a_series_model_refuses_a_setting_it_does_not_read(settings, words):
    with pytest.raises(InputError) as refused:
        SequenceSynthesizer(epsilon=1.0, **settings)
    message = str(refused.value)
    assert message.startswith(words) and "(its settings: " in message and "\n" not in message


def test_the_refusal_says_the_model_s_settings_and_which_models_read_the_setting():
    with pytest.raises(InputError) as refused:
        SequenceSynthesizer(epsilon=1.0, model="gaussian-copula", copula_bins=16, critic="lstm")
    assert str(refused.value) == (
        "the gaussian-copula model has no setting 'critic' (its settings: copula_bins, copula_fraction, "
        "copula_basis, copula_clip, copula_residual, gaussian_shrink; 'critic' is a setting of gan, gaussian+gan)"
    )
    with pytest.raises(InputError, match=r"has no settings 'max_steps', 'width' \(its settings: gaussian_basis"):
        ImageSynthesizer(epsilon=1.0, width=8, max_steps=5)


def test_a_default_left_alone_or_a_setting_the_model_reads_is_not_refused():
    SequenceSynthesizer(epsilon=1.0)  # every field at its default: nothing given
    SequenceSynthesizer(epsilon=1.0, model="gaussian-copula", copula_bins=16, gaussian_basis=None)  # None: not given
    SequenceSynthesizer(epsilon=1.0, model="gan", critic="lstm", step_anchor=True, epochs=2.0)
    SequenceSynthesizer(epsilon=1.0, model="gaussian+gan", gaussian_basis=0.3, critic_hidden=(8,), epochs=2.0)
    ImageSynthesizer(epsilon=1.0, gaussian_basis=0.3, gaussian_components=2)
    ImageSynthesizer(epsilon=1.0, model="dcgan", width=8, gaussian_basis=0.3, max_steps=5)
    TabularSynthesizer(epsilon=1.0, model="dtgan-g", pair_anchor=False, epochs=2.0)


def test_the_test_kind_s_model_refuses_a_setting_it_has_not(vector):
    with pytest.raises(InputError, match=r"the mean model has no setting 'width' \(its settings: row_norm\)"):
        vector_kind.VectorSynthesizer(epsilon=1.0, width=8)
    with pytest.raises(InputError, match="'gan' is not a model of the vector kind; its models: mean"):
        vector_kind.VectorSynthesizer(epsilon=1.0, model="gan")


def _series(tmp_path) -> list[str]:
    rows = [f"{s},{t},{(s * 7 + t) % 5}" for s in range(20) for t in range(4)]
    (tmp_path / "s.csv").write_text("sid,t,v\n" + "\n".join(rows) + "\n")
    return ["fit", str(tmp_path / "s.csv"), "--kind", "sequence", "--epsilon", "1", "--id-column", "sid",
            "--time-column", "t", "--length", "4", "--bounds", "v=0:5", "--quiet"]  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--critic", "lstm"], "the gaussian-copula model has no setting 'critic'"),  # the default: statistics
        (["--model", "gaussian", "--epochs", "2"], "the gaussian model has no setting 'epochs'"),
        (["--model", "gan", "--gaussian-base-fraction", "0.5"], "the gan model has no setting 'gaussian_base_"),
    ],
)
def test_the_cli_refuses_a_setting_the_series_model_does_not_read_in_one_line(tmp_path, capsys, flags, words):
    assert main([*_series(tmp_path), "--out", str(tmp_path / "m"), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and words in err and "Traceback" not in err
    assert not (tmp_path / "m").exists()


def test_the_cli_fits_the_series_model_named_by_model_and_refuses_its_unread_plug_in(tmp_path, capsys):
    fit = [*_series(tmp_path), "--model", "independent", "--seed", "0"]
    assert main([*fit, "--out", str(tmp_path / "m")]) == 0
    assert json.loads((tmp_path / "m" / "model.json").read_text())["networks"]["model"] == "independent"
    capsys.readouterr()
    assert main([*fit, "--step-anchor", "--out", str(tmp_path / "bad")]) == 2  # a plug-in of the gan model
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "the independent model has no setting 'step_anchor' (its settings: none;" in err
    assert "'step_anchor' is a setting of gan)" in err and not (tmp_path / "bad").exists()


def test_the_cli_refuses_a_gan_setting_for_the_default_image_model_in_one_line(tmp_path, capsys):
    assert main([*_images(tmp_path), "--width", "8", "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "the gaussian model has no setting 'width'" in err
    assert "'width' is a setting of dcgan, noise-layer, noise-layer-sound" in err
