"""Settings live with the part that reads them (issue 50): for every registered model of every
kind, each settings field the model does not declare is refused with the one message of
dpgan.model_catalog, and each it declares is taken; a model's declared settings are fields of its
kind's settings records. The image recipes' declarations follow what their fit reads: the
noise-layer recipes take no plug-in, dp-cgan no conv network's setting (dpgan.recipes.images)."""

from __future__ import annotations

import re
from dataclasses import MISSING, fields

import pytest

from dpgan import kinds
from dpgan.errors import InputError
from dpgan.training.config import TrainingConfig

# valid values for the fields whose default is None ("the recipe's" or "by the rule of ε"): a
# value that is given, so that the check sees it
GIVEN = {
    "generator_width": 8, "mode_seeking": 0.5, "label_guide": True, "gaussian_components": 2,
    "gaussian_match_marginals": True,
}  # fmt: skip


def kind_fields(kind: kinds.Kind) -> dict[str, object]:
    """The settings fields a fit of `kind` takes (the loop's and the kind's), each with a valid value
    (those whose default is None and not in GIVEN are left out)."""
    out = {}
    for cls in (TrainingConfig, *(kinds.load(path) for path in kind.settings)):
        for field in fields(cls):
            default = None if field.default is MISSING else field.default
            if default is None and field.default_factory is not MISSING:
                default = field.default_factory()
            value = GIVEN.get(field.name, default)
            if value is not None and field.name != "model":  # the series' word that chooses the model
                out[field.name] = value
    return out


CASES = [(kind.name, entry.name) for kind in kinds.kinds() for entry in kind.model_entries()]


@pytest.mark.parametrize(("kind_name", "model"), CASES)
def test_every_model_refuses_each_setting_it_does_not_declare_with_the_one_message(kind_name, model):
    kind = kinds.kind(kind_name)
    entry, facade, values = kind.model(model), kind.load("facade"), kind_fields(kind)
    every = {f.name for cls in (TrainingConfig, *map(kinds.load, kind.settings)) for f in fields(cls)}
    assert set(entry.settings) <= every, "a declared setting that is no field of the kind's settings"
    for name, value in values.items():
        if name in entry.reads():
            continue
        with pytest.raises(InputError, match=re.escape(f"the {model} model has no setting '{name}' ")):
            facade(epsilon=1.0, model=model, **{name: value})


@pytest.mark.parametrize(("kind_name", "model"), [c for c in CASES if c[0] == "image"])
def test_every_image_model_takes_each_setting_it_declares(kind_name, model):
    kind = kinds.kind(kind_name)
    entry, facade, values = kind.model(model), kind.load("facade"), kind_fields(kind)
    for name in entry.reads():
        if name not in values:
            continue
        if name == "gaussian_match_marginals" and "gaussian_copula" in entry.reads():
            facade(epsilon=1.0, model=model, gaussian_match_marginals=True)  # (not with the copula: one line)
            continue
        facade(epsilon=1.0, model=model, **{name: values[name]})


def test_the_noise_layer_and_the_fully_connected_gan_refuse_what_they_would_ignore():
    from dpgan.synthesizers import ImageSynthesizer

    for setting in ({"mode_seeking": 0.5}, {"label_guide": False}, {"gaussian_warm_start": True}):
        with pytest.raises(InputError, match="the noise-layer model has no setting"):
            ImageSynthesizer(epsilon=1.0, model="noise-layer", **setting)
    for setting in ({"width": 8}, {"critic_projection": "pooled"}, {"activation_bound": 2.0}):
        with pytest.raises(InputError, match="the dp-cgan model has no setting"):
            ImageSynthesizer(epsilon=1.0, model="dp-cgan", **setting)
    assert ImageSynthesizer(epsilon=1.0, model="dp-cgan", label_guide=False).networks.label_guide is False
