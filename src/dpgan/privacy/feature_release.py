"""DP feature release: the sound form of Triastcyn & Faltings' noise layer.

The mechanism. Each pass over the real data Poisson-samples the privacy units with rate q and
fills a batch of a fixed, public capacity B_cap with them (`CapacitySlots`):
- the slots start empty (null); the k-th sampled unit (k ≤ B_cap) takes a uniformly random
  free slot; the k-th unit with k > B_cap replaces the occupant of slot j, j uniform in
  [0, k), when j < B_cap (reservoir sampling, Vitter's algorithm R, with a random slot);
- the result is, in law, a uniformly random arrangement of the sampled units over the slots with
  the empty ones null, and a uniformly random B_cap-subset of them (arranged uniformly at random)
  when more than B_cap were sampled.
Each slot's vector is the activation h(x) of a public, frozen, per-unit map (the noise-layer
critic's pre-noise layers; the unit's label inside it), clipped to ‖h‖ ≤ R; a null slot is the
zero vector. The release is every slot's vector plus N(0, (σR)² I), null slots included: all
B_cap slots look alike and no mask is released.

Claim: under add/remove-one, one pass is dominated by a Poisson-subsampled Gaussian with rate q
and noise multiplier σ/2 (sensitivity 2R against noise σR).
Proof. Poisson subsampling under add/remove (Zhu, Dong and Wang 2022, Thm. 11) reduces it to the
mechanism M on the sampled set: M(T) against M(T ∪ {x}) for every set T, in both orders. Let
n = |T|. Draw M(T)'s arrangement A; build A' from A by running algorithm R's step for x, which
is its (n+1)-th unit: if n < B_cap, x takes a uniformly random free slot; else with probability
B_cap/(n+1) it replaces the occupant of a uniformly random slot. A' has exactly the law of the
arrangement of T ∪ {x} (algorithm R's law does not depend on the order of the units, so x may
come last): for n ≥ B_cap, a given ordered B_cap-tuple without x has probability
(1 − B_cap/(n+1))·(n−B_cap)!/n! = (n+1−B_cap)!/(n+1)!, and one with x in slot j has
(n+1−B_cap)·(n−B_cap)!/n!·(B_cap/(n+1))·(1/B_cap) = (n+1−B_cap)!/(n+1)!, the uniform law. Given
(A, A'), the pre-noise vectors differ in at most one slot: null → h(x) (distance ≤ R) below
capacity, h(y) → h(x) (≤ 2R) at capacity; every other slot is the same function of the same
unit, since h is fixed in advance and acts per unit. So, given the coupling, M(T) and
M(T ∪ {x}) are Gaussians with the same covariance (σR)² I and means at distance ≤ 2R: dominated
by the Gaussian pair of multiplier σ/2. The law of the release is the mixture of these
conditional laws over the same coupling, and the hockey-stick divergence is jointly convex, so
the Gaussian pair dominates M(T) against M(T ∪ {x}) too, in both orders. ∎

What the argument needs, and a flaw it fixes. (1) h must be public and fixed for the whole fit
(frozen layers, random from a seed or trained on public data), and per unit: no BatchNorm or
other operation across the units of a batch. (2) The label is part of the record: it is inside
h, clipped with the image, never fed beside the noisy vector. (3) B_cap is public (from the
configuration, never from the private count). (4) The null slots must be spread uniformly at
random among the slots, not appended after the sampled units: with the nulls at the end, the
coupling that inserts x moves a second unit into the first null slot, and the two changed slots
give sensitivity √5·R, not 2R. Algorithm R with random slots does it. Everything the loop does
with the release (the critic head, its gradient penalty on interpolates of noisy real and fake
vectors, G's updates through the frozen layers and the head) is post-processing.

Accounting: one `LedgerEntry` per kind, multiplier σ/2, Poisson at q, reserved for all passes
when the release is built (refused there past ε) and charged as each pass runs.
`calibrate_feature_release` finds σ for a target (ε, δ) with the ledger's own calibration.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import torch

from dpgan.errors import InputError
from dpgan.privacy.accounting import POISSON, LedgerEntry, PrivacyLedger
from dpgan.privacy.calibration import FitBudget, TrainingBudget, sigma_and_steps
from dpgan.privacy.noise import add_gaussian_tensor
from dpgan.privacy.sampling import PoissonSampler

FEATURE_RELEASE_EVENT = "noise layer on real activations"
# the release's L2 sensitivity in units of R (module docstring): its accounted multiplier is σ/2
SENSITIVITY_FACTOR = 2.0
NULL = -1  # the index of an empty slot

Recorder = Callable[[dict[str, Any]], None]
ReadFn = Callable[[torch.Tensor], torch.Tensor]


def clip_rows(h: torch.Tensor, bound: float) -> torch.Tensor:
    """Each row scaled to ‖h_i‖ ≤ bound (differentiable; a row of norm ≤ bound is unchanged)."""
    norms = h.norm(dim=1, keepdim=True)
    return h * torch.clamp(bound / (norms + 1e-12), max=1.0)


def noisy_rows(h: torch.Tensor, bound: float, noise_multiplier: float, generator: torch.Generator) -> torch.Tensor:
    """clip_rows(h, R) + N(0, (σR)²) entrywise: the noise layer itself (its gradient passes through)."""
    return add_gaussian_tensor(clip_rows(h, bound), noise_multiplier * bound, generator)


def capacity_slots(sampled: torch.Tensor, capacity: int, generator: torch.Generator) -> torch.Tensor:
    """Algorithm R with random slots (module docstring): (capacity,) unit indices, NULL for empty.

    One draw per sampled unit, in the order given, so a unit appended last changes at most one
    slot when the draws before it are the same (the coupling of the proof, run literally)."""
    if capacity < 1:
        raise InputError("the noise layer's capacity must be at least 1 slot")
    slots = [NULL] * capacity
    free = list(range(capacity))
    for k, unit in enumerate(sampled.tolist(), start=1):
        if k <= capacity:
            slot = free.pop(int(torch.randint(len(free), (1,), generator=generator, device=generator.device)))
            slots[slot] = unit
        else:
            j = int(torch.randint(k, (1,), generator=generator, device=generator.device))
            if j < capacity:
                slots[j] = unit
    return torch.tensor(slots, dtype=torch.long)


class FeatureRelease:
    """The noise layer on real activations: sample → fill B_cap slots → clip → noise → charge.

    `units` N and `sample_rate` q define the Poisson sampler (injectable: `sampler`); `width` is
    the public length of h; `passes` releases are reserved in `ledger` under one entry with
    multiplier σ/2 (refused at construction past the ledger's budget) and one is charged per
    `release`. `generator` drives sampling and slots, `noise_generator` (default: the same) the
    noise. `recorder` sees, per pass, the slots, the clipped vectors and the noise std (tests)."""

    def __init__(
        self,
        *,
        units: int,
        sample_rate: float,
        capacity: int,
        width: int,
        noise_multiplier: float,
        bound: float,
        passes: int,
        ledger: PrivacyLedger,
        generator: torch.Generator,
        noise_generator: torch.Generator | None = None,
        sampler: Any | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        if not (noise_multiplier > 0 and math.isfinite(noise_multiplier)):
            raise InputError("the noise layer needs a positive noise multiplier to be certified")
        if not (bound > 0 and math.isfinite(bound)):
            raise InputError("the noise layer's activation bound must be positive")
        if capacity < 1 or width < 1:
            raise InputError("the noise layer needs a capacity and a width of at least 1")
        if ledger is None:
            raise InputError("the certified noise layer needs a ledger to charge")
        self.capacity, self.width = int(capacity), int(width)
        self.noise_multiplier, self.bound = float(noise_multiplier), float(bound)
        self.generator = generator
        self.noise_generator = noise_generator if noise_generator is not None else generator
        self.sampler = sampler if sampler is not None else PoissonSampler(units, sample_rate, generator)
        self.recorder = recorder
        self.entry = release_entry(noise_multiplier, sample_rate, capacity)
        self.reservation = ledger.reserve(self.entry, passes)
        self.passes = 0

    @property
    def noise_std(self) -> float:
        return self.noise_multiplier * self.bound

    def release(self, read: ReadFn) -> torch.Tensor:
        """One pass: (capacity, width) noisy slot vectors. `read(index)` must return the public
        per-unit map h of those units, (len(index), width), and nothing computed across them."""
        sampled = self.sampler.sample()
        slots = capacity_slots(sampled, self.capacity, self.generator)
        filled = slots != NULL
        vectors = torch.zeros(self.capacity, self.width)
        norms = torch.zeros(0)
        if bool(filled.any()):
            with torch.no_grad():
                h = read(slots[filled])
            if h.shape != (int(filled.sum()), self.width):
                raise InputError(f"the pre-noise map must give ({int(filled.sum())}, {self.width}) activations")
            norms = h.norm(dim=1)
            vectors = vectors.to(h.dtype)
            vectors[filled] = clip_rows(h, self.bound)
        self.reservation.charge()  # before anything leaves: refused past the reservation
        self.passes += 1
        if self.recorder is not None:
            self.recorder({"slots": slots, "clipped": vectors, "norms": norms, "noise_std": self.noise_std})
        return add_gaussian_tensor(vectors, self.noise_std, self.noise_generator)


def release_entry(noise_multiplier: float, sample_rate: float, capacity: int) -> LedgerEntry:
    """The ledger's event for one pass (count 0: `PrivacyLedger.reserve` sets the passes)."""
    return LedgerEntry(
        name=FEATURE_RELEASE_EVENT,
        noise_multiplier=noise_multiplier / SENSITIVITY_FACTOR,
        sampling_rate=sample_rate,
        count=0,
        sampling=POISSON,
        note=(
            f"Poisson q, {capacity} slots (reservoir, nulls shuffled); frozen per-unit pre-noise map clipped to R, "
            f"noise σR per slot; sensitivity 2R, multiplier σ/2"
        ),
    )


def calibrate_feature_release(
    *,
    sample_rate: float,
    passes: int,
    budget: FitBudget,
    prior: Sequence[LedgerEntry] = (),
) -> TrainingBudget:
    """The noise layer's σ (noise std σR; NOT the accounted σ/2) for `passes` passes within the
    fit's `budget`, or with its fixed σ the most passes (≤ `passes`) it pays for. The ledger's
    calibration (dpgan.privacy.calibration.sigma_and_steps) runs on the accounted multiplier σ/2."""
    fixed = budget.noise_multiplier
    accounted = replace(budget, noise_multiplier=None if fixed is None else fixed / SENSITIVITY_FACTOR)
    calibrated = sigma_and_steps(sample_rate=sample_rate, steps=passes, budget=accounted, prior=prior)
    return TrainingBudget(calibrated.noise_multiplier * SENSITIVITY_FACTOR, calibrated.steps)


__all__ = [
    "FEATURE_RELEASE_EVENT",
    "NULL",
    "SENSITIVITY_FACTOR",
    "FeatureRelease",
    "calibrate_feature_release",
    "capacity_slots",
    "clip_rows",
    "noisy_rows",
    "release_entry",
]
