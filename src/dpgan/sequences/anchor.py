"""DP per-step statistics of the series, per label, as a plug-in of the generator (the series analogue
of the tables' one-way anchor).

Why: on the water district-days at ε = 3 the DP critic alone left the generator's daily profile
16 L/s off (RESULTS §15), while a DP Gaussian of the same days was within 1 L/s: a critic step on a
noisy batch teaches G the shape of a day slowly, but the mean and spread of every hour, per label,
are a handful of cheap Gaussian releases. G is warm-started on them and a penalty keeps its own
per-label, per-step mean and standard deviation near them while the critic teaches the rest
(how hours go together, day-to-day variety).

Privacy: a unit (one series, or the k series kept for one entity) adds to its label's count at
most k, and to its label's sums of the scaled values and of their squares (T·F entries each, every
entry in [-1, 1], squares in [0, 1]) vectors of L2 norm at most k·√(T·F). Labels are disjoint cells,
so a unit moves the count vector by at most k and each sum tensor by at most k√(T·F) in L2; the
three releases, each with noise σ times its sensitivity, are one ledger entry of three
sensitivity-normalised Gaussian releases. Warm start and penalty read only the released values
and public noise: post-processing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.noise import gaussian_array
from dpgan.privacy.releases import charge_gaussian

EVENT = "Gaussian per-step means and spreads of the series, per label"
MIN_SHARE = 1e-3
WARM_START_LR = 5e-3


@dataclass
class StepStatistics:
    """Per label: its share of units and, per time step and value column, the mean and sd."""

    shares: torch.Tensor  # (K,) (K = 1 without labels)
    mean: torch.Tensor  # (K, T, F)
    sd: torch.Tensor  # (K, T, F)


def measure_step_statistics(
    units: torch.Tensor,
    n_values: int,
    n_labels: int,
    *,
    share: ShareTarget,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> StepStatistics:
    """The three releases at one σ, calibrated so that the ledger reaches `share`."""
    per_unit = units.shape[1]
    values = units[..., :n_values].double().cpu().numpy()  # (N, k, T, F)
    length = values.shape[2]
    if n_labels:
        labels = units[:, :, 0, n_values:].argmax(dim=-1).cpu().numpy()  # (N, k)
    else:
        labels = np.zeros(values.shape[:2], dtype=np.int64)
    groups = max(1, n_labels)
    sigma = share.sigma(1.0, 3, ledger.entries)
    note = f"per label: count (Δ {per_unit}), sums of values and squares (Δ {per_unit}·√(T·F) each)"
    charge_gaussian(ledger, EVENT, sigma, count=3, note=note)
    flat_labels = labels.reshape(-1)
    flat_values = values.reshape(-1, length, n_values)
    counts = noisy_counts(np.bincount(flat_labels, minlength=groups).astype(np.float64), sigma * per_unit, rng)
    sum_scale = sigma * per_unit * math.sqrt(length * n_values)
    sums = np.stack([flat_values[flat_labels == g].sum(axis=0) for g in range(groups)])
    squares = np.stack([(flat_values[flat_labels == g] ** 2).sum(axis=0) for g in range(groups)])
    sums = sums + gaussian_array(sums.shape, sum_scale, rng)
    squares = squares + gaussian_array(squares.shape, sum_scale, rng)
    safe = np.maximum(counts, 1.0)[:, None, None]
    mean = np.clip(sums / safe, -1.0, 1.0)
    sd = np.sqrt(np.clip(squares / safe - mean**2, 1e-4, 1.0))
    shares = np.maximum(counts, 0.0)
    shares = shares / shares.sum() if shares.sum() > 0 else np.full(groups, 1.0 / groups)
    shares = np.maximum(shares, MIN_SHARE)
    as_tensor = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    return StepStatistics(as_tensor(shares / shares.sum()), as_tensor(mean), as_tensor(sd))


def _label_weights(units: torch.Tensor, n_values: int, groups: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each generated series' soft label (B·k, K) (all ones without labels) and each label's mass."""
    if groups > 1:
        weights = units[:, :, 0, n_values:].reshape(-1, groups)
    else:
        weights = units.new_ones(units.shape[0] * units.shape[1], 1)
    return weights, weights.sum(dim=0).clamp_min(1e-6)


def _share_divergence(shares: torch.Tensor, mass: torch.Tensor) -> torch.Tensor:
    """KL(released label shares ‖ G's label shares); 0 without labels."""
    if shares.shape[0] < 2:
        return mass.new_zeros(())
    generated = (mass / mass.sum()).clamp_min(1e-8)
    return (shares * (shares.log() - generated.log())).sum()


