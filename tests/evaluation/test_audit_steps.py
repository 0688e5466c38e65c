"""The privacy audit through dpgan's real private steps (dpgan.evaluation.audit).

For every critic recipe the white-box canary goes through the engine's private step as training
builds it (`critic_step`, `critic_release`); for dtgan-g through `generator_hook_step`'s hook.
With noise and clipping on, the certified lower bound must stay at or below the accountant's
claim; with noise off or clipping off (the claim unchanged) it must exceed it, which shows the
audit can fail. Trial counts are small to keep the suite fast; σ is calibrated with RDP (fast)
for a configuration at ε = 3 on Adult's public schema.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from dpgan.errors import InputError, ModelFileError
from dpgan.evaluation.audit import audit_config, audit_model, blackbox, canaries, run_audit, whitebox
from dpgan.evaluation.audit.target import AuditTarget, from_model_dir, from_settings
from dpgan.recipes import get_recipe
from dpgan.serialization import HASH_KEY, content_hash
from dpgan.training import dp_critic, dp_generator
from dpgan.training.config import TrainingConfig

TRIALS = 150  # per world: the ablations can certify up to ≈ 3.0 (claims here ≈ 1.8); ~2 ms a trial


@functools.cache
def target(recipe: str = "dp-gan", epsilon: float = 3.0, **config: object) -> AuditTarget:
    made = from_settings(epsilon=epsilon, recipe=recipe, accountant="rdp")
    return dataclasses.replace(made, config=dataclasses.replace(made.config, **config)) if config else made


@functools.cache
def dtgan_g_target(noise_multiplier: float = 3.0) -> AuditTarget:
    """dtgan-g's settings at a fixed σ (calibrating its shard accounting takes seconds)."""
    recipe = get_recipe("dtgan-g")
    return dataclasses.replace(
        target(), recipe=recipe, config=TrainingConfig(**recipe.overrides), noise_multiplier=noise_multiplier
    )


RECIPES = {
    "dp-gan": {},
    "dp-wgan": {},
    "dp-cgan with 4 microbatches": {"microbatches": 4},
    "dtgan-d": {},
}


def recipe_target(name: str) -> AuditTarget:
    return target(name.split(" ")[0], **RECIPES[name])


def test_the_audit_calls_the_private_step_itself_not_a_copy():
    assert canaries.critic_step is dp_critic.critic_step and canaries.critic_release is dp_critic.critic_release
    assert whitebox.generator_hook_step is dp_generator.generator_hook_step
    assert blackbox.train_dp_critic is dp_critic.train_dp_critic


@pytest.mark.parametrize("name", list(RECIPES))
def test_lower_bound_stays_below_the_claim_with_noise_and_clipping_on(name: str):
    audit = whitebox.audit_critic_step(recipe_target(name), trials=TRIALS, seed=1)
    assert 0.0 <= audit.epsilon_lower_bound <= audit.epsilon_claimed
    # one step at q = 1 and the configuration's σ, as dpgan's accountant prices it
    assert audit.epsilon_claimed == pytest.approx(
        whitebox.claimed_epsilon(recipe_target(name).noise_multiplier, 1, 1, 1e-5)
    )


@pytest.mark.parametrize(
    ("name", "ablate"),
    [("dp-gan", "noise"), ("dp-gan", "clipping"), ("dp-cgan with 4 microbatches", "noise"), ("dtgan-d", "clipping")],
)
def test_lower_bound_exceeds_the_claim_with_noise_or_clipping_off(name: str, ablate: str):
    audit = whitebox.audit_critic_step(recipe_target(name), trials=TRIALS, ablate=ablate, seed=2)
    assert audit.epsilon_lower_bound > audit.epsilon_claimed
    assert audit.epsilon_lower_bound >= 0.9 * audit.ceiling  # (nearly) no held-out error: the canary is plain


def test_the_audit_has_power_at_a_small_noise_multiplier():
    """At ε = 30 (σ ≈ 0.7) one step's claim is large and the canary visible: a real bound, still below it."""
    audit = whitebox.audit_critic_step(target(epsilon=30.0), trials=400, seed=3)
    assert 1.0 < audit.epsilon_lower_bound <= audit.epsilon_claimed


def test_poisson_subsampled_steps_stay_below_the_amplified_claim():
    """Three steps, each batch drawn by dpgan's Poisson sampler at q = 0.5."""
    audit = whitebox.audit_critic_step(target(), trials=100, steps=3, sample_rate=0.5, seed=4)
    assert (audit.steps, audit.sample_rate) == (3, 0.5)
    assert audit.epsilon_lower_bound <= audit.epsilon_claimed


