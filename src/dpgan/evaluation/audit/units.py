"""The white-box canary for the critics over units of series and images: what `dpgan audit` runs
on a sequence or an image model.

The tabular canary (dpgan.evaluation.audit.whitebox) zeroes one input column of an MLP critic's
first layer. The same argument holds for every critic whose inputs enter through one linear map,
so here it is stated for a set S of a unit's coordinates and the slice W[index] of the first
layer's weight that alone reads them:
- series (dpgan.models.sequence_units, the model's own `SeriesUnitCritic`): S is the last value
  channel at every step of each of the unit's series; W[index] is that channel's columns of the
  MLP's first Linear (every step's), or its column of the LSTM's input projection
  (dpgan.models.recurrent); with `differences`, the columns of its first differences too;
- images (dpgan.models.image_units): S is the last image channel at every pixel; W[index] is the
  first conv's kernels of that input channel (dpgan.models.conv), or the MLP critic's columns of
  those pixels.
The auditor zeroes W[index] (the step's guarantee holds for every critic state, so the auditor
may pick it) and sets S to 0 in every filler unit and every gradient-penalty partner. Then the
critic's output does not depend on S, no filler unit's real term reaches W[index] (its gradient
there is the input at S: 0), nor its penalty: the penalty reads W[index] only through the input
gradient at S, W[index]ᵀ(…) = 0, and through the forward, whose dependence on W[index] is
multiplied by x̂[S] = 0 (x̂ interpolates two units that are 0 on S, linearly or spherically). The
canary is the unit with S = M and all else 0: its real term's gradient in W[index] is M·g₁ (the
forward ignores S, so it is linear in M), g₁ computed by the auditor at M = 1; M makes it
CANARY_MARGIN·C, so its clipped gradient lies almost wholly along u = g₁/‖g₁‖. The statistic is
⟨released W[index], u⟩, as for tables; each trial draws a fresh batch, noise and penalty points.
A check at construction confirms that the zeroed critic ignores S (an internal error otherwise).

The model's critic is built by its facade's own constructor from model.json (random weights: the
audit never reads the model's weights or any data), so the audited step is the configuration's:
the same critic architecture, loss, penalty, C, microbatches and σ. Only the step mode runs here:
the one-run and black-box audits build table rows (one canary column each, a tabular training).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from dpgan.errors import InputError
from dpgan.images.fit_kind import image_critic
from dpgan.sequences.fit_kind import series_critic

CANARY_MARGIN = 1e3  # the canary's gradient in W[index] is this many times C before clipping
Units = Callable[[int, np.random.Generator], torch.Tensor]


@dataclass(frozen=True)
class UnitCritic:
    """A sequence or image model's critic as the audit needs it (module docstring).

    `build()` makes the critic with fresh random weights (torch's global RNG, seeded by the
    caller); `parameter` names its first layer's weight and `index` the slice W[index] that alone
    reads the canary coordinates `mask` (a bool array of the unit's shape); `public_units(n, rng)`
    draws n units from the public domain ([-1, 1] values or pixels, random one-hot labels)."""

    kind: str
    recipe: str  # the audited configuration's name in the report: "sequence (mlp critic)", "image (dcgan)"
    build: Callable[[], nn.Module]
    unit_shape: tuple[int, ...]
    parameter: str
    index: tuple[Any, ...]
    mask: np.ndarray
    public_units: Units
    coordinates: str  # S in words, for the report


AUDITED_KINDS = "table models, sequence models and image models of the DP-critic recipes (dcgan, dp-cgan)"


def sequence_unit_critic(synth: Any) -> UnitCritic:
    """A loaded sequence model's critic layout (the series kind's audit, dpgan.sequences.registration)."""
    if synth.networks.released_only:
        raise InputError(
            f"dpgan audit audits {AUDITED_KINDS}; this series model is the DP Gaussian "
            f"({synth.networks.model}: one release of DP statistics, no DP-SGD critic step): "
            "fit with --model gan to audit a critic"
        )
    return _sequence_critic(synth)


def image_unit_critic(synth: Any) -> UnitCritic:
    """A loaded image model's critic layout (the image kind's audit, dpgan.images.registration)."""
    if synth.recipe.strategy != "dp-critic":
        raise InputError(
            f"dpgan audit audits {AUDITED_KINDS}; the image recipe {synth.recipe.name} has no DP-SGD critic step: "
            "fit with --recipe dcgan to audit a critic"
        )
    return _image_critic(synth)


def _one_hot_labels(n: int, per: tuple[int, ...], labels: int, rng: np.random.Generator) -> np.ndarray:
    codes = rng.integers(labels, size=(n, *per))
    return np.eye(labels, dtype=np.float32)[codes]


def _sequence_critic(synth: Any) -> UnitCritic:
    schema = synth.schema
    with torch.random.fork_rng(devices=[]):
        probe = series_critic(synth.networks, schema)  # the facade's own critic for this schema and settings
    n_values = len(schema.values)
    n_labels = schema.n_labels
    per_unit = schema.max_series_per_entity if schema.entity is not None else 1
    length, channels = schema.length, n_values + n_labels
    star = n_values - 1  # the last value channel
    read = [star] if not probe.differences else [star, n_values + star]  # its values, and its differences
    if probe.kind == "lstm":
        parameter, index = "series_critic.lstm.layers.0.weight_ih_l0", (slice(None), torch.tensor(read))
    else:
        width = (n_values if probe.projection else channels) + (n_values if probe.differences else 0)
        columns = torch.tensor([t * width + c for t in range(length) for c in read])
        prefix = "series_critic.trunk.1" if probe.projection else "series_critic.1"
        parameter, index = f"{prefix}.weight", (slice(None), columns)
    mask = np.zeros((per_unit, length, channels), dtype=bool)
    mask[:, :, star] = True

    def public_units(n: int, rng: np.random.Generator) -> torch.Tensor:
        values = rng.uniform(-1.0, 1.0, size=(n, per_unit, length, n_values)).astype(np.float32)
        if n_labels:
            labels = _one_hot_labels(n, (per_unit,), n_labels, rng)[:, :, None, :].repeat(length, axis=2)
            values = np.concatenate([values, labels], axis=3)
        return torch.from_numpy(values)

    return UnitCritic(
        kind="sequence",
        recipe=f"sequence ({synth.networks.critic} critic)",
        build=lambda: series_critic(synth.networks, schema),
        unit_shape=(per_unit, length, channels),
        parameter=parameter,
        index=index,
        mask=mask,
        public_units=public_units,
        coordinates=f"value channel {star} at every step ({probe.kind} critic)",
    )


def _image_critic(synth: Any) -> UnitCritic:
    shape = tuple(synth.image_shape)
    n_labels = len(synth.label_names)
    with torch.random.fork_rng(devices=[]):
        probe = image_critic(synth.recipe, synth.networks, shape, n_labels)  # the facade's own critic
    channels, plane = shape[0], shape[1] * shape[2]
    pixels = channels * plane
    star = channels - 1  # the last image channel
    if synth.recipe.architecture == "conv":
        parameter, index = "conv.body.0.weight", (slice(None), star)
    else:
        parameter, index = "net.0.weight", (slice(None), torch.arange(star * plane, (star + 1) * plane))
    assert parameter in dict(probe.named_parameters())
    mask = np.zeros(pixels + n_labels, dtype=bool)
    mask[star * plane : (star + 1) * plane] = True

    def public_units(n: int, rng: np.random.Generator) -> torch.Tensor:
        units = rng.uniform(-1.0, 1.0, size=(n, pixels)).astype(np.float32)
        if n_labels:
            units = np.concatenate([units, _one_hot_labels(n, (), n_labels, rng)], axis=1)
        return torch.from_numpy(units)

    return UnitCritic(
        kind="image",
        recipe=f"image ({synth.recipe.name})",
        build=lambda: image_critic(synth.recipe, synth.networks, shape, n_labels),
        unit_shape=(pixels + n_labels,),
        parameter=parameter,
        index=index,
        mask=mask,
        public_units=public_units,
        coordinates=f"image channel {star} at every pixel ({synth.recipe.architecture} critic)",
    )


class UnitCanary:
    """The critic, filler units, the canary unit and the direction u (module docstring)."""

    def __init__(self, units: UnitCritic, max_norm: float, filler: int, rng: np.random.Generator, seed: int) -> None:
        self.units = units
        mask = torch.from_numpy(units.mask)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.critic = units.build()
        self.weight = dict(self.critic.named_parameters())[units.parameter]
        with torch.no_grad():
            self.weight[units.index] = 0.0
        self.filler = units.public_units(filler, rng).masked_fill(mask, 0.0)
        self.partners = units.public_units(filler, rng).masked_fill(mask, 0.0)
        unit = mask.to(torch.float32).unsqueeze(0)
        self._check_blind(unit)
        (grad,) = torch.autograd.grad(-self.critic(unit).sum(), self.weight)
        g1 = grad[units.index].reshape(-1)
        if not float(g1.norm()) > 0:
            raise InputError("the audit's canary has no gradient through this critic (internal error)")
        self.direction = g1 / g1.norm()
        self.magnitude = CANARY_MARGIN * max_norm / float(g1.norm())
        self.canaries = unit * self.magnitude

    def _check_blind(self, unit: torch.Tensor) -> None:
        """The zeroed critic must ignore the canary coordinates (else the argument does not apply)."""
        with torch.no_grad():
            base = self.filler[:2]
            lifted = base + 7.0 * unit
            if not torch.allclose(self.critic(base), self.critic(lifted), rtol=1e-4, atol=1e-5):
                raise RuntimeError("internal error: the audited critic reads the canary coordinates elsewhere")

    def describe(self) -> str:
        return f"{self.units.coordinates} = {self.magnitude:.4g}, all else 0"

    def project(self, gradient: dict[str, torch.Tensor]) -> torch.Tensor:
        """⟨released W[index], u⟩, as a one-element tensor (one canary)."""
        return (gradient[self.units.parameter][self.units.index].reshape(-1) @ self.direction).reshape(1)


__all__ = ["AUDITED_KINDS", "UnitCanary", "UnitCritic", "image_unit_critic", "sequence_unit_critic"]