def statistics_penalty(units: torch.Tensor, n_values: int, stats: StepStatistics) -> torch.Tensor:
    """Σ_labels share·(‖mean gap‖² + ‖sd gap‖²) over steps and columns, plus KL(label shares):
    zero when G's per-label, per-step moments match the released ones."""
    values = units[..., :n_values].reshape(-1, units.shape[2], n_values)  # (B·k, T, F)
    weights, mass = _label_weights(units, n_values, stats.shares.shape[0])
    mean = torch.einsum("nk,ntf->ktf", weights, values) / mass[:, None, None]
    second = torch.einsum("nk,ntf->ktf", weights, values**2) / mass[:, None, None]
    sd = (second - mean**2).clamp_min(1e-6).sqrt()
    gaps = ((mean - stats.mean) ** 2 + (sd - stats.sd) ** 2).mean(dim=(1, 2))
    return (stats.shares * gaps).sum() + _share_divergence(stats.shares, mass)


def moment_penalty(
    units: torch.Tensor, n_values: int, shares: torch.Tensor, means: torch.Tensor, covariances: torch.Tensor
) -> torch.Tensor:
    """Σ_labels share·(‖mean gap‖² + ‖covariance gap‖_F²)/d of the flattened series (d = T·F), plus
    KL(label shares): the DP Gaussian's moments (dpgan.sequences.baseline) as targets for G."""
    values = units[..., :n_values].reshape(-1, units.shape[2] * n_values)  # (B·k, d)
    weights, mass = _label_weights(units, n_values, shares.shape[0])
    total = values.new_zeros(())
    for g in range(shares.shape[0]):
        w = weights[:, g : g + 1] / mass[g]
        mean = (w * values).sum(dim=0)
        centred = values - mean
        covariance = (w * centred).T @ centred
        gap = ((mean - means[g]) ** 2).sum() + ((covariance - covariances[g]) ** 2).sum()
        total = total + shares[g] * gap / values.shape[1]
    return total + _share_divergence(shares, mass)


class _PenaltyHook:
    """A generator plug-in (dpgan.training.gan_loop.GeneratorHook) from a penalty on G's units:
    a warm start on it, then its weighted gradient in each generator step."""

    warmup_steps: int
    weight: float

    def penalty(self, units: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _on_fresh_units(self, G: torch.nn.Module, draw_inputs) -> torch.Tensor:
        z, condition = draw_inputs()
        return self.penalty(G(z, None, condition))

    def warm_start(self, G: torch.nn.Module, draw_inputs) -> None:
        opt = torch.optim.Adam(G.parameters(), lr=WARM_START_LR)
        for _ in range(self.warmup_steps):
            opt.zero_grad(set_to_none=True)
            self._on_fresh_units(G, draw_inputs).backward()
            opt.step()

    def add_gradient(self, G: torch.nn.Module, draw_inputs) -> None:
        if self.weight > 0:
            (self.weight * self._on_fresh_units(G, draw_inputs)).backward()


@dataclass
class StepStatisticsHook(_PenaltyHook):
    """The per-step statistics as G's plug-in."""

    stats: StepStatistics
    n_values: int
    warmup_steps: int = 300
    weight: float = 10.0

    def penalty(self, units: torch.Tensor) -> torch.Tensor:
        return statistics_penalty(units, self.n_values, self.stats)

    def released(self) -> list[torch.Tensor]:
        return [self.stats.shares, self.stats.mean, self.stats.sd]


@dataclass
class MomentAnchorHook(_PenaltyHook):
    """The DP Gaussian's per-label mean and covariance as G's plug-in."""

    shares: torch.Tensor
    means: torch.Tensor  # (K, d)
    covariances: torch.Tensor  # (K, d, d)
    n_values: int
    warmup_steps: int = 300
    weight: float = 10.0

    def penalty(self, units: torch.Tensor) -> torch.Tensor:
        return moment_penalty(units, self.n_values, self.shares, self.means, self.covariances)

    def released(self) -> list[torch.Tensor]:
        return [self.shares, self.means, self.covariances]


__all__ = [
    "EVENT",
    "MomentAnchorHook",
    "StepStatistics",
    "StepStatisticsHook",
    "measure_step_statistics",
    "moment_penalty",
    "statistics_penalty",
]
