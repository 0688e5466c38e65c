"""How useful synthetic images are, and whether they copy training images (the suite's image section).

- Students (the DP-CGAN paper's protocol): logistic regression and an MLP (scikit-learn, on the
  flattened pixels) and a small CNN (torch, CPU) are trained on one labelled set and tested on real
  held-out images; accuracy and macro one-vs-rest AuROC from the predicted probabilities. Trained on
  synthetic images next to the same students trained on the real training images (the ceiling).
- Memorisation (the figure both seed papers show): each synthetic image's L2 pixel distance to its
  nearest real training image, next to the same distance for real held-out images (the floor: what
  an image of the population that was never trained on scores). Far below the floor, or exactly 0,
  means copies of training images; a distance attack turns the same distances into a membership AUC.
- Realism: the Fréchet distance in a real-trained CNN's features against a real held-out floor
  (features.py): students reward label-typical features, this counts the rest.
- Figures: a sample grid (one row per class), generated images next to their nearest real ones, and
  the distance histogram (synthetic → train against held-out → train), as base64 PNGs.

Inputs everywhere: images as float arrays (N, C, H, W) in [0, 1] (uint8 images divided by 255 by
the caller) and integer label codes (N,) in 0..n_classes-1, n_classes given explicitly (a synthetic
set may lack a class; the number of classes is public metadata, not read off the data).

This module evaluates: it reads private training and test images to score a release and is not
itself a DP mechanism. Its outputs (the report, metrics.json) are for the data holder; error
messages never quote a pixel or a label value.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neural_network import MLPClassifier

from dpgan.errors import InputError
from dpgan.evaluation.headline import image_headline
from dpgan.evaluation.images.features import (
    MIN_SIDE,
    feature_distance,
    fit_feature_space,
    in_chunks,
    student_convs,
    train_classifier,
)
from dpgan.evaluation.images.inputs import check_classes, check_images, check_labels, torch_threads
from dpgan.evaluation.jsonable import to_jsonable

STUDENTS = ("logreg", "mlp", "cnn")
CNN_EPOCHS = 10
CNN_THREADS = 1  # evaluation runs beside training jobs; one thread keeps the CNN reproducible and polite
MAX_NEAREST = 1000  # query images per side for the memorisation distances (against the whole training set)
RERANK = 4  # exact float64 distances for the k + RERANK best float32 candidates
COPY_TOLERANCE = 1e-6  # an L2 pixel distance below this is an exact copy
HIST_BINS = 30


# ------------------------------------------------------------------------------------------ students


def macro_ovr_auroc(truth: np.ndarray, probabilities: np.ndarray) -> float | None:
    """Macro one-vs-rest ROC AUC over the classes present in `truth` (sklearn's multi_class="ovr",
    average="macro", which is the mean of these binary AUCs when every class is present).

    Restricting to present classes keeps AuROC defined on a real test set that lacks a class; None
    when fewer than two classes are present (no AUC exists)."""
    present = np.unique(truth)
    if len(present) < 2:
        return None
    return float(np.mean([roc_auc_score(truth == k, probabilities[:, k]) for k in present]))


def _full_probabilities(classes: np.ndarray, probabilities: np.ndarray, n: int, n_classes: int) -> np.ndarray:
    """Spread a model's columns (the classes it saw) into n_classes columns; unseen classes get 0."""
    out = np.zeros((n, n_classes))
    out[:, classes] = probabilities
    return out


def _sklearn_student(name: str, seed: int) -> Any:
    if name == "logreg":
        return LogisticRegression(max_iter=1000, C=1.0)
    return MLPClassifier(hidden_layer_sizes=(128,), max_iter=200, random_state=seed)


