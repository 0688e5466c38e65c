"""What a progress bar's ε costs per refresh: IncrementalAccountant against recomposing the ledger.

For a default fit on UCI Adult (the ledger _fit writes before the GAN, bench/adult_ledger.py; σ
calibrated as _fit does), each accountant is asked for ε after t steps at 50 evenly spaced t
(a fixed stride, so the step PLD's power is reused) and at 50 uneven t (a time-based refresh: a
new power each call). Reported: the mean and largest wall time of a call, the one-off set-up
(prior composed, caches cold), and the refresh interval that keeps the calls within 1% of a
fit's wall time (per-call time / 0.01). "recompose" is epsilon_of on the whole ledger each time
(what the progress bar did before training/progress.py's StepReporter). PLD grid 1e-3 is the optional coarser grid
(a slightly larger, still valid ε). The even schedule's last refresh is at 50·⌊T/50⌋, the uneven one's at T.

    OMP_NUM_THREADS=1 python bench/progress_accounting.py > bench/results/progress_accounting.md
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from adult_ledger import adult_gan_plan
from dpgan.privacy import accounting
from dpgan.privacy.accounting import IncrementalAccountant, LedgerEntry, epsilon_of

DELTA = 1e-5
REFRESHES = 50


def clear_caches() -> None:
    accounting.prefix_pld.cache_clear()
    accounting.step_rdp.cache_clear()
    accounting.binomial_buckets.cache_clear()


def schedules(total: int) -> dict[str, list[int]]:
    stride = max(1, total // REFRESHES)
    even = list(range(stride, total + 1, stride))[:REFRESHES]
    rng = np.random.default_rng(0)
    cuts = np.sort(rng.choice(np.arange(1, total), size=REFRESHES - 1, replace=False))
    return {"even": even, "uneven": [*map(int, cuts), total]}


def time_calls(call, steps: list[int]) -> tuple[float, float, float, float]:
    """(first call, mean and max of the others) in seconds, and the last ε."""
    times = []
    for t in steps:
        started = time.perf_counter()
        value = call(t)
        times.append(time.perf_counter() - started)
    return times[0], float(np.mean(times[1:])), float(np.max(times[1:])), value


def main() -> None:
    print("# Progress-bar ε: cost per refresh on Adult's default ledgers\n")
    print("Command: `OMP_NUM_THREADS=1 python bench/progress_accounting.py`; 1 thread, shared 2-core machine.\n")
    print(
        "| recipe | target ε | σ | T | accountant | method | schedule | first call (s) | mean call (ms) "
        "| max call (ms) | interval for ≤ 1% (s) | ε at the last refresh |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for recipe, targets in [("dp-gan", (1.0, 3.0, 7.0)), ("dtgan-g", (1.0, 3.0))]:
        for target in targets:
            plan = adult_gan_plan(recipe, target, "pld")
            sigma = plan.sigma(target, DELTA)
            step = LedgerEntry("gan step", sigma, plan.sample_rate, 1, sampling=plan.sampling)
            methods = [
                ("pld", "incremental", {}),
                ("pld", "incremental, grid 1e-3", {"discretization": 1e-3}),
                ("pld", "recompose", None),
                ("rdp", "incremental", {}),
                ("rdp", "recompose", None),
            ]
            for accountant, method, options in methods:
                for name, steps in schedules(plan.steps).items():
                    if options is None and name == "uneven":
                        continue  # recomposing does not depend on the schedule
                    clear_caches()
                    started = time.perf_counter()
                    if options is None:

                        def call(
                            t: int, a: str = accountant, prior: tuple = plan.prior, s: LedgerEntry = step
                        ) -> float:
                            return epsilon_of([*prior, replace(s, count=t)], DELTA, a)

                        setup = 0.0
                    else:
                        inc = IncrementalAccountant(plan.prior, step, delta=DELTA, accountant=accountant, **options)
                        call = inc.epsilon_after
                        setup = time.perf_counter() - started
                    first, mean, largest, final = time_calls(call, steps)
                    print(
                        f"| {recipe} | {target:g} | {sigma:.4g} | {plan.steps} | {accountant} | {method} | {name} "
                        f"| {setup + first:.3f} | {1e3 * mean:.1f} | {1e3 * largest:.1f} | {mean / 0.01:.2f} "
                        f"| {final:.5f} |"
                    )


if __name__ == "__main__":
    main()
