"""The released model as the unit (dpgan.model): a statistics model builds no network in its fit,
its sampling or its loading, and its files hold its released arrays alone; a model saved before
the split (the statistics inside a network's weights) is refused in one line; a new statistics
model ("independent", dpgan.statistics.independent) comes in by its one registration."""

from __future__ import annotations

import json
from contextlib import contextmanager

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from torch.nn.modules.module import (
    register_module_buffer_registration_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)

from dpgan.errors import ModelFileError
from dpgan.serialization import HASH_KEY, METADATA, STATISTICS, WEIGHTS, content_hash
from dpgan.statistics.independent import EVENT as INDEPENDENT_EVENT
from dpgan.synthesizers.sequence import SequenceSynthesizer
from sequences.test_sequence_synthesizer import _fit  # tests/sequences/, through tests/ on sys.path


@contextmanager
def network_parts():
    """Every parameter, buffer or sub-module any torch.nn.Module registers meanwhile (torch's global
    registration hooks: a network registers its weights as it is built)."""
    seen: list[str] = []
    hooks = [
        register(lambda module, name, value: seen.append(f"{type(module).__name__}.{name}"))
        for register in (
            register_module_parameter_registration_hook,
            register_module_buffer_registration_hook,
            register_module_module_registration_hook,
        )
    ]
    try:
        yield seen
    finally:
        for hook in hooks:
            hook.remove()


@pytest.mark.parametrize("model", ["gaussian-copula", "gaussian"])
def test_the_series_statistics_models_build_no_network_and_save_only_their_release(tmp_path, model):
    with network_parts() as built:
        synth = _fit(model=model)
        synth.save(tmp_path / "m")
        again = SequenceSynthesizer.load(tmp_path / "m")
        drawn = again.sample(20, seed=4)
    assert built == []
    assert not isinstance(synth.generator, torch.nn.Module)
    assert not any(isinstance(value, torch.nn.Module) for value in vars(synth.generator).values())
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [METADATA, STATISTICS]
    arrays = load_file(str(tmp_path / "m" / STATISTICS))
    expected = {"label_shares", "means", "factors"} | ({"cdfs", "scale"} if model == "gaussian-copula" else set())
    assert set(arrays) == expected  # the released arrays: no LSTM, no gate, no critic
    meta = json.loads((tmp_path / "m" / METADATA).read_text())
    assert meta["format_version"] == 3 and meta["statistics"]["model"] == model
    assert drawn.equals(synth.sample(20, seed=4))  # the loaded model draws what the fitted one drew


