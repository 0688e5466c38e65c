"""Reference points for the Fréchet feature distance (dpgan.evaluation.image_features): what known
image sets score, so that a synthetic set's distance can be read.

On the chosen data set's test split, with the feature network bench/images.py --frechet uses (trained
on the real training images, seed 0), each reference set is scored against the same held-out half:

- real training images (never the held-out ones): about the floor;
- real training images with Gaussian pixel noise (σ = 0.1, 0.3; clipped to [0, 1]);
- real training images blurred (a 3×3 then 5×5 box filter);
- each class's mean training image, repeated in the class's proportions (one image per class);
- uniform noise.

    OMP_NUM_THREADS=1 python bench/image_frechet_references.py --data fashion-mnist \\
        --out bench/results/image_frechet_references.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from dpgan.evaluation.images.features import feature_distance, fit_feature_space
from images import splits, unit  # bench/images.py: the same splits and scaling


def blurred(images: np.ndarray, size: int) -> np.ndarray:
    """A size×size box filter (zero padding excluded from the mean)."""
    x = torch.from_numpy(images)
    kernel = torch.ones(1, 1, size, size)
    summed = torch.nn.functional.conv2d(x, kernel, padding=size // 2)
    counts = torch.nn.functional.conv2d(torch.ones_like(x), kernel, padding=size // 2)
    return (summed / counts).numpy()


def references(train_x: np.ndarray, train_y: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    means = np.stack([train_x[train_y == c].mean(axis=0) for c in range(10)])
    return {
        "real training images": train_x,
        "real + noise σ 0.1": np.clip(train_x + rng.normal(0, 0.1, train_x.shape), 0, 1).astype(np.float32),
        "real + noise σ 0.3": np.clip(train_x + rng.normal(0, 0.3, train_x.shape), 0, 1).astype(np.float32),
        "real, 3×3 blur": blurred(train_x, 3),
        "real, 5×5 blur": blurred(train_x, 5),
        "class mean images": means[train_y].astype(np.float32),
        "uniform noise": rng.random(train_x.shape, dtype=np.float32),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="fashion-mnist")
    parser.add_argument("--out", default="bench/results/image_frechet_references.jsonl")
    args = parser.parse_args()
    train_x, train_y, test_x, test_y = splits(args.data, "test")
    train_unit, test_unit = unit(train_x), unit(test_x)
    space = fit_feature_space(train_unit, train_y, 10, seed=0)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for name, images in references(train_unit, train_y, np.random.default_rng(0)).items():
        row = {"data": args.data, "split": "test", "reference": name}
        row |= feature_distance(space, images, test_unit, test_y)
        print(json.dumps(row), flush=True)
        with out.open("a") as handle:
            handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
