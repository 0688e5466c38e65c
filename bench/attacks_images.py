"""Membership inference against released image generators: every image recipe, a near-non-private control.

A small member set (the attack's best case: few images, many epochs) is drawn from the digits
training split and the same number of non-members from the rest; each recipe is fitted on the
members, `--samples` images are drawn, and the distance attack (dpgan.evaluation.images:
score = minus the distance to the nearest synthetic image) gives the ROC AUC of telling members
from non-members (0.5: the samples say nothing of who was in). The control is the dcgan recipe at
ε = 10⁶ (σ ≈ 0: what the attack finds when nothing hides the members). The noise-layer recipe as
published claims no ε; its row shows what the generator leaks in practice (its pre-noise layers
leak far more: bench/noise_layer_audit.py).

    OMP_NUM_THREADS=1 python bench/attacks_images.py --seeds 0 1 2 > /dev/null
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from dpgan import datasets
from dpgan.evaluation.images.metrics import distance_membership_auc
from dpgan.synthesizers import ImageSynthesizer

RUNS = (
    ("dcgan", 1e6),
    ("dcgan", 10.0),
    ("dcgan", 3.0),
    ("noise-layer", 10.0),
    ("noise-layer-sound", 10.0),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, default=200)
    parser.add_argument("--epochs", type=float, default=600.0)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--out", default="bench/results/attacks_images.jsonl")
    args = parser.parse_args()
    images, labels = datasets.load_digits_images(split="train")
    classes = [str(c) for c in range(10)]
    out = Path(args.out)
    for seed in args.seeds:
        order = np.random.default_rng(seed).permutation(len(images))
        members, non_members = order[: args.members], order[args.members : 2 * args.members]
        for recipe, epsilon in RUNS:
            start = time.perf_counter()
            synth = ImageSynthesizer(
                epsilon=epsilon,
                seed=seed,
                recipe=recipe,
                classes=classes,
                epochs=args.epochs,
                max_sample_rate=0.2,
            ).fit(images[members], labels[members].astype(str))
            fakes, _ = synth.sample(args.samples, seed=seed + 1)
            unit = lambda a: a.astype(np.float32) / 255.0  # noqa: E731
            auc = distance_membership_auc(unit(images[members]), unit(images[non_members]), unit(fakes))
            report = synth.privacy_report()
            row = {
                "recipe": recipe,
                "epsilon_target": epsilon,
                "epsilon": report.get("epsilon"),
                "certified": synth.certified,
                "seed": seed,
                "members": args.members,
                "epochs": args.epochs,
                "steps": synth.training.get("steps"),
                "membership_auc": round(auc, 4),
                "fit_seconds": round(time.perf_counter() - start, 1),
            }
            print(json.dumps(row), flush=True)
            with out.open("a") as handle:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
