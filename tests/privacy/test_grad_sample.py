"""The per-unit gradient backends (dpgan.privacy.grad_sample) against a plain per-unit autograd loop.

The guarantee rests on: each unit's vector v_i = (∇θ[-w_i·D(x_i) + λ·pen(‖∇ₓD(x̂_i)‖)], β·[f, f²])
is what the backend says it is, is clipped jointly to C, and depends on unit i alone. Checked on
an MLP (rows), a conv critic (images) and an LSTM critic (series), in float64.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from dpgan.errors import InputError
from dpgan.models.conv import ConvCritic
from dpgan.models.recurrent import LSTMCritic
from dpgan.privacy import grad_sample
from dpgan.privacy.grad_sample import CriticUnitLoss, clipped_sum, select_backend
from dpgan.privacy.grad_sample.functorch import functorch_per_unit_gradients
from random_critic import random_critic

GP = 10.0
BATCH = 6


def make_critic(kind: str, seed: int = 0, conditional: bool = False, projection: str = "full") -> nn.Module:
    """Small float64 critics whose weights all come from an explicit generator (no global seeding)."""
    if kind == "mlp":
        return random_critic(5, (8, 6), seed)
    if kind == "conv":
        critic: nn.Module = ConvCritic((1, 16, 16), width=4, num_classes=3 if conditional else 0, projection=projection)
    else:
        critic = LSTMCritic(3, hidden_size=6, head=5, condition_dim=2 if conditional else 0)
    critic = critic.double()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in critic.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=p.dtype)
            if p.dim() > 1:
                p.copy_(noise / math.sqrt(p[0].numel()))
            else:  # biases near 0, GroupNorm scales near 1
                p.copy_(0.1 * noise + (1.0 if name.endswith("weight") else 0.0))
    return critic


UNIT_SHAPES = {"mlp": (5,), "conv": (1, 16, 16), "lstm": (5, 3)}
CONTEXT_WIDTH = {"conv": 3, "lstm": 2}


def make_loss(kind: str, batch: int = BATCH, seed: int = 1, conditional: bool = False, **settings) -> CriticUnitLoss:
    gen = torch.Generator().manual_seed(seed)
    shape = (batch, *UNIT_SHAPES[kind])
    context: tuple[torch.Tensor, ...] = ()
    if conditional:
        codes = torch.randint(0, CONTEXT_WIDTH[kind], (batch,), generator=gen)
        context = (nn.functional.one_hot(codes, CONTEXT_WIDTH[kind]).double(),)
    return CriticUnitLoss(
        real=torch.randn(shape, generator=gen, dtype=torch.float64),
        partners=torch.randn(shape, generator=gen, dtype=torch.float64),
        alpha=torch.rand(batch, generator=gen, dtype=torch.float64),
        weight=0.5 + torch.rand(batch, generator=gen, dtype=torch.float64),
        context=context,
        **settings,
    )


def loop_unit_vectors(critic: nn.Module, loss: CriticUnitLoss) -> torch.Tensor:
    """v_i for each unit by plain autograd, one unit at a time (create_graph for the penalty)."""
    params = [p for p in critic.parameters() if p.requires_grad]
    weights = torch.ones(loss.batch_size, dtype=torch.float64) if loss.weight is None else loss.weight
    rows = []
    for i in range(loss.batch_size):
        x, ctx = loss.real[i : i + 1], [c[i : i + 1] for c in loss.context]
        value = -weights[i] * critic(x, *ctx).sum()
        if loss.gp_weight > 0:
            if loss.x_hat is not None:
                x_hat = loss.x_hat[i : i + 1]
            else:
                a = loss.alpha[i]  # type: ignore[index]
                x_hat = a * x + (1 - a) * loss.partners[i : i + 1]  # type: ignore[index]
            x_hat = x_hat.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(critic(x_hat, *ctx).sum(), x_hat, create_graph=True)
            excess = g.pow(2).sum().sqrt() - 1.0
            if loss.one_sided:
                excess = excess.clamp_min(0.0)
            value = value + loss.gp_weight * excess**2
        grads = torch.autograd.grad(value, params, allow_unused=True)
        parts = [(torch.zeros_like(p) if g is None else g).reshape(-1) for p, g in zip(params, grads)]
        if loss.feature_scale > 0:
            with torch.no_grad():
                f = critic.features(x, *ctx).reshape(-1)
            parts += [loss.feature_scale * f, loss.feature_scale * f.pow(2)]
        rows.append(torch.cat(parts))
    return torch.stack(rows)


def flat(result: grad_sample.ClippedSum, critic: nn.Module) -> torch.Tensor:
    parts = [result.gradients[n].reshape(-1) for n, p in critic.named_parameters() if p.requires_grad]
    if result.features is not None:
        parts.append(result.features)
    return torch.cat(parts)


def loop_clipped_sum(vectors: torch.Tensor, max_norm: float) -> torch.Tensor:
    norms = vectors.norm(dim=1, keepdim=True)
    return (vectors * torch.clamp(max_norm / norms, max=1.0)).sum(0)


def assert_rel_close(actual: torch.Tensor, expected: torch.Tensor, rel: float) -> None:
    error = (actual - expected).norm() / expected.norm().clamp_min(1e-300)
    assert error <= rel, f"relative error {float(error):.2e} > {rel:.0e}"


CASES = [
    pytest.param(kind, one_sided, beta, conditional, id=f"{kind}-{side}-{feat}{'-cond' if conditional else ''}")
    for kind in ("mlp", "conv", "lstm")
    for one_sided, side in ((False, "two-sided"), (True, "one-sided"))
    for beta, feat in ((0.0, "no-features"), (0.3, "features"))
    for conditional in ((False, True) if kind != "mlp" and not one_sided and beta else (False,))
]


# --- the generic backend against the loop ------------------------------------------------------


@pytest.mark.parametrize(("kind", "one_sided", "beta", "conditional"), CASES)
def test_generic_per_unit_vectors_equal_a_per_unit_loop(kind, one_sided, beta, conditional):
    """Per-unit gradients (penalty included), norms and the clipped sum equal the loop's."""
    critic = make_critic(kind, conditional=conditional)
    loss = make_loss(kind, conditional=conditional, gp_weight=GP, one_sided=one_sided, feature_scale=beta)
    expected = loop_unit_vectors(critic, loss)
    per_unit = functorch_per_unit_gradients(critic, loss)
    names = [n for n, _ in critic.named_parameters()]
    for i in range(BATCH):
        width = sum(p.numel() for p in critic.parameters())
        got = torch.cat([per_unit[n][i].reshape(-1) for n in names])
        assert_rel_close(got, expected[i, :width], 1e-5)
    norms = expected.norm(dim=1)
    max_norm = float(norms.median())  # about half the units are clipped
    assert (norms > max_norm * 1.01).any() and (norms < max_norm * 0.99).any()
    result = clipped_sum(critic, loss, max_norm, backend="functorch")
    assert result.backend == "functorch"
    torch.testing.assert_close(result.norms, norms, rtol=1e-5, atol=0.0)
    assert_rel_close(flat(result, critic), loop_clipped_sum(expected, max_norm), 1e-5)
    assert (result.features is None) == (beta == 0)


