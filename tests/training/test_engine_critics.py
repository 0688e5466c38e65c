"""The critic's private step through the engine for critics that are not the tabular MLP.

The same `critic_step` / `critic_release` that the tabular recipes use must accept a conv critic
(images), an LSTM critic (series) and any other nn.Module scoring rows, with the same guarantees:
one charge per release, noise σ·C in one draw, every unit's clipped contribution (gradient and
feature sums together) of norm ≤ C, so a neighbouring batch moves the clipped sum by at most C,
and a σ = 0 control equal to the per-unit clipped sum of the grad_sample backend.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from dpgan.models.conv import ConvCritic
from dpgan.models.recurrent import LSTMCritic
from dpgan.privacy import grad_sample
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.mlp_clipping import FEATURES_KEY
from dpgan.training import critic_step, dp_critic
from dpgan.training.config import TrainingConfig

CLIP = 0.5
SIGMA = 0.8
UNIT_SHAPES = {"conv": (1, 8, 8), "lstm": (6, 2)}


def make_critic(kind: str) -> nn.Module:
    torch.manual_seed(0)  # test-only: the critic's initial weights
    return ConvCritic(UNIT_SHAPES["conv"], width=4) if kind == "conv" else LSTMCritic(2, hidden_size=5, head=4)


def batch(kind: str, n: int, seed: int) -> torch.Tensor:
    return torch.randn(n, *UNIT_SHAPES[kind], generator=torch.Generator().manual_seed(seed))


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, record: dict) -> None:
        self.calls.append({**record, "clipped": {k: v.detach().clone() for k, v in record["clipped"].items()}})


def settings(**changes) -> critic_step.CriticStepSettings:
    return critic_step.CriticStepSettings.from_config(TrainingConfig(**changes))


def release(kind, critic, real, *, sigma, ledger, recorder=None, with_features=False, seed=0):
    step_settings = settings()
    step = critic_step.critic_step(
        step_settings,
        units=100,
        sample_rate=0.1,
        noise_multiplier=sigma,
        max_norm=CLIP,
        expected_batch_size=10.0,
        steps=3,
        ledger=ledger,
        generator=torch.Generator().manual_seed(seed),
        recorder=recorder,
    )
    partners = batch(kind, len(real), seed=99)
    out = critic_step.critic_release(
        step,
        critic,
        real,
        torch.ones(len(real)),
        partners,
        step_settings,
        max_norm=CLIP,
        with_features=with_features,
        generator=torch.Generator().manual_seed(seed + 1),
    )
    return step, out


def flat(tensors: dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for _, t in sorted(tensors.items())])


@pytest.mark.parametrize("kind", ["conv", "lstm"])
def test_generic_critic_release_is_charged_noised_once_and_bounded(kind):
    critic, ledger, recorder = make_critic(kind), PrivacyLedger(), Recorder()
    real = batch(kind, 7, seed=1)
    step, out = release(kind, critic, real, sigma=SIGMA, ledger=ledger, recorder=recorder, with_features=True)
    (entry,) = ledger.entries
    assert (entry.count, entry.noise_multiplier, entry.sampling_rate) == (1, SIGMA, 0.1)
    (call,) = recorder.calls
    assert call["noise_std"] == pytest.approx(SIGMA * CLIP) and call["divisor"] == 10.0
    assert call["units"] == 7 and call["norms"].shape == (7,) and bool((call["norms"] > 0).all())
    head = critic.out.in_features
    assert call["clipped"][FEATURES_KEY].shape == (2 * head,)
    assert set(call["clipped"]) == {n for n, _ in critic.named_parameters()} | {FEATURES_KEY}
    assert flat(call["clipped"]).norm() <= 7 * CLIP + 1e-5  # a sum of 7 vectors of norm ≤ C
    assert set(out.gradient(critic)) == {n for n, _ in critic.named_parameters()}
    assert out.extra(FEATURES_KEY).shape == (2 * head,)


@pytest.mark.parametrize("kind", ["conv", "lstm"])
def test_generic_critic_neighbouring_batches_move_the_clipped_sum_by_at_most_c(kind):
    """Removing one unit (same α and partners for the others) moves the pre-noise sum by ≤ C."""
    critic = make_critic(kind)
    real = batch(kind, 6, seed=2) * 5.0  # large inputs: most units are clipped
    sums = []
    for rows in (real, real[:-1]):
        step_settings = settings()
        units = critic_step.CriticUnits(
            real=rows,
            weight=torch.ones(len(rows)),
            partners=batch(kind, 6, seed=3)[: len(rows)],
            alpha=torch.rand(6, 1, generator=torch.Generator().manual_seed(4))[: len(rows)],
            groups=None,
            with_features=False,
        )
        summed, _ = critic_step.critic_clipped_sum(step_settings)(critic, units, CLIP)
        sums.append(flat(summed))
    assert float((sums[0] - sums[1]).norm()) <= CLIP * (1 + 1e-5)
    assert float((sums[0] - sums[1]).norm()) > 0.5 * CLIP  # the removed unit was clipped to C


@pytest.mark.parametrize("kind", ["conv", "lstm"])
def test_generic_critic_control_equals_the_backend_sum(kind):
    """σ = 0, no ledger: the release is the grad_sample backend's clipped sum ÷ the divisor."""
    critic = make_critic(kind)
    real = batch(kind, 5, seed=5)
    _, out = release(kind, critic, real, sigma=0.0, ledger=None, seed=7)
    alpha = torch.rand(5, 1, generator=torch.Generator().manual_seed(8))
    reference = grad_sample.clipped_sum(
        critic,
        grad_sample.CriticUnitLoss(
            real=real,
            weight=torch.ones(5),
            partners=batch(kind, 5, seed=99),
            alpha=alpha,
            gp_weight=TrainingConfig().gp_weight,
            one_sided=TrainingConfig().one_sided_penalty,
        ),
        CLIP,
        backend=grad_sample.GENERIC,
    )
    for name, g in out.gradient(critic).items():
        torch.testing.assert_close(g, reference.gradients[name] / 10.0, rtol=1e-4, atol=1e-6)


