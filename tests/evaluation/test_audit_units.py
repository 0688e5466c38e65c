"""`dpgan audit` on sequence and image models: the white-box canary through the engine's private
step with the model's own critic (an LSTM or MLP over series, a conv or MLP over images). With
noise on the bound stays at or below the claim; with noise off (the claim unchanged) it exceeds
it. What is not audited is refused in one line that names what is."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan.cli import main
from dpgan.errors import InputError
from dpgan.evaluation.audit import audit_model, canaries
from dpgan.evaluation.audit.target import from_model_dir
from dpgan.evaluation.audit.units import UnitCanary
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.synthesizers import ImageSynthesizer, SequenceSynthesizer

# trials per world: noise off certifies ≈ 2.0 (60) or 2.6 (100), above these models' one-step claims (1.5, 2.0)
TRIALS = {"sequence-lstm": 60, "sequence-mlp": 60, "image-dcgan": 100, "image-dp-cgan": 100}
T = 8


def _series(n: int = 80) -> tuple[pd.DataFrame, SequenceSchema]:
    rng = np.random.default_rng(0)
    label = rng.choice(["north", "south"], n)
    flow = np.where(label == "north", 10.0, 25.0)[:, None] + rng.normal(0, 1, (n, T))
    frame = pd.DataFrame(
        {
            "sid": np.repeat(np.arange(n), T),
            "hour": np.tile(np.arange(T), n),
            "flow": flow.ravel(),
            "speed": rng.uniform(0, 90, n * T),
            "district": np.repeat(label, T),
        }
    )
    schema = SequenceSchema(
        id="sid",
        time="hour",
        length=T,
        values=(ValueColumn("flow", 0.0, 40.0), ValueColumn("speed", 0.0, 100.0)),
        label="district",
        categories=("north", "south"),
    )
    return frame, schema


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("unit-models")
    frame, schema = _series()
    small = {"epochs": 2, "batch_size": 32, "critic_hidden": (8,), "generator_hidden": 4}
    paths = {}
    for critic in ("lstm", "mlp"):
        fitted = SequenceSynthesizer(epsilon=0.5, seed=0, model="gan", critic=critic, **small).fit(frame, schema)
        paths[f"sequence-{critic}"] = fitted.save(root / f"sequence-{critic}")
    paths["sequence-gaussian"] = SequenceSynthesizer(epsilon=0.5, seed=0).fit(frame, schema).save(root / "gaussian")
    fitted = ImageSynthesizer(epsilon=0.5, seed=0, classes=["0", "1"])  # the default recipe: no critic
    paths["image-gaussian"] = fitted.fit(np.zeros((60, 8, 8), np.uint8), np.arange(60) % 2).save(
        root / "image-gaussian"
    )
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, size=(120, 8, 8), dtype=np.uint8)
    labels = rng.integers(0, 2, size=120)
    fast = {"epochs": 1.0, "batch_size": 32, "classes": ["0", "1"]}
    own = {"dcgan": {"width": 4, "label_guide": False}, "dp-cgan": {"label_guide": False}, "noise-layer": {"width": 4}}
    for recipe, settings in own.items():  # each recipe given only the settings it reads
        fitted = ImageSynthesizer(epsilon=0.5, seed=0, recipe=recipe, **fast, **settings).fit(images, labels)
        paths[f"image-{recipe}"] = fitted.save(root / f"image-{recipe}")
    return paths


@pytest.mark.parametrize("name", list(TRIALS))
def test_the_canary_bound_respects_the_claim_and_the_noise_off_control_breaks_it(models, name):
    plain = audit_model(models[name], trials=TRIALS[name], seed=1)
    assert 0.0 <= plain.epsilon_lower_bound <= plain.epsilon_claimed
    assert plain.epsilon_claimed < plain.ceiling  # the control below can refute the claim
    ablated = audit_model(models[name], trials=TRIALS[name], ablate="noise", seed=2)
    assert ablated.epsilon_claimed == plain.epsilon_claimed  # the claim keeps the model's σ
    assert ablated.epsilon_lower_bound > ablated.epsilon_claimed
    kind = name.split("-")[0]
    assert plain.recipe.startswith(kind) and kind in plain.source


@pytest.mark.parametrize("name", ["sequence-lstm", "image-dcgan"])
def test_the_audited_critic_is_the_models_and_ignores_the_canary_coordinates(models, name):
    target = from_model_dir(models[name])
    assert target.units is not None and target.steps > 0
    canary = UnitCanary(target.units, target.config.max_grad_norm, 4, np.random.default_rng(0), 0)
    kinds = {"sequence-lstm": "SeriesUnitCritic", "image-dcgan": "ImageUnitCritic"}
    assert type(canary.critic).__name__ == kinds[name]
    mask = torch.from_numpy(target.units.mask)
    assert bool((canary.filler[:, mask] == 0).all()) and bool((canary.partners[:, mask] == 0).all())
    anything = canary.filler + torch.randn(canary.filler.shape) * mask  # any value on the canary coordinates
    with torch.no_grad():
        torch.testing.assert_close(canary.critic(anything), canary.critic(canary.filler))
    assert canaries.critic_step is not None  # the audit drives the engine's own step (test_audit_steps)


def test_what_is_not_audited_is_one_line_naming_what_is(models, capsys):
    assert main(["audit", str(models["image-noise-layer"]), "--trials", "10", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpgan: error: ") and "\n" not in err
    assert "sequence models" in err and "image models" in err and "noise-layer" in err
    with pytest.raises(InputError, match="--mode step"):
        audit_model(models["sequence-lstm"], mode="one-run")
    assert main(["audit", str(models["sequence-mlp"]), "--mode", "black-box", "--quiet"]) == 2
    assert "--mode step" in capsys.readouterr().err
    assert main(["audit", str(models["sequence-gaussian"]), "--trials", "10", "--quiet"]) == 2  # the default model
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpgan: error: ") and "\n" not in err and "DP Gaussian" in err and "--model gan" in err
    assert main(["audit", str(models["image-gaussian"]), "--trials", "10", "--quiet"]) == 2  # the default recipe
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "gaussian has no DP-SGD critic step" in err and "--recipe dcgan" in err


def test_the_command_line_audits_a_sequence_model(models, capsys):
    assert main(["audit", str(models["sequence-lstm"]), "--trials", "40", "--quiet", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["consistent"] and record["trials"] == 40 and "sequence" in record["recipe"]