@pytest.mark.parametrize(("projection", "regions"), [("pooled", 1), ("grid", 9)])
def test_pooled_label_projections_per_unit_vectors_equal_a_loop(projection, regions):
    """The pooled projections (label against region means) stay per-unit: vmap equals the loop."""
    critic = make_critic("conv", conditional=True, projection=projection)
    assert critic.embed.weight.shape == (8 * regions, 3)  # K·C·regions weights, not K·C·h·w
    loss = make_loss("conv", conditional=True, gp_weight=GP)
    expected = loop_unit_vectors(critic, loss)
    per_unit = functorch_per_unit_gradients(critic, loss)
    names = [n for n, _ in critic.named_parameters()]
    for i in range(BATCH):
        got = torch.cat([per_unit[n][i].reshape(-1) for n in names])
        assert_rel_close(got, expected[i, : got.numel()], 1e-5)
    assert per_unit["embed.weight"].abs().sum() > 0


@pytest.mark.parametrize("kind", ["mlp", "conv", "lstm"])
def test_each_unit_contributes_at_most_c_and_the_sum_is_the_sum_of_units(kind):
    """No coupling between units, and every clipped contribution (penalty included) has norm ≤ C."""
    critic = make_critic(kind, seed=2)
    loss = make_loss(kind, seed=3, gp_weight=GP, feature_scale=0.2)
    whole = clipped_sum(critic, loss, 0.5, backend="functorch")
    assert (whole.norms > 0.5).sum() >= 3  # the bound is exercised
    singles = []
    for i in range(BATCH):
        one = CriticUnitLoss(
            real=loss.real[i : i + 1],
            partners=loss.partners[i : i + 1],  # type: ignore[index]
            alpha=loss.alpha[i : i + 1],  # type: ignore[index]
            weight=loss.weight[i : i + 1],  # type: ignore[index]
            gp_weight=GP,
            feature_scale=0.2,
        )
        singles.append(flat(clipped_sum(critic, one, 0.5, backend="functorch"), critic))
        assert singles[-1].norm() <= 0.5 * (1 + 1e-9), i
    assert_rel_close(flat(whole, critic), torch.stack(singles).sum(0), 1e-9)


