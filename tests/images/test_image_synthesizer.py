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
from dpgan.training.aux_classifier import GUIDE_EVENT
from dpgan.training.critic_step import CRITIC_EVENT

FAST = {"epochs": 1.0, "batch_size": 64, "max_sample_rate": 0.1, "width": 4}


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    data = load_digits()
    images = np.round(data.images[:400] * 255 / 16).astype(np.uint8)
    return images, data.target[:400]


@pytest.fixture(scope="module")
def fitted(digits) -> ImageSynthesizer:
    images, labels = digits
    return ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, classes=[str(d) for d in range(10)], **FAST).fit(
        images, labels
    )


def _events(synth: ImageSynthesizer) -> dict[str, object]:
    return {entry.name: entry for entry in synth.ledger.entries}


def test_fit_charges_labels_once_and_one_event_per_critic_step(fitted):
    events = _events(fitted)
    assert set(events) == {LABELS_EVENT, GUIDE_EVENT, CRITIC_EVENT}  # the dcgan recipe's label guide
    assert events[LABELS_EVENT].count == 1
    assert events[CRITIC_EVENT].count == fitted.training["steps"] > 0
    assert events[CRITIC_EVENT].sampling_rate == pytest.approx(fitted.training["sample_rate"])
    report = fitted.privacy_report()
    assert 0 < report["epsilon"] <= 3.0 * (1 + 1e-9)
    assert report["kind"] == "image" and report["certified"] is True


def test_sample_shapes_dtype_and_imposed_label(fitted):
    images, labels = fitted.sample(50, seed=1)
    assert images.shape == (50, 8, 8) and images.dtype == np.uint8  # an N×H×W input: N×H×W out
    assert set(labels) <= {str(d) for d in range(10)}
    sevens, fixed = fitted.sample(7, seed=2, label="7")
    assert list(fixed) == ["7"] * 7 and sevens.shape == (7, 8, 8)
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


def test_samples_come_in_the_input_rank_through_save_and_load(fitted, digits, tmp_path):
    """Fitted on N×H×W, sampled as n×H×W; on N×C×H×W, as n×C×H×W; the rank is in the model file,
    and a file written before it was samples n×C×H×W, as such files always did."""
    from dpgan.serialization import HASH_KEY, WEIGHTS, content_hash

    images, labels = digits
    three = fitted.save(tmp_path / "three")
    assert json.loads((three / "model.json").read_text())["input_rank"] == 3
    assert load_model(three).sample(5, seed=0)[0].shape == (5, 8, 8)
    four = ImageSynthesizer(
        recipe="dcgan", epsilon=3.0, seed=0, classes=[str(d) for d in range(10)], **FAST, max_steps=2, label_guide=False
    ).fit(images[:, None], labels)
    assert four.sample(5, seed=0)[0].shape == (5, 1, 8, 8)
    assert load_model(four.save(tmp_path / "four")).sample(5, seed=0)[0].shape == (5, 1, 8, 8)
    meta = json.loads((three / "model.json").read_text())
    del meta["input_rank"]
    meta[HASH_KEY] = content_hash(meta, (three / WEIGHTS).read_bytes())
    (three / "model.json").write_text(json.dumps(meta))
    old = load_model(three)
    assert old.input_rank == 4 and old.sample(5, seed=0)[0].shape == (5, 1, 8, 8)


def test_generator_shape_costs_no_epsilon_and_round_trips(fitted, digits, tmp_path):
    """G is post-processing of the critic's releases: a wider, upsampling G runs the same critic
    steps at the same noise, so its ledger equals the default G's; its shape is saved and reloaded."""
    images, labels = digits
    other = ImageSynthesizer(
        recipe="dcgan",
        epsilon=3.0,
        seed=0,
        classes=[str(d) for d in range(10)],
        **FAST,
        generator_width=8,
        generator_upsampling="upsample",
    ).fit(images, labels)
    assert other.ledger.to_dict() == fitted.ledger.to_dict()
    assert other.privacy_report()["epsilon"] == fitted.privacy_report()["epsilon"]
    assert any(isinstance(m, torch.nn.Upsample) for m in other.generator.modules())
    loaded = load_model(other.save(tmp_path / "up"))
    a, la = other.sample(12, seed=4)
    b, lb = loaded.sample(12, seed=4)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(la, lb)
    assert loaded.networks.generator_width == 8 and loaded.networks.generator_upsampling == "upsample"


