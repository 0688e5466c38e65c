"""A killed fit resumes from its checkpoint: the resumed run ends where an uninterrupted one does
(same weights, same ledger count), no step is charged twice, and a checkpoint of another fit, a
corrupt file or a foreign network is refused with one line."""

from __future__ import annotations

import os
import stat

import pytest
import torch

from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.recipes import RECIPES
from dpgan.training import critic_step as critic_step_module
from dpgan.training import dp_critic, dp_generator
from dpgan.training.checkpoint import STATE_FILE, FitCheckpoint, Snapshot
from dpgan.training.config import TrainingConfig

STEPS = 8


class Killed(Exception):
    pass


def kill_after(step: int):
    def progress(done: int) -> None:
        if done == step:
            raise Killed

    return progress


@pytest.fixture(scope="module")
def encoded(encode_adult):
    return encode_adult(150)


def config(**changes) -> TrainingConfig:
    base = {"batch_size": 16, "noise_dim": 8, "generator_hidden": (16,), "critic_hidden": (16,), "n_critic": 2}
    return TrainingConfig(**{**base, **changes})


def critic_fit(encoded, ledger, checkpoint=None, progress=None, **changes):
    data, spans, condition = encoded
    torch.manual_seed(0)  # network weights: the facade seeds them from the fit seed
    return dp_critic.train_dp_critic(
        data,
        spans,
        config(**{"ema_decay": 0.9, "clip_decay": 0.99, "info_loss_weight": 0.0, **changes}),
        sample_rate=0.1,
        expected_batch_size=15.0,
        noise_multiplier=1.1,
        steps=STEPS,
        generator=torch.Generator().manual_seed(3),
        ledger=ledger,
        condition=condition,
        progress=progress,
        checkpoint=checkpoint,
    )


def adaptive_critic_fit(encoded, ledger, checkpoint=None, progress=None):
    """The step owns C (adaptive clipping): the snapshot must carry the C its noisy counts left."""
    return critic_fit(encoded, ledger, checkpoint, progress, clip_decay=1.0, adaptive_clip_quantile=0.5)


def generator_fit(encoded, ledger, checkpoint=None, progress=None):
    data, spans, condition = encoded
    torch.manual_seed(0)
    settings = {**RECIPES["dtgan-g"].overrides, "num_discriminators": 2, "batch_size": 8, "ema_decay": 0.5}
    return dp_generator.train_dp_generator(
        data,
        spans,
        config(**settings),
        noise_multiplier=1.1,
        steps=STEPS,
        generator=torch.Generator().manual_seed(3),
        shard_key=b"k" * 32,
        ledger=ledger,
        condition=condition,
        progress=progress,
        checkpoint=checkpoint,
    )


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


@pytest.mark.parametrize(
    "fit", [critic_fit, adaptive_critic_fit, generator_fit], ids=["critic", "adaptive-critic", "generator"]
)
def test_a_killed_fit_resumes_to_the_uninterrupted_result_and_spends_the_same(fit, encoded, tmp_path):
    whole = PrivacyLedger()
    uninterrupted = fit(encoded, whole)

    identity = {"fit": "test"}
    killed = PrivacyLedger()
    with pytest.raises(Killed):
        fit(encoded, killed, FitCheckpoint(tmp_path, 3, identity), kill_after(5))
    assert killed.entries[-1].count == 5  # five releases happened before the kill
    assert stat.S_IMODE(os.stat(tmp_path / STATE_FILE).st_mode) == 0o600  # secret material

    resumed_ledger = PrivacyLedger()
    steps_seen: list[int] = []
    resumed = fit(encoded, resumed_ledger, FitCheckpoint(tmp_path, 3, identity), steps_seen.append)
    assert steps_seen == list(range(4, STEPS + 1))  # from the checkpoint after step 3
    assert same_weights(resumed.generator, uninterrupted.generator)
    assert same_weights(resumed.critic, uninterrupted.critic)
    assert [e.count for e in resumed_ledger.entries] == [e.count for e in whole.entries] == [STEPS]
    assert resumed_ledger.epsilon(1e-5) == pytest.approx(whole.epsilon(1e-5), rel=1e-12)


def test_a_checkpoint_of_another_fit_is_refused(encoded, tmp_path):
    with pytest.raises(Killed):
        critic_fit(encoded, PrivacyLedger(), FitCheckpoint(tmp_path, 2, {"table": "a"}), kill_after(3))
    with pytest.raises(InputError, match="another fit"):
        critic_fit(encoded, PrivacyLedger(), FitCheckpoint(tmp_path, 2, {"table": "b"}))


def test_a_checkpoint_with_another_network_is_refused(encoded, tmp_path):
    with pytest.raises(Killed):
        critic_fit(encoded, PrivacyLedger(), FitCheckpoint(tmp_path, 2, {}), kill_after(3))
    with pytest.raises(InputError, match="does not fit"):
        critic_fit(encoded, PrivacyLedger(), FitCheckpoint(tmp_path, 2, {}), critic_hidden=(8,))


def test_a_corrupt_checkpoint_is_refused_and_a_kill_mid_write_keeps_the_last_one(tmp_path):
    checkpoint = FitCheckpoint(tmp_path, 1, {})
    first = Snapshot(1, {"w": torch.ones(3)}, {"clip": 1.0})
    checkpoint.save(first)
    assert [p.name for p in tmp_path.iterdir()] == [STATE_FILE]  # no staging file left behind
    assert checkpoint.load().tensors["w"].tolist() == [1.0, 1.0, 1.0]
    (tmp_path / STATE_FILE).write_bytes(b"not a checkpoint")
    with pytest.raises(InputError, match="not a dpgan fit checkpoint"):
        checkpoint.load()


def reserved_step(ledger: PrivacyLedger, steps: int):
    return critic_step_module.critic_step(
        critic_step_module.CriticStepSettings.from_config(config()),
        units=100,
        sample_rate=0.1,
        noise_multiplier=1.0,
        max_norm=1.0,
        expected_batch_size=10.0,
        steps=steps,
        ledger=ledger,
        generator=torch.Generator().manual_seed(0),
    )


def test_a_restored_step_charges_its_releases_once_and_never_past_the_reservation():
    from dpgan.errors import BudgetError

    ledger = PrivacyLedger()
    step = reserved_step(ledger, 4)
    step.restore(3)
    assert ledger.entries[-1].count == 3 and step.releases == 3
    with pytest.raises(InputError, match="before its first release"):
        step.restore(1)
    with pytest.raises(BudgetError):
        reserved_step(PrivacyLedger(), 2).restore(3)


def test_checkpoint_every_must_be_a_positive_integer(tmp_path):
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InputError, match="checkpoint_every"):
            FitCheckpoint(tmp_path, bad, {})