@pytest.mark.parametrize("kind", ["mlp", "conv", "lstm"])
def test_gradient_penalty_canary_is_clipped_to_exactly_c(kind):
    """A unit whose real term alone passes unclipped but whose penalty is huge contributes exactly C."""
    critic = make_critic(kind, seed=4)
    max_norm = 2.0
    quiet = make_loss(kind, batch=1, seed=5, gp_weight=0.0)
    canary = make_loss(kind, batch=1, seed=5, gp_weight=1e6)
    for loss in (quiet, canary):
        loss.weight.fill_(1e-3)  # type: ignore[union-attr]  # the real term's gradient is small
    assert clipped_sum(critic, quiet, max_norm).norms.item() < max_norm
    result = clipped_sum(critic, canary, max_norm, backend="functorch")
    assert result.norms.item() > 100 * max_norm
    assert math.isclose(flat(result, critic).norm().item(), max_norm, rel_tol=1e-9)


@pytest.mark.parametrize("kind", ["mlp", "conv", "lstm"])
def test_empty_batch_gives_zeros(kind):
    critic = make_critic(kind)
    loss = make_loss(kind, batch=0, gp_weight=GP, feature_scale=0.3)
    for backend in ("auto", "functorch"):
        result = clipped_sum(critic, loss, 1.0, backend=backend)
        assert result.norms.shape == (0,)
        assert set(result.gradients) == {n for n, _ in critic.named_parameters()}
        for name, p in critic.named_parameters():
            assert result.gradients[name].shape == p.shape and not result.gradients[name].any()
        f = critic.features(make_loss(kind, batch=1).real)
        assert result.features is not None and result.features.shape == (2 * f.numel(),)
        assert not result.features.any()


def test_chunks_give_the_same_sum_as_one_pass():
    critic = make_critic("conv", seed=6)
    loss = make_loss("conv", seed=7, gp_weight=GP, feature_scale=0.1)
    one = clipped_sum(critic, loss, 0.3, backend="functorch")
    chunked = clipped_sum(critic, loss, 0.3, backend="functorch", chunk_size=4)  # chunks of 4 and 2
    assert_rel_close(flat(chunked, critic), flat(one, critic), 1e-12)
    torch.testing.assert_close(chunked.norms, one.norms)


@pytest.mark.parametrize("backend", ["auto", "functorch"])
def test_a_non_finite_unit_contributes_nothing_and_leaves_the_others(backend):
    """An overflowing record must not turn the release into NaN (that would reveal it without noise)."""
    critic = make_critic("mlp", seed=8)
    loss = make_loss("mlp", seed=9, gp_weight=GP)
    bad_real = loss.real.clone()
    bad_real[2] = math.inf
    bad = CriticUnitLoss(real=bad_real, partners=loss.partners, alpha=loss.alpha, weight=loss.weight, gp_weight=GP)
    keep = [i for i in range(BATCH) if i != 2]
    rest = CriticUnitLoss(
        real=loss.real[keep],
        partners=loss.partners[keep],  # type: ignore[index]
        alpha=loss.alpha[keep],  # type: ignore[index]
        weight=loss.weight[keep],  # type: ignore[index]
        gp_weight=GP,
    )
    result = clipped_sum(critic, bad, 1.0, backend=backend)
    assert result.backend == "functorch"  # the ghost path hands a non-finite batch to the generic one
    assert not math.isfinite(result.norms[2].item())
    assert_rel_close(flat(result, critic), flat(clipped_sum(critic, rest, 1.0), critic), 1e-12)


