"""Microbatch clipping: agreement with torch.func, empty groups, and the 2C (vs C) sensitivity bound."""

from __future__ import annotations

import pytest
import torch
from torch.func import functional_call

from dpgan.errors import InputError
from dpgan.models.tabular import TabularCritic
from dpgan.privacy import dpsgd
from dpgan.privacy.microbatch import (
    MICROBATCH_SENSITIVITY_FACTOR,
    assign_microbatches,
    microbatch_clipped_sum,
    sensitivity_factor,
)
from random_critic import random_critic

DIM = 7
HIDDEN = (16, 16)


def make_critic(seed: int = 0) -> TabularCritic:
    return random_critic(DIM, HIDDEN, seed)


def make_data(batch: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, DIM, generator=gen, dtype=torch.float64)
    w = -torch.rand(batch, generator=gen, dtype=torch.float64) * 2.0  # like -σ(-D), up to scale
    return x, w


def params_of(critic: TabularCritic) -> dict[str, torch.Tensor]:
    return {k: v.detach() for k, v in critic.named_parameters()}


def reference(critic, x, w, groups, num_groups, max_norm):
    """vmap(grad) per-example gradients, averaged per group, clipped jointly per group, summed."""

    def record_loss(params, xi, wi):
        return wi * functional_call(critic, params, (xi.unsqueeze(0),)).squeeze()

    per_ex = dpsgd.per_example_gradients(record_loss, params_of(critic), x, w)
    onehot = torch.nn.functional.one_hot(groups, num_groups).T.to(x.dtype)
    avg = onehot / onehot.sum(dim=1, keepdim=True).clamp_min(1.0)
    group_grads = {k: torch.einsum("gb,b...->g...", avg, g) for k, g in per_ex.items()}
    norms = dpsgd.per_example_norms(group_grads)
    sums = {k: g.sum(dim=0) for k, g in dpsgd.clip_per_example(group_grads, max_norm).items()}
    return sums, norms