def test_label_guide_is_charged_before_the_critic_and_the_total_stays_within_epsilon(digits):
    """The guide's classifier is one more DP-SGD entry in the ledger, before the critic's; the
    critic's σ is calibrated on what is left, so the total stays at the target and the critic's
    noise is larger than without the guide."""
    images, labels = digits
    classes = [str(d) for d in range(10)]
    plain = ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, classes=classes, **FAST, label_guide=False).fit(
        images, labels
    )
    guided = ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, classes=classes, **FAST).fit(
        images, labels
    )  # dcgan: on
    names = [entry.name for entry in guided.ledger.entries]
    assert names == [LABELS_EVENT, GUIDE_EVENT, CRITIC_EVENT]
    guide = guided.ledger.entries[1]
    assert guide.count > 0 and guide.noise_multiplier > 0
    assert guided.privacy_report()["epsilon"] == pytest.approx(3.0, rel=2e-3)
    assert guided.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)
    assert guided.training["noise_multiplier"] > plain.training["noise_multiplier"]
    assert [e.name for e in plain.ledger.entries] == [LABELS_EVENT, CRITIC_EVENT]
    unlabelled = ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, conditional=False, **FAST).fit(
        images
    )  # the recipe's: off
    assert GUIDE_EVENT not in {e.name for e in unlabelled.ledger.entries}
    with pytest.raises(InputError, match="needs labels"):
        ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, conditional=False, **FAST, label_guide=True).fit(images)


@pytest.mark.parametrize("recipe", ["dcgan", "dp-cgan", "noise-layer-sound"])
def test_empty_poisson_batches_are_steps_like_any_other(digits, recipe):
    # a batch of one image in expectation: about a third of the Poisson draws are empty, and each
    # such step still runs (its GP partners are none) and is charged like the others
    images, labels = digits
    settings = FAST | {"batch_size": 1, "epochs": 0.05}
    if recipe == "dp-cgan":  # fully connected: no conv width to set
        del settings["width"]
    synth = ImageSynthesizer(epsilon=3.0, seed=0, recipe=recipe, classes=[str(d) for d in range(10)], **settings)
    synth.fit(images, labels)
    assert synth.training["steps"] >= 15 and synth.training["expected_batch_size"] == 1.0
    if recipe != "noise-layer-sound":  # (its passes are charged per pass: test_noise_layer_sound_…)
        assert _events(synth)[CRITIC_EVENT].count == synth.training["steps"]


def test_float_input_gives_float_output_unconditional(digits):
    images, _ = digits
    unit = images[:200].astype(np.float32) / 255.0
    synth = ImageSynthesizer(recipe="dcgan", epsilon=2.0, seed=0, conditional=False, **FAST).fit(unit)
    out, labels = synth.sample(4, seed=0)
    assert out.dtype == np.float32 and labels is None and 0.0 <= out.min() and out.max() <= 1.0
    assert {e.name for e in synth.ledger.entries} == {LABELS_EVENT, CRITIC_EVENT}


def test_dp_label_set_drops_a_label_only_one_image_holds(digits):
    """Without a public class list the label set is released by partition selection: a label that
    one image holds is not released (its noisy count stays under τ with probability ≥ 1 − δ_τ), so
    neighbouring data sets give the same label set; the ledger carries the threshold's δ."""
    data = load_digits()
    images = np.round(data.images * 255 / 16).astype(np.uint8)
    names = data.target.astype(str).astype(object)
    names[0] = "SECRET-ONE-OFF"
    synth = ImageSynthesizer(epsilon=10.0, seed=0, mlp_critic_hidden=(16,), recipe="dp-cgan", epochs=0.2)
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
    assert out.shape == (3, 8, 8)


def test_public_prior_replaces_the_released_shares(digits):
    images, labels = digits
    prior = np.zeros(10)
    prior[3] = 1.0
    synth = ImageSynthesizer(
        recipe="dcgan", epsilon=3.0, seed=0, classes=[str(d) for d in range(10)], label_prior=prior, **FAST
    ).fit(images, labels)
    _, drawn = synth.sample(30, seed=0)
    assert set(drawn) == {"3"}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epsilon": 0.0}, "psilon"),
        ({"epsilon": 1.0, "recipe": "nope"}, "unknown image recipe"),
        ({"epsilon": 1.0, "classes": ["a"]}, "at least two"),
        ({"epsilon": 1.0, "critic_norm": "batch"}, "BatchNorm"),
        ({"epsilon": 1.0, "generator_upsampling": "bilinear"}, "generator_upsampling"),
        ({"epsilon": 1.0, "generator_width": 0}, "network sizes"),
        ({"epsilon": 1.0, "critic_projection": "half"}, "critic_projection"),
        ({"epsilon": 1.0, "label_guide_fraction": 0.6}, "label_guide_fraction"),
        ({"epsilon": 1.0, "label_guide_hidden": [0]}, "label_guide_hidden"),
        ({"epsilon": 1.0, "recipe": "noise-layer-sound", "label_guide": True}, "has no setting 'label_guide'"),
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
    synth = ImageSynthesizer(recipe="dcgan", epsilon=1.0, seed=0, **FAST)
    with pytest.raises(InputError, match="labels"):
        synth.fit(images)  # conditional without labels
    with pytest.raises(InputError):
        synth.fit(images, labels[:-1])
    odd = np.zeros((10, 7, 7), dtype=np.uint8)
    with pytest.raises(InputError, match="even"):
        ImageSynthesizer(recipe="dcgan", epsilon=1.0, conditional=False).fit(odd)
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


