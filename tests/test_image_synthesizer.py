"""ImageSynthesizer: fit, sample, save and load on small digits; the ledger; labels; bad input.

The fits are tiny (8×8 digits, a few dozen steps): they check the plumbing and the privacy
properties (what is charged, what is released), not image quality (bench/images.py measures that).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from dpgan.errors import InputError, ModelFileError
from dpgan.images.labels import LABEL_SET_EVENT, LABELS_EVENT
from dpgan.synthesizers import ImageSynthesizer, load_model
from dpgan.training.dp_critic import CRITIC_EVENT

FAST = {"epochs": 1.0, "batch_size": 64, "max_sample_rate": 0.1, "width": 4}


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    data = load_digits()
    images = np.round(data.images[:400] * 255 / 16).astype(np.uint8)
    return images, data.target[:400]


@pytest.fixture(scope="module")
def fitted(digits) -> ImageSynthesizer:
    images, labels = digits
    return ImageSynthesizer(epsilon=3.0, seed=0, classes=[str(d) for d in range(10)], **FAST).fit(images, labels)


def _events(synth: ImageSynthesizer) -> dict[str, object]:
    return {entry.name: entry for entry in synth.ledger.entries}


def test_fit_charges_labels_once_and_one_event_per_critic_step(fitted):
    events = _events(fitted)
    assert set(events) == {LABELS_EVENT, CRITIC_EVENT}
    assert events[LABELS_EVENT].count == 1
    assert events[CRITIC_EVENT].count == fitted.training["steps"] > 0
    assert events[CRITIC_EVENT].sampling_rate == pytest.approx(fitted.training["sample_rate"])
    report = fitted.privacy_report()
    assert 0 < report["epsilon"] <= 3.0 * (1 + 1e-9)
    assert report["kind"] == "image" and report["certified"] is True


def test_sample_shapes_dtype_and_imposed_label(fitted):
    images, labels = fitted.sample(50, seed=1)
    assert images.shape == (50, 1, 8, 8) and images.dtype == np.uint8
    assert set(labels) <= {str(d) for d in range(10)}
    sevens, fixed = fitted.sample(7, seed=2, label="7")
    assert list(fixed) == ["7"] * 7 and sevens.shape == (7, 1, 8, 8)
    with pytest.raises(InputError, match="not a label"):
        fitted.sample(3, label="eleven")


def test_save_load_round_trip_samples_equal_and_no_pickle(fitted, tmp_path):
    path = fitted.save(tmp_path / "model")
    meta = json.loads((path / "model.json").read_text())
    assert meta["kind"] == "image" and meta["certified"] is True and meta["epsilon"] <= 3.0 * (1 + 1e-9)
    loaded = load_model(path)
    assert isinstance(loaded, ImageSynthesizer)
    a, la = fitted.sample(20, seed=5)
    b, lb = loaded.sample(20, seed=5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(la, lb)
    assert loaded.privacy_report()["epsilon"] == pytest.approx(fitted.privacy_report()["epsilon"])
    (path / "model.json").write_text(json.dumps({**meta, "image_shape": [1, 9]}))
    with pytest.raises(ModelFileError):
        load_model(path)


def test_float_input_gives_float_output_unconditional(digits):
    images, _ = digits
    unit = images[:200].astype(np.float32) / 255.0
    synth = ImageSynthesizer(epsilon=2.0, seed=0, conditional=False, **FAST).fit(unit)
    out, labels = synth.sample(4, seed=0)
    assert out.dtype == np.float32 and labels is None and 0.0 <= out.min() and out.max() <= 1.0
    assert {e.name for e in synth.ledger.entries} == {LABELS_EVENT, CRITIC_EVENT}


def test_dp_label_set_drops_a_label_only_one_image_holds(digits):
    """Without a public class list the label set is released by partition selection: a label that
    one image holds is not released (its noisy count stays under τ with probability ≥ 1 − δ_τ), so
    neighbouring data sets give the same label set; the ledger carries the threshold's δ."""
    images, labels = digits
    names = labels.astype(str).astype(object)
    names[0] = "SECRET-ONE-OFF"
    synth = ImageSynthesizer(epsilon=3.0, seed=0, mlp_critic_hidden=(16,), recipe="dp-cgan", epochs=0.5)
    synth.fit(images, names)
    assert "SECRET-ONE-OFF" not in synth.label_names
    assert set(synth.label_names) == {str(d) for d in range(10)}
    entry = _events(synth)[LABEL_SET_EVENT]
    assert entry.extra_delta > 0


def test_dp_cgan_recipe_uses_the_mlp_critic_and_microbatches(digits):
    images, labels = digits
    synth = ImageSynthesizer(
        epsilon=3.0, seed=0, recipe="dp-cgan", classes=[str(d) for d in range(10)], microbatches=8, epochs=0.5
    ).fit(images, labels.astype(str))
    entry = _events(synth)[CRITIC_EVENT]
    assert "microbatches" in entry.note and "2C" in entry.note
    out, _ = synth.sample(3, seed=0)
    assert out.shape == (3, 1, 8, 8)


def test_public_prior_replaces_the_released_shares(digits):
    images, labels = digits
    prior = np.zeros(10)
    prior[3] = 1.0
    synth = ImageSynthesizer(epsilon=3.0, seed=0, classes=[str(d) for d in range(10)], label_prior=prior, **FAST).fit(
        images, labels
    )
    _, drawn = synth.sample(30, seed=0)
    assert set(drawn) == {"3"}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epsilon": 0.0}, "ε"),
        ({"epsilon": 1.0, "recipe": "nope"}, "unknown image recipe"),
        ({"epsilon": 1.0, "classes": ["a"]}, "at least two"),
        ({"epsilon": 1.0, "critic_norm": "batch"}, "BatchNorm"),
        ({"epsilon": 1.0, "device": "tpu"}, "device"),
        ({"epsilon": 1.0, "not_a_setting": 3}, "unknown setting"),
        ({"epsilon": 1.0, "label_prior": [1.0, 2.0]}, "label_prior"),
    ],
)
def test_bad_settings_are_one_clear_line(kwargs, message):
    with pytest.raises(InputError, match=message):
        ImageSynthesizer(**kwargs)


def test_bad_images_are_refused_before_any_release(digits):
    images, labels = digits
    synth = ImageSynthesizer(epsilon=1.0, seed=0, **FAST)
    with pytest.raises(InputError, match="labels"):
        synth.fit(images)  # conditional without labels
    with pytest.raises(InputError):
        synth.fit(images, labels[:-1])
    odd = np.zeros((10, 7, 7), dtype=np.uint8)
    with pytest.raises(InputError, match="even"):
        ImageSynthesizer(epsilon=1.0, conditional=False).fit(odd)
    assert synth.ledger.entries == []
    assert synth.generator is None


def test_conv_critic_has_no_batchnorm_and_one_image_moves_nothing_else(fitted):
    """The critic the fit used scores each unit on its own: changing image 0 changes score 0 only."""
    critic = fitted._critic_in_memory
    assert not any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in critic.modules())
    units = torch.rand(6, 64 + 10) * 2 - 1
    before = critic(units)
    units[0] = -units[0]
    after = critic(units)
    assert torch.equal(before[1:], after[1:]) and not torch.equal(before[:1], after[:1])
