"""Grouped ("smart") clipping (issue 14, option 1): each parameter group of a unit clipped to its own c_j.

A unit's contribution v_i is split into k groups v_i^(1), ..., v_i^(k) (one per layer, i.e. the
parameter tensors under one module, or an explicit list of parameter-name groups; every extra
vector clipped with the gradient, such as the information loss's feature sums, is a group of its
own). Group j is scaled to ‖u_i^(j)‖ ≤ c_j and the step adds N(0, (σ·λ·c_j)²) to every coordinate
of group j's sum, in one draw through dpgan.privacy.noise.

Sensitivity and event. Multiply group j of the release by 1/c_j (public and invertible, so the
scaled release is post-processing of the original and vice versa: same privacy). In the scaled
coordinates each unit's contribution has groups of norm ≤ 1, so its whole norm is ≤ √k: adding or
removing a unit moves the scaled sum by at most √k in L2, and the noise is N(0, (σλ)²) on every
coordinate. That is the Gaussian mechanism with noise multiplier σλ/√k, Poisson-sampled at q. With
λ = √k it is Gaussian(σ) at q: exactly the event the ledger charges for a per-unit step, whatever
the thresholds. The default thresholds c_j = C/√k keep the whole unit within C (Σ_j c_j² = C²) and
give every group the per-unit step's noise std σ·C; given fractions c_j = f_j·C (public numbers
chosen before training, e.g. from public data) change only how the budget C is shared. Which
groups there are is read from the model's parameter names (its structure), never from the batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpgan.errors import InputError
from dpgan.privacy.grad_sample.spec import ParameterGroups

PER_LAYER = "per-layer"


def layer_groups(parameter_names: list[str]) -> tuple[tuple[str, ...], ...]:
    """One group per layer: the parameters that share a module path (`net.0.weight`, `net.0.bias`)."""
    layers: dict[str, list[str]] = {}
    for name in parameter_names:
        layers.setdefault(name.rpartition(".")[0], []).append(name)
    return tuple(tuple(names) for names in layers.values())


@dataclass(frozen=True)
class GroupedClipping:
    """Groups of a unit clipped to c_j each, noise σ·c_j·√k per group: event Gaussian(σ) (module docstring).

    `groups` is "per-layer" or explicit tuples of parameter names; `fractions` the c_j/C per group,
    in the order the groups are resolved (parameter groups, then each extra vector), or None for
    1/√k each."""

    groups: str | tuple[tuple[str, ...], ...] = PER_LAYER
    fractions: tuple[float, ...] | None = None
    sensitivity: float = 1.0  # of the whole unit with the default thresholds, in units of C

    def __post_init__(self) -> None:
        if isinstance(self.groups, str) and self.groups != PER_LAYER:
            raise InputError(f"clipping groups must be {PER_LAYER!r} or explicit parameter-name groups")
        if self.fractions is not None and not all(0 < f < math.inf for f in self.fractions):
            raise InputError("every group's share of the clipping norm must be positive and finite")

    def divisor(self, expected_batch_size: float) -> float:
        return expected_batch_size

    def resolve(self, parameter_names: list[str], extra_names: list[str], max_norm: float) -> ParameterGroups:
        """The groups of this model (its parameters' names, then one group per extra vector) and their c_j."""
        named = layer_groups(parameter_names) if self.groups == PER_LAYER else tuple(self.groups)
        names = (*named, *((extra,) for extra in extra_names))
        fractions = self.fractions or (1.0 / math.sqrt(len(names)),) * len(names)
        if len(fractions) != len(names):
            raise InputError(f"{len(fractions)} clipping shares given for {len(names)} parameter groups")
        groups = ParameterGroups(names, tuple(f * max_norm for f in fractions))
        groups.check_partition(set(parameter_names) | set(extra_names))
        return groups

    @staticmethod
    def noise_stds(groups: ParameterGroups, noise_multiplier: float) -> dict[str, float]:
        """σ·c_j·√k for every tensor of group j: the scaled release is Gaussian(σ) (module docstring)."""
        scale = math.sqrt(len(groups.names))
        return {
            name: noise_multiplier * threshold * scale
            for names, threshold in zip(groups.names, groups.thresholds)
            for name in names
        }


__all__ = ["PER_LAYER", "GroupedClipping", "layer_groups"]
