"""Per-example clipping with the WGAN-GP term, Gaussian noise, and Poisson sampling.

The guarantee rests on one fact: adding or removing a record changes the noisy sum's mean by at
most C in L2 over all critic parameters, gradient penalty included (README pitfall (i)).
"""

from __future__ import annotations

import math

import pytest
import torch
from torch.func import functional_call, grad

from dpgan.errors import InputError
from dpgan.models.tabular import TabularCritic
from dpgan.privacy import dpsgd
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.mlp_clipping import wgan_gp_clipped_sum
from dpgan.privacy.sampling import PoissonSampler
from dpgan.privacy.step import PrivateStep
from random_critic import random_critic

DIM = 6
GP_WEIGHT = 10.0
HIDDEN_SHAPES = [(), (16,), (16, 12)]


def make_critic(hidden: tuple[int, ...], seed: int, first_layer_scale: float = 1.0) -> TabularCritic:
    """A float64 critic with weights drawn from an explicit generator (no global seeding)."""
    critic = random_critic(DIM, hidden, seed)
    with torch.no_grad():
        first = critic.net[0]
        first.weight.mul_(first_layer_scale)
    return critic


def make_batch(batch: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x_real = torch.randn(batch, DIM, generator=gen, dtype=torch.float64)
    x_fake = torch.randn(batch, DIM, generator=gen, dtype=torch.float64)
    alpha = torch.rand(batch, 1, generator=gen, dtype=torch.float64)
    return x_real, x_fake, alpha


def reference_record_loss(critic: TabularCritic, one_sided: bool = False):
    """ℓ_i = −D(x_i) + λ(‖∇ₓD(x̂_i)‖ − 1)², the private unit, written plainly for torch.func."""

    def d_out(params, x):
        return functional_call(critic, params, (x.unsqueeze(0),)).squeeze()

    def record_loss(params, x_real, x_fake, alpha):
        x_hat = alpha * x_real + (1.0 - alpha) * x_fake
        grad_x = grad(d_out, argnums=1)(params, x_hat)
        excess = torch.clamp(grad_x.norm() - 1.0, min=0.0) if one_sided else grad_x.norm() - 1.0
        return -d_out(params, x_real) + GP_WEIGHT * excess**2

    return record_loss


def params_of(critic: TabularCritic) -> dict[str, torch.Tensor]:
    return {k: v.detach() for k, v in critic.named_parameters()}


def flat(grads: dict[str, torch.Tensor], names: list[str]) -> torch.Tensor:
    return torch.cat([grads[n].reshape(-1) for n in names])


def fast_sum(critic, x_real, x_fake, alpha, max_norm, gp_weight=GP_WEIGHT):
    return wgan_gp_clipped_sum(critic, x_real, x_fake, alpha, gp_weight=gp_weight, max_norm=max_norm)


def ghost_backend(critic, units, max_norm):
    """The MLP fast path as a private step's backend; units = (x_real, x_fake, alpha)."""
    return fast_sum(critic, *units, max_norm)


def torch_func_backend(critic, units, max_norm):
    """The generic backend: vmap(grad(ℓ)) of the plainly written unit loss, clipped jointly."""
    grads = dpsgd.per_example_gradients(reference_record_loss(critic), params_of(critic), *units)
    clipped = dpsgd.clip_per_example(grads, max_norm)
    return {k: g.sum(dim=0) for k, g in clipped.items()}, dpsgd.per_example_norms(grads)


class NoUnits:
    def sample(self) -> torch.Tensor:
        return torch.zeros(0, dtype=torch.long)


def private_step(backend, sigma: float, max_norm: float, expected: float, generator, steps: int = 1) -> PrivateStep:
    return PrivateStep(
        units=1,
        sample_rate=1.0,
        noise_multiplier=sigma,
        max_norm=max_norm,
        expected_batch_size=expected,
        steps=steps,
        ledger=PrivacyLedger(),
        label="test",
        clipped_sum=backend,
        generator=generator,
        sampler=NoUnits(),
    )


# --- fast path against torch.func ----------------------------------------------------------------


@pytest.mark.parametrize("one_sided", [False, True], ids=["two-sided", "one-sided"])
@pytest.mark.parametrize("hidden", HIDDEN_SHAPES, ids=str)
def test_fast_path_matches_torch_func_reference(hidden: tuple[int, ...], one_sided: bool):
    """The closed-form per-example norms and clipped sum equal vmap(grad(ℓ)) clipped jointly."""
    critic = make_critic(hidden, seed=1, first_layer_scale=2.0)
    x_real, x_fake, alpha = make_batch(24, seed=2)
    params = params_of(critic)
    ref = dpsgd.per_example_gradients(reference_record_loss(critic, one_sided), params, x_real, x_fake, alpha)
    ref_norms = dpsgd.per_example_norms(ref)
    max_norm = float(ref_norms.median())  # half the rows are clipped, half are not
    assert (ref_norms > max_norm).any() and (ref_norms < max_norm).any()

    sums, norms = wgan_gp_clipped_sum(
        critic, x_real, x_fake, alpha, gp_weight=GP_WEIGHT, max_norm=max_norm, one_sided=one_sided
    )
    torch.testing.assert_close(norms, ref_norms, rtol=1e-9, atol=1e-12)
    ref_sums = {k: g.sum(dim=0) for k, g in dpsgd.clip_per_example(ref, max_norm).items()}
    assert set(sums) == set(params)
    for name in params:
        assert sums[name].shape == params[name].shape
        torch.testing.assert_close(sums[name], ref_sums[name], rtol=1e-8, atol=1e-10)


def test_fast_path_and_generic_backend_release_the_same_noisy_mean():
    """Through the private step, the ghost fast path and the torch.func backend give identical releases."""
    critic = make_critic((16, 12), seed=3)
    batch = make_batch(10, seed=4)
    sigma, max_norm, expected = 1.1, 0.5, 12.0
    releases = [
        private_step(backend, sigma, max_norm, expected, torch.Generator().manual_seed(7)).release(critic, batch, 10)
        for backend in (ghost_backend, torch_func_backend)
    ]
    fast, generic = (r.gradient(critic) for r in releases)
    for name in params_of(critic):
        torch.testing.assert_close(fast[name], generic[name], rtol=1e-9, atol=1e-12)


def test_padded_rows_add_exactly_nothing_and_report_no_norm():
    """A batch padded to a static size (dpgan.privacy.padded_batches): mask 0 rows, whatever they
    hold (zeros, or a copy of a real row), leave the clipped sums and the norms as the unpadded
    batch's, within float rounding (float32, the fit's dtype: 1e-6)."""
    critic = make_critic((16, 12), seed=8, first_layer_scale=3.0).float()
    x_real, x_fake, alpha = (t.float() for t in make_batch(13, seed=9))
    plain, plain_norms = wgan_gp_clipped_sum(critic, x_real, x_fake, alpha, gp_weight=GP_WEIGHT, max_norm=0.5)
    pad = 24
    filler = torch.cat([torch.zeros(6, DIM), x_real[:5]])  # zeros and copies: masked either way
    padded = [torch.cat([x_real, filler]), torch.cat([x_fake, filler]), torch.cat([alpha, torch.rand(11, 1)])]
    mask = torch.cat([torch.ones(13), torch.zeros(pad - 13)])
    sums, norms = wgan_gp_clipped_sum(critic, *padded, gp_weight=GP_WEIGHT, max_norm=0.5, mask=mask)
    torch.testing.assert_close(norms, plain_norms)
    assert (plain_norms > 0.5).any()  # the clip is exercised
    for name, value in plain.items():
        torch.testing.assert_close(sums[name], value, rtol=1e-6, atol=1e-6)
    unmasked, _ = wgan_gp_clipped_sum(critic, *padded, gp_weight=GP_WEIGHT, max_norm=0.5)
    assert any(not torch.allclose(unmasked[n], plain[n], atol=1e-4) for n in plain)  # the mask is what removes them


def test_a_padded_release_equals_the_unpadded_one_through_the_private_step():
    """The engine with a mask: the same noise draw, the same divisor, the same clipped sum (1e-6 in
    float32), the recorder told the true unit count and the sampled rows' norms only."""
    critic = make_critic((16, 12), seed=10).float()
    x_real, x_fake, alpha = (t.float() for t in make_batch(9, seed=11))
    pad = 16
    padded = tuple(torch.cat([t, torch.zeros(pad - 9, t.shape[1])]) for t in (x_real, x_fake, alpha))
    mask = torch.cat([torch.ones(9), torch.zeros(pad - 9)])
    records: list[dict] = []

    def backend(model, units, max_norm, mask=None):
        return wgan_gp_clipped_sum(model, *units, gp_weight=GP_WEIGHT, max_norm=max_norm, mask=mask)

    def step(recorder=None):
        return PrivateStep(
            units=100, sample_rate=0.1, noise_multiplier=1.3, max_norm=0.5, expected_batch_size=10.0, steps=1,
            ledger=PrivacyLedger(), label="test", clipped_sum=backend, generator=torch.Generator().manual_seed(3),
            recorder=recorder,
        )  # fmt: skip

    plain = step().release(critic, (x_real, x_fake, alpha), 9)
    masked = step(records.append).release(critic, padded, 9, mask=mask)
    assert masked.units == plain.units == 9 and masked.divisor == plain.divisor
    for name in plain.noisy_sum:
        torch.testing.assert_close(masked.noisy_sum[name], plain.noisy_sum[name], rtol=1e-6, atol=1e-6)
    assert records[0]["units"] == 9 and records[0]["norms"].shape == (9,)
    with pytest.raises(InputError, match="mask keeps"):
        step().release(critic, padded, 10, mask=mask)


# --- the sensitivity bound --------------------------------------------------------------------


def test_clipped_sum_is_the_sum_of_single_record_contributions_each_within_c():
    """No cross-example coupling, and every record's clipped gradient (GP included) has norm ≤ C."""
    critic = make_critic((16, 12), seed=5, first_layer_scale=5.0)
    x_real, x_fake, alpha = make_batch(20, seed=6)
    names = list(params_of(critic))
    max_norm = 1.0
    total, norms = fast_sum(critic, x_real, x_fake, alpha, max_norm)
    assert (norms > max_norm).sum() >= 10  # the bound is exercised, not vacuous
    singles = [
        flat(fast_sum(critic, x_real[i : i + 1], x_fake[i : i + 1], alpha[i : i + 1], max_norm)[0], names)
        for i in range(20)
    ]
    for i, contribution in enumerate(singles):
        assert contribution.norm() <= max_norm * (1 + 1e-9), i
    torch.testing.assert_close(torch.stack(singles).sum(dim=0), flat(total, names), rtol=1e-9, atol=1e-10)


def test_gradient_penalty_canary_is_clipped_to_exactly_c():
    """A record whose real-term gradient is small but whose GP gradient is huge contributes exactly C."""
    critic = make_critic((16, 12), seed=7, first_layer_scale=50.0)  # ‖∇ₓD‖ ≫ 1 everywhere
    with torch.no_grad():
        critic.net[0].bias.zero_()  # at x = 0 the real term no longer sees the scaled layer
    names = list(params_of(critic))
    max_norm = 5.0
    canary_real = torch.zeros(1, DIM, dtype=torch.float64)
    canary_fake = torch.full((1, DIM), 0.3, dtype=torch.float64)
    canary_alpha = torch.full((1, 1), 0.5, dtype=torch.float64)
    _, real_only = fast_sum(critic, canary_real, canary_fake, canary_alpha, max_norm, gp_weight=0.0)
    _, with_gp = fast_sum(critic, canary_real, canary_fake, canary_alpha, max_norm)
    assert real_only.item() < max_norm  # the real term alone would pass unclipped
    assert with_gp.item() > 100 * max_norm  # the GP term is what makes it large

    x_real, x_fake, alpha = make_batch(12, seed=8)
    without, _ = fast_sum(critic, x_real, x_fake, alpha, max_norm)
    with_canary, _ = fast_sum(
        critic,
        torch.cat([x_real, canary_real]),
        torch.cat([x_fake, canary_fake]),
        torch.cat([alpha, canary_alpha]),
        max_norm,
    )
    contribution = flat(with_canary, names) - flat(without, names)
    assert contribution.norm().item() == pytest.approx(max_norm, rel=1e-9)


def _adversarial_extras() -> dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    def row(value, fake=0.0, alpha=0.5):
        return (
            torch.full((1, DIM), value, dtype=torch.float64),
            torch.full((1, DIM), fake, dtype=torch.float64),
            torch.full((1, 1), alpha, dtype=torch.float64),
        )

    return {
        "huge_real_value": row(1e6),
        "huge_negative_value": row(-1e6, alpha=1.0),
        "gp_canary_at_zero": row(0.0, fake=0.3),
        "interpolate_is_pure_fake": row(3.0, fake=1e3, alpha=0.0),
        "interpolate_cancels_to_zero": row(1e4, fake=-1e4, alpha=0.5),
    }


def _random_extras(count: int, seed: int) -> dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(seed)
    extras = {}
    for i in range(count):
        scale = 10.0 ** (i % 4)
        extras[f"random_{i}"] = (
            scale * torch.randn(1, DIM, generator=gen, dtype=torch.float64),
            torch.randn(1, DIM, generator=gen, dtype=torch.float64),
            torch.rand(1, 1, generator=gen, dtype=torch.float64),
        )
    return extras


NEIGHBOURS = {**_random_extras(8, seed=9), **_adversarial_extras()}


@pytest.mark.parametrize(("first_layer_scale", "max_norm"), [(1.0, 1.0), (30.0, 1.0), (1.0, 100.0)])
@pytest.mark.parametrize("extra", list(NEIGHBOURS))
def test_neighbouring_batches_differ_by_at_most_c(extra: str, first_layer_scale: float, max_norm: float):
    """Adding one record (with its own fake and α) moves the clipped sum by ≤ C over all parameters."""
    critic = make_critic((16, 12), seed=10, first_layer_scale=first_layer_scale)
    names = list(params_of(critic))
    x_real, x_fake, alpha = make_batch(16, seed=11)
    x_real[3] = x_real[5]  # a duplicate row must not change the bound either
    e_real, e_fake, e_alpha = NEIGHBOURS[extra]
    base, _ = fast_sum(critic, x_real, x_fake, alpha, max_norm)
    plus, norms = fast_sum(
        critic, torch.cat([x_real, e_real]), torch.cat([x_fake, e_fake]), torch.cat([alpha, e_alpha]), max_norm
    )
    difference = (flat(plus, names) - flat(base, names)).norm().item()
    assert torch.isfinite(norms).all()
    assert difference <= max_norm * (1 + 1e-9)
    # the new record's influence is exactly its clipped norm: clipped, not lost or doubled
    assert difference == pytest.approx(min(norms[-1].item(), max_norm), rel=1e-6)


# --- noise --------------------------------------------------------------------------------------


def test_empty_batch_release_is_pure_noise_with_std_sigma_c():
    """With no record sampled the release is N(0, σ²C²) on every parameter, nothing else."""
    critic = make_critic((16, 12), seed=12)
    params = params_of(critic)
    sigma, max_norm = 1.3, 0.7
    step = private_step(ghost_backend, sigma, max_norm, 1.0, torch.Generator().manual_seed(13), steps=200)
    draws = []
    for _ in range(200):
        noisy = step.release(critic, None, 0).gradient(critic)
        assert set(noisy) == set(params)
        for name, p in params.items():
            assert noisy[name].shape == p.shape and noisy[name].dtype == p.dtype
        draws.append(flat(noisy, list(params)))
    samples = torch.stack(draws)  # (200 draws, ~330 coordinates)
    std = sigma * max_norm
    assert samples.std().item() == pytest.approx(std, rel=0.05)
    assert abs(samples.mean().item()) < 4 * std / math.sqrt(samples.numel())
    per_coordinate = samples.std(dim=0) / std  # every coordinate is noised, none left at zero
    assert per_coordinate.min() > 0.7 and per_coordinate.max() < 1.3
    assert not torch.equal(samples[0], samples[1])


def test_private_gradient_of_empty_batch_divides_noise_by_expected_batch_size():
    """An empty Poisson batch gives finite noise / (qN), never a 0/0 from dividing by |B|."""
    critic = make_critic((8,), seed=14)
    sigma, max_norm, expected = 1.0, 2.0, 8.0
    step = private_step(torch_func_backend, sigma, max_norm, expected, torch.Generator().manual_seed(15), steps=200)
    draws = [flat(step.release(critic, None, 0).gradient(critic), list(params_of(critic))) for _ in range(200)]
    samples = torch.stack(draws)
    assert torch.isfinite(samples).all()
    assert samples.std().item() == pytest.approx(sigma * max_norm / expected, rel=0.05)


# --- Poisson sampling ---------------------------------------------------------------------------


def test_poisson_batch_sizes_vary_with_mean_qn():
    """Batch sizes are Binomial(N, q): they vary and average qN within 4 standard errors."""
    n, q, steps = 2000, 0.02, 400
    sampler = PoissonSampler(n, q, torch.Generator().manual_seed(16))
    sizes = torch.tensor([len(sampler.sample()) for _ in range(steps)], dtype=torch.float64)
    assert sampler.expected_batch_size == pytest.approx(q * n)
    assert len(set(sizes.tolist())) > 5
    standard_error = math.sqrt(n * q * (1 - q) / steps)
    assert abs(sizes.mean().item() - q * n) < 4 * standard_error
    assert sizes.std().item() == pytest.approx(math.sqrt(n * q * (1 - q)), rel=0.2)


def test_poisson_batches_hold_distinct_valid_rows_each_included_at_rate_q():
    """Each row joins independently with probability q (no row favoured, none repeated)."""
    n, q, steps = 50, 0.2, 2000
    sampler = PoissonSampler(n, q, torch.Generator().manual_seed(17))
    counts = torch.zeros(n)
    for _ in range(steps):
        index = sampler.sample()
        assert len(torch.unique(index)) == len(index)
        assert index.numel() == 0 or (index.min() >= 0 and index.max() < n)
        counts[index] += 1
    rate = counts / steps
    assert (rate - q).abs().max() < 4.5 * math.sqrt(q * (1 - q) / steps)


def test_poisson_sampler_can_return_empty_batches():
    """For tiny q an empty batch is the common case; it must come back as an empty index set."""
    sampler = PoissonSampler(100, 1e-3, torch.Generator().manual_seed(18))
    sizes = [len(sampler.sample()) for _ in range(50)]
    assert sizes.count(0) > 25  # P[empty] = 0.999^100 ≈ 0.90


def test_poisson_sampler_is_reproducible_from_generator_seed():
    """The same generator seed replays the same batches; another seed gives others."""

    def batches(seed: int) -> list[list[int]]:
        sampler = PoissonSampler(500, 0.05, torch.Generator().manual_seed(seed))
        return [sampler.sample().tolist() for _ in range(20)]

    assert batches(19) == batches(19)
    assert batches(19) != batches(20)


@pytest.mark.parametrize("rate", [0.0, -0.1, 1.5])
def test_poisson_sampler_rejects_invalid_rate(rate: float):
    """q outside (0, 1] would silently mis-state what the accountant is told."""
    with pytest.raises(ValueError):
        PoissonSampler(10, rate, torch.Generator())


def test_fake_side_inputs_do_not_depend_on_the_private_batch_size():
    """Only the noisy sum may depend on |B|: each GP partner must depend on its own noise only.

    The training loop draws |B| partners in one call; with any cross-row operation in G
    (BatchNorm in training mode) the first rows would change with the number of rows drawn.
    """
    from dpgan.models.output_spans import OutputSpan
    from dpgan.training.config import TrainingConfig
    from dpgan.training.fake_rows import build_generator

    spans = [OutputSpan("tanh", 0, 1, "x"), OutputSpan("softmax", 1, 3, "c")]
    G = build_generator(TrainingConfig(noise_dim=8, generator_hidden=(16,)), spans)
    G.train()
    z = torch.randn(40, 8, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        few = G(z[:5], torch.Generator().manual_seed(1))
        many = G(z, torch.Generator().manual_seed(1))
    torch.testing.assert_close(few, many[:5])
