"""Private image synthesis on the bundled digit sets: students trained on synthetic images.

For each data set, recipe, ε and seed: fit ImageSynthesizer on the training images (labels public:
the class list is given, their counts are a DP release), sample as many labelled images as the
training set holds, and score logistic-regression, MLP and CNN students trained on them and tested
on real images (accuracy, macro one-vs-rest AuROC: DP-CGAN's metric), next to the same students
trained on the real training images.

Splits: `--split validation` fits on 80% of the training split and scores on the other 20% (the
rows that choose settings); `--split test` fits on the whole training split and scores on the test
split (run once, after the settings are frozen). Appends one JSON row per run to --out.

    OMP_NUM_THREADS=2 python bench/images.py --data digits --epsilon 1 3 10 --seeds 0 --split validation
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from dpgan import datasets
from dpgan.evaluation.images.features import feature_distance, fit_feature_space
from dpgan.evaluation.images.metrics import student_scores
from dpgan.images.io import write_contact_sheet
from dpgan.synthesizers import ImageSynthesizer

LOADERS = {
    "digits": datasets.load_digits_images,
    "mnist-5k": datasets.load_mnist_5k,
    "fashion-mnist": datasets.load_fashion_mnist,
}


def splits(name: str, split: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(train images, train labels, evaluation images, evaluation labels): validation = a fixed 20%
    of the training split (the test split unread), test = the test split."""
    images, labels = LOADERS[name](split="train")
    if split == "test":
        test_images, test_labels = LOADERS[name](split="test")
        return images, labels, test_images, test_labels
    order = np.random.default_rng(seed).permutation(len(images))
    cut = int(0.8 * len(images))
    return images[order[:cut]], labels[order[:cut]], images[order[cut:]], labels[order[cut:]]


def unit(images: np.ndarray) -> np.ndarray:
    return images.astype(np.float32) / 255.0


def label_guide_accuracy(synth: ImageSynthesizer, eval_unit: np.ndarray, eval_y: np.ndarray) -> float | None:
    """The label guide's DP classifier's accuracy on the evaluation images (None without a guide):
    the label signal G is pulled towards."""
    classifier = getattr(synth, "_guide_in_memory", None)
    if classifier is None:
        return None
    device = next(classifier.parameters()).device
    pixels = torch.from_numpy(eval_unit.reshape(len(eval_unit), -1) * 2.0 - 1.0).to(device)
    with torch.no_grad():
        predicted = classifier(pixels).argmax(dim=1).cpu().numpy()
    return round(float((predicted == eval_y).mean()), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", choices=list(LOADERS), default="digits")
    parser.add_argument("--recipe", nargs="+", default=["dcgan"])
    parser.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 3.0, 10.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--split", choices=["validation", "test"], default="validation")
    parser.add_argument("--limit", type=int, default=0, help="use only this many training images (0: all)")
    parser.add_argument(
        "--samples",
        type=int,
        nargs="+",
        default=[0],
        help="synthetic images the students train on (0: as many as train); several: one row each, same fit",
    )
    parser.add_argument(
        "--dp-labels", action="store_true", help="no class list: the label set is released with DP (issue 31)"
    )
    parser.add_argument("--students", nargs="+", default=["logreg", "mlp", "cnn"])
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting (JSON value)")
    parser.add_argument("--real-rows", action="store_true", help="also score the students trained on real images")
    parser.add_argument(
        "--frechet",
        action="store_true",
        help="also the Fréchet feature distance (one feature network per run, trained on the real training images)",
    )
    parser.add_argument("--grid", help="write a contact sheet of each fit's samples to GRID_{recipe}_{ε}_{seed}.png")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto (the fit's device)")
    parser.add_argument("--out", default="bench/results/images.jsonl")
    args = parser.parse_args()
    settings = {k: json.loads(v) for k, v in (item.split("=", 1) for item in args.set)}
    settings = {k: tuple(v) if isinstance(v, list) else v for k, v in settings.items()}
    train_x, train_y, eval_x, eval_y = splits(args.data, args.split)
    eval_unit = unit(eval_x)
    if args.limit:
        train_x, train_y = train_x[: args.limit], train_y[: args.limit]
    classes = None if args.dp_labels else [str(c) for c in range(10)]
    space = fit_feature_space(unit(train_x), train_y, 10, seed=0) if args.frechet else None
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for recipe in args.recipe:
        for epsilon in args.epsilon:
            for seed in args.seeds:
                start = time.perf_counter()
                synth = ImageSynthesizer(
                    epsilon=epsilon, seed=seed, recipe=recipe, classes=classes, device=args.device, **settings
                )
                synth.fit(train_x, train_y.astype(str))
                fit_seconds = time.perf_counter() - start
                report = synth.privacy_report()
                guide_accuracy = label_guide_accuracy(synth, eval_unit, eval_y)
                student_options = {"students": tuple(args.students), "seed": seed}
                real_scores = None
                if args.real_rows:  # the same students on the real training images (once per fit)
                    real_scores = student_scores(unit(train_x), train_y, eval_unit, eval_y, 10, **student_options)
                for count in args.samples:
                    images, labels = synth.sample(count or len(train_x), seed=seed + 1000)
                    if args.grid and count == args.samples[0]:
                        sheet = Path(f"{args.grid}_{recipe}_{epsilon:g}_{seed}.png")
                        write_contact_sheet(sheet, images, labels, overwrite=True)
                    images_unit = unit(images)
                    scores = student_scores(images_unit, labels.astype(int), eval_unit, eval_y, 10, **student_options)
                    row = {
                        "data": args.data,
                        "split": args.split,
                        "recipe": recipe,
                        "epsilon_target": epsilon,
                        "epsilon": report.get("epsilon"),
                        "certified": report.get("certified", True),
                        "seed": seed,
                        "train_images": len(train_x),
                        "synthetic_images": len(images),
                        "steps": synth.training.get("steps"),
                        "noise_multiplier": synth.training.get("noise_multiplier"),
                        "fit_seconds": round(fit_seconds, 1),
                        "settings": settings,
                        "networks": dataclasses.asdict(synth.networks),
                        "synthetic": scores,
                        "real": real_scores,
                        "guide_accuracy": guide_accuracy,
                        "labels_released": len(synth.label_names),
                        "label_source": synth.training.get("label_source"),
                        "frechet": feature_distance(space, images_unit, eval_unit, eval_y) if space else None,
                        "threads": os.environ.get("OMP_NUM_THREADS"),
                        "device": args.device,
                    }
                    print(json.dumps(row), flush=True)
                    with out.open("a") as handle:
                        handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