class ResidualCritic(nn.Module):
    """A row critic the MLP kernel cannot take (a skip connection and LayerNorm)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.inp = nn.Linear(width, 16)
        self.norm = nn.LayerNorm(16)
        self.block = nn.Linear(16, 16)
        self.head = nn.Linear(16, 1)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.leaky_relu(self.inp(x), 0.2)
        return h + torch.nn.functional.leaky_relu(self.block(self.norm(h)), 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x)).squeeze(-1)


def test_training_loop_takes_any_row_critic_through_the_generic_backend():
    """train_dp_critic with a residual critic: the generic path runs, each step charged once."""
    from dpgan.models.output_spans import OutputSpan

    width = 6
    data = torch.rand(120, width, generator=torch.Generator().manual_seed(0)) * 2 - 1
    spans = [OutputSpan(activation="tanh", start=i, width=1, column=f"x{i}") for i in range(width)]
    config = TrainingConfig(batch_size=16, noise_dim=4, generator_hidden=(8,), critic_hidden=(8,), n_critic=2)
    critic = ResidualCritic(width)
    loss = grad_sample.CriticUnitLoss(real=data[:2])
    assert grad_sample.select_backend(critic, loss) == grad_sample.GENERIC
    before = [p.detach().clone() for p in critic.parameters()]
    ledger, recorder = PrivacyLedger(), Recorder()
    result = dp_critic.train_dp_critic(
        data,
        spans,
        config,
        sample_rate=16 / 120,
        expected_batch_size=16.0,
        noise_multiplier=SIGMA,
        steps=4,
        generator=torch.Generator().manual_seed(1),
        ledger=ledger,
        recorder=recorder,
        critic=critic,
    )
    assert result.critic is critic and ledger.entries[0].count == 4 and len(recorder.calls) == 4
    assert all(math.isclose(c["noise_std"], SIGMA * config.max_grad_norm) for c in recorder.calls)
    assert any(not torch.equal(a, b) for a, b in zip(before, critic.parameters()))
    assert all(torch.isfinite(p).all() for p in result.generator.parameters())


class SeriesGenerator(nn.Module):
    """LSTMGenerator behind the loop's generator interface G(z, generator, condition): z of
    T·noise_dim numbers per series, reshaped to per-step noise."""

    def __init__(self, steps: int, noise_dim: int, features: int) -> None:
        super().__init__()
        from dpgan.models.recurrent import LSTMGenerator

        self.steps, self.noise_dim = steps, noise_dim
        self.net = LSTMGenerator(noise_dim, features, hidden_size=6)

    def forward(self, z: torch.Tensor, generator=None, condition=None) -> torch.Tensor:
        return self.net(z.view(z.shape[0], self.steps, self.noise_dim), condition)


def test_the_gan_loop_trains_a_series_generator_against_an_lstm_critic():
    """The loop is not tabular: a 3-D data set (series), an LSTM generator and an LSTM critic go
    through train_dp_critic unchanged: one charged release per step at σ·C, G updated, finite."""
    steps_t, features = 6, 2
    data = torch.rand(60, steps_t, features, generator=torch.Generator().manual_seed(0)) * 2 - 1
    config = TrainingConfig(batch_size=8, noise_dim=steps_t * 3, n_critic=2)
    torch.manual_seed(0)
    G = SeriesGenerator(steps_t, 3, features)
    before = [p.detach().clone() for p in G.parameters()]
    ledger, recorder = PrivacyLedger(), Recorder()
    result = dp_critic.train_dp_critic(
        data,
        [],
        config,
        sample_rate=8 / 60,
        expected_batch_size=8.0,
        noise_multiplier=SIGMA,
        steps=4,
        generator=torch.Generator().manual_seed(1),
        ledger=ledger,
        recorder=recorder,
        critic=LSTMCritic(features, hidden_size=5, head=4),
        generator_net=G,
    )
    assert ledger.entries[0].count == 4 and len(recorder.calls) == 4
    assert all(math.isclose(c["noise_std"], SIGMA * config.max_grad_norm) for c in recorder.calls)
    for call in recorder.calls:  # each unit clipped to C, so the sum is within C per unit
        total = torch.cat([t.flatten() for t in call["clipped"].values()]).norm()
        assert float(total) <= config.max_grad_norm * call["units"] + 1e-5
    assert any(not torch.equal(a, b) for a, b in zip(before, G.parameters()))  # two generator steps ran
    sample = result.generator(torch.randn(3, config.noise_dim))
    assert sample.shape == (3, steps_t, features) and torch.isfinite(sample).all()