def flat(grads: dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.cat([grads[n].reshape(-1) for n in sorted(grads)])


def assert_grads_close(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert set(a) == set(b)
    for name in a:
        assert a[name].shape == b[name].shape
        torch.testing.assert_close(a[name], b[name], rtol=1e-9, atol=1e-9)


# --- agreement with torch.func -------------------------------------------------------------------


@pytest.mark.parametrize("clipping", ["active", "inactive"])
def test_matches_torch_func_reference(clipping: str):
    critic = make_critic(1)
    x, w = make_data(23, seed=2)
    groups = assign_microbatches(23, 4, torch.Generator().manual_seed(3))
    assert torch.bincount(groups, minlength=4).min() > 0
    _, ref_norms = reference(critic, x, w, groups, 4, 1e9)
    max_norm = float(ref_norms.min()) * 0.5 if clipping == "active" else 1e9
    sums, norms = microbatch_clipped_sum(critic, x, w, groups, 4, max_norm=max_norm)
    ref_sums, ref_norms = reference(critic, x, w, groups, 4, max_norm)
    torch.testing.assert_close(norms, ref_norms, rtol=1e-9, atol=1e-9)
    assert_grads_close(sums, ref_sums)
    assert set(sums) == set(params_of(critic))
    if clipping == "active":
        assert float(flat(sums).norm()) <= 4 * max_norm + 1e-9


def test_per_example_case_equals_per_example_clipping():
    critic = make_critic(4)
    x, w = make_data(23, seed=5)
    groups = torch.arange(23)

    def record_loss(params, xi, wi):
        return wi * functional_call(critic, params, (xi.unsqueeze(0),)).squeeze()

    per_ex = dpsgd.per_example_gradients(record_loss, params_of(critic), x, w)
    max_norm = float(dpsgd.per_example_norms(per_ex).median())
    ref = {k: g.sum(dim=0) for k, g in dpsgd.clip_per_example(per_ex, max_norm).items()}
    sums, norms = microbatch_clipped_sum(critic, x, w.unsqueeze(1), groups, 23, max_norm=max_norm)
    torch.testing.assert_close(norms, dpsgd.per_example_norms(per_ex), rtol=1e-9, atol=1e-9)
    assert_grads_close(sums, ref)


def test_empty_groups_contribute_nothing():
    critic = make_critic(6)
    x, w = make_data(10, seed=7)
    groups = torch.tensor([0, 0, 2, 2, 2, 5, 5, 0, 2, 5])  # groups 1, 3, 4, 6 are empty
    sums, norms = microbatch_clipped_sum(critic, x, w, groups, 7, max_norm=0.3)
    assert norms.shape == (7,)
    assert torch.all(norms[[1, 3, 4, 6]] == 0)
    assert torch.all(norms[[0, 2, 5]] > 0)
    # same as only the non-empty groups, relabelled 0..2
    relabelled = torch.tensor([0, 0, 1, 1, 1, 2, 2, 0, 1, 2])
    dense, dense_norms = microbatch_clipped_sum(critic, x, w, relabelled, 3, max_norm=0.3)
    assert_grads_close(sums, dense)
    torch.testing.assert_close(norms[[0, 2, 5]], dense_norms)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_record_contributes_zero_and_never_poisons_the_sum(bad: float):
    """One record with a NaN or infinite value: its gradient counts as 0 in its group's mean (it still
    counts in |g|), the other records' contributions are unchanged, and the release stays finite."""
    critic = make_critic(8)
    x, w = make_data(12, seed=9)
    groups = torch.tensor([0, 0, 1, 1, 1, 2, 2, 0, 1, 2, 3, 3])
    poisoned_x, poisoned_w = x.clone(), w.clone()
    poisoned_x[4, 2] = bad
    sums, norms = microbatch_clipped_sum(critic, poisoned_x, poisoned_w, groups, 4, max_norm=0.3)
    assert all(bool(torch.isfinite(v).all()) for v in sums.values())
    assert bool(torch.isfinite(norms).all())
    silent_x, silent_w = x.clone(), w.clone()  # the same record with a zero gradient (w = 0)
    silent_x[4], silent_w[4] = 0.0, 0.0
    expected, expected_norms = microbatch_clipped_sum(critic, silent_x, silent_w, groups, 4, max_norm=0.3)
    assert_grads_close(sums, expected)
    torch.testing.assert_close(norms, expected_norms, rtol=1e-9, atol=1e-9)


def test_a_group_whose_norm_overflows_contributes_nothing():
    critic = make_critic(8)
    x, w = make_data(6, seed=10)
    groups = torch.tensor([0, 0, 1, 1, 2, 2])
    huge = w.clone()
    huge[2] = 1e308  # finite, but its group's gradient norm overflows
    sums, norms = microbatch_clipped_sum(critic, x, huge, groups, 3, max_norm=0.3)
    assert not bool(torch.isfinite(norms[1])) and bool(torch.isfinite(norms[[0, 2]]).all())
    assert all(bool(torch.isfinite(v).all()) for v in sums.values())
    without = microbatch_clipped_sum(
        critic, x[[0, 1, 4, 5]], w[[0, 1, 4, 5]], torch.tensor([0, 0, 2, 2]), 3, max_norm=0.3
    )
    assert_grads_close(sums, without[0])


def test_empty_batch_gives_zeros():
    critic = make_critic(0)
    x, w = make_data(0, seed=0)
    sums, norms = microbatch_clipped_sum(critic, x, w, torch.zeros(0, dtype=torch.long), 3, max_norm=1.0)
    assert torch.all(norms == 0) and norms.shape == (3,)
    assert all(torch.all(v == 0) for v in sums.values())


# --- sensitivity ---------------------------------------------------------------------------------


def neighbour_difference(critic, x, w, groups, m, extra_x, extra_w, extra_group, max_norm) -> float:
    """‖sum(X ∪ {x'}) − sum(X)‖ with existing records' group ids unchanged."""
    base, _ = microbatch_clipped_sum(critic, x, w, groups, m, max_norm=max_norm)
    x2 = torch.cat([x, extra_x.unsqueeze(0)])
    w2 = torch.cat([w, extra_w.reshape(1)])
    g2 = torch.cat([groups, torch.tensor([extra_group])])
    added, _ = microbatch_clipped_sum(critic, x2, w2, g2, m, max_norm=max_norm)
    return float((flat(added) - flat(base)).norm())


@pytest.mark.parametrize("seed", range(6))
def test_random_neighbours_within_2c(seed: int):
    critic = make_critic(seed)
    x, w = make_data(30, seed=100 + seed)
    gen = torch.Generator().manual_seed(200 + seed)
    m, max_norm = 5, 0.2
    groups = assign_microbatches(30, m, gen)
    extra_x = torch.randn(DIM, generator=gen, dtype=torch.float64) * 3.0
    for extra_w in (-1.0, 50.0, -1e6):
        diff = neighbour_difference(critic, x, w, groups, m, extra_x, torch.tensor(extra_w), seed % m, max_norm)
        assert diff <= MICROBATCH_SENSITIVITY_FACTOR * max_norm + 1e-9
    # per-example: adding a record in its own group changes the sum by at most C
    per = neighbour_difference(critic, x, w, torch.arange(30), 31, extra_x, torch.tensor(-1e6), 30, max_norm)
    assert per <= max_norm + 1e-9


def test_adversarial_neighbour_reaches_2c():
    """A copy of a group's only record with a huge opposite weight flips the clipped mean: ‖Δ‖ = 2C.

    This is why microbatch noise must use 2σC, not σC.
    """
    critic = make_critic(8)
    x, w = make_data(12, seed=9)
    groups = torch.tensor([0, 1, 1, 2, 2, 2, 1, 0, 2, 1, 2, 3])  # record 11 alone in group 3
    max_norm = 1e-3  # every group is clipped
    _, norms = microbatch_clipped_sum(critic, x, w, groups, 4, max_norm=max_norm)
    assert torch.all(norms > max_norm)
    diff = neighbour_difference(critic, x, w, groups, 4, x[11], -1e6 * w[11], 3, max_norm)
    assert diff <= 2 * max_norm + 1e-9
    assert diff > 1.99 * max_norm
    # while in the per-example setting the same record moves the sum by at most C
    per = neighbour_difference(critic, x, w, torch.arange(12), 13, x[11], -1e6 * w[11], 12, max_norm)
    assert per <= max_norm + 1e-9


def test_sensitivity_factor():
    assert sensitivity_factor(per_example=True) == 1.0
    assert sensitivity_factor(per_example=False) == MICROBATCH_SENSITIVITY_FACTOR == 2.0


# --- assignment and input checks -----------------------------------------------------------------


def test_assign_microbatches():
    ids = assign_microbatches(500, 7, torch.Generator().manual_seed(11))
    assert ids.shape == (500,) and ids.dtype == torch.long
    assert int(ids.min()) >= 0 and int(ids.max()) < 7
    assert set(ids.tolist()) == set(range(7))
    again = assign_microbatches(500, 7, torch.Generator().manual_seed(11))
    assert torch.equal(ids, again)
    assert not torch.equal(ids, assign_microbatches(500, 7, torch.Generator().manual_seed(12)))
    assert assign_microbatches(0, 3, torch.Generator()).shape == (0,)
    with pytest.raises(InputError):
        assign_microbatches(10, 0, torch.Generator())
    with pytest.raises(InputError):
        assign_microbatches(-1, 2, torch.Generator())


@pytest.mark.parametrize(
    "case",
    ["x_rank", "x_width", "weight_len", "groups_len", "groups_float", "num_groups_zero", "id_high", "id_negative"],
)
def test_bad_input_raises_input_error(case: str):
    critic = make_critic(0)
    x, w = make_data(6, seed=1)
    groups = torch.tensor([0, 1, 2, 0, 1, 2])
    m = 3
    if case == "x_rank":
        x = x.reshape(-1)
    elif case == "x_width":
        x = x[:, :5]
    elif case == "weight_len":
        w = w[:5]
    elif case == "groups_len":
        groups = groups[:5]
    elif case == "groups_float":
        groups = groups.double()
    elif case == "num_groups_zero":
        m = 0
    elif case == "id_high":
        groups = torch.tensor([0, 1, 2, 0, 1, 3])
    elif case == "id_negative":
        groups = torch.tensor([0, 1, 2, 0, -1, 2])
    with pytest.raises(InputError):
        microbatch_clipped_sum(critic, x, w, groups, m, max_norm=1.0)
