"""The private step: the one object through which every private gradient release goes.

A release reads a Poisson batch of privacy units (a row today; a series, an entity or an image
next), clips what each unit contributes, adds Gaussian noise once, divides by a public constant
and charges the ledger for exactly what it ran. Each step object reserves its steps in the ledger
when it is built (refused there if they would take the ledger past ε) and charges one per release
(refused past the reservation), so the ledger's count is the count of releases that happened
(dpgan.privacy.step_charge).

The loop keeps what reads no private unit outside: the fake-only term of a critic update is added
to the release by the caller, never noised (it would only lower the signal) and never inside a
unit's clip (it would not change the sensitivity, only waste the clipping budget).

Strategies, each with the argument that fixes its noise:
- `PerUnitClipping` — unit i's whole contribution g_i (every parameter's gradient and every extra
  vector read from the unit, such as the information loss's feature sums) is scaled to ‖g_i‖ ≤ C
  with one norm. Adding or removing a unit moves Σ_i g_i by at most C: noise std σ·C, event
  Gaussian(σ) Poisson-sampled at q. The sum is divided by the expected batch size q·N̂, a public
  constant, never by the realised |B| (which would itself depend on the data).
- `MicrobatchClipping(m)` — dpgan.privacy.microbatch: units get independent uniform microbatch ids
  and each microbatch's MEAN gradient is clipped to C. Adding a unit replaces one clipped mean of
  norm ≤ C by another: sensitivity 2C, noise std 2σ·C, the same event Gaussian(σ) at q. Divided by m.
- `GeneratorHookStep` — dtgan-g's release, in dpgan.privacy.generator_hook (re-exported here):
  each generated row's output gradient clipped to C, sensitivity 2C√B, event one-of-shards(σ, N_d).
- `GroupedClipping` — dpgan.privacy.grouped_clipping: each parameter group (a layer, or named
  groups; each extra vector its own) clipped to c_j, noise std σ·c_j·√k per group. Scaling group j
  by 1/c_j gives sensitivity √k against noise σ√k: the same event Gaussian(σ) at q. ÷ q·N̂.
- `adaptive=AdaptiveClipping(γ, η, σ_b)` — dpgan.privacy.adaptive_clipping, on top of per-unit or
  grouped clipping: the step also releases the centred count of units with ‖v_i‖ ≤ C (noise σ_b,
  sensitivity ½) and moves its C towards the γ-quantile. Gradient noise σ_Δ = (σ⁻² − (2σ_b)⁻²)^(−½)
  makes the pair jointly Gaussian(σ) at q: the ledger's event is unchanged. The step owns C.

Data-parallel (dpgan.privacy.distributed): with a `context` of K lockstep ranks, each rank clips and
sums only its share of the batch, the sums (and adaptive clipping's count) are all-reduced, and
the noise is drawn once, after the reduce, from the generator every rank shares: every rank then
holds the single-process release. Units that cannot be split are computed whole on every rank
(the same release, no speed-up).

Tests drive the engine black-box: inject the sampler, the noise generator and a recorder that
sees, per release, the units' norms before clipping, the clipped sum, the noise std and the divisor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch

from dpgan.errors import InputError
from dpgan.privacy.accounting import POISSON, PrivacyLedger
from dpgan.privacy.adaptive_clipping import COUNT_KEY, AdaptiveClipping
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext, shard_positions
from dpgan.privacy.generator_hook import GeneratorHookStep
from dpgan.privacy.grouped_clipping import GroupedClipping
from dpgan.privacy.noise import add_gaussian
from dpgan.privacy.sampling import PoissonSampler
from dpgan.privacy.step_charge import Recorder, StepCharge, reserve_steps

Tensors = dict[str, torch.Tensor]


class Sampler(Protocol):
    """Draws the units of one step (indices into the table of units)."""

    def sample(self) -> torch.Tensor: ...


class ClippedSum(Protocol):
    """Per-unit gradients, clipped, summed: `(model, units, max_norm) -> (sums by name, per-unit norms)`.

    The backends are in the clipping kernels (dpgan.privacy.mlp_clipping, dpgan.privacy.microbatch,
    torch.func in dpgan.privacy.dpsgd); a unit batch is whatever they take. With grouped clipping
    the step also passes `groups=` (grad_sample.ParameterGroups): each group clipped to its c_j;
    with a padded batch, `mask=` (a 0/1 row mask: a backend that takes it zeroes a masked row's clip
    factor and reports the kept rows' norms only)."""

    def __call__(
        self, model: torch.nn.Module, units: Any, max_norm: float, **groups: Any
    ) -> tuple[Tensors, torch.Tensor]: ...


@dataclass(frozen=True)
class PerUnitClipping:
    """One norm per unit over everything it contributes: sensitivity C (module docstring)."""

    sensitivity: float = 1.0  # in units of C

    def divisor(self, expected_batch_size: float) -> float:
        return expected_batch_size


@dataclass(frozen=True)
class MicrobatchClipping:
    """Each of m microbatches' mean gradient clipped: sensitivity 2C (module docstring)."""

    microbatches: int
    sensitivity: float = 2.0

    def __post_init__(self) -> None:
        if self.microbatches < 1:
            raise InputError("microbatches must be at least 1")

    def divisor(self, expected_batch_size: float) -> float:
        return float(self.microbatches)


Clipping = PerUnitClipping | MicrobatchClipping | GroupedClipping


class Shardable(Protocol):
    """Units that know how to give rank r of K its share (dpgan.privacy.distributed.shard_positions):
    `(units of that share, how many)`. The shares must partition the batch, and no clipped unit
    (a row, or with microbatches a microbatch) may be cut between two ranks."""

    def shard(self, rank: int, world_size: int) -> tuple[Any, int]: ...


def local_share(units: Any, size: int, context: ProcessGroupContext) -> tuple[Any, int, bool]:
    """This rank's share of a release's units: `(units, count, split)`. A `Shardable`, a tensor or a
    tuple of tensors with one row per unit is split; anything else (or one process) is computed
    whole (`split` False: then nothing is reduced, every rank computing the same sum). A split
    release is reduced even when the batch is empty: one collective per step keeps ranks in step."""
    if not context.distributed:
        return units, size, False
    if hasattr(units, "shard"):
        local, count = units.shard(context.rank, context.world_size)
        return local, count, True
    positions = shard_positions(size, context.rank, context.world_size)
    if isinstance(units, torch.Tensor) and units.shape[:1] == (size,):
        return units[positions], len(positions), True
    if (
        isinstance(units, tuple)
        and units
        and all(isinstance(u, torch.Tensor) and u.shape[:1] == (size,) for u in units)
    ):
        return tuple(u[positions] for u in units), len(positions), True
    return units, size, False


@dataclass
class Release:
    """What one step released: the noisy sum (keyed like the model's parameters, plus any extra
    vectors the backend clipped with them), the public divisor, and how many units it read."""

    noisy_sum: Tensors
    divisor: float
    units: int
    clip_fraction: float | None = None  # adaptive clipping's b̃ (noisy share of units with ‖v_i‖ ≤ C)

    def gradient(self, model: torch.nn.Module) -> Tensors:
        """The noisy sum of the parameters' gradients ÷ the divisor: DP-SGD's mean gradient."""
        return {name: self.noisy_sum[name] / self.divisor for name, _ in model.named_parameters()}

    def extra(self, name: str) -> torch.Tensor:
        """The noisy sum of an extra vector clipped with the gradient (not divided)."""
        return self.noisy_sum[name]


class PrivateStep:
    """DP-SGD's release for one model: sample → clip per unit → one noise draw → ÷ divisor → charge.

    `units` is the number of privacy units N; `sample_rate` q; `steps` the releases reserved in
    `ledger` under `label` (refused at construction if they would pass the ledger's budget). σ = 0
    with no ledger is the benches' non-private control: nothing is charged, nothing may be released.
    `clipped_sum` is the backend. `max_norm` C may follow a schedule fixed in advance (clipping
    decay): noise std is σ·sensitivity·C_t, so the accounting stays Gaussian(σ) per step. With
    `adaptive` the step owns C (a release refuses another `max_norm`) and moves it after each
    release (module docstring); `max_norm` is then its starting value. `context` splits the clipped
    sums over a lockstep process group (dpgan.privacy.distributed); the noise is still drawn once.
    """

    def __init__(
        self,
        *,
        units: int,
        sample_rate: float,
        noise_multiplier: float,
        max_norm: float,
        expected_batch_size: float,
        steps: int,
        ledger: PrivacyLedger | None,
        label: str,
        note: str = "",
        clipped_sum: ClippedSum,
        clipping: Clipping = PerUnitClipping(),
        generator: torch.Generator,
        sampler: Sampler | None = None,
        recorder: Recorder | None = None,
        adaptive: AdaptiveClipping | None = None,
        context: ProcessGroupContext = SINGLE_PROCESS,
    ) -> None:
        if not (expected_batch_size > 0 and max_norm > 0):
            raise InputError("a private step needs a positive expected batch size and clipping norm")
        if adaptive is not None and isinstance(clipping, MicrobatchClipping):
            raise InputError("adaptive clipping counts per-unit norms: it does not work with microbatches")
        self.noise_multiplier, self.max_norm, self.adaptive = noise_multiplier, max_norm, adaptive
        # the gradient's multiplier: σ, or σ_Δ < σ when the count shares the step's Gaussian(σ)
        self.gradient_multiplier = (
            noise_multiplier
            if adaptive is None
            else adaptive.gradient_multiplier(noise_multiplier, expected_batch_size)
        )
        self.expected_batch_size, self.clipping = expected_batch_size, clipping
        self.clipped_sum, self.generator, self.context = clipped_sum, generator, context
        self.sampler = sampler if sampler is not None else PoissonSampler(units, sample_rate, generator)
        entry = {"name": label, "noise_multiplier": noise_multiplier, "sampling_rate": sample_rate, "note": note}
        self._charge = StepCharge(reserve_steps(ledger, {**entry, "sampling": POISSON}, steps), recorder)

    @property
    def releases(self) -> int:
        return self._charge.releases

    def restore(self, releases: int, max_norm: float | None = None) -> None:
        """Resume after `releases` releases of a checkpointed fit (dpgan.training.checkpoint); with
        adaptive clipping, `max_norm` is the C those releases left (a function of their noisy counts)."""
        self._charge.restore(releases)
        if max_norm is not None:
            if self.adaptive is None or not max_norm > 0:
                raise InputError("only an adaptive step restores its clipping norm, and it must be positive")
            self.max_norm = float(max_norm)

    def sample(self) -> torch.Tensor:
        """The units of the next release (Poisson: each joins with probability q)."""
        return self.sampler.sample()

    def release(
        self,
        model: torch.nn.Module,
        units: Any,
        size: int,
        *,
        max_norm: float | None = None,
        extras: dict[str, int] | None = None,
        mask: torch.Tensor | None = None,
    ) -> Release:
        """Clip each of the `size` units' contributions, add noise once, divide, charge one step.

        `extras` names the vectors (and their lengths) the backend clips jointly with the gradient,
        such as the information loss's feature sums; they are noised in the same draw, before the
        parameters. An empty batch (size 0) releases pure noise: its sum is zero, not skipped.
        `mask` (0/1 per row of `units`, dpgan.privacy.padded_batches): the units are padded to a
        static size, `size` counts the rows whose mask is 1, and the backend (which must take
        `mask=`) zeroes the others' clip factors: the same release as the unpadded units'."""
        if mask is not None and int(mask.sum().item()) != size:
            raise InputError("a padded release's size must be the number of rows its mask keeps")
        if self.adaptive is not None and max_norm is not None and max_norm != self.max_norm:
            raise InputError("an adaptive clipping step owns its clipping norm: read it from the step")
        clip = self.max_norm if max_norm is None else max_norm
        grouped = isinstance(self.clipping, GroupedClipping)
        groups = None
        if grouped:
            names = [name for name, _ in model.named_parameters()]
            groups = self.clipping.resolve(names, list(extras or {}), clip)  # type: ignore[union-attr]
        summed: Tensors = {}
        device = next((p.device for p in model.parameters()), self.generator.device)  # where the sums are
        norms = torch.zeros(0, device=device)
        local, local_size, split = local_share(units, size, self.context)
        if local_size > 0:  # this rank's share (all of it in one process)
            options: dict[str, Any] = {} if mask is None else {"mask": mask}
            if grouped:
                options["groups"] = groups
            summed, norms = self.clipped_sum(model, local, clip, **options)
        ordered: Tensors = {
            name: summed.get(name, torch.zeros(width, device=device)) for name, width in (extras or {}).items()
        }
        ordered.update({name: summed.get(name, torch.zeros_like(p)) for name, p in model.named_parameters()})
        count = None if self.adaptive is None else self.adaptive.centred_count(norms, clip)
        if split:  # Σ over ranks of the clipped sums: the single-process sum, still without noise
            reduced = self.context.all_reduce_sum(ordered if count is None else {**ordered, COUNT_KEY: count})
            count = reduced.pop(COUNT_KEY, None)
            ordered = reduced
        std: float | dict[str, float]
        if self.noise_multiplier == 0:  # the non-private control (its clip may be ∞): no noise, whatever C
            std = 0.0
        elif groups is not None:
            std = GroupedClipping.noise_stds(groups, self.gradient_multiplier)
        else:
            std = self.gradient_multiplier * self.clipping.sensitivity * clip
        divisor = self.clipping.divisor(self.expected_batch_size)
        record = {
            "units": size,
            "rows": size if mask is None else int(mask.numel()),  # the kernel's rows, padding included
            "local_units": local_size,
            "norms": norms,
            "clipped": ordered,
            "noise_std": std,
            "divisor": divisor,
            "max_norm": clip,
        }
        if groups is not None:
            record["groups"] = groups
        if self.adaptive is None:
            self._charge(record)
            return Release(add_gaussian(ordered, std, self.generator), divisor, size)
        # the count rides in the same draw, after the gradient (dpgan.privacy.adaptive_clipping)
        assert count is not None
        count_std = self.adaptive.count_std(self.expected_batch_size) if self.noise_multiplier > 0 else 0.0
        stds = dict(std) if isinstance(std, dict) else dict.fromkeys(ordered, std)
        record.update({"count": count, "count_noise_std": count_std})
        self._charge(record)
        noisy = add_gaussian({**ordered, COUNT_KEY: count}, {**stds, COUNT_KEY: count_std}, self.generator)
        noisy_count = float(noisy.pop(COUNT_KEY))
        self.max_norm = self.adaptive.updated(clip, noisy_count, self.expected_batch_size)
        return Release(
            noisy, divisor, size, clip_fraction=self.adaptive.fraction(noisy_count, self.expected_batch_size)
        )


# GeneratorHookStep (dpgan.privacy.generator_hook) and Recorder (dpgan.privacy.step_charge) are
# re-exported: dtgan-g's trainer and the critic step import them from here.
__all__ = [
    "Clipping",
    "ClippedSum",
    "GeneratorHookStep",
    "MicrobatchClipping",
    "PerUnitClipping",
    "PrivateStep",
    "Recorder",
    "Release",
    "Sampler",
    "Shardable",
    "Tensors",
    "local_share",
]
