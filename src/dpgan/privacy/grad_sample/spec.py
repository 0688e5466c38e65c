"""What a private critic step clips, stated once so that every backend computes the same thing.

For privacy unit i (a table row, a series, an image: any tensor along the leading dimension) the
clipped unit is the vector

    v_i = ( ∇θ ℓ_i , β·[f(x_i), f(x_i)²] ),   ℓ_i = -w_i·D(x_i, c_i) + λ·pen(‖∇ₓD(x̂_i, c_i)‖),

with x̂_i = α_i·x_i + (1-α_i)·p_i (or an x̂_i given by the caller), pen(g) = (g-1)² or, one-sided,
max(0, g-1)², c_i optional per-unit critic inputs (a label, a condition one-hot) and f the critic's
penultimate activations (`critic.features(x, *c)`, only when β > 0). The BCE loss softplus(-D(x_i))
fits the same form: its gradient is w_i·σ(-D(x_i))·∇θ(-D(x_i)), so the caller passes
w_i ← w_i·σ(-D(x_i)) computed without gradient, as training does today.

Why this is private: every input that enters v_i (x_i, p_i, α_i, x̂_i, w_i, c_i) belongs to unit i
or is public, so v_i depends on record i alone. Each backend scales v_i by min(1, C/‖v_i‖), one
joint norm over all parameters *and* the feature vector, so adding or removing a unit moves the
clipped sum by at most C in L2: one Gaussian release per step, accounted once. A critic that mixes
units (BatchNorm, an InstanceNorm that tracks running statistics) would let x_i move v_j for j ≠ i;
`refuse_batch_coupling` rejects it before any gradient is taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from dpgan.errors import InputError
from dpgan.privacy.mlp_clipping import FEATURES_KEY

# Layers whose output for one unit depends on the other units of the batch (or that store batch
# statistics in buffers, which later forward passes read): per-unit clipping cannot bound them.
_BATCH_COUPLING: tuple[type[nn.Module], ...] = (nn.modules.batchnorm._BatchNorm, nn.SyncBatchNorm)


@dataclass(frozen=True)
class CriticUnitLoss:
    """The per-unit loss of one critic step on a Poisson batch of B units (B may be 0).

    `real` (B, *unit_shape); `weight` (B,) the w_i (None: all 1); `partners` (B, *unit_shape) the
    gradient-penalty partners p_i and `alpha` (B,) or (B, 1, ...) their mixing weights, or `x_hat`
    (B, *unit_shape) the penalty's points given directly; `context` per-unit critic inputs after x
    (each (B, ...)), seen at x_i and at x̂_i; `gp_weight` λ (0: no penalty, nothing else needed);
    `feature_scale` β (0: no feature vector; > 0 needs a `critic.features` method); `mask` (B,) 0/1
    for a batch padded to a static size (dpgan.privacy.padded_batches): a row whose mask is 0 gets
    clip factor 0 in every backend, so it adds exactly 0, and its norm is not reported.
    """

    real: torch.Tensor
    weight: torch.Tensor | None = None
    partners: torch.Tensor | None = None
    alpha: torch.Tensor | None = None
    x_hat: torch.Tensor | None = None
    gp_weight: float = 0.0
    one_sided: bool = False
    feature_scale: float = 0.0
    context: tuple[torch.Tensor, ...] = field(default_factory=tuple)
    mask: torch.Tensor | None = None

    def __post_init__(self) -> None:
        if self.real.dim() < 1:
            raise InputError("the real batch needs a leading unit dimension")
        batch = self.real.shape[0]
        if self.weight is not None and tuple(self.weight.shape) not in ((batch,), (batch, 1)):
            raise InputError(f"weight must have shape ({batch},), got {tuple(self.weight.shape)}")
        if self.gp_weight < 0 or self.feature_scale < 0:
            raise InputError("gp_weight and feature_scale must be >= 0")
        if self.gp_weight > 0:
            if self.x_hat is None and (self.partners is None or self.alpha is None):
                raise InputError("a gradient penalty needs partners and alpha, or x_hat")
            for name in ("partners", "x_hat"):
                value = getattr(self, name)
                if value is not None and value.shape != self.real.shape:
                    raise InputError(f"{name} must have the real batch's shape {tuple(self.real.shape)}")
            if self.x_hat is None and self.alpha is not None and self.alpha.numel() != batch:  # type: ignore[union-attr]
                raise InputError(f"alpha must hold one value per unit ({batch})")
        if self.mask is not None and tuple(self.mask.shape) != (batch,):
            raise InputError(f"mask must have shape ({batch},), got {tuple(self.mask.shape)}")
        for i, c in enumerate(self.context):
            if c.dim() < 1 or c.shape[0] != batch:
                raise InputError(f"context[{i}] must have {batch} units along its first dimension")

    @property
    def batch_size(self) -> int:
        return int(self.real.shape[0])

    def unit_weights(self) -> torch.Tensor:
        """w_i as a (B,) tensor in the real batch's dtype."""
        if self.weight is None:
            return torch.ones(self.batch_size, dtype=self.real.dtype, device=self.real.device)
        return self.weight.reshape(self.batch_size).to(self.real.dtype)

    def kept(self, norms: torch.Tensor) -> torch.Tensor:
        """The sampled rows' entries of a per-row tensor (all of them without a mask)."""
        return norms if self.mask is None else norms[self.mask.reshape(-1) > 0]

    def penalty_points(self) -> torch.Tensor:
        """x̂_i for every unit: the given x_hat, else α_i x_i + (1-α_i) p_i (the real batch without a penalty)."""
        if self.x_hat is not None:
            return self.x_hat
        if self.partners is None or self.alpha is None:
            return self.real
        alpha = self.alpha.reshape(self.batch_size, *([1] * (self.real.dim() - 1))).to(self.real.dtype)
        return alpha * self.real + (1.0 - alpha) * self.partners


