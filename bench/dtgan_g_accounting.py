"""What dtgan-g's accounting costs, next to the accountings it replaces and the papers used; and its speed.

Table 1, the shard entry alone (N_d shards, T generator steps of B rows, δ = 1e-5): the σ dpgan
calibrates with the binomial mixture of Gaussians (PLD and RDP; proof in dpgan.privacy.accounting),
the σ of the Wang–Balle–Kasiviswanathan replace-one RDP bound dpgan used before (not valid for
dtgan-g: the critics' hidden state), the σ of a Poisson add/remove model at rate 1/N_d (a
realisable lower bound, privacy README §2 vii), and the ε that WBK, the Poisson model and
GS-WGAN-style per-example composition (B·T events, RDP) would print at dpgan's PLD σ.

Table 2, a default dtgan-g fit on UCI Adult (the ledger _fit writes before the GAN, bench/adult_ledger.py,
then T = 1018 steps at N_d = 20): σ now and before, the ε the new accounting gives at the old σ
(what an old model file now prints), and the wall time of epsilon_of and of the GAN's calibration
(cold: every cache cleared first, as in a fit).

    OMP_NUM_THREADS=1 python bench/dtgan_g_accounting.py > bench/results/dtgan_g_accounting.md
"""

from __future__ import annotations

import math
import platform
import time

import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant
from dp_accounting.rdp.rdp_privacy_accountant import NeighborRel
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon as rdp_to_epsilon

from adult_ledger import adult_gan_plan
from dpgan.privacy import accounting
from dpgan.privacy.accounting import (
    RDP_ORDERS,
    LedgerEntry,
    epsilon_of,
    regular_rdp,
)
from dpgan.privacy.calibration import calibrate_noise_multiplier

DELTA = 1e-5
SHARDS = "one-of-shards"


def wbk_epsilon(prior: tuple[LedgerEntry, ...], sigma: float, n_d: int, steps: int) -> float:
    """The replaced bound, as dpgan computed it: add/remove RDP of the prior plus the replace-one RDP of
    sampling 1 of N_d without replacement (dp-accounting's SampledWithoutReplacementDpEvent)."""
    acc = RdpAccountant(orders=list(RDP_ORDERS), neighboring_relation=NeighborRel.REPLACE_ONE)
    event = dp_event.SampledWithoutReplacementDpEvent(n_d, 1, dp_event.GaussianDpEvent(sigma))
    acc.compose(dp_event.SelfComposedDpEvent(event, steps))
    curve = regular_rdp(prior, RDP_ORDERS) + np.asarray(acc._rdp)  # noqa: SLF001
    return float(rdp_to_epsilon(RDP_ORDERS, curve, DELTA)[0])


def bisect_sigma(eps_at, target: float, tol: float = 1e-3) -> float:
    low, high = 1e-2, 1.0
    while eps_at(high) > target:
        low, high = high, 2 * high
    while high - low > tol:
        mid = (low + high) / 2
        low, high = (mid, high) if eps_at(mid) > target else (low, mid)
    return high


def clear_caches() -> None:
    accounting.prefix_pld.cache_clear()
    accounting.step_rdp.cache_clear()
    accounting.binomial_buckets.cache_clear()