def test_noise_layer_published_form_claims_no_epsilon(digits, tmp_path):
    """As published the noise-layer GAN is not DP: no ε in the report, the model file or the CLI."""
    images, labels = digits
    synth = ImageSynthesizer(epsilon=3.0, seed=0, recipe="noise-layer", classes=[str(d) for d in range(10)], **FAST)
    synth.fit(images, labels)
    report = synth.privacy_report()
    assert (
        report["certified"] is False and report["epsilon"] is None and "not differentially private" in report["reason"]
    )
    assert report["warning"].startswith("NOT CERTIFIED")  # what the HTML report's privacy section shows
    assert {e.name for e in synth.ledger.entries} == {LABELS_EVENT}  # the GAN part charges nothing: it has no ε
    meta = json.loads((synth.save(tmp_path / "m") / "model.json").read_text())
    assert meta["certified"] is False and meta["epsilon"] is None and meta["not_certified_reason"]
    loaded = load_model(tmp_path / "m")
    assert loaded.privacy_report()["epsilon"] is None
    from dpgan.cli import main

    assert main(["inspect", str(tmp_path / "m")]) == 0


def test_noise_layer_sound_form_charges_each_pass_at_half_sigma(digits):
    from dpgan.privacy.feature_release import FEATURE_RELEASE_EVENT

    images, labels = digits
    synth = ImageSynthesizer(
        epsilon=3.0, seed=0, recipe="noise-layer-sound", classes=[str(d) for d in range(10)], **FAST
    ).fit(images, labels)
    entry = _events(synth)[FEATURE_RELEASE_EVENT]
    assert entry.count == synth.training["steps"] > 0
    assert entry.noise_multiplier == pytest.approx(synth.training["noise_layer_sigma"] / 2)
    assert 0 < synth.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)
    assert synth.training["capacity"] >= synth.training["expected_batch_size"]


def test_cli_fits_samples_inspects_and_evaluates_an_image_model(digits, tmp_path, capsys):
    from dpgan.cli import main
    from dpgan.images.io import read_images, write_images

    images, labels = digits
    write_images(tmp_path / "train.npz", images[:300], labels[:300])
    write_images(tmp_path / "test.npz", images[300:], labels[300:])
    fit = ["fit", str(tmp_path / "train.npz"), "--kind", "image", "--epsilon", "3", "--recipe", "dcgan"]
    fit += ["--epochs", "1", "--seed", "0"]
    assert main(fit + ["--classes", ",".join(str(d) for d in range(10)), "--out", str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out
    assert "ε=" in out and "unit of privacy: one image" in out
    assert main(["sample", str(tmp_path / "m"), "-n", "40", "--out", str(tmp_path / "s.npz"), "--seed", "1"]) == 0
    sampled = read_images(tmp_path / "s.npz")
    assert sampled.images.shape == (40, 1, 8, 8) and (tmp_path / "s.png").exists()
    assert (
        main(["sample", str(tmp_path / "m"), "-n", "5", "--out", str(tmp_path / "pngs"), "--condition", "label=4"]) == 0
    )
    assert read_images(tmp_path / "pngs").label_names == ["4"]
    assert main(["inspect", str(tmp_path / "m")]) == 0
    capsys.readouterr()
    files = [
        "--real",
        str(tmp_path / "train.npz"),
        "--synthetic",
        str(tmp_path / "s.npz"),
        "--test",
        str(tmp_path / "test.npz"),
    ]
    assert (
        main(["evaluate", "--kind", "image", *files, "--model", str(tmp_path / "m"), "--out", str(tmp_path / "r")]) == 0
    )
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert (
        set(metrics["students"]["synthetic"]) == {"logreg", "mlp", "cnn"} and (tmp_path / "r" / "report.html").exists()
    )
    assert f"Fréchet feature distance {metrics['frechet']['synthetic']:.4f}" in capsys.readouterr().out
    # bad input: one line, non-zero, nothing written (refusals on public structure: here the dtype;
    # NaN pixels are dropped and counted, not refused: tests/images/test_image_unit_rule.py)
    np.savez(tmp_path / "int.npz", images=np.full((5, 8, 8), 7, dtype=np.int64))
    for bad in (
        [
            "fit",
            str(tmp_path / "int.npz"),
            "--kind",
            "image",
            "--epsilon",
            "1",
            "--unconditional",
            "--out",
            str(tmp_path / "b1"),
        ],
        ["fit", str(tmp_path / "train.npz"), "--kind", "image", "--epsilon", "0", "--out", str(tmp_path / "b2")],
        ["fit", str(tmp_path / "missing.npz"), "--kind", "image", "--epsilon", "1", "--out", str(tmp_path / "b3")],
        [
            "fit",
            str(tmp_path / "train.npz"),
            "--kind",
            "image",
            "--epsilon",
            "1",
            "--recipe",
            "dtgan-g",
            "--out",
            str(tmp_path / "b4"),
        ],
        ["sample", str(tmp_path / "m"), "-n", "5", "--out", str(tmp_path / "b5.csv")],
    ):
        assert main(bad) != 0
        err = capsys.readouterr().err
        assert err.strip() and err.strip().count("\n") == 0 and "Traceback" not in err
    assert not any((tmp_path / f"b{i}").exists() for i in range(1, 6))
    assert not (tmp_path / "b5.csv").exists()
