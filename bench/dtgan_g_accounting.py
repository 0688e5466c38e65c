"""What dtgan-g's honest accounting costs, next to the accountings the papers used.

For N_d shards, T generator steps of B rows and a target ε (δ=1e-5): the σ dpgan calibrates with
the valid replace-one bound (one of N_d shards per step, Wang–Balle–Kasiviswanathan RDP), the σ
a Poisson add/remove model at rate 1/N_d would pick (a realisable *lower* bound on a shard step,
../shared/privacy README §2 vii), the ε that model would print at dpgan's σ, and the ε that
GS-WGAN-style per-example composition (B·T events) would print at dpgan's σ.

    python bench/dtgan_g_accounting.py > bench/results/dtgan_g_accounting.md
"""

from __future__ import annotations

import math

from dpgan.privacy.accounting import LedgerEntry, calibrate_noise_multiplier, epsilon_of

DELTA = 1e-5


def main() -> None:
    print(
        "| N_d | B | T | target ε | σ (dpgan, replace-one) | σ (Poisson model) | Poisson-model ε at dpgan's σ "
        "| per-example (B·T events) ε at dpgan's σ |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n_d, batch, steps in [(20, 64, 1018), (100, 64, 1018), (1000, 32, 2000)]:
        q = 1.0 / n_d
        for target in (1.0, 3.0, 7.0):
            honest = calibrate_noise_multiplier(
                sample_rate=q, steps=steps, epsilon=target, delta=DELTA, accountant="rdp", sampling="one-of-shards"
            )
            poisson = calibrate_noise_multiplier(
                sample_rate=q, steps=steps, epsilon=target, delta=DELTA, accountant="rdp"
            )
            as_poisson = epsilon_of([LedgerEntry("g", honest, q, steps)], DELTA, "rdp")
            # per-example view: each row's clipped gradient (sensitivity 2C) with noise σ·2C√B,
            # i.e. multiplier σ√B per row, composed B·T times at rate 1/N_d
            per_example = epsilon_of([LedgerEntry("g", honest * math.sqrt(batch), q, batch * steps)], DELTA, "rdp")
            print(
                f"| {n_d} | {batch} | {steps} | {target:g} | {honest:.3f} | {poisson:.3f} | {as_poisson:.3f} "
                f"| {per_example:.4f} |"
            )


if __name__ == "__main__":
    main()
