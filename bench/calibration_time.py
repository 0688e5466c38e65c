"""σ calibration time for the default Adult fits: the GAN's σ given the ledger's prior events.

For each recipe and target ε, the prior (row count, repairs, label model, ...) and the GAN's (q, T)
come from bench/adult_ledger.py (what `_fit` plans); the PLD caches are cleared before each
calibration, so each time is cold. Printed as a markdown table: σ, seconds, and the ε the ledger's
own accountant gives at that σ (≤ the target).

    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/calibration_time.py > bench/results/calibration_time.md

PYTHONPATH may point at an older src (the bench's Adult plan is this tree's) to time the code before
a change on the same plans.
"""

from __future__ import annotations

import platform
import time

from adult_ledger import adult_gan_plan
from dpgan.privacy import accounting
from dpgan.privacy.accounting import epsilon_of

DELTA = 1e-5


def main() -> None:
    print("# σ calibration of the default Adult fits (cold caches, PLD, δ = 1e-5)\n")
    print(f"Command: `OMP_NUM_THREADS=1 PYTHONPATH=src python bench/calibration_time.py`; {platform.machine()}.\n")
    print("| recipe | target ε | q | T | σ | calibration (s) | ledger ε at σ |")
    print("|---|---|---|---|---|---|---|")
    for recipe in ("dp-gan", "dtgan-d", "dtgan-g"):
        for epsilon in (1.0, 3.0, 7.0):
            plan = adult_gan_plan(recipe, epsilon, "pld", DELTA)
            accounting.prefix_pld.cache_clear()
            if hasattr(accounting, "_epsilon_of"):  # the composition's cache before issue 49's last round
                accounting._epsilon_of.cache_clear()
            else:
                from dpgan.privacy.composition import composed_epsilon

                composed_epsilon.cache_clear()
            start = time.perf_counter()
            sigma = plan.sigma(epsilon, DELTA)
            seconds = time.perf_counter() - start
            entry = accounting.LedgerEntry(
                "gan", sigma, sampling_rate=plan.sample_rate, count=plan.steps, sampling=plan.sampling
            )
            spent = epsilon_of([*plan.prior, entry], DELTA, "pld")
            print(
                f"| {recipe} | {epsilon:g} | {plan.sample_rate:.4f} | {plan.steps} | {sigma:.4f} | {seconds:.2f} "
                f"| {spent:.5f} |"
            )


if __name__ == "__main__":
    main()
