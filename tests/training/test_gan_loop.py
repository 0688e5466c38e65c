"""The shared generator side (dpgan.training.gan_loop): both DP strategies call the same plug-ins
at the same points, and a plug-in adds to G's DP gradient after it is in place, never before."""

from __future__ import annotations

import pytest
import torch

from dpgan.models.tabular import TabularGenerator
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.recipes import RECIPES
from dpgan.training import dp_critic, dp_generator
from dpgan.training.config import TrainingConfig
from dpgan.training.fake_rows import InputsFn
from dpgan.training.gan_loop import GeneratorSide, generator_for


@pytest.fixture(scope="module")
def encoded(encode_adult):
    return encode_adult(120)


def small_config(**changes) -> TrainingConfig:
    base = {"batch_size": 16, "noise_dim": 8, "generator_hidden": (16,), "critic_hidden": (16,), "n_critic": 2}
    return TrainingConfig(**{**base, **changes})


class RecordingHook:
    """Logs when it is called, what G's gradient was at that moment, and adds a known gradient."""

    def __init__(self, name: str, log: list, push: float = 0.0) -> None:
        self.name, self.log, self.push = name, log, push

    def warm_start(self, G: TabularGenerator, draw_inputs: InputsFn) -> None:
        z, _ = draw_inputs()
        self.log.append((self.name, "warm_start", z.shape[0]))

    def add_gradient(self, G: TabularGenerator, draw_inputs: InputsFn) -> None:
        grads = [p.grad for p in G.parameters()]
        self.log.append((self.name, "add_gradient", all(g is not None for g in grads)))
        for p in G.parameters():
            p.grad = p.grad + self.push


def test_critic_strategy_calls_each_plugin_once_per_generator_step_after_the_dp_gradient(encoded):
    data, spans, _ = encoded
    log: list = []
    config = small_config()
    dp_critic.train_dp_critic(
        data,
        spans,
        config,
        sample_rate=0.1,
        expected_batch_size=12.0,
        noise_multiplier=1.0,
        steps=6,
        generator=torch.Generator().manual_seed(0),
        ledger=PrivacyLedger(),
        hooks=[RecordingHook("a", log), RecordingHook("b", log)],
    )
    # warm starts first, in order, drawing one fake batch of the expected size; then 6 / n_critic = 3
    # generator steps, each seeing G's (DP) gradient already in place
    assert log[:2] == [("a", "warm_start", 12), ("b", "warm_start", 12)]
    assert log[2:] == [("a", "add_gradient", True), ("b", "add_gradient", True)] * 3


def test_generator_strategy_calls_each_plugin_once_per_step_after_the_noised_gradient(encoded):
    data, spans, condition = encoded
    log: list = []
    config = small_config(**{**RECIPES["dtgan-g"].overrides, "num_discriminators": 2, "batch_size": 8})
    dp_generator.train_dp_generator(
        data,
        spans,
        config,
        noise_multiplier=1.0,
        steps=3,
        generator=torch.Generator().manual_seed(0),
        shard_key=b"k" * 32,
        ledger=PrivacyLedger(),
        condition=condition,
        hooks=[RecordingHook("a", log)],
    )
    assert log == [("a", "warm_start", 8)] + [("a", "add_gradient", True)] * 3


def test_a_plugin_gradient_moves_g_by_exactly_what_it_adds(encoded):
    """With plain SGD, a zero strategy gradient and a hook adding c to every .grad, one step moves
    every weight of G by -lr·c: the plug-in's gradient reaches the optimizer and nothing else does."""
    _, spans, _ = encoded
    config = small_config(optimizer="rmsprop", ema_decay=0.0)
    G = generator_for(config, spans, None)
    side = GeneratorSide(config, G, None, torch.Generator().manual_seed(0), 4, [RecordingHook("h", [], 0.5)])
    side.optimizer = torch.optim.SGD(side.G.parameters(), lr=0.1)
    before = [p.detach().clone() for p in side.G.parameters()]

    def zero_backward() -> None:
        for p in side.G.parameters():
            p.grad = torch.zeros_like(p)

    side.step(zero_backward)
    for old, new in zip(before, side.G.parameters()):
        torch.testing.assert_close(new.detach(), old - 0.05)


def test_released_generator_is_the_average_and_is_in_eval_mode(encoded):
    _, spans, _ = encoded
    config = small_config(ema_decay=0.5)
    side = GeneratorSide(config, generator_for(config, spans, None), None, torch.Generator().manual_seed(0), 4)
    assert side.G_ema is not side.G
    side.optimizer = torch.optim.SGD(side.G.parameters(), lr=1.0)
    start = [p.detach().clone() for p in side.G.parameters()]

    def unit_backward() -> None:
        for p in side.G.parameters():
            p.grad = torch.ones_like(p)

    side.step(unit_backward)
    released = side.released()
    assert not released.training
    for s, p in zip(start, released.parameters()):  # EMA at 0.5 of a step of -1
        torch.testing.assert_close(p.detach(), s - 0.5)
