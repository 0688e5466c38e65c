"""Static shapes (issue 34): a Poisson batch padded to a public size with a 0/1 mask releases what
the unpadded batch releases. Every per-unit backend zeroes a padded row's clip factor and reports
only the sampled rows' norms; the critic's loop with `static_shapes` draws the same numbers and
charges the same ledger as without it, and its generator ends within float rounding of the
unpadded run's; a draw larger than the pad runs unpadded."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from dpgan.errors import InputError
from dpgan.models.conv import ConvCritic
from dpgan.privacy import grad_sample
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.grad_sample.functorch import functorch_clipped_sum
from dpgan.privacy.padded_batches import pad_size
from dpgan.training import critic_step, dp_critic
from dpgan.training.config import TrainingConfig

DIM, CLIP = 7, 0.3


def mlp(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)  # test-only: initial weights
    return nn.Sequential(nn.Linear(DIM, 12), nn.LeakyReLU(0.2), nn.Linear(12, 1))


def rows(n: int, seed: int, shape=(DIM,)) -> torch.Tensor:
    return torch.randn(n, *shape, generator=torch.Generator().manual_seed(seed))


def padded(t: torch.Tensor, size: int) -> torch.Tensor:
    return critic_step.pad_rows(t, size)


def losses(real, partners, alpha, weight, pad=None, **options) -> grad_sample.CriticUnitLoss:
    n = len(real)
    mask = None
    if pad is not None:
        real, partners, alpha, weight = (padded(t, pad) for t in (real, partners, alpha, weight))
        mask = padded(torch.ones(n), pad)
    return grad_sample.CriticUnitLoss(real=real, weight=weight, partners=partners, alpha=alpha, mask=mask, **options)


CASES = {
    "ghost, penalty": ("mlp-ghost", {"gp_weight": 10.0}),
    "ghost, real term only": ("mlp-ghost", {}),
    "ghost, penalty and features": ("mlp-ghost", {"gp_weight": 10.0, "feature_scale": 0.1}),
    "generic, penalty and features": ("functorch", {"gp_weight": 10.0, "feature_scale": 0.1}),
}


@pytest.mark.parametrize("case", CASES)
def test_every_backend_adds_nothing_for_a_padded_row(case):
    backend, options = CASES[case]
    critic = mlp()
    critic.features = lambda x: critic[1](critic[0](x))  # the penultimate activations (the ghost's probe checks)
    real, partners, alpha, weight = rows(9, 1), rows(9, 2), torch.rand(9, 1), torch.rand(9) + 0.5
    plain = grad_sample.clipped_sum(critic, losses(real, partners, alpha, weight, **options), CLIP, backend=backend)
    masked = grad_sample.clipped_sum(
        critic, losses(real, partners, alpha, weight, pad=24, **options), CLIP, backend=backend
    )
    assert plain.backend == masked.backend
    torch.testing.assert_close(masked.norms, plain.norms, rtol=1e-6, atol=1e-6)  # the sampled rows' only
    for name, g in plain.gradients.items():
        torch.testing.assert_close(masked.gradients[name], g, rtol=1e-6, atol=1e-6)
    if plain.features is not None:
        torch.testing.assert_close(masked.features, plain.features, rtol=1e-6, atol=1e-6)
    # the padded rows are zeros: unmasked they would add their penalty terms, so the mask is what removes them
    unmasked = grad_sample.clipped_sum(
        critic,
        grad_sample.CriticUnitLoss(
            real=padded(real, 24), weight=padded(weight, 24), partners=padded(partners, 24), alpha=padded(alpha, 24),
            **options,
        ),
        CLIP,
        backend=backend,
    )  # fmt: skip
    if options.get("gp_weight"):
        assert any(not torch.allclose(unmasked.gradients[n], g, atol=1e-5) for n, g in plain.gradients.items())


def test_grouped_clipping_and_a_conv_critic_mask_the_padding_too():
    critic = ConvCritic((1, 8, 8), width=3)
    real, partners, alpha, weight = rows(5, 3, (1, 8, 8)), rows(5, 4, (1, 8, 8)), torch.rand(5), torch.ones(5)
    names = tuple(n for n, _ in critic.named_parameters())
    groups = grad_sample.ParameterGroups((names[:2], names[2:]), (0.2, 0.4))
    for grouping in (None, groups):
        plain = functorch_clipped_sum(
            critic, losses(real, partners, alpha, weight, gp_weight=5.0), CLIP, groups=grouping
        )
        masked = functorch_clipped_sum(
            critic, losses(real, partners, alpha, weight, pad=16, gp_weight=5.0), CLIP, groups=grouping, chunk_size=7
        )
        torch.testing.assert_close(masked.norms, plain.norms, rtol=1e-6, atol=1e-6)
        if grouping is not None:
            torch.testing.assert_close(masked.group_norms, plain.group_norms, rtol=1e-6, atol=1e-6)
        for name, g in plain.gradients.items():
            torch.testing.assert_close(masked.gradients[name], g, rtol=1e-6, atol=1e-6)


def test_a_mask_of_the_wrong_shape_is_refused():
    with pytest.raises(InputError, match="mask must have shape"):
        grad_sample.CriticUnitLoss(real=rows(4, 0), mask=torch.ones(5))


@pytest.fixture(scope="module")
def encoded(encode_adult):
    return encode_adult(200)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, record: dict) -> None:
        self.calls.append(
            {
                "units": record["units"],
                "rows": record["rows"],
                "noise_std": record["noise_std"],
                "divisor": record["divisor"],
                "norms": record["norms"].detach().clone(),
                "clipped": {k: v.detach().clone() for k, v in record["clipped"].items()},
            }
        )


def fit(encoded, static: bool, **changes):
    data, spans, condition = encoded
    base = {"batch_size": 16, "noise_dim": 8, "generator_hidden": (16,), "critic_hidden": (16,), "n_critic": 2}
    config = TrainingConfig(**{**base, **changes, "static_shapes": static})
    recorder, ledger = Recorder(), PrivacyLedger()
    torch.manual_seed(0)  # test-only: the networks' initial weights
    result = dp_critic.train_dp_critic(
        data,
        spans,
        config,
        sample_rate=0.08,
        expected_batch_size=16.0,
        noise_multiplier=1.0,
        steps=6,
        generator=torch.Generator().manual_seed(3),
        ledger=ledger,
        condition=condition,
        recorder=recorder,
    )
    return result, recorder.calls, ledger


@pytest.mark.parametrize("changes", [{}, {"info_loss_weight": 1.0}, {"clipping_groups": "per-layer"}], ids=str)
def test_the_padded_loop_releases_what_the_unpadded_loop_releases(encoded, changes):
    padded_run, padded_calls, padded_ledger = fit(encoded, True, **changes)
    plain_run, plain_calls, plain_ledger = fit(encoded, False, **changes)
    assert [c["units"] for c in padded_calls] == [c["units"] for c in plain_calls]  # the same draws
    assert {c["rows"] for c in padded_calls} == {pad_size(16.0, 0.08)}  # every step was padded
    assert [c["rows"] for c in plain_calls] == [c["units"] for c in plain_calls]
    for padded_call, plain_call in zip(padded_calls, plain_calls, strict=True):
        assert padded_call["noise_std"] == plain_call["noise_std"] and padded_call["divisor"] == plain_call["divisor"]
        torch.testing.assert_close(padded_call["norms"], plain_call["norms"], rtol=1e-5, atol=1e-6)
        for name, g in plain_call["clipped"].items():
            torch.testing.assert_close(padded_call["clipped"][name], g, rtol=1e-5, atol=1e-6)
    assert [e.to_dict() for e in padded_ledger.entries] == [e.to_dict() for e in plain_ledger.entries]
    for (name, p), q in zip(padded_run.generator.named_parameters(), plain_run.generator.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-5, msg=name)


def test_a_draw_larger_than_the_pad_runs_unpadded():
    """pad_to below |B|: the release is the unpadded one, bit for bit (the same function of the units)."""
    settings = critic_step.CriticStepSettings.from_config(TrainingConfig())
    critic, real, partners = mlp(), rows(11, 5), rows(11, 6)

    def run(pad_to):
        step = critic_step.critic_step(
            settings, units=100, sample_rate=0.1, noise_multiplier=1.0, max_norm=CLIP, expected_batch_size=10.0,
            steps=1, ledger=PrivacyLedger(), generator=torch.Generator().manual_seed(0),
        )  # fmt: skip
        release = critic_step.critic_release(
            step, critic, real, torch.ones(11), partners, settings, max_norm=CLIP, with_features=False,
            generator=torch.Generator().manual_seed(1), pad_to=pad_to,
        )  # fmt: skip
        return release.gradient(critic)

    overflow, plain = run(8), run(None)
    assert all(torch.equal(overflow[n], plain[n]) for n in plain)


def test_static_shapes_is_refused_with_microbatches_and_not_saved_when_off():
    with pytest.raises(InputError, match="static_shapes"):
        TrainingConfig(loss="bce", microbatches=4, static_shapes=True).check()
    assert "static_shapes" not in TrainingConfig().to_dict()
    assert TrainingConfig(static_shapes=True).to_dict()["static_shapes"] is True