def test_the_gan_models_still_save_their_generator(tmp_path):
    synth = _fit(model="gaussian+gan", epochs=1)
    synth.save(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [WEIGHTS, METADATA]
    assert isinstance(synth.generator, torch.nn.Module)


def test_a_statistics_model_saved_inside_network_weights_is_refused_in_one_line(tmp_path):
    """A default model written before the split (format 2, generator.safetensors holding the
    statistics as buffers beside an LSTM): one line that says to fit again."""
    synth = _fit(model="gaussian+gan", epochs=1)
    path = synth.save(tmp_path / "old")
    meta = json.loads((path / METADATA).read_text())
    meta["networks"]["model"] = "gaussian-copula"  # what the old default's model.json said
    meta[HASH_KEY] = content_hash(meta, (path / WEIGHTS).read_bytes())
    (path / METADATA).write_text(json.dumps(meta))
    with pytest.raises(ModelFileError, match="fit it again") as refused:
        SequenceSynthesizer.load(path)
    assert "\n" not in str(refused.value)


def test_a_statistics_model_that_never_had_a_network_format_is_an_inconsistent_file(tmp_path):
    """The one format check (dpgan.serialization.statistics_file) keeps each kind's rule: the series'
    "independent" model came with format 3, so a network's file naming it was written by no dpgan."""
    synth = _fit(model="gaussian+gan", epochs=1)
    path = synth.save(tmp_path / "old")
    meta = json.loads((path / METADATA).read_text())
    meta["networks"]["model"] = "independent"
    meta[HASH_KEY] = content_hash(meta, (path / WEIGHTS).read_bytes())
    (path / METADATA).write_text(json.dumps(meta))
    with pytest.raises(ModelFileError, match="inconsistent model: a 'independent' model with network") as refused:
        SequenceSynthesizer.load(path)
    assert "fit it again" not in str(refused.value)


def test_a_statistics_file_is_read_strictly(tmp_path):
    synth = _fit(model="gaussian")
    path = synth.save(tmp_path / "m")
    from safetensors.torch import save_file

    arrays = load_file(str(path / STATISTICS))
    arrays["extra"] = torch.zeros(2)  # anything but the release is refused
    save_file(arrays, str(path / STATISTICS))
    meta = json.loads((path / METADATA).read_text())
    meta[HASH_KEY] = content_hash(meta, (path / STATISTICS).read_bytes())
    (path / METADATA).write_text(json.dumps(meta))
    with pytest.raises(ModelFileError, match="inconsistent"):
        SequenceSynthesizer.load(path)


def test_a_new_statistics_model_comes_in_by_its_registration(tmp_path):
    """ "independent" is dpgan.statistics.independent plus one entry of STATISTICS_MODELS: it fits
    (one entry, landing on ε), samples by label, saves its arrays and loads, with no network."""
    with network_parts() as built:
        synth = _fit(model="independent")
        south = synth.sample(400, seed=3, label="south")["flow"]
        north = synth.sample(400, seed=3, label="north")["flow"]
        path = synth.save(tmp_path / "m")
        again = SequenceSynthesizer.load(path)
    assert built == []
    assert [e.name for e in synth.ledger.entries][-1] == INDEPENDENT_EVENT
    assert synth.privacy_report()["epsilon"] == pytest.approx(3.0, rel=1e-3)
    assert synth.privacy_report()["model"].startswith("independent (")
    assert float(south.mean()) > float(north.mean()) + 2.0  # the levels 25 and 10, blurred by the noise
    assert set(load_file(str(path / STATISTICS))) == {"shares", "probabilities"}
    assert again.sample(30, seed=5).equals(synth.sample(30, seed=5))
    assert np.isfinite(again.sample(10, seed=1)["flow"]).all()


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    data = load_digits()
    return np.round(data.images * 255 / 16).astype(np.uint8)[:400], data.target.astype(str)[:400]


@pytest.mark.parametrize("epsilon", [3.0, 10.0])  # one Gaussian per class; from ε = 10 a mixture, matched
def test_the_default_image_recipe_builds_no_network_and_saves_only_its_release(tmp_path, digits, epsilon):
    from dpgan.synthesizers import ImageSynthesizer, load_model

    with network_parts() as built:
        synth = ImageSynthesizer(epsilon=epsilon, seed=0, classes=[str(d) for d in range(10)]).fit(*digits)
        synth.save(tmp_path / "m")
        drawn, labels = load_model(tmp_path / "m").sample(30, seed=2)
    assert built == [] and synth.recipe.name == "gaussian"
    assert synth._critic_in_memory is None and not isinstance(synth.generator, torch.nn.Module)
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [METADATA, STATISTICS]
    np.testing.assert_array_equal(drawn, synth.sample(30, seed=2)[0])


def test_an_image_gaussian_saved_inside_network_buffers_is_refused_in_one_line(tmp_path, digits):
    from dpgan.synthesizers import ImageSynthesizer, load_model

    fast = {"max_steps": 1, "batch_size": 32}
    classes = [str(d) for d in range(10)]
    path = (
        ImageSynthesizer(epsilon=3.0, seed=0, recipe="dp-cgan", classes=classes, **fast)
        .fit(*digits)
        .save(tmp_path / "old")
    )
    meta = json.loads((path / METADATA).read_text())
    meta["recipe"] = "gaussian"  # an old "gaussian" file: format 2, its statistics in a network's buffers
    meta[HASH_KEY] = content_hash(meta, (path / WEIGHTS).read_bytes())
    (path / METADATA).write_text(json.dumps(meta))
    with pytest.raises(ModelFileError, match="fit it again") as refused:
        load_model(path)
    assert "\n" not in str(refused.value)