def shard_alone() -> None:
    print("## 1. The shard entry alone (δ = 1e-5)\n")
    print(
        "| N_d | B | T | target ε | σ mixture, PLD | σ mixture, RDP | σ WBK (before) | σ Poisson model (lower bound) "
        "| WBK ε at PLD σ | Poisson-model ε at PLD σ | per-example (B·T events, RDP) ε at PLD σ |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n_d, batch, steps in [(20, 64, 1018), (100, 64, 1018), (1000, 32, 2000)]:
        q = 1.0 / n_d
        for target in (1.0, 3.0, 7.0):
            kwargs = dict(sample_rate=q, steps=steps, epsilon=target, delta=DELTA)
            pld = calibrate_noise_multiplier(accountant="pld", sampling=SHARDS, **kwargs)
            rdp = calibrate_noise_multiplier(accountant="rdp", sampling=SHARDS, **kwargs)
            wbk = bisect_sigma(lambda s, n=n_d, t=steps: wbk_epsilon((), s, n, t), target)
            poisson = calibrate_noise_multiplier(accountant="pld", **kwargs)
            poisson_eps = epsilon_of([LedgerEntry("g", pld, q, steps)], DELTA, "pld")
            # each row's clipped gradient (sensitivity 2C) with noise σ·2C√B: multiplier σ√B, B·T events
            per_example = epsilon_of([LedgerEntry("g", pld * math.sqrt(batch), q, batch * steps)], DELTA, "rdp")
            print(
                f"| {n_d} | {batch} | {steps} | {target:g} | {pld:.3f} | {rdp:.3f} | {wbk:.3f} | {poisson:.3f} "
                f"| {wbk_epsilon((), pld, n_d, steps):.3f} | {poisson_eps:.3f} | {per_example:.4f} |"
            )
    print("\nIssue 12's numbers (T = 1018, N_d = 20, the shard entry alone):\n")
    print("| σ | mixture ε, PLD | mixture ε, RDP | mixture ε, rdp-classic | WBK ε (before) |")
    print("|---|---|---|---|---|")
    for sigma in (13.0, 6.0):
        entry = [LedgerEntry("g", sigma, 0.05, 1018, sampling=SHARDS)]
        values = [epsilon_of(entry, DELTA, a) for a in ("pld", "rdp", "rdp-classic")]
        print(
            f"| {sigma:g} | " + " | ".join(f"{v:.4f}" for v in values) + f" | {wbk_epsilon((), sigma, 20, 1018):.4f} |"
        )


def adult_defaults() -> None:
    print("\n## 2. A default dtgan-g fit on Adult: prior events + T = 1018 steps at N_d = 20 (δ = 1e-5)\n")
    print(
        "| target ε | accountant | σ now | σ before (WBK) | ε now at σ before | epsilon_of cold / warm (s) "
        "| calibration cold (s) |"
    )
    print("|---|---|---|---|---|---|---|")
    for target in (1.0, 3.0, 7.0):
        for accountant in ("pld", "rdp"):
            plan = adult_gan_plan("dtgan-g", target, accountant)
            kwargs = dict(sample_rate=plan.sample_rate, steps=plan.steps, epsilon=target, delta=DELTA)
            clear_caches()
            started = time.perf_counter()
            sigma = calibrate_noise_multiplier(accountant=accountant, prior=plan.prior, sampling=SHARDS, **kwargs)
            calibration = time.perf_counter() - started
            ledger = [*plan.prior, LedgerEntry("g", sigma, plan.sample_rate, plan.steps, sampling=SHARDS)]
            clear_caches()
            started = time.perf_counter()
            epsilon_of(ledger, DELTA, accountant)
            cold = time.perf_counter() - started
            started = time.perf_counter()
            epsilon_of(ledger, DELTA, accountant)
            warm = time.perf_counter() - started
            old = bisect_sigma(lambda s, p=plan: wbk_epsilon(p.prior, s, 20, p.steps), target, tol=1e-4)
            old_ledger = [*plan.prior, LedgerEntry("g", old, plan.sample_rate, plan.steps, sampling=SHARDS)]
            now_at_old = epsilon_of(old_ledger, DELTA, accountant)
            print(
                f"| {target:g} | {accountant} | {sigma:.4f} | {old:.4f} | {now_at_old:.3f} "
                f"| {cold:.3f} / {warm:.3f} | {calibration:.2f} |"
            )
    plan = adult_gan_plan("dtgan-g", 1.0, "pld")
    print("\nPrior events at ε = 1 (PLD), as _fit writes them before the GAN:\n")
    for e in plan.prior:
        print(f"- {e.name}: σ = {e.noise_multiplier:.4g}, q = {e.sampling_rate:.4g}, ×{e.count}")


def main() -> None:
    print("# dtgan-g accounting: the binomial mixture against the bounds it replaces\n")
    print(
        f"Command: `OMP_NUM_THREADS=1 python bench/dtgan_g_accounting.py`; {platform.processor() or 'cpu'}, 1 thread.\n"
    )
    shard_alone()
    adult_defaults()


if __name__ == "__main__":
    main()