class SmallCNN(torch.nn.Module):
    """Two 3×3 conv layers (16 and 32 channels, ReLU, 2×2 max-pool) and a linear layer: the student
    CNN, small enough for CPU on 8×8 digits and 28×28 MNIST alike."""

    def __init__(self, channels: int, height: int, width: int, n_classes: int) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(*student_convs(channels))
        self.head = torch.nn.Linear(32 * (height // 4) * (width // 4), n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


def _cnn_probabilities(
    train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, n_classes: int, seed: int, epochs: int
) -> np.ndarray:
    """Train SmallCNN (features.train_classifier: Adam, batch 64, seeded without touching the
    caller's RNG) and return test probabilities over n_classes. A class missing from the training
    set keeps its logit column; it simply never gets a positive example."""
    _, channels, height, width = train_x.shape
    if min(height, width) < MIN_SIDE:
        raise InputError(f"the CNN student needs images of at least {MIN_SIDE}×{MIN_SIDE} pixels")
    with torch_threads(CNN_THREADS):
        build = lambda: SmallCNN(channels, height, width, n_classes)  # noqa: E731
        model = train_classifier(build, train_x, train_y, seed=seed, epochs=epochs)
        return torch.softmax(in_chunks(model, test_x), dim=1).double().numpy()


def student_scores(
    train_x: np.ndarray,
    train_y: np.ndarray,
    test_x: np.ndarray,
    test_y: np.ndarray,
    n_classes: int,
    *,
    students: Sequence[str] = STUDENTS,
    seed: int = 0,
    cnn_epochs: int = CNN_EPOCHS,
) -> dict[str, dict[str, float | None]]:
    """Each student trained on (train_x, train_y), tested on (test_x, test_y): accuracy and macro
    one-vs-rest AuROC (the DP-CGAN paper's measure) from its predicted probabilities.

    Every student outputs n_classes probability columns, so a training set that lacks a class (a
    synthetic set often does) still scores; a training set with a single class gets the constant
    predictor (AuROC 0.5), since no classifier can be fitted to one class."""
    check_classes(n_classes)
    unknown = [s for s in students if s not in STUDENTS]
    if unknown:
        raise InputError(f"unknown student {unknown[0]!r}; choose from {', '.join(STUDENTS)}")
    train_x, test_x = check_images(train_x, "train_x"), check_images(test_x, "test_x")
    if train_x.shape[1:] != test_x.shape[1:]:
        raise InputError("train_x and test_x must have the same image shape (C, H, W)")
    train_y = check_labels(train_y, len(train_x), n_classes, "train_y")
    test_y = check_labels(test_y, len(test_x), n_classes, "test_y")
    seen = np.unique(train_y)
    flat_train, flat_test = train_x.reshape(len(train_x), -1), test_x.reshape(len(test_x), -1)
    out: dict[str, dict[str, float | None]] = {}
    for name in students:
        if len(seen) < 2:
            probabilities = _full_probabilities(seen, np.ones((len(test_x), 1)), len(test_x), n_classes)
        elif name == "cnn":
            probabilities = _cnn_probabilities(train_x, train_y, test_x, n_classes, seed, cnn_epochs)
        else:
            with warnings.catch_warnings():  # students on noisy synthetic sets often stop at max_iter
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = _sklearn_student(name, seed).fit(flat_train, train_y)
            probabilities = _full_probabilities(model.classes_, model.predict_proba(flat_test), len(test_x), n_classes)
        out[name] = {
            "accuracy": float((probabilities.argmax(axis=1) == test_y).mean()),
            "auroc": macro_ovr_auroc(test_y, probabilities),
        }
    return out


def image_utility(
    synthetic_x: np.ndarray,
    synthetic_y: np.ndarray,
    real_train_x: np.ndarray,
    real_train_y: np.ndarray,
    real_test_x: np.ndarray,
    real_test_y: np.ndarray,
    n_classes: int,
    **options: Any,
) -> dict[str, dict[str, dict[str, float | None]]]:
    """Train-on-synthetic next to train-on-real, both tested on the real test images."""
    return {
        "synthetic": student_scores(synthetic_x, synthetic_y, real_test_x, real_test_y, n_classes, **options),
        "real": student_scores(real_train_x, real_train_y, real_test_x, real_test_y, n_classes, **options),
    }


# ------------------------------------------------------------------------------------- memorisation


def nearest_real(
    synthetic_x: np.ndarray, real_x: np.ndarray, k: int = 1, *, chunk: int = 2048
) -> tuple[np.ndarray, np.ndarray]:
    """For each query image, the L2 pixel distances to its k nearest real images and their indices,
    both (n, k), nearest first.

    Memory is bounded by the chunk, not the sizes: queries and references are taken in blocks and
    only a running top-k is kept (10k × 60k MNIST-sized images: about 200 MB above the inputs and
    11 s on one core at chunk 2048). Candidates come from
    ‖a‖² + ‖b‖² − 2a·b in float32 (fast); the k + RERANK best of them are re-measured exactly in
    float64, so an exact copy reads 0 and the distances equal a brute-force computation."""
    queries = check_images(synthetic_x, "synthetic_x").reshape(len(synthetic_x), -1)
    reference = check_images(real_x, "real_x").reshape(len(real_x), -1)
    if queries.shape[1] != reference.shape[1]:
        raise InputError("synthetic_x and real_x must have the same image shape (C, H, W)")
    if not 1 <= k <= len(reference):
        raise InputError(f"k must be between 1 and the number of real images ({len(reference)})")
    keep = min(k + RERANK, len(reference))
    if chunk < 1:
        raise InputError("chunk must be a positive number of images")
    reference_norms = _squared_norms(reference, chunk)
    distances = np.empty((len(queries), k))
    indices = np.empty((len(queries), k), dtype=np.int64)
    for q0 in range(0, len(queries), chunk):
        block = queries[q0 : q0 + chunk]
        block_norms = _squared_norms(block, chunk)
        best_d = np.full((len(block), 0), np.inf, dtype=np.float32)
        best_i = np.zeros((len(block), 0), dtype=np.int64)
        for r0 in range(0, len(reference), chunk):
            squared = block_norms[:, None] + reference_norms[None, r0 : r0 + chunk]
            squared -= 2.0 * (block @ reference[r0 : r0 + chunk].T)
            best_d = np.concatenate([best_d, squared], axis=1)
            best_i = np.concatenate([best_i, np.broadcast_to(np.arange(r0, r0 + squared.shape[1]), squared.shape)], 1)
            if best_d.shape[1] > keep:
                top = np.argpartition(best_d, keep - 1, axis=1)[:, :keep]
                best_d = np.take_along_axis(best_d, top, axis=1)
                best_i = np.take_along_axis(best_i, top, axis=1)
        exact = np.sqrt(
            ((block[:, None, :].astype(np.float64) - reference[best_i].astype(np.float64)) ** 2).sum(axis=2)
        )
        order = np.lexsort((best_i, exact), axis=1)[:, :k]  # by distance, ties to the lower index
        distances[q0 : q0 + len(block)] = np.take_along_axis(exact, order, axis=1)
        indices[q0 : q0 + len(block)] = np.take_along_axis(best_i, order, axis=1)
    return distances, indices


def _squared_norms(flat: np.ndarray, chunk: int) -> np.ndarray:
    """Row ‖x‖² summed in float64 a block at a time (no float64 copy of a 60k-image set), as float32."""
    out = np.empty(len(flat), dtype=np.float32)
    for start in range(0, len(flat), chunk):
        block = flat[start : start + chunk].astype(np.float64)
        out[start : start + chunk] = np.einsum("ij,ij->i", block, block)
    return out


def heldout_floor(heldout_x: np.ndarray, train_x: np.ndarray) -> np.ndarray:
    """Each real held-out image's distance to its nearest training image: what never-trained images
    of the same population score, the floor that synthetic distances are read against."""
    return nearest_real(heldout_x, train_x, k=1)[0][:, 0]


def distance_membership_auc(members: np.ndarray, non_members: np.ndarray, synthetic: np.ndarray) -> float:
    """A distance attack on images (as on tables and series): score each candidate by minus its
    distance to the nearest synthetic image; the ROC AUC of telling training members from held-out
    non-members (0.5: the synthetic images say nothing of who was in)."""
    scores = -nearest_real(np.concatenate([members, non_members]), synthetic, k=1)[0][:, 0]
    truth = np.r_[np.ones(len(members)), np.zeros(len(non_members))]
    return float(roc_auc_score(truth, scores))


def _subset(n: int, limit: int, rng: np.random.Generator) -> np.ndarray:
    return np.arange(n) if n <= limit else np.sort(rng.choice(n, limit, replace=False))


def memorisation(
    synthetic_x: np.ndarray,
    real_train_x: np.ndarray,
    real_test_x: np.ndarray,
    *,
    max_images: int = MAX_NEAREST,
    seed: int = 0,
) -> dict[str, Any]:
    """Nearest-training-image distances of (up to max_images) synthetic and held-out real images,
    summarised: means, medians, their ratio (the floor is 1), exact copies, a shared-bin histogram,
    and the distance membership attack."""
    rng = np.random.default_rng(seed)
    synthetic = synthetic_x[_subset(len(synthetic_x), max_images, rng)]
    heldout = real_test_x[_subset(len(real_test_x), max_images, rng)]
    to_train = nearest_real(synthetic, real_train_x)[0][:, 0]
    floor = heldout_floor(heldout, real_train_x)
    edges = np.histogram_bin_edges(np.concatenate([to_train, floor]), bins=HIST_BINS)
    members = real_train_x[_subset(len(real_train_x), len(heldout), rng)]
    return {
        "images": {"synthetic": len(synthetic), "heldout": len(heldout), "train": len(real_train_x)},
        "synthetic_mean": float(to_train.mean()),
        "synthetic_median": float(np.median(to_train)),
        "synthetic_p5": float(np.quantile(to_train, 0.05)),
        "heldout_mean": float(floor.mean()),
        "heldout_median": float(np.median(floor)),
        "heldout_p5": float(np.quantile(floor, 0.05)),
        "ratio_to_floor": float(to_train.mean() / floor.mean()) if floor.mean() > 0 else None,
        "exact_copies": int((to_train < COPY_TOLERANCE).sum()),
        "share_below_heldout_p5": float((to_train < np.quantile(floor, 0.05)).mean()),
        "histogram": {
            "edges": edges.tolist(),
            "synthetic": np.histogram(to_train, edges)[0].tolist(),
            "heldout": np.histogram(floor, edges)[0].tolist(),
        },
        "membership_auc": distance_membership_auc(members, heldout, synthetic),
    }


def _frechet(
    real_train_x: np.ndarray,
    real_train_y: np.ndarray,
    synthetic_x: np.ndarray,
    real_test_x: np.ndarray,
    real_test_y: np.ndarray,
    n_classes: int,
    seed: int,
) -> dict[str, Any] | None:
    """The Fréchet feature distance, or None where the feature network cannot be trained (images
    under MIN_SIDE pixels a side, or real training images of a single class)."""
    if min(real_train_x.shape[2:]) < MIN_SIDE or len(np.unique(real_train_y)) < 2:
        return None
    space = fit_feature_space(real_train_x, real_train_y, n_classes, seed=seed)
    return feature_distance(space, synthetic_x, real_test_x, real_test_y, seed=seed)


def evaluate_images(
    real_train_x: np.ndarray,
    real_train_y: np.ndarray,
    synthetic_x: np.ndarray,
    synthetic_y: np.ndarray,
    real_test_x: np.ndarray,
    real_test_y: np.ndarray,
    n_classes: int,
    *,
    students: Sequence[str] = STUDENTS,
    seed: int = 0,
    cnn_epochs: int = CNN_EPOCHS,
    max_nearest: int = MAX_NEAREST,
    frechet: bool = True,
) -> dict[str, Any]:
    """Every measure of the module docstring as plain JSON types (what `dpgan evaluate` saves), and
    the Fréchet feature distance (features.py; `frechet=False` skips it)."""
    check_classes(n_classes)
    arrays = {"real_train_x": real_train_x, "synthetic_x": synthetic_x, "real_test_x": real_test_x}
    real_train_x, synthetic_x, real_test_x = (check_images(a, name) for name, a in arrays.items())
    if not real_train_x.shape[1:] == synthetic_x.shape[1:] == real_test_x.shape[1:]:
        raise InputError("real, synthetic and test images must have the same shape (C, H, W)")
    real_train_y = check_labels(real_train_y, len(real_train_x), n_classes, "real_train_y")
    synthetic_y = check_labels(synthetic_y, len(synthetic_x), n_classes, "synthetic_y")
    real_test_y = check_labels(real_test_y, len(real_test_x), n_classes, "real_test_y")
    utility = image_utility(
        synthetic_x, synthetic_y, real_train_x, real_train_y, real_test_x, real_test_y, n_classes,
        students=students, seed=seed, cnn_epochs=cnn_epochs,
    )  # fmt: skip
    counts = {
        side: np.bincount(y, minlength=n_classes).tolist()
        for side, y in (("real_train", real_train_y), ("synthetic", synthetic_y), ("test", real_test_y))
    }
    metrics = to_jsonable(
        {
            "kind": "image",
            "n_classes": int(n_classes),
            "image_shape": list(real_train_x.shape[1:]),
            "class_counts": counts,
            "students": utility,
            "nearest": memorisation(synthetic_x, real_train_x, real_test_x, max_images=max_nearest, seed=seed),
            "frechet": _frechet(real_train_x, real_train_y, synthetic_x, real_test_x, real_test_y, n_classes, seed)
            if frechet
            else None,
        }
    )
    metrics["headline"] = image_headline(metrics)
    return metrics


# ------------------------------------------------------------------------------------------ figures


__all__ = [
    "STUDENTS",
    "distance_membership_auc",
    "evaluate_images",
    "heldout_floor",
    "image_utility",
    "macro_ovr_auroc",
    "memorisation",
    "nearest_real",
    "student_scores",
]