# --- modules the generic path must handle -------------------------------------------------------


class TiedCritic(nn.Module):
    """Parameters registered in another order than used, one Linear used twice, one frozen tensor."""

    def __init__(self) -> None:
        super().__init__()
        self.out = nn.Linear(4, 1)
        self.shared = nn.Linear(4, 4)
        self.scale = nn.Parameter(torch.tensor([1.5, -0.5, 2.0, 1.0]), requires_grad=False)
        self.register_buffer("shift", torch.tensor([0.1, 0.2, -0.3, 0.0]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.shared(x * self.scale + self.shift))
        return self.out(torch.tanh(self.shared(h))).squeeze(-1)


def test_tied_reordered_and_frozen_parameters_match_the_loop():
    critic = TiedCritic().double()
    gen = torch.Generator().manual_seed(10)
    x = torch.randn(BATCH, 4, generator=gen, dtype=torch.float64)
    loss = CriticUnitLoss(real=x, partners=x.flip(0), alpha=torch.rand(BATCH, generator=gen).double(), gp_weight=GP)
    result = clipped_sum(critic, loss, 1e9)
    assert result.backend == "functorch"
    assert set(result.gradients) == {"out.weight", "out.bias", "shared.weight", "shared.bias"}  # not the frozen one
    expected = loop_unit_vectors(critic, loss)
    torch.testing.assert_close(result.norms, expected.norm(dim=1), rtol=1e-6, atol=0.0)
    assert_rel_close(flat(result, critic), expected.sum(0), 1e-6)


@pytest.mark.parametrize("kind", ["conv", "lstm"])
def test_unclipped_sum_equals_the_batch_gradient_and_trains(kind):
    """With C = ∞ the generic sum is autograd's gradient of Σ_i ℓ_i on the whole batch (a second,
    batched reference); a few noisy steps through it move the critic and stay finite."""
    critic = make_critic(kind, seed=11)
    loss = make_loss(kind, seed=12, gp_weight=GP)
    x_hat = loss.penalty_points().detach().requires_grad_(True)
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    gp = (g.flatten(1).pow(2).sum(1).sqrt() - 1.0).pow(2)
    batch_loss = (-loss.weight * critic(loss.real) + GP * gp).sum()  # type: ignore[operator]
    names = [n for n, _ in critic.named_parameters()]
    reference = torch.autograd.grad(batch_loss, list(critic.parameters()))
    result = clipped_sum(critic, loss, math.inf)
    assert_rel_close(
        torch.cat([result.gradients[n].reshape(-1) for n in names]), torch.cat([r.reshape(-1) for r in reference]), 1e-9
    )

    before = [p.detach().clone() for p in critic.parameters()]
    optimizer = torch.optim.Adam(critic.parameters(), lr=1e-2)
    noise = torch.Generator().manual_seed(13)
    for step in range(3):
        batch = make_loss(kind, seed=20 + step, gp_weight=GP)
        summed = clipped_sum(critic, batch, 1.0).gradients
        for name, p in critic.named_parameters():
            p.grad = (summed[name] + torch.randn(p.shape, generator=noise, dtype=p.dtype)) / BATCH
        optimizer.step()
    assert all(torch.isfinite(p).all() for p in critic.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, critic.parameters()))


# --- the ghost fast path --------------------------------------------------------------------------


