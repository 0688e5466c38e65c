"""The image critics' DP step against their non-private WGAN-GP step (issue 16's ≤ 3× target).

The critics the image recipes train, on flat units [pixels, one-hot] (dpgan.models.image_units):
the dcgan recipe's conditional conv critic (GroupNorm, projection term) on 28×28 and 8×8 images,
through the generic per-example backend, and the dp-cgan recipe's MLP critic through the MLP fast
path. Same protocol as bench/generic_step_speed.py (whose step functions it reuses): one batch of
64 units (`--batch`: the image default's 1,024 on a large set), 1 thread, interleaved rounds after
warm-up, medians and the ratio of medians.

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python bench/image_step_speed.py > bench/results/image_step_speed.md
"""

from __future__ import annotations

import argparse
import math
import statistics

import torch

from dpgan.models.image_units import ImageUnitCritic, mlp_critic
from generic_step_speed import BATCH, dp_step, interleaved_times, make_loss, nonprivate_step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch", type=int, default=BATCH, help="units per step")
    args = parser.parse_args()
    torch.set_num_threads(1)
    noise = torch.Generator().manual_seed(0)
    mnist, digits = (1, 28, 28), (1, 8, 8)
    critics = {  # name: (critic, backend, its (image shape, labels)); a unit is flat [pixels, one-hot]
        "dcgan conv 28×28, 10 labels (width 16, the default)": (
            ImageUnitCritic(mnist, 10, width=16),
            "functorch",
            (mnist, 10),
        ),
        "dcgan conv 28×28, 10 labels (width 32)": (ImageUnitCritic(mnist, 10, width=32), "functorch", (mnist, 10)),
        "dcgan conv 28×28, no labels, no norm (width 32)": (
            ImageUnitCritic(mnist, 0, width=32, norm="none"),
            "functorch",
            (mnist, 0),
        ),
        "dcgan conv 8×8, 10 labels (width 32)": (ImageUnitCritic(digits, 10, width=32), "functorch", (digits, 10)),
        "dp-cgan MLP 794→512→256→1": (mlp_critic(mnist, 10, (512, 256)), "auto", (mnist, 10)),
    }
    table = {}
    for name, (critic, backend, (shape, labels)) in critics.items():
        loss = make_loss((math.prod(shape) + labels,), 1, args.batch)
        table[name] = {"dp": dp_step(critic, loss, backend, noise), "plain": nonprivate_step(critic, loss)}
    times = interleaved_times(table, args.rounds, args.warmup)
    print("# Image critics: DP step against the non-private WGAN-GP step\n")
    print(
        f"Command: `OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python bench/image_step_speed.py --batch {args.batch}` "
        f"(torch {torch.__version__}, 1 thread, shared 2-core machine; batch {args.batch}, float32, "
        f"{args.rounds} interleaved rounds after {args.warmup} warm-up rounds; medians).\n"
    )
    print("| critic | parameters | step | median (ms) | ratio to its non-private step |")
    print("|---|---|---|---|---|")
    for name, steps in table.items():
        params = sum(p.numel() for p in critics[name][0].parameters())
        plain = statistics.median(times[name, "plain"])
        for step in steps:
            median = statistics.median(times[name, step])
            print(f"| {name} | {params} | {step} | {median * 1e3:.1f} | {median / plain:.2f} |")


if __name__ == "__main__":
    main()
