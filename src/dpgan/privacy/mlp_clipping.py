"""Fast per-example clipping for a LeakyReLU MLP critic with a WGAN-GP term.

For record i the private loss is ℓ_i = -D(x_i) + λ(‖∇ₓD(x̂_i)‖ - 1)². For a piecewise-linear MLP
each weight's per-example gradient is a sum of two outer products (one from the forward pass at
x_i, one from the input-gradient chain at x̂_i), so per-example norms and the clipped sum
Σ_i c_i ∇θ ℓ_i come from a few (B × width) matrix products, with no (B × #params) tensor:
"ghost clipping" extended to the gradient penalty. `tests/privacy/test_clipping.py` checks it
against `torch.func.vmap(grad(ℓ))` on the same critic.

Derivation (layers k = 1..K, a_k = W_k h_{k-1} + b_k, h_k = φ(a_k), s_k = φ'(a_k)):
- real term, δ_K = -1, δ_{k-1} = s_{k-1} ⊙ W_kᵀ δ_k:  ∇W_k = δ_k h_{k-1}ᵀ, ∇b_k = δ_k;
- input gradient at x̂, e_K = 1, e_{k-1} = ŝ_{k-1} ⊙ W_kᵀ e_k, g = W_1ᵀ e_1;
- with r = ∂GP/∂g, ρ̃_0 = r, ρ̃_k = ŝ_k ⊙ W_k ρ̃_{k-1}:  ∇W_k += e_k ρ̃_{k-1}ᵀ (biases get nothing,
  since φ'' = 0 almost everywhere).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

FEATURES_KEY = "__penultimate_features__"


def _linear_layers(critic: nn.Module) -> tuple[list[nn.Linear], float]:
    """The critic's Linear layers, checking it is Linear/LeakyReLU alternating, ending in Linear."""
    modules = [m for m in critic.modules() if not list(m.children())]
    linears = [m for m in modules if isinstance(m, nn.Linear)]
    acts = [m for m in modules if isinstance(m, nn.LeakyReLU)]
    if len(modules) != 2 * len(linears) - 1 or len(acts) != len(linears) - 1 or linears[-1].out_features != 1:
        raise TypeError("fast clipping needs a Linear/LeakyReLU MLP critic with one output")
    slopes = {a.negative_slope for a in acts}
    if len(slopes) > 1:
        raise TypeError("fast clipping needs one LeakyReLU slope")
    return linears, slopes.pop() if slopes else 0.01


def _forward(linears: list[nn.Linear], x: torch.Tensor, slope: float) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Inputs h_{k-1} of every layer and the activation slopes s_k of every hidden layer.

    For 0 ≤ slope < 1, s_k = max(sign(a_k), slope) is 1 where a_k > 0 and `slope` elsewhere: the
    same values as `torch.where(a_k > 0, 1, slope)` without its slow boolean-mask kernel on CPU
    (about 20× slower than two elementwise passes); h_k = leaky_relu(a_k) = a_k ⊙ s_k exactly.
    """
    fast_slopes = 0.0 <= slope < 1.0
    inputs, slopes = [], []
    h = x
    for k, layer in enumerate(linears):
        inputs.append(h)
        a = F.linear(h, layer.weight, layer.bias)
        if k < len(linears) - 1:
            if fast_slopes:
                slopes.append(torch.sign(a).clamp_min_(slope))
            else:
                slopes.append(torch.where(a > 0, torch.ones_like(a), torch.full_like(a, slope)))
            h = F.leaky_relu(a, slope)
    return inputs, slopes


def _output_deltas(linears: list[nn.Linear], slopes: list[torch.Tensor], top: torch.Tensor) -> list[torch.Tensor]:
    """δ_k = ∂(top_i·D(x_i))/∂a_k per row for every layer k (δ_K = top, δ_{k-1} = s_{k-1} ⊙ W_kᵀ δ_k)."""
    deltas: list[torch.Tensor] = [torch.empty(0)] * len(linears)
    delta = top
    for k in range(len(linears) - 1, -1, -1):
        deltas[k] = delta
        if k > 0:
            delta = slopes[k - 1] * (delta @ linears[k].weight)
    return deltas


def _clip_factors(
    sq: torch.Tensor, max_norm: float, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row norms from squared norms, and the factors min(1, C/‖g_i‖) as a column. With a
    padded batch's 0/1 `mask`, a padded row's factor is 0 (it adds nothing) and its norm, no
    unit's, is left out."""
    norms = torch.sqrt(sq.clamp_min(0.0))
    factors = torch.clamp(max_norm / (norms + 1e-12), max=1.0).unsqueeze(1)
    if mask is None:
        return norms, factors
    rows = mask.reshape(-1)
    return norms[rows > 0], factors * rows.unsqueeze(1).to(factors.dtype)


