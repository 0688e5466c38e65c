"""The step caps: a fit runs min(⌈epochs·N̂/L⌉, max_steps, ⌈max_examples/L⌉) private steps, σ is
calibrated for the steps it runs, the ledger charges those, and 0 means no cap."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from dpgan.errors import InputError
from dpgan.images.settings import IMAGE_DEFAULTS
from dpgan.synthesizers import ImageSynthesizer
from dpgan.training.config import TrainingConfig
from dpgan.training.critic_step import CRITIC_EVENT
from dpgan.training.schedule import epochs_schedule, gan_schedule, gan_schedule_for


def test_epochs_schedule_caps_the_steps_and_keeps_the_rate():
    free = epochs_schedule(256, 0.05, 20.0, 60_000.0)
    capped = epochs_schedule(256, 0.05, 20.0, 60_000.0, max_steps=1000)
    assert free.steps == 4688 and capped.steps == 1000  # ⌈20 · 60,000 / 256⌉
    assert capped.sample_rate == free.sample_rate and capped.expected_batch_size == free.expected_batch_size
    assert epochs_schedule(256, 0.05, 20.0, 60_000.0, max_steps=10_000).steps == 4688  # a cap above: no change
    assert epochs_schedule(256, 0.05, 20.0, 60_000.0, max_steps=0).steps == 4688  # 0: no cap


def test_generator_side_schedule_is_capped_too():
    common = {"batch_size": 100, "max_sample_rate": 1.0, "epochs": 10.0, "rows": 1000.0, "n_critic": 2}
    free = gan_schedule(**common, dp_on="generator", num_discriminators=4)
    capped = gan_schedule(**common, dp_on="generator", num_discriminators=4, max_steps=7)
    assert free.steps == 50 and capped.steps == 7 and capped.sample_rate == free.sample_rate == 0.25


CAPS = ("max_steps", "max_examples")


@pytest.mark.parametrize("name", CAPS)
@pytest.mark.parametrize("bad", [-1, 2.5, True, "100"])
def test_bad_cap_is_one_clear_line(name, bad):
    with pytest.raises(InputError, match=name):
        TrainingConfig(**{name: bad}).check()


@pytest.mark.parametrize(("name", "value"), [("max_steps", 123), ("max_examples", 5000)])
def test_cap_saved_only_when_set_and_round_trips(name, value):
    assert name not in TrainingConfig().to_dict()  # files written before the cap re-save unchanged
    capped = TrainingConfig(**{name: value})
    assert capped.to_dict()[name] == value
    assert TrainingConfig.from_dict(capped.to_dict()) == capped
    assert getattr(TrainingConfig.from_dict(TrainingConfig().to_dict()), name) == 0


def test_example_budget_caps_the_steps_by_the_batch():
    # a million per-example gradients: 1,000 steps of 1,024, 4,000 of 256; the rate is left alone
    assert epochs_schedule(1024, 0.05, 200.0, 60_000.0, max_examples=1_024_000).steps == 1000
    assert epochs_schedule(256, 0.05, 200.0, 60_000.0, max_examples=1_024_000).steps == 4000
    assert epochs_schedule(1000, 1.0, 20.0, 60_000.0, max_examples=2_500).steps == 3  # ⌈2,500 / 1,000⌉
    assert epochs_schedule(1000, 1.0, 20.0, 60_000.0, max_examples=10).steps == 1  # at least one step
    both = epochs_schedule(1024, 0.05, 200.0, 60_000.0, max_steps=700, max_examples=1_024_000)
    assert both.steps == 700  # the tighter cap wins
    free = epochs_schedule(1024, 0.05, 200.0, 60_000.0)
    assert free.steps == 11_719 and both.sample_rate == free.sample_rate  # ⌈200 · 60,000 / 1,024⌉
    generator_side = gan_schedule(
        batch_size=100, max_sample_rate=1.0, epochs=10.0, rows=1000.0, n_critic=2, dp_on="generator",
        num_discriminators=4, max_examples=300,
    )  # fmt: skip
    assert generator_side.steps == 3 and generator_side.sample_rate == 0.25


def test_image_defaults_cap_a_large_set_and_leave_the_small_ones():
    config = TrainingConfig(**IMAGE_DEFAULTS)
    large = gan_schedule_for(config, 60_000.0, "critic")
    assert (large.steps, large.expected_batch_size) == (1000, 1024.0)  # 200 epochs would be 11,719 steps
    # the digits and MNIST-5k sizes: the batch is the 0.05 rate cap and 200 epochs are 4,000 steps,
    # exactly as with the earlier defaults (batch 256, at most 4,000 steps) that validation chose
    earlier = TrainingConfig(**(IMAGE_DEFAULTS | {"batch_size": 256, "max_examples": 0, "max_steps": 4000}))
    for rows in (1149.0, 1437.0, 3200.0, 4000.0):
        now, before = gan_schedule_for(config, rows, "critic"), gan_schedule_for(earlier, rows, "critic")
        assert now == before and now.steps == 4000
    assert gan_schedule_for(earlier, 60_000.0, "critic").steps == 4000
    uncapped = TrainingConfig(**(IMAGE_DEFAULTS | {"max_examples": 0}))
    assert gan_schedule_for(uncapped, 60_000.0, "critic").steps == 11_719


def test_small_set_fit_is_the_same_under_the_earlier_image_defaults():
    """Where the rate cap sets the batch (the digits, MNIST-5k), the budget rule changes nothing: the
    earlier defaults (batch 256, at most 4,000 steps) give the same released generator, label guide
    included, bit for bit."""
    data = load_digits()
    images = np.round(data.images[:300] * 255 / 16).astype(np.uint8)
    labels = data.target[:300].astype(str)
    settings = {"epochs": 2.0, "width": 4, "seed": 0, "classes": [str(d) for d in range(10)]}
    now = ImageSynthesizer(recipe="dcgan", epsilon=3.0, **settings).fit(images, labels)
    earlier = ImageSynthesizer(recipe="dcgan", epsilon=3.0, batch_size=256, max_examples=0, max_steps=4000, **settings)
    earlier.fit(images, labels)
    assert now.config.batch_size == 1024 and now.training["steps"] == earlier.training["steps"] == 40
    assert now.training["noise_multiplier"] == earlier.training["noise_multiplier"]
    for (name, mine), (_, theirs) in zip(now.generator.state_dict().items(), earlier.generator.state_dict().items()):
        assert torch.equal(mine, theirs), name


def test_capped_fit_runs_charges_and_calibrates_for_the_capped_steps():
    data = load_digits()
    images = np.round(data.images[:300] * 255 / 16).astype(np.uint8)
    settings = {"epochs": 8.0, "batch_size": 64, "max_sample_rate": 0.2, "width": 4, "label_guide": False}
    free = ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, conditional=False, **settings).fit(images)
    capped = ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, conditional=False, max_steps=5, **settings).fit(
        images
    )
    assert free.training["steps"] > 5 and capped.training["steps"] == 5
    events = {entry.name: entry for entry in capped.ledger.entries}
    assert events[CRITIC_EVENT].count == 5
    # the same ε over fewer steps buys less noise per step, and the reported ε stays within the target
    assert capped.training["noise_multiplier"] < free.training["noise_multiplier"]
    assert 0 < capped.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)


def test_cli_max_steps_reaches_the_fit_and_a_bad_value_is_one_line(tmp_path, capsys):
    from dpgan.cli import main
    from dpgan.images.io import write_images

    data = load_digits()
    images = np.round(data.images[:200] * 255 / 16).astype(np.uint8)
    write_images(tmp_path / "train.npz", images, data.target[:200])
    fit = ["fit", str(tmp_path / "train.npz"), "--kind", "image", "--recipe", "dcgan", "--epsilon", "3", "--seed", "0"]
    fit += ["--quiet"]
    fit += ["--classes", ",".join(str(d) for d in range(10))]
    assert main([*fit, "--epochs", "5", "--max-steps", "4", "--out", str(tmp_path / "m")]) == 0
    assert ImageSynthesizer.load(tmp_path / "m").training["steps"] == 4
    capsys.readouterr()
    assert main([*fit, "--max-steps", "-1", "--out", str(tmp_path / "bad")]) != 0
    err = capsys.readouterr().err.strip()
    assert "max_steps" in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "bad").exists()
    # the example budget: ⌈20 / L⌉ steps with the rate-capped batch L = 0.05 · N̂ ≈ 10
    assert main([*fit, "--epochs", "5", "--max-examples", "20", "--out", str(tmp_path / "e")]) == 0
    budget = ImageSynthesizer.load(tmp_path / "e")
    assert budget.config.max_examples == 20
    steps = budget.training["steps"]
    assert steps == math.ceil(20 / budget.training["expected_batch_size"]) < 100  # 5 epochs at q = 0.05: 100


def test_table_cli_max_steps_reaches_the_fit(tmp_path):
    from dpgan.cli import main
    from dpgan.synthesizers import load_model

    rng = np.random.default_rng(0)
    rows = [f"{rng.integers(0, 5)},{rng.normal():.2f},{rng.choice(['x', 'y'])}" for _ in range(300)]
    (tmp_path / "t.csv").write_text("a,b,c\n" + "\n".join(rows) + "\n")
    flags = ["--epsilon", "3", "--epochs", "50", "--max-steps", "3", "--seed", "0", "--quiet"]
    flags += ["--bounds", "b=-5:5", "--categorical", "a,c", "--out", str(tmp_path / "m")]
    assert main(["fit", str(tmp_path / "t.csv"), *flags]) == 0
    model = load_model(tmp_path / "m")
    assert model.training["steps"] == 3 and model.config.max_steps == 3
    budget = [*flags[:4], "--max-examples", "40", *flags[6:-1], str(tmp_path / "e")]
    assert main(["fit", str(tmp_path / "t.csv"), *budget]) == 0
    model = load_model(tmp_path / "e")
    assert model.config.max_examples == 40 and model.config.max_steps == 0
    assert model.training["steps"] == math.ceil(40 / model.training["expected_batch_size"]) < 1000  # 50 epochs: 1,000
