"""The ceiling rows of issue 16's image benchmark: students trained on real images, tested on real ones.

Data: scikit-learn's 8×8 digits (1,797 images, bundled with scikit-learn, no network), pixels
divided by 16 into [0, 1], shape (N, 1, 8, 8). Split by a seeded permutation (SPLIT_SEED): 80 %
train, 20 % test; the student seed varies the MLP's and the CNN's initialisation and batches.
Students and scores: dpgan.evaluation.images.student_scores (logistic regression and an MLP on the
flattened pixels, a small CNN; accuracy and macro one-vs-rest AuROC, the DP-CGAN paper's measure).
A synthetic set's scores are read against these rows (train-on-real, the same test images).

    python bench/image_students_real.py --seeds 0 1 2

Each row is printed and appended to bench/results/image_students_real.jsonl.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import sklearn
import torch
from sklearn.datasets import load_digits

from dpgan.evaluation.images.metrics import CNN_EPOCHS, STUDENTS, student_scores

RESULTS = Path(__file__).resolve().parent / "results"
SPLIT_SEED = 20251125
TRAIN_SHARE = 0.8


def digits_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Train and test images (N, 1, 8, 8) in [0, 1], their labels and the number of classes."""
    data = load_digits()
    x, y = (data.images / 16.0).astype(np.float32)[:, None], data.target.astype(np.int64)
    order = np.random.default_rng(SPLIT_SEED).permutation(len(x))
    cut = int(TRAIN_SHARE * len(x))
    return x[order[:cut]], y[order[:cut]], x[order[cut:]], y[order[cut:]], 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--cnn-epochs", type=int, default=CNN_EPOCHS)
    parser.add_argument("--out", default=str(RESULTS / "image_students_real.jsonl"))
    args = parser.parse_args()
    train_x, train_y, test_x, test_y, n_classes = digits_split()
    for seed in args.seeds:
        scores, seconds = {}, {}
        for student in STUDENTS:  # one at a time, to time each
            start = time.perf_counter()
            scores |= student_scores(
                train_x, train_y, test_x, test_y, n_classes, students=(student,), seed=seed, cnn_epochs=args.cnn_epochs
            )
            seconds[student] = round(time.perf_counter() - start, 2)
        row = {
            "data": "digits",
            "trained_on": "real",
            "split_seed": SPLIT_SEED,
            "train_images": len(train_x),
            "test_images": len(test_x),
            "seed": seed,
            "cnn_epochs": args.cnn_epochs,
            "students": scores,
            "seconds": seconds,
            "versions": {
                "sklearn": sklearn.__version__,
                "torch": torch.__version__,
                "python": platform.python_version(),
            },
        }
        print(json.dumps(row), flush=True)
        with open(args.out, "a") as handle:
            handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
