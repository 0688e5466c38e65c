"""The label set's second chance (issue 31): how often a label set of K labels of `size` units each
is released, and what it costs, for candidate caps of the second release, at ε = 1, 3, 10.

The noise multipliers are the fit's own: the first release's σ₁ from the kind's share (images:
the tally at LABEL_SHARE; series: the label release at LABELS_SHARE after no bounds), the second's
σ₂ from dpgan.privacy.partition_selection's rule under each cap, both calibrated by the ledger's
accountant (PLD) exactly as a fit does. The release itself (first τ₁, the second chance only when
fewer than two labels clear it, the combined τ_c) is then simulated with NumPy draws (--draws per
cell), which is what the mechanism does with those σ: no GAN is trained.

    PYTHONPATH=src python bench/label_release.py [--draws 4000] [--out bench/results/label_release.md]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from dpgan.images.labels import LABEL_TARGET_IMAGES, THRESHOLD_DELTA
from dpgan.images.settings import LABEL_SHARE
from dpgan.privacy.accounting import Budget, LedgerEntry, PrivacyLedger, epsilon_of
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.mechanisms import set_union_threshold
from dpgan.privacy.partition_selection import SECOND_CHANCE_MARGIN, second_release
from dpgan.sequences.dp_schema import LABEL_TARGET_UNITS, LABELS_SHARE

DELTA = 1e-5
KINDS = {  # first share, target units, candidate caps of the second release
    "image": (LABEL_SHARE, LABEL_TARGET_IMAGES, (0.05, 0.10, 0.15)),
    "series": (LABELS_SHARE, LABEL_TARGET_UNITS, (0.10, 0.15, 0.25)),
}
SIZES = (30, 50, 100, 200, 400)
LABELS = 10


def sigmas(epsilon: float, first_share: float, cap: float, target: float) -> tuple[float, float, float]:
    """(σ₁, σ₂, ε spent by both) as the fit calibrates them."""
    shares = FitBudget(epsilon, DELTA, "pld")
    ledger = PrivacyLedger(budget=Budget(epsilon, DELTA, "pld"))
    tau_delta = THRESHOLD_DELTA * DELTA
    pending = LedgerEntry("t", 1.0, count=0, extra_delta=tau_delta)
    sigma1 = shares.at(first_share).sigma(1.0, 1, [pending])
    ledger.add(LedgerEntry("first", sigma1, count=1, extra_delta=tau_delta))
    again = second_release(
        [1.0],
        [0.0],
        sigma1,
        target_units=target,
        threshold_delta=tau_delta,
        cap=shares.at(first_share + cap),
        ledger=ledger,
        rng=np.random.default_rng(0),
        event="again",
        note="",
    )
    return sigma1, again.stage_sigma, epsilon_of(ledger.entries, DELTA, "pld")


def released_all(
    size: float, sigma1: float, sigma2: float, draws: int, rng: np.random.Generator
) -> tuple[float, float]:
    """(P(all LABELS labels of `size` units are released), P(the second release runs)) under the
    two-stage rule."""
    tau_delta = THRESHOLD_DELTA * DELTA
    first = size + rng.normal(0.0, sigma1, (draws, LABELS))
    tau1 = set_union_threshold(sigma1, tau_delta)
    kept = first > tau1
    smallest = np.where(kept, first, np.inf).min(axis=1)
    again = (kept.sum(axis=1) < 2) | (smallest < SECOND_CHANCE_MARGIN * tau1)  # needs_second_chance
    second = size + rng.normal(0.0, sigma2, (draws, LABELS))
    w1, w2 = sigma1**-2, sigma2**-2
    combined = (w1 * first + w2 * second) / (w1 + w2)
    tau_c = set_union_threshold((w1 + w2) ** -0.5, tau_delta)
    final = np.where(again[:, None], kept | (combined > tau_c), kept)
    return float((final.sum(axis=1) == LABELS).mean()), float(again.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--out", default="bench/results/label_release.md")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    lines = [
        "# The label set's second chance: P(all 10 labels released) by labels' size",
        "",
        f"Command: `PYTHONPATH=src python bench/label_release.py --draws {args.draws}`; δ = {DELTA:g}, "
        f"PLD; {time.strftime('%Y-%m-%d')}. σ₁ and σ₂ as a fit calibrates them; 'ε spent' is both releases "
        "together (when the second runs), as a share of ε. Cells: P(all 10 labels released) and, in "
        "brackets, P(the second release runs).",
        "",
        "| kind | ε | cap | σ₁ | σ₂ | share spent | " + " | ".join(f"{s} per label" for s in SIZES) + " |",
        "|---|---|---|---|---|---|" + "---|" * len(SIZES),
    ]
    for kind, (first_share, target, caps) in KINDS.items():
        for epsilon in (1.0, 3.0, 10.0):
            for cap in caps:
                sigma1, sigma2, spent = sigmas(epsilon, first_share, cap, target)
                cells = [released_all(size, sigma1, sigma2, args.draws, rng) for size in SIZES]
                lines.append(
                    f"| {kind} | {epsilon:g} | {cap:g} | {sigma1:.1f} | {sigma2:.1f} | {spent / epsilon:.3f} | "
                    + " | ".join(f"{p:.2f} ({a:.2f})" for p, a in cells)
                    + " |"
                )
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