@torch.no_grad()
def wgan_gp_clipped_sum(
    critic: nn.Module,
    x_real: torch.Tensor,
    x_fake: torch.Tensor,
    alpha: torch.Tensor,
    *,
    gp_weight: float,
    max_norm: float,
    one_sided: bool = False,
    real_weight: torch.Tensor | None = None,
    x_hat: torch.Tensor | None = None,
    feature_scale: float = 0.0,
    mask: torch.Tensor | None = None,
) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Σ_i clip_C(∇θ ℓ_i) keyed like `critic.named_parameters()`, and the per-example norms.

    `one_sided` penalises only ‖∇D‖ > 1 (λ·max(0, ‖∇D‖−1)², Petzka et al.'s WGAN-LP).
    `real_weight` w_i turns the real term into -w_i·D(x_i) (importance weights, or the BCE
    derivative σ(-D(x_i))). `x_hat` replaces the linear interpolate (e.g. a spherical one; it may
    depend on record i only). With `feature_scale` β > 0 the vector β·[f_i, f_i²] of the critic's
    penultimate features at x_i is clipped *jointly* with the gradient (one norm per record, so
    the sensitivity stays C) and its clipped sum is returned under `FEATURES_KEY`. With `mask`
    (0/1 per row: dpgan.privacy.padded_batches) a row's clipping factor is multiplied by its mask,
    so a padded row adds exactly 0 to every sum, and the norms returned are the unmasked rows' only.
    """
    linears, leak = _linear_layers(critic)
    K = len(linears)
    batch = x_real.shape[0]
    # real term: -w_i D(x_i)
    h_in, s_real = _forward(linears, x_real, leak)
    if real_weight is None:
        top = torch.full((batch, 1), -1.0, dtype=x_real.dtype)
    else:
        top = -real_weight.reshape(batch, 1).to(x_real.dtype)
    deltas = _output_deltas(linears, s_real, top)
    # gradient-penalty term at the interpolate
    if x_hat is None:
        x_hat = alpha * x_real + (1.0 - alpha) * x_fake
    _, s_hat = _forward(linears, x_hat, leak)
    es: list[torch.Tensor] = [torch.empty(0)] * K
    e = torch.ones((batch, 1), dtype=x_real.dtype)
    for k in range(K - 1, -1, -1):
        es[k] = e
        e = e @ linears[k].weight
        if k > 0:
            e = s_hat[k - 1] * e
    g = e  # ∇ₓD(x̂), shape (B, d)
    g_norm = torch.sqrt(g.pow(2).sum(dim=1, keepdim=True) + 1e-12)
    excess = (g_norm - 1.0).clamp_min(0.0) if one_sided else g_norm - 1.0
    rho = 2.0 * gp_weight * excess * g / g_norm
    rhos: list[torch.Tensor] = []
    for k in range(K):
        rhos.append(rho)  # ρ̃_{k}: gradient w.r.t. the input side of layer k+1's transpose
        if k < K - 1:
            rho = s_hat[k] * (rho @ linears[k].weight.T)
    # per-example squared norms: ‖δ hᵀ + e ρ̃ᵀ‖² + ‖δ‖² for each layer
    sq = torch.zeros(batch, dtype=x_real.dtype)
    for k in range(K):
        d, h, ek, r = deltas[k], h_in[k], es[k], rhos[k]
        d_sq = (d * d).sum(1)
        sq += d_sq * (h * h).sum(1) + (ek * ek).sum(1) * (r * r).sum(1)
        sq += 2.0 * (d * ek).sum(1) * (h * r).sum(1) + d_sq
    features = None
    if feature_scale > 0:
        penultimate = h_in[K - 1]
        features = feature_scale * torch.cat([penultimate, penultimate.pow(2)], dim=1)
        sq = sq + features.pow(2).sum(1)
    norms, factors = _clip_factors(sq, max_norm, mask)
    names = {id(p): n for n, p in critic.named_parameters()}
    out: dict[str, torch.Tensor] = {}
    if features is not None:
        out[FEATURES_KEY] = (factors * features).sum(0)
    for k, layer in enumerate(linears):
        out[names[id(layer.weight)]] = (factors * deltas[k]).T @ h_in[k] + (factors * es[k]).T @ rhos[k]
        out[names[id(layer.bias)]] = (factors * deltas[k]).sum(0)
    return out, norms


@torch.no_grad()
def output_clipped_sum(
    critic: nn.Module, x: torch.Tensor, weight: torch.Tensor, *, max_norm: float, mask: torch.Tensor | None = None
) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Σ_j clip_C(∇θ [w_j·D(x_j)]) keyed like `critic.named_parameters()`, and the per-row norms.

    The fast path for a term with no gradient penalty (the critic's fake-only term): one forward
    pass, one backward pass of the δ's, per-row norms from the ghost identity ‖δ hᵀ‖ = ‖δ‖‖h‖
    summed over layers, and one weighted product per layer. It computes what
    `wgan_gp_clipped_sum(critic, x, x, α, gp_weight=0, real_weight=-w)` computes, in the same
    floating-point order, without that call's interpolate and penalty chain (whose terms are
    exact zeros when the penalty weight is 0), so the two agree bit for bit. `mask` as there.
    """
    linears, leak = _linear_layers(critic)
    batch = x.shape[0]
    h_in, slopes = _forward(linears, x, leak)
    deltas = _output_deltas(linears, slopes, weight.reshape(batch, 1).to(x.dtype))
    sq = torch.zeros(batch, dtype=x.dtype)
    for d, h in zip(deltas, h_in, strict=True):
        d_sq = (d * d).sum(1)
        sq += d_sq * (h * h).sum(1)
        sq += d_sq
    norms, factors = _clip_factors(sq, max_norm, mask)
    names = {id(p): n for n, p in critic.named_parameters()}
    out: dict[str, torch.Tensor] = {}
    for layer, d, h in zip(linears, deltas, h_in, strict=True):
        scaled = factors * d
        out[names[id(layer.weight)]] = scaled.T @ h
        out[names[id(layer.bias)]] = scaled.sum(0)
    return out, norms
