"""The default per-unit gradient backend: torch.func on any nn.Module critic.

Each unit's loss ℓ_i (grad_sample/spec.py) is written for one unit and differentiated with
`vmap(grad(ℓ))`; the gradient penalty's ∇ₓD(x̂_i) is an inner `grad`, so the outer one takes the
double backward that hook-based per-sample gradients (Opacus) cannot. `functional_call` runs the
critic with parameters keyed by name, so the result does not depend on the order in which a
module registers its parameters, and tied parameters get the sum of their uses.

Privacy: vmap evaluates the critic on each unit alone (a batch of one inside the map), so a layer
that mixes units cannot couple them here, and a module that stores batch statistics is refused
before anything runs (`refuse_batch_coupling`). The per-unit vector is clipped jointly (one norm
over all trainable parameters and the feature vector) before it is summed; the sum over chunks of
units is the same sum. Non-trainable parameters and buffers enter as constants.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from dpgan.errors import InputError
from dpgan.privacy.grad_sample.spec import (
    FEATURES_KEY,
    ClippedSum,
    CriticUnitLoss,
    ParameterGroups,
    clip_factors,
    refuse_batch_coupling,
)

NAME = "functorch"
# Per-unit gradients held at once, in tensor elements (units per chunk × trainable parameters).
CHUNK_ELEMENTS = 1 << 24

Tensors = dict[str, torch.Tensor]


def _unit_loss(critic: nn.Module, constants: Tensors, loss: CriticUnitLoss) -> Callable[..., torch.Tensor]:
    """ℓ_i as a function of (trainable parameters, x_i, w_i, x̂_i, *c_i), every tensor one unit."""
    gp_weight, one_sided = float(loss.gp_weight), loss.one_sided

    def score(params: Tensors, x: torch.Tensor, context: tuple[torch.Tensor, ...]) -> torch.Tensor:
        out = functional_call(critic, (params, constants), (x.unsqueeze(0), *(c.unsqueeze(0) for c in context)))
        if out.numel() != 1:
            raise InputError(f"the critic must give one score per unit, got shape {tuple(out.shape)} for one unit")
        return out.reshape(())

    def input_gradient(params: Tensors, x_hat: torch.Tensor, context: tuple[torch.Tensor, ...]) -> torch.Tensor:
        return grad(score, argnums=1)(params, x_hat, context)

    def unit_loss(params: Tensors, x: torch.Tensor, w: torch.Tensor, x_hat: torch.Tensor, *context: torch.Tensor):
        value = -w * score(params, x, context)
        if gp_weight > 0:
            g = input_gradient(params, x_hat, context)
            g_norm = torch.sqrt(g.pow(2).sum() + 1e-12)  # the ghost kernel's ε: finite at ∇ₓD = 0
            excess = (g_norm - 1.0).clamp_min(0.0) if one_sided else g_norm - 1.0
            value = value + gp_weight * excess.pow(2)
        return value

    return unit_loss


def _feature_vectors(critic: nn.Module, loss: CriticUnitLoss) -> torch.Tensor | None:
    """β·[f(x_i), f(x_i)²] per unit, flattened to (B, 2·|f|), or None when β = 0."""
    if loss.feature_scale <= 0:
        return None
    features = getattr(critic, "features", None)
    if not callable(features):
        raise InputError("a feature vector (info loss) needs a critic with a features(x) method")
    with torch.no_grad():
        f = features(loss.real, *loss.context)
    f = f.flatten(1) if f.dim() > 1 else f.unsqueeze(1)
    return loss.feature_scale * torch.cat([f, f.pow(2)], dim=1)


def default_chunk_size(num_parameters: int) -> int:
    return max(1, CHUNK_ELEMENTS // max(1, num_parameters))


def _split(critic: nn.Module) -> tuple[Tensors, Tensors]:
    """Trainable parameters (differentiated), and frozen parameters with buffers (constants)."""
    trainable = {n: p.detach() for n, p in critic.named_parameters() if p.requires_grad}
    if not trainable:
        raise InputError("the critic has no trainable parameters")
    constants = {n: p.detach() for n, p in critic.named_parameters() if not p.requires_grad}
    constants.update({n: b.detach() for n, b in critic.named_buffers()})
    return trainable, constants


def _per_unit(critic: nn.Module, loss: CriticUnitLoss, trainable: Tensors, constants: Tensors):
    """units → {name: (units, *shape)} gradients of ℓ_i, for a slice of the batch."""
    per_unit = vmap(
        grad(_unit_loss(critic, constants, loss)),
        in_dims=(None, 0, 0, 0) + (0,) * len(loss.context),
        randomness="different",  # dropout masks drawn per unit, independent of the data
    )
    weights, x_hat = loss.unit_weights(), loss.penalty_points()

    def gradients(part: slice) -> Tensors:
        return per_unit(trainable, loss.real[part], weights[part], x_hat[part], *(c[part] for c in loss.context))

    return gradients


def functorch_per_unit_gradients(critic: nn.Module, loss: CriticUnitLoss) -> Tensors:
    """∇θ ℓ_i for every unit, keyed like `critic.named_parameters()` (trainable ones), unclipped.

    For tests and audits: it holds B × #parameters numbers at once."""
    refuse_batch_coupling(critic)
    trainable, constants = _split(critic)
    if loss.batch_size == 0:
        return {n: p.new_zeros(0, *p.shape) for n, p in trainable.items()}
    return _per_unit(critic, loss, trainable, constants)(slice(0, loss.batch_size))