@pytest.mark.parametrize("ablate", [None, "noise", "clipping"])
def test_dtgan_g_hook_audit(ablate: str | None):
    audit = whitebox.audit_generator_hook(dtgan_g_target(), trials=TRIALS, ablate=ablate, seed=5)
    if ablate is None:
        assert audit.epsilon_lower_bound <= audit.epsilon_claimed
    else:
        assert audit.epsilon_lower_bound > audit.epsilon_claimed


@pytest.mark.parametrize("ablate", [None, "noise", "clipping"])
def test_one_run_audit(ablate: str | None):
    """Steinke et al.: 171 canaries in one run of 6 steps at q = 0.5 (claim ≈ 2.7 at σ ≈ 2.2; ceiling 3.3)."""
    audit = whitebox.audit_one_run(target(), steps=6, sample_rate=0.5, ablate=ablate, seed=6)
    assert audit.details["guesses"] > 40
    if ablate is None:
        assert audit.epsilon_lower_bound <= audit.epsilon_claimed
    else:
        assert audit.epsilon_lower_bound > audit.epsilon_claimed
        assert audit.details["correct"] == audit.details["guesses"]


def test_black_box_audit_runs_and_stays_below_the_claim():
    audit = blackbox.audit_black_box(target(), trials=6, rows=16, steps=3, seed=7)
    assert audit.trials == 6 and audit.steps == 3
    assert audit.epsilon_lower_bound <= audit.epsilon_claimed


def test_result_record_and_notes():
    result = run_audit(target(), trials=100, ablate="noise", seed=8)
    record = result.to_dict()
    assert {"epsilon_claimed", "epsilon_lower_bound", "confidence", "ceiling", "verdict", "notes"} <= set(record)
    assert record["confidence"] == 0.95 and record["consistent"] is False
    assert any("negative control" in note for note in result.notes)
    text = result.to_text()
    assert f"{result.epsilon_claimed:.4f}" in text and f"{result.epsilon_lower_bound:.4f}" in text
    assert "VIOLATION" in text


def test_audit_of_a_saved_model_reads_its_settings_not_its_weights(fitted, tmp_path: Path):
    """The audit depends on model.json only: zeroed generator weights give the identical result."""
    fitted.save(tmp_path / "model")
    shutil.copytree(tmp_path / "model", tmp_path / "zeroed")
    weights = tmp_path / "zeroed" / "generator.safetensors"
    save_file({k: torch.zeros_like(v) for k, v in load_file(str(weights)).items()}, str(weights))
    meta = json.loads((tmp_path / "zeroed" / "model.json").read_text())  # re-sign the edited copy
    meta[HASH_KEY] = content_hash(meta, weights.read_bytes())
    (tmp_path / "zeroed" / "model.json").write_text(json.dumps(meta))
    first, second = (audit_model(tmp_path / d, trials=50, seed=9) for d in ("model", "zeroed"))
    assert first.epsilon_lower_bound == second.epsilon_lower_bound and first.details == second.details
    loaded = from_model_dir(tmp_path / "model")
    assert loaded.noise_multiplier == fitted.training["noise_multiplier"]
    assert loaded.epsilon == pytest.approx(fitted.privacy_report()["epsilon"])
    assert first.model_epsilon == pytest.approx(fitted.privacy_report()["epsilon"])


def test_bad_options_are_refused_before_any_work(tmp_path: Path):
    t = target()
    bad = [
        {"mode": "grey-box"},
        {"ablate": "everything"},
        {"trials": 0},
        {"trials": 10**9},
        {"trials": 5},
        {"steps": 0},
        {"sample_rate": 1.5},
        {"confidence": 1.0},
        {"mode": "one-run", "trials": 100},
        {"mode": "black-box", "steps": 3},
    ]
    for options in bad:
        with pytest.raises(InputError):
            run_audit(t, **options)
    with pytest.raises(InputError):
        run_audit(dtgan_g_target(), mode="one-run")
    with pytest.raises(InputError):
        audit_config(epsilon=0.0)
    with pytest.raises(ModelFileError):
        audit_model(tmp_path / "missing")
    (tmp_path / "not-a-model").mkdir()
    with pytest.raises(ModelFileError):
        audit_model(tmp_path / "not-a-model")