@dataclass(frozen=True)
class ParameterGroups:
    """Grouped clipping's partition of the unit vector v_i (dpgan.privacy.step.GroupedClipping):
    group j (trainable parameter names; `FEATURES_KEY` names the feature vector) is clipped to its
    own threshold c_j, so v_i's clipped part in group j has norm ≤ c_j. The groups and thresholds
    are settings (the critic's structure, public numbers), never read from the batch."""

    names: tuple[tuple[str, ...], ...]
    thresholds: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.names) != len(self.thresholds) or not self.names:
            raise InputError("parameter groups need one threshold per group and at least one group")
        if not all(c > 0 and c < float("inf") for c in self.thresholds):
            raise InputError("every group's clipping threshold must be positive and finite")
        flat = [name for group in self.names for name in group]
        if len(flat) != len(set(flat)) or not all(self.names):
            raise InputError("parameter groups must be non-empty and must not share a name")

    def check_partition(self, names: set[str]) -> None:
        """Every part of the unit vector in exactly one group: a part left out would go unclipped."""
        grouped = {name for group in self.names for name in group}
        if grouped != names:
            raise InputError(
                "parameter groups must cover each trainable parameter (and the feature vector) exactly once; "
                f"missing {sorted(names - grouped)}, unknown {sorted(grouped - names)}"
            )


@dataclass(frozen=True)
class ClippedSum:
    """Σ_i min(1, C/‖v_i‖)·v_i split back into its parts, before any noise.

    `gradients` is keyed like `critic.named_parameters()` (trainable parameters only); `features`
    is the clipped sum of β·[f, f²] (None when β = 0); `norms` the (B,) unclipped ‖v_i‖ (private:
    never release them); `backend` names the path that computed it; with parameter groups,
    `group_norms` (B, k) holds each unit's unclipped norm per group (private too).
    """

    gradients: dict[str, torch.Tensor]
    features: torch.Tensor | None
    norms: torch.Tensor
    backend: str
    group_norms: torch.Tensor | None = None


def clip_factors(norms: torch.Tensor, max_norm: float) -> torch.Tensor:
    """min(1, C/‖v_i‖), and 0 for a unit whose norm is not finite.

    A non-finite unit (an overflow, a NaN from an extreme record) would otherwise turn the whole
    release into NaN, revealing without noise that such a unit was in the batch. Dropping it is a
    function of that unit alone, so the sum's sensitivity stays C.
    """
    factors = torch.clamp(max_norm / (norms + 1e-12), max=1.0)
    return torch.where(torch.isfinite(norms), factors, torch.zeros_like(factors))


def refuse_batch_coupling(critic: nn.Module) -> None:
    """Raise InputError if a layer of `critic` mixes units or keeps batch statistics."""
    for name, module in critic.named_modules():
        coupled = isinstance(module, _BATCH_COUPLING) or (
            isinstance(module, nn.modules.instancenorm._InstanceNorm) and module.track_running_stats
        )
        if coupled:
            where = name or "the critic itself"
            raise InputError(
                f"a DP critic cannot use {type(module).__name__} ({where}): it couples the units of a batch, "
                "so per-unit clipping would not bound the sensitivity; use GroupNorm, LayerNorm or no normalisation"
            )


__all__ = ["FEATURES_KEY", "ClippedSum", "CriticUnitLoss", "ParameterGroups", "clip_factors", "refuse_batch_coupling"]
