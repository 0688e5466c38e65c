"""Empirical audit of the noise-layer GAN's two forms on 8×8 digits (not run in CI).

- published (white-box on W₁, privacy README §2 vi): worlds OUT (n digits) and IN (+ a ±1
  checkerboard canary), q = 1, fixed initialisation and G draws; every trial redraws only the
  noise layer's noise, the randomness the published claim rests on. The auditor's direction
  (difference of the worlds' mean ΔW₁) is fitted on separate calibration trials; the audit trials'
  projections go to dpgan's Clopper–Pearson bound (dpgan.evaluation.audit.statistics). "claim" is
  what the noise layer would be worth if it were the whole mechanism: Gaussian(σ/2) per pass.
- sound (white-box on the release, a Dirac canary in feature space): the real FeatureRelease with
  a fixed per-unit map sending the canary to R·e₀ and every other unit to vectors with e₀ = 0;
  statistic Σ over passes of the largest coordinate 0 among the slots; claim = the ledger's ε for those passes.

    python bench/noise_layer_audit.py --out bench/results/noise_layer_audit.jsonl

Each line: form, settings, ε claimed (or null), ε_lb, its ceiling and the wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from sklearn.datasets import load_digits

from dpgan.evaluation.audit.statistics import epsilon_lower_bound
from dpgan.models.image_units import ImageUnitGenerator
from dpgan.models.noise_layer import NoiseLayerCritic
from dpgan.privacy.accounting import LedgerEntry, PrivacyLedger, epsilon_of
from dpgan.privacy.feature_release import FeatureRelease
from dpgan.training.config import TrainingConfig
from dpgan.training.noise_layer import train_noise_layer_gan

SHAPE, LABELS, DELTA = (1, 8, 8), 10, 1e-5


def digits_units(n: int) -> torch.Tensor:
    data = load_digits()
    images = torch.tensor(data.images[:n], dtype=torch.float32).reshape(n, -1) / 8.0 - 1.0
    return torch.cat([images, torch.nn.functional.one_hot(torch.tensor(data.target[:n]), LABELS).float()], 1)


def canary_unit() -> torch.Tensor:
    rows, cols = torch.meshgrid(torch.arange(8), torch.arange(8), indexing="ij")
    board = ((rows + cols) % 2 * 2 - 1).float().flatten()
    return torch.cat([board, torch.nn.functional.one_hot(torch.tensor(3), LABELS).float()])


class AllUnits:
    def __init__(self, n: int) -> None:
        self.n = n

    def sample(self) -> torch.Tensor:
        return torch.arange(self.n)


def w1_update(units: torch.Tensor, trial: int, steps: int, sigma: float) -> torch.Tensor:
    torch.manual_seed(0)
    critic = NoiseLayerCritic.build(SHAPE, LABELS, width=8, projection=32, hidden=(32,))
    G = ImageUnitGenerator(SHAPE, LABELS, noise_dim=8, width=8)
    w1 = critic.pre.first_conv.weight.detach().clone()
    train_noise_layer_gan(
        units,
        TrainingConfig(noise_dim=8, n_critic=2),
        G=G,
        critic=critic,
        certified=False,
        sample_rate=1.0,
        capacity=16,
        noise_multiplier=sigma,
        activation_bound=1.0,
        steps=steps,
        generator=torch.Generator().manual_seed(1),
        noise_generator=torch.Generator().manual_seed(10_000 + trial),
        ledger=None,
        sampler=AllUnits(len(units)),
    )
    return (critic.pre.first_conv.weight.detach() - w1).flatten()


def audit_published(n: int, steps: int, sigma: float, calibration: int, trials: int) -> dict:
    worlds = {"out": digits_units(n)}
    worlds["in"] = torch.cat([worlds["out"], canary_unit()[None]])
    updates = {
        w: torch.stack([w1_update(data, t, steps, sigma) for t in range(calibration + trials)])
        for w, data in worlds.items()
    }
    fit_in, fit_out = updates["in"][:calibration].mean(0), updates["out"][:calibration].mean(0)
    direction, middle = fit_in - fit_out, (fit_in + fit_out) / 2
    scores = {w: ((u[calibration:] - middle) @ direction).numpy() for w, u in updates.items()}
    bound = epsilon_lower_bound(scores["out"], scores["in"], delta=DELTA)
    as_if = epsilon_of([LedgerEntry("noise layer alone", sigma / 2, count=steps)], DELTA, "pld")
    return {
        "form": "published",
        "audited": "ΔW₁ (first conv layer)",
        "rows": n,
        "steps": steps,
        "sigma": sigma,
        "epsilon_claimed": None,
        "epsilon_if_noise_layer_were_the_mechanism": as_if,
        "epsilon_lower_bound": bound.epsilon,
        "ceiling": bound.ceiling,
        "trials_per_world": trials,
        **bound.details(),
    }


def audit_sound(n: int, sample_rate: float, capacity: int, passes: int, sigma: float, trials: int) -> dict:
    bound_r, width = 1.0, 4
    base = torch.zeros(n + 1, width)
    base[:, 1:] = torch.randn(n + 1, width - 1, generator=torch.Generator().manual_seed(0))
    base[n] = torch.tensor([bound_r, 0.0, 0.0, 0.0])  # the canary's activation: R·e₀

    scores = {}
    for world, rows in (("out", n), ("in", n + 1)):
        values = []
        generator = torch.Generator().manual_seed(7 if world == "out" else 8)
        for _ in range(trials):
            release = FeatureRelease(
                units=rows,
                sample_rate=sample_rate,
                capacity=capacity,
                width=width,
                noise_multiplier=sigma,
                bound=bound_r,
                passes=passes,
                ledger=PrivacyLedger(),
                generator=generator,
            )
            values.append(sum(float(release.release(lambda index: base[index])[:, 0].max()) for _ in range(passes)))
        scores[world] = values
    bound = epsilon_lower_bound(torch.tensor(scores["out"]).numpy(), torch.tensor(scores["in"]).numpy(), delta=DELTA)
    claim = epsilon_of([LedgerEntry("release", sigma / 2, sampling_rate=sample_rate, count=passes)], DELTA, "pld")
    return {
        "form": "sound",
        "audited": "feature release (Dirac canary R·e₀)",
        "rows": n,
        "sample_rate": sample_rate,
        "capacity": capacity,
        "passes": passes,
        "sigma": sigma,
        "epsilon_claimed": claim,
        "epsilon_lower_bound": bound.epsilon,
        "ceiling": bound.ceiling,
        "trials_per_world": trials,
        **bound.details(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--trials", type=int, default=200, help="audit trials per world (published form)")
    parser.add_argument("--release-trials", type=int, default=4000, help="trials per world (sound release)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    runs = [
        lambda: audit_published(8, 6, 4.0, 20, args.trials),
        lambda: audit_published(8, 6, 20.0, 20, args.trials),
        lambda: audit_sound(50, 1.0, 64, 1, 1.0, args.release_trials),
        lambda: audit_sound(50, 1.0, 64, 1, 0.5, args.release_trials),
    ]
    with Path(args.out).open("a", encoding="utf-8") as out:
        for run in runs:
            start = time.time()
            row = {**run(), "seconds": round(time.time() - start, 1), "command": " ".join(sys.argv)}
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(json.dumps(row))


if __name__ == "__main__":
    main()
