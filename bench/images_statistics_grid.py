"""The DP statistics alone, without the synthesizer around them: a grid of forms on one data set.

For each ε, coefficient clip, number of components K and seed: release each class's DP Gaussian
(K = 0: dpgan.statistics.gaussian, three releases) or DP mixture (K ≥ 1: dpgan.statistics.mixture,
the start, `--lloyd-steps` Lloyd steps and the cells) of the training images' pixels in [-1, 1], on
all of ε (no label count: the labels are public here), draw as many images as the training set
holds, and score students trained on them and tested on real images, with the Fréchet feature
distance. Quick (seconds per release) where bench/images.py runs the whole synthesizer; it is for
choosing forms on validation splits, and bench/images.py measures the chosen one end to end.

    cd bench && PYTHONPATH=../src:. OMP_NUM_THREADS=2 python images_statistics_grid.py --data fashion-mnist \\
        --epsilon 1 10 --components 0 4 8 --frechet --out results/images_mixture_validation.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from dpgan.evaluation.images.features import feature_distance, fit_feature_space
from dpgan.evaluation.images.metrics import student_scores
from dpgan.images.gaussian import coefficient_clip, image_basis
from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.statistics.bases import high_frequency_basis
from dpgan.statistics.copula import DPGaussianCopula
from dpgan.statistics.gaussian import DPGaussian
from dpgan.statistics.matched import DPMatchedMarginals
from dpgan.statistics.mixture import DPGaussianMixture
from images import LOADERS, splits, unit

DELTA = 1e-5


def release(values, labels, shape, epsilon, components, clip_share, args, seed):  # noqa: ANN001
    """The release at ε on its own ledger: one Gaussian per class (components 0) or a mixture."""
    ledger = PrivacyLedger(budget=Budget(epsilon, DELTA, "pld"))
    target = ShareTarget(epsilon, DELTA, "pld")
    form = {"basis": image_basis(shape, args.basis), "clip": coefficient_clip(shape, clip_share), "shrink": "spike"}
    if args.residual is not None:  # the residual's spectrum outside the basis (one Gaussian only)
        channels, height, width = shape
        form |= {
            "residual_basis": high_frequency_basis((height, width), args.basis, channels=channels),
            "residual_clip": coefficient_clip(shape, args.residual),
        }
    rng = np.random.default_rng(seed)
    if args.copula:  # the pixels' per-class DP histogram, then the Gaussian (or mixture) of normal scores
        scores_model = None
        if components > 0:
            steps, scale = args.lloyd_steps, args.steering_scale
            scores_model = DPGaussianMixture(
                -1.0, 1.0, components=components, iterations=steps, steering_scale=scale, **form
            )
        copula = (
            DPMatchedMarginals(-1.0, 1.0, bins=args.bins, model=scores_model, gaussian=form, threshold=args.threshold)
            if args.match
            else DPGaussianCopula(-1.0, 1.0, bins=args.bins, scores_model=scores_model, **form)
        )
        histogram = ShareTarget(args.copula_share * epsilon, DELTA, "pld")
        copula.fit(
            values, labels, 10, rng, ledger=ledger, histogram_target=histogram, target=target, event="grid", note=""
        )
        return copula, ledger.epsilon(DELTA)
    model = (
        DPGaussian(-1.0, 1.0, **form)
        if components == 0
        else DPGaussianMixture(
            -1.0, 1.0, components=components, iterations=args.lloyd_steps, steering_scale=args.steering_scale, **form
        )
    )
    model.fit(values, labels, 10, rng, ledger=ledger, target=target, event="grid", note="")
    return model, ledger.epsilon(DELTA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", choices=list(LOADERS), default="fashion-mnist")
    parser.add_argument("--split", choices=["validation", "test"], default="validation")
    parser.add_argument("--epsilon", type=float, nargs="+", default=[10.0])
    parser.add_argument("--components", type=int, nargs="+", default=[0, 4], help="0: one Gaussian per class")
    parser.add_argument("--clip", type=float, nargs="+", default=[0.3], help="the coefficients' clip, share of √d")
    parser.add_argument("--basis", type=float, default=0.4)
    parser.add_argument("--lloyd-steps", type=int, default=2)
    parser.add_argument("--steering-scale", type=float, default=3.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--students", nargs="+", default=["logreg"])
    parser.add_argument("--frechet", action="store_true")
    parser.add_argument("--copula", action="store_true", help="a DP Gaussian copula (one Gaussian of scores per class)")
    parser.add_argument(
        "--match", action="store_true", help="with --copula: matched marginals (dpgan.statistics.matched) instead"
    )
    parser.add_argument("--threshold", type=float, default=0.0, help="with --match: counts below it × σ read 0")
    parser.add_argument("--copula-share", type=float, default=0.2, help="the copula's histogram share of ε")
    parser.add_argument("--bins", type=int, default=32, help="the copula's histogram bins")
    parser.add_argument("--residual", type=float, default=None, help="the residual spectrum's clip, share of √d")
    parser.add_argument("--out", default="results/images_statistics_grid.jsonl")
    args = parser.parse_args()
    train_x, train_y, eval_x, eval_y = splits(args.data, args.split)
    shape = tuple(train_x.shape[1:])
    values = unit(train_x).reshape(len(train_x), -1).astype(np.float64) * 2.0 - 1.0
    space = fit_feature_space(unit(train_x), train_y, 10, seed=0) if args.frechet else None
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for epsilon in args.epsilon:
        for clip_share in args.clip:
            for components in args.components:
                for seed in args.seeds:
                    start = time.perf_counter()
                    model, spent = release(values, train_y, shape, epsilon, components, clip_share, args, seed)
                    seconds = time.perf_counter() - start
                    drawn, labels = model.sample(len(train_x), np.random.default_rng(seed + 1000))
                    images = ((drawn + 1.0) / 2.0).reshape(-1, *shape).astype(np.float32)
                    scores = student_scores(images, labels, unit(eval_x), eval_y, 10, students=args.students, seed=seed)
                    row = {
                        "data": args.data,
                        "split": args.split,
                        "epsilon_target": epsilon,
                        "epsilon": spent,
                        "components": components,
                        "clip": clip_share,
                        "basis": args.basis,
                        "lloyd_steps": args.lloyd_steps,
                        "steering_scale": args.steering_scale,
                        "copula": args.copula,
                        "match": args.match,
                        "threshold": args.threshold if args.match else None,
                        "copula_share": args.copula_share if args.copula else None,
                        "copula_bins": args.bins if args.copula else None,
                        "residual": args.residual,
                        "seed": seed,
                        "fit_seconds": round(seconds, 1),
                        "synthetic": scores,
                        "frechet": feature_distance(space, images, unit(eval_x), eval_y) if space else None,
                    }
                    print(json.dumps(row), flush=True)
                    with out.open("a") as handle:
                        handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
