"""Microbatch clipping (DP-CGAN / TF-Privacy style) for a LeakyReLU MLP critic, without per-group autograd.

The Poisson batch is split into m microbatches; the gradient of each microbatch's MEAN loss is clipped to C,
the clipped microbatch gradients are summed, and Gaussian noise is added. The per-record loss is
ℓ_i = w_i · D(x_i), with w_i a per-row constant (e.g. -σ(-D(x_i)) from a BCE loss); there is no gradient
penalty. m = batch size with one record per microbatch is ordinary per-example clipping.

Sensitivity. Microbatch ids are drawn independently per record (`assign_microbatches`), so adding or removing
one record changes exactly one microbatch and leaves every other record's microbatch as it was. With
microbatches of size > 1 that microbatch's clipped mean moves from one vector of norm ≤ C to another (the other
members' contribution does not vanish, it is rescaled and re-clipped), so the L2 sensitivity of the sum is 2C,
not C: callers add noise with std MICROBATCH_SENSITIVITY_FACTOR·σ·C and account σ. With every record alone in
its group (groups = arange(B)) a record's whole contribution appears or disappears and the sensitivity is C.
Splitting by position instead would move many records between microbatches when one is added, and the bound
above would not hold.

Non-finite gradients (an overflow, a NaN from an extreme record). One NaN would otherwise make the whole
release NaN, revealing without noise that such a record was in the batch. So, as the generic backend does
(dpgan.privacy.grad_sample.spec.clip_factors): a record whose forward or backward values are not all finite
contributes a zero gradient to its microbatch's mean (it still counts in |g|), and a microbatch whose mean
gradient's norm is not finite contributes zero. The first rule reads that record alone, the second that
microbatch alone, so adding or removing a record still changes exactly one microbatch's clipped contribution,
from a vector of norm ≤ C (or zero) to another: the sensitivity stays 2C (C with one record per group).

Computation (layers k = 1..K, a_k = W_k h_{k-1} + b_k, h_k = φ(a_k), s_k = φ'(a_k)): δ_K = w,
δ_{k-1} = s_{k-1} ⊙ W_kᵀ δ_k; record i's gradient is δ_k h_{k-1}ᵀ for W_k and δ_k for b_k. With A the
(m × B) averaging matrix (A[g, i] = 1/|g| if record i is in g), group g's gradient of W_k is
Σ_i A[g, i] δ_i h_iᵀ; it is materialised one layer at a time only to get the group norms. The clipped sum
Σ_g f_g Σ_i A[g, i] δ_i h_iᵀ is then one (width × B)(B × width) product with per-record coefficients
c_i = f_{g(i)}/|g(i)|.
"""

from __future__ import annotations

import torch
from torch import nn

from dpgan.errors import InputError
from dpgan.privacy.grad_sample.spec import clip_factors
from dpgan.privacy.mlp_clipping import _forward, _linear_layers

MICROBATCH_SENSITIVITY_FACTOR = 2.0


def sensitivity_factor(per_example: bool) -> float:
    """L2 sensitivity of the clipped sum in units of C: 1 with one record per group, 2 with microbatches."""
    return 1.0 if per_example else MICROBATCH_SENSITIVITY_FACTOR


def assign_microbatches(batch_size: int, num_microbatches: int, generator: torch.Generator) -> torch.Tensor:
    """Each sampled record gets a microbatch id drawn uniformly and independently from [0, m).

    Independent assignment (not splitting by position) is what makes the sensitivity argument hold: adding one
    record changes one microbatch and leaves every other record's microbatch unchanged.
    """
    if batch_size < 0:
        raise InputError(f"batch_size must be >= 0, got {batch_size}")
    if num_microbatches <= 0:
        raise InputError(f"num_microbatches must be > 0, got {num_microbatches}")
    return torch.randint(
        0, num_microbatches, (batch_size,), generator=generator, device=generator.device, dtype=torch.long
    )


def _check_inputs(x: torch.Tensor, w: torch.Tensor, groups: torch.Tensor, num_groups: int, in_dim: int) -> None:
    """Raise InputError for shapes or group ids that would silently give a wrong (or non-private) sum."""
    if x.dim() != 2 or x.shape[1] != in_dim:
        raise InputError(f"x must have shape (B, {in_dim}), got {tuple(x.shape)}")
    batch = x.shape[0]
    if w.shape not in ((batch,), (batch, 1)):
        raise InputError(f"output_weight must have shape ({batch},), got {tuple(w.shape)}")
    if groups.shape != (batch,) or groups.is_floating_point() or groups.is_complex() or groups.dtype == torch.bool:
        raise InputError(f"groups must be integer ids of shape ({batch},), got {groups.dtype} {tuple(groups.shape)}")
    if num_groups <= 0:
        raise InputError(f"num_groups must be > 0, got {num_groups}")
    if batch and (int(groups.min()) < 0 or int(groups.max()) >= num_groups):
        raise InputError(f"group ids must lie in [0, {num_groups})")


