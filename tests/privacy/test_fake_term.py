"""The critic's fake-only term: its penalty-free fast path computes what the full kernel computed.

The fake term ∇θ (1/n) Σ_j w_j·D(x̃_j) reads no private record, so it is never noised; it is
clipped per row by default (config.clip_fake_term). `output_clipped_sum` skips the interpolate
and the penalty chain that `wgan_gp_clipped_sum` runs (and multiplies by 0) when gp_weight = 0.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.func import functional_call

from dpgan.models.tabular import TabularCritic
from dpgan.privacy import dpsgd
from dpgan.privacy.mlp_clipping import _forward, _linear_layers, output_clipped_sum, wgan_gp_clipped_sum
from dpgan.training.dp_critic import fake_term_gradient
from random_critic import random_critic

DIM = 7
HIDDEN_SHAPES = [(), (16,), (16, 12), (9, 11, 5)]


def batch_and_weights(rows: int, seed: int, dtype=torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x = 3.0 * torch.randn(rows, DIM, generator=gen, dtype=torch.float64)
    weight = 0.2 + torch.rand(rows, generator=gen, dtype=torch.float64)  # BCE-like fake weights σ(D) ∈ (0, 1)
    return x.to(dtype), weight.to(dtype)


def reference_per_row_gradients(critic: TabularCritic, x: torch.Tensor, weight: torch.Tensor):
    """∇θ [w_j·D(x_j)] for every row, by torch.func."""
    params = {k: v.detach() for k, v in critic.named_parameters()}

    def row_term(p, x_row, w_row):
        return w_row * functional_call(critic, p, (x_row.unsqueeze(0),)).squeeze()

    return dpsgd.per_example_gradients(row_term, params, x, weight)


def old_fake_sum(critic, x, weight, max_norm):
    """What the training loop computed before the fast path: the full kernel with gp_weight = 0."""
    unused = torch.zeros(x.shape[0], 1, dtype=x.dtype)
    return wgan_gp_clipped_sum(critic, x, x, unused, gp_weight=0.0, max_norm=max_norm, real_weight=-weight)


@pytest.mark.parametrize("hidden", HIDDEN_SHAPES, ids=str)
def test_fast_path_matches_torch_func_per_row_clipping(hidden):
    """Per-row norms and the per-row clipped sum equal vmap(grad) clipped jointly over all parameters."""
    critic = random_critic(DIM, hidden, seed=1)
    x, weight = batch_and_weights(30, seed=2)
    ref = reference_per_row_gradients(critic, x, weight)
    ref_norms = dpsgd.per_example_norms(ref)
    max_norm = float(ref_norms.median())  # half the rows are clipped
    assert (ref_norms > max_norm).sum() >= 10 and (ref_norms < max_norm).sum() >= 10
    sums, norms = output_clipped_sum(critic, x, weight, max_norm=max_norm)
    torch.testing.assert_close(norms, ref_norms, rtol=1e-9, atol=0.0)
    ref_sums = {k: g.sum(0) for k, g in dpsgd.clip_per_example(ref, max_norm).items()}
    assert set(sums) == set(ref_sums)
    for name, value in ref_sums.items():
        assert sums[name].shape == value.shape
        torch.testing.assert_close(sums[name], value, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("hidden", HIDDEN_SHAPES, ids=str)
def test_fast_path_equals_the_full_kernel_with_zero_penalty_bit_for_bit(hidden, dtype):
    """Same floating-point order as wgan_gp_clipped_sum(gp_weight=0): a pure speed-up of training."""
    critic = random_critic(DIM, hidden, seed=3).to(dtype)
    x, weight = batch_and_weights(40, seed=4, dtype=dtype)
    _, norms = output_clipped_sum(critic, x, weight, max_norm=1e9)
    for max_norm in (float(norms.median()), float("inf")):
        fast, fast_norms = output_clipped_sum(critic, x, weight, max_norm=max_norm)
        old, old_norms = old_fake_sum(critic, x, weight, max_norm)
        assert torch.equal(fast_norms, old_norms)
        assert set(fast) == set(old)
        for name in old:
            assert torch.equal(fast[name], old[name]), name


def test_each_row_contributes_at_most_c_and_rows_do_not_interact():
    """The clipped sum is the sum of single-row sums, each of norm ≤ C (the bound the default relies on)."""
    critic = random_critic(DIM, (16, 12), seed=5)
    with torch.no_grad():
        critic.net[0].weight.mul_(20.0)
    x, weight = batch_and_weights(12, seed=6)
    max_norm = 0.5
    total, norms = output_clipped_sum(critic, x, weight, max_norm=max_norm)
    assert (norms > max_norm).sum() >= 6
    names = list(total)
    singles = [
        torch.cat(
            [
                g.reshape(-1)
                for g in output_clipped_sum(critic, x[i : i + 1], weight[i : i + 1], max_norm=max_norm)[0].values()
            ]
        )
        for i in range(12)
    ]
    for contribution in singles:
        assert contribution.norm() <= max_norm * (1 + 1e-9)
    torch.testing.assert_close(
        torch.stack(singles).sum(0), torch.cat([total[n].reshape(-1) for n in names]), rtol=1e-9, atol=1e-12
    )


def test_training_fake_term_is_the_mean_of_per_row_clipped_gradients():
    """fake_term_gradient (what train_dp_critic calls) = (1/n) Σ_j clip_C(∇θ w_j D(x̃_j)); unclipped = autograd."""
    critic = random_critic(DIM, (16, 12), seed=7)
    x, weight = batch_and_weights(25, seed=8)
    ref = reference_per_row_gradients(critic, x, weight)
    max_norm = float(dpsgd.per_example_norms(ref).median())
    clipped = fake_term_gradient(critic, x, weight, max_norm)
    plain = fake_term_gradient(critic, x, weight, None)
    for name, g in dpsgd.clip_per_example(ref, max_norm).items():
        torch.testing.assert_close(clipped[name], g.mean(0), rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(plain[name], ref[name].mean(0), rtol=1e-9, atol=1e-12)
    assert any(not torch.allclose(clipped[n], plain[n]) for n in plain)  # clipping did something


@pytest.mark.parametrize("slope", [0.2, 0.0, 0.01, 1.5], ids=str)
def test_activation_slopes_equal_the_leaky_relu_derivative_at_zero_too(slope):
    """s = 1 where a > 0 and `slope` where a ≤ 0 (a = 0 exactly included); h = leaky_relu(a)."""
    critic = nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(slope), nn.Linear(4, 1)).double()
    with torch.no_grad():
        critic[0].weight.copy_(torch.tensor([[1.0, 0, 0], [-1.0, 0, 0], [0, 1.0, 0], [0, 0, 0]]))
        critic[0].bias.zero_()
    x = torch.tensor([[2.0, 0.0, 1.0], [-3.0, -1.0, 0.0], [0.0, 0.0, 0.0]], dtype=torch.float64)
    linears, leak = _linear_layers(critic)
    inputs, slopes = _forward(linears, x, leak)
    a = x @ critic[0].weight.T
    expected = torch.where(a > 0, torch.ones_like(a), torch.full_like(a, slope))
    assert (a == 0).any()
    assert torch.equal(slopes[0], expected)
    assert torch.equal(inputs[1], nn.functional.leaky_relu(a, slope))