def _group_factors(
    flat: dict[str, torch.Tensor], groups: ParameterGroups, finite: torch.Tensor
) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Per part of the unit vector, min(1, c_j/‖v_i^(j)‖) of its group j, and the (B, k) group norms.

    A unit whose whole norm is not finite contributes nothing in any group (spec.clip_factors)."""
    factors: dict[str, torch.Tensor] = {}
    norms = []
    for names, threshold in zip(groups.names, groups.thresholds):
        group_norm = torch.stack([flat[n].pow(2).sum(dim=1) for n in names]).sum(dim=0).sqrt()
        factor = torch.where(finite, clip_factors(group_norm, threshold), torch.zeros_like(group_norm))
        factors.update({n: factor for n in names})
        norms.append(group_norm)
    return factors, torch.stack(norms, dim=1)


def functorch_clipped_sum(
    critic: nn.Module,
    loss: CriticUnitLoss,
    max_norm: float,
    *,
    chunk_size: int | None = None,
    groups: ParameterGroups | None = None,
) -> ClippedSum:
    """Σ_i min(1, C/‖v_i‖)·v_i for any critic, computed `chunk_size` units at a time.

    With `groups` (grouped clipping), each group's part of v_i is clipped to its own c_j instead
    (`max_norm` is then unused): Σ_i Σ_j min(1, c_j/‖v_i^(j)‖)·v_i^(j), group by group."""
    refuse_batch_coupling(critic)
    if not max_norm > 0:
        raise InputError(f"max_norm must be > 0, got {max_norm}")
    trainable, constants = _split(critic)
    batch = loss.batch_size
    features = _feature_vectors(critic, loss)
    sums = {n: torch.zeros_like(p) for n, p in trainable.items()}
    feature_sum = None if features is None else features.new_zeros(features.shape[1])
    norms = loss.real.new_zeros(batch)
    group_norms = None
    if groups is not None:
        groups.check_partition(set(trainable) | ({FEATURES_KEY} if features is not None else set()))
        group_norms = loss.real.new_zeros(batch, len(groups.names))
    if batch == 0:
        return ClippedSum(sums, feature_sum, norms, NAME, group_norms)

    gradients = _per_unit(critic, loss, trainable, constants)
    step = chunk_size or default_chunk_size(sum(p.numel() for p in trainable.values()))
    for start in range(0, batch, step):
        part = slice(start, min(start + step, batch))
        grads = gradients(part)
        flat = [grads[n].reshape(grads[n].shape[0], -1) for n in trainable]
        if features is not None:
            flat.append(features[part])
        chunk_norms = torch.stack([v.pow(2).sum(dim=1) for v in flat]).sum(dim=0).sqrt()
        factors = clip_factors(chunk_norms, max_norm)
        if loss.mask is not None:  # a padded row's factor is 0 (its group factors below too)
            factors = factors * loss.mask[part].to(factors.dtype)
        finite = torch.isfinite(chunk_norms)
        if not bool(finite.all()):  # a non-finite unit contributes 0 (clip_factors), and 0·NaN must not be NaN
            flat = [torch.where(finite.unsqueeze(1), v, torch.zeros_like(v)) for v in flat]
        keys = [*trainable, FEATURES_KEY][: len(flat)]
        per_part = {key: factors for key in keys}
        if groups is not None and group_norms is not None:
            per_part, group_norms[part] = _group_factors(dict(zip(keys, flat)), groups, finite)
            if loss.mask is not None:
                per_part = {key: f * loss.mask[part].to(f.dtype) for key, f in per_part.items()}
        for (name, p), v in zip(trainable.items(), flat):
            sums[name] += (per_part[name] @ v).reshape(p.shape)
        if feature_sum is not None:
            feature_sum += per_part[FEATURES_KEY] @ flat[-1]
        norms[part] = chunk_norms
    if loss.mask is not None:  # the padded rows' norms are no unit's
        norms, group_norms = loss.kept(norms), None if group_norms is None else group_norms[loss.mask > 0]
    return ClippedSum(sums, feature_sum, norms, NAME, group_norms)


__all__ = ["NAME", "default_chunk_size", "functorch_clipped_sum", "functorch_per_unit_gradients"]