@torch.no_grad()
def microbatch_clipped_sum(
    critic: nn.Module,
    x: torch.Tensor,
    output_weight: torch.Tensor,
    groups: torch.Tensor,
    num_groups: int,
    *,
    max_norm: float,
) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Σ_g clip_C( mean_{i∈g} ∇θ (w_i D(x_i)) ) keyed like `critic.named_parameters()`, and the group norms.

    The norms have shape (num_groups,); empty groups have norm 0 and contribute nothing. A record with a
    non-finite value in its forward or backward pass contributes zero to its group's mean, and a group whose
    norm is not finite contributes nothing (module docstring: the sensitivity is unchanged).
    """
    linears, leak = _linear_layers(critic)
    _check_inputs(x, output_weight, groups, num_groups, linears[0].in_features)
    groups = groups.long()
    batch = x.shape[0]
    h_in, slopes = _forward(linears, x, leak)
    deltas: list[torch.Tensor] = [torch.empty(0)] * len(linears)
    delta = output_weight.reshape(batch, 1).to(x.dtype)
    for k in range(len(linears) - 1, -1, -1):
        deltas[k] = delta
        if k > 0:
            delta = slopes[k - 1] * (delta @ linears[k].weight)
    h_in, deltas = _zero_rows(~_finite_rows(h_in, deltas), h_in, deltas)  # a record's own values: a rule of one record
    counts = torch.bincount(groups, minlength=num_groups).to(x.dtype)
    inv_size = 1.0 / counts.clamp_min(1.0)
    avg = torch.zeros(num_groups, batch, dtype=x.dtype, device=x.device)
    avg[groups, torch.arange(batch, device=x.device)] = inv_size[groups]  # the (m × B) averaging matrix A
    sq = torch.zeros(num_groups, dtype=x.dtype, device=x.device)
    for d, h in zip(deltas, h_in, strict=True):
        sq += torch.einsum("gb,bo,bi->goi", avg, d, h).pow(2).sum(dim=(1, 2)) + (avg @ d).pow(2).sum(dim=1)
    norms = sq.clamp_min(0.0).sqrt()
    factors = clip_factors(norms, max_norm)  # 0 for a group whose norm is not finite (an overflow)
    if not bool(torch.isfinite(norms).all()):  # and 0·inf must not be NaN: its members' rows are zeroed
        h_in, deltas = _zero_rows(~torch.isfinite(norms)[groups], h_in, deltas)
    coef = (factors * inv_size)[groups].unsqueeze(1)  # c_i = f_{g(i)} / |g(i)|
    names = {id(p): n for n, p in critic.named_parameters()}
    out: dict[str, torch.Tensor] = {}
    for layer, d, h in zip(linears, deltas, h_in, strict=True):
        out[names[id(layer.weight)]] = (coef * d).T @ h
        out[names[id(layer.bias)]] = (coef * d).sum(dim=0)
    return out, norms


def _finite_rows(*tensors: list[torch.Tensor]) -> torch.Tensor:
    """(B,) bool: the records whose every forward input and backward δ is finite."""
    finite: torch.Tensor | None = None
    for group in tensors:
        for t in group:
            rows = torch.isfinite(t.flatten(start_dim=1)).all(dim=1)
            finite = rows if finite is None else finite & rows
    assert finite is not None
    return finite


def _zero_rows(
    drop: torch.Tensor, h_in: list[torch.Tensor], deltas: list[torch.Tensor]
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """The records `drop` marks with zero inputs and δ (their gradient is then exactly 0)."""
    if not bool(drop.any()):
        return h_in, deltas
    keep = ~drop.unsqueeze(1)
    return (
        [torch.where(keep, h, torch.zeros_like(h)) for h in h_in],
        [torch.where(keep, d, torch.zeros_like(d)) for d in deltas],
    )


__all__ = [
    "MICROBATCH_SENSITIVITY_FACTOR",
    "assign_microbatches",
    "microbatch_clipped_sum",
    "sensitivity_factor",
]