@pytest.mark.parametrize("one_sided", [False, True], ids=["two-sided", "one-sided"])
@pytest.mark.parametrize("beta", [0.0, 0.3], ids=["no-features", "features"])
@pytest.mark.parametrize("given_x_hat", [False, True], ids=["interpolate", "x_hat"])
def test_ghost_fast_path_equals_the_generic_path(one_sided, beta, given_x_hat):
    critic = random_critic(5, (8, 6), seed=14)
    loss = make_loss("mlp", seed=15, gp_weight=GP, one_sided=one_sided, feature_scale=beta)
    if given_x_hat:
        gen = torch.Generator().manual_seed(16)
        loss = CriticUnitLoss(
            real=loss.real,
            x_hat=torch.randn(loss.real.shape, generator=gen, dtype=torch.float64),
            weight=loss.weight,
            gp_weight=GP,
            one_sided=one_sided,
            feature_scale=beta,
        )
    assert select_backend(critic, loss) == "mlp-ghost"
    generic = clipped_sum(critic, loss, math.inf, backend="functorch")
    max_norm = float(generic.norms.median())
    fast = clipped_sum(critic, loss, max_norm)
    generic = clipped_sum(critic, loss, max_norm, backend="functorch")
    assert fast.backend == "mlp-ghost" and generic.backend == "functorch"
    torch.testing.assert_close(fast.norms, generic.norms, rtol=1e-6, atol=0.0)
    assert_rel_close(flat(fast, critic), flat(generic, critic), 1e-6)


class ScaledMLP(nn.Module):
    """Linear/LeakyReLU leaves, but a forward that is not their plain chain."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 2.0 * self.net(x).squeeze(-1)


def test_fast_path_is_chosen_by_structure_only():
    mlp = random_critic(5, (8,), seed=17)
    loss = make_loss("mlp", gp_weight=GP)
    assert select_backend(mlp, loss) == "mlp-ghost"
    assert select_backend(nn.Sequential(nn.Linear(5, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1)).double(), loss) == (
        "mlp-ghost"
    )
    assert select_backend(ScaledMLP().double(), loss) == "functorch"  # same leaves, different function
    assert select_backend(nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 1)).double(), loss) == "functorch"
    frozen = random_critic(5, (8,), seed=17)
    frozen.net[0].bias.requires_grad_(False)
    assert select_backend(frozen, loss) == "functorch"
    with_context = CriticUnitLoss(real=loss.real, context=(loss.real,))
    assert select_backend(mlp, with_context) == "functorch"
    assert select_backend(make_critic("conv"), make_loss("conv")) == "functorch"


# --- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "critic",
    [
        nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4), nn.Linear(4, 1)),
        nn.Sequential(
            nn.Conv2d(1, 2, 3), nn.InstanceNorm2d(2, track_running_stats=True), nn.Flatten(), nn.LazyLinear(1)
        ),
    ],
    ids=["batchnorm", "instancenorm-running-stats"],
)
def test_batch_coupling_layers_are_refused(critic):
    real = torch.zeros(3, 5) if isinstance(critic[0], nn.Linear) else torch.zeros(3, 1, 6, 6)
    for backend in ("auto", "functorch"):
        with pytest.raises(InputError, match="couples the units"):
            clipped_sum(critic, CriticUnitLoss(real=real), 1.0, backend=backend)


def test_bad_requests_are_input_errors():
    mlp, loss = random_critic(5, (8,), seed=18), make_loss("mlp", gp_weight=GP)
    with pytest.raises(InputError, match="unknown gradient backend"):
        clipped_sum(mlp, loss, 1.0, backend="opacus")
    with pytest.raises(InputError, match="does not apply"):
        clipped_sum(make_critic("conv"), make_loss("conv"), 1.0, backend="mlp-ghost")
    with pytest.raises(InputError, match="max_norm"):
        clipped_sum(mlp, loss, 0.0)
    with pytest.raises(InputError, match="one score per unit"):
        clipped_sum(nn.Linear(5, 2).double(), make_loss("mlp"), 1.0)
    with pytest.raises(InputError, match="features"):
        clipped_sum(
            nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 1)).double(),
            make_loss("mlp", feature_scale=0.1),
            1.0,
        )
    with pytest.raises(InputError, match="partners and alpha"):
        CriticUnitLoss(real=loss.real, gp_weight=GP)
    with pytest.raises(InputError, match="weight"):
        CriticUnitLoss(real=loss.real, weight=torch.ones(BATCH + 1))
