"""How realistic synthetic images look as a whole: a Fréchet distance in a classifier's feature space.

The students (metrics.py) reward label-typical features: a generator whose shoes are smears
can still teach a classifier what a shoe's silhouette is. The Fréchet distance compares the whole
distribution of images instead, as FID does, in the feature space of a network trained on the real
training images (FID's Inception network needs downloaded weights; this one is trained here, offline,
on the data at hand, so its numbers compare runs on the same data set, not with published FIDs):

    FD = ‖μ_s − μ_r‖² + tr(Σ_s + Σ_r − 2 (Σ_r^½ Σ_s Σ_r^½)^½)

between Gaussians fitted to the features of synthetic and of real held-out images. The estimate is
biased upwards at small sample sizes, so it is always read against a floor computed at the same
size: the real held-out images are split in two halves, one the reference, the other scored against
it like a synthetic set (what a perfect generator would score). Lower is better; the floor is the
best reachable.

Like the rest of the suite this reads private images to score a release; its output is for the
data holder and it is not a DP mechanism.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import torch

from dpgan.errors import InputError
from dpgan.evaluation.images.inputs import check_classes, check_images, check_labels, torch_threads

FEATURE_WIDTH = 64  # the penultimate layer: the features the distance is measured in
FEATURE_EPOCHS = 10
FEATURE_THREADS = 1
MAX_FEATURE_IMAGES = 5000  # images per side; the floor and the synthetic score use the same count
BATCH = 64
MIN_SIDE = 4  # student_convs pools twice: smaller images have no pixels left
Model = TypeVar("Model", bound=torch.nn.Module)


def student_convs(channels: int) -> list[torch.nn.Module]:
    """Two 3×3 conv layers (16 and 32 channels, ReLU, 2×2 max-pool): the student CNN's and the
    feature network's front; an (H, W) image (H, W ≥ MIN_SIDE) leaves it as 32 maps of (H // 4, W // 4)."""
    return [
        torch.nn.Conv2d(channels, 16, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
    ]


class FeatureCNN(torch.nn.Module):
    """The student CNN's conv layers, then a FEATURE_WIDTH-unit ReLU layer (the features) and the
    class logits."""

    def __init__(self, channels: int, height: int, width: int, n_classes: int) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            *student_convs(channels),
            torch.nn.Flatten(),
            torch.nn.Linear(32 * (height // 4) * (width // 4), FEATURE_WIDTH),
            torch.nn.ReLU(),
        )
        self.head = torch.nn.Linear(FEATURE_WIDTH, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def train_classifier(build: Callable[[], Model], x: np.ndarray, y: np.ndarray, *, seed: int, epochs: int) -> Model:
    """Train build() with Adam (lr 1e-3, batch 64, cross-entropy) on CPU; returned in eval mode.

    Seeded without touching the caller's RNG: the weights are initialised inside fork_rng (global
    state restored on exit) and the batches are shuffled by an explicit generator. The students'
    CNN and the feature network both train here."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = build()
        optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
        generator = torch.Generator().manual_seed(seed)
        inputs, targets = torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(y)
        for _ in range(epochs):
            order = torch.randperm(len(inputs), generator=generator)
            for start in range(0, len(inputs), BATCH):
                batch = order[start : start + BATCH]
                optimiser.zero_grad()
                torch.nn.functional.cross_entropy(model(inputs[batch]), targets[batch]).backward()
                optimiser.step()
    return model.eval()


def in_chunks(function: Callable[[torch.Tensor], torch.Tensor], x: np.ndarray, chunk: int = 1024) -> torch.Tensor:
    """function applied to x a block of images at a time, without gradients (the students' CNN
    predictions and the feature network's features)."""
    with torch.no_grad():
        tensor = torch.from_numpy(np.ascontiguousarray(x))
        return torch.cat([function(tensor[i : i + chunk]) for i in range(0, len(tensor), chunk)])


@dataclass(frozen=True)
class FeatureSpace:
    """A feature network trained on real labelled images; `embed` maps (N, C, H, W) images in
    [0, 1] to (N, FEATURE_WIDTH) features. Trained once, it scores any number of synthetic sets."""

    network: FeatureCNN
    image_shape: tuple[int, int, int]

    def embed(self, images: np.ndarray) -> np.ndarray:
        with torch_threads(FEATURE_THREADS):
            return in_chunks(self.network.features, images).double().numpy()

    def accuracy(self, features: np.ndarray, labels: np.ndarray) -> float:
        """The network's accuracy on images given by their `embed` features (the float32 features
        round-trip float64 exactly, so this is the network's own prediction)."""
        with torch.no_grad():
            logits = self.network.head(torch.from_numpy(features).float())
        return float((logits.argmax(dim=1).numpy() == labels).mean())


def fit_feature_space(
    real_train_x: np.ndarray, real_train_y: np.ndarray, n_classes: int, *, seed: int = 0, epochs: int = FEATURE_EPOCHS
) -> FeatureSpace:
    """Train the feature network to classify the real training images: the labels make its features
    about what the images show rather than pixel noise, and also weigh class-typical shapes over
    within-class detail (bench/RESULTS.md §17g's reference table shows how much)."""
    check_classes(n_classes)
    x = check_images(real_train_x, "real_train_x")
    y = check_labels(real_train_y, len(x), n_classes, "real_train_y")
    _, channels, height, width = x.shape
    if min(height, width) < MIN_SIDE:
        raise InputError(f"the feature network needs images of at least {MIN_SIDE}×{MIN_SIDE} pixels")
    with torch_threads(FEATURE_THREADS):
        network = train_classifier(
            lambda: FeatureCNN(channels, height, width, n_classes), x, y, seed=seed, epochs=epochs
        )
    return FeatureSpace(network, (channels, height, width))


def _psd_root(matrix: np.ndarray) -> np.ndarray:
    """The symmetric square root of a symmetric positive semi-definite matrix (eigenvalues below 0,
    which only rounding makes, are taken as 0)."""
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    return (vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The Fréchet (2-Wasserstein) distance, squared, between Gaussians fitted to the rows of a (n, d)
    and b (m, d), n, m ≥ 2.

    tr((Σ_a Σ_b)^½) is computed as tr((Σ_a^½ Σ_b Σ_a^½)^½): the two matrices have the same eigenvalues
    and the second is symmetric, so a symmetric eigensolver gives it exactly even when the
    covariances are singular (fewer images than features), where a general matrix square root of
    Σ_a Σ_b turns complex or inaccurate."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or len(a) < 2 or len(b) < 2:
        raise InputError("the Fréchet distance needs two (n, d) feature arrays with n ≥ 2 and the same d")
    cov_a, cov_b = np.atleast_2d(np.cov(a, rowvar=False)), np.atleast_2d(np.cov(b, rowvar=False))
    root_a = _psd_root(cov_a)
    middle = root_a @ cov_b @ root_a
    cross = np.sqrt(np.clip(np.linalg.eigvalsh((middle + middle.T) / 2), 0.0, None)).sum()
    shift = float(((a.mean(axis=0) - b.mean(axis=0)) ** 2).sum())
    return max(shift + float(np.trace(cov_a) + np.trace(cov_b) - 2.0 * cross), 0.0)


def feature_distance(
    space: FeatureSpace,
    synthetic_x: np.ndarray,
    real_test_x: np.ndarray,
    real_test_y: np.ndarray,
    *,
    seed: int = 0,
    max_images: int = MAX_FEATURE_IMAGES,
) -> dict[str, Any]:
    """The synthetic images' Fréchet distance to one half of the real held-out images, next to the
    other half's (the floor), at the same number of images n; and the feature network's accuracy on
    the reference half (how much its features know about the classes). Distances are None when
    fewer than 2 images per side are available."""
    synthetic = check_images(synthetic_x, "synthetic_x")
    test = check_images(real_test_x, "real_test_x")
    labels = check_labels(real_test_y, len(test), int(space.network.head.out_features), "real_test_y")
    if not synthetic.shape[1:] == test.shape[1:] == space.image_shape:
        raise InputError("synthetic, held-out and feature-network images must have the same shape (C, H, W)")
    if max_images < 2:
        raise InputError("max_images must be at least 2")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(test))
    half = len(test) // 2
    n = min(half, len(synthetic), max_images)
    reference, floor_side = order[:n], order[half : half + n]
    picked = np.sort(rng.choice(len(synthetic), n, replace=False)) if n else np.arange(0)
    out: dict[str, Any] = {"images": int(n), "features": FEATURE_WIDTH, "synthetic": None, "heldout": None}
    reference_features = space.embed(test[reference]) if n else None
    out["feature_net_accuracy"] = space.accuracy(reference_features, labels[reference]) if n else None
    if n >= 2:
        out["synthetic"] = frechet_distance(space.embed(synthetic[picked]), reference_features)
        out["heldout"] = frechet_distance(space.embed(test[floor_side]), reference_features)
    floor = out["heldout"]
    out["ratio_to_floor"] = out["synthetic"] / floor if floor else None
    return out


__all__ = [
    "FEATURE_WIDTH",
    "MIN_SIDE",
    "FeatureCNN",
    "FeatureSpace",
    "student_convs",
    "feature_distance",
    "fit_feature_space",
    "frechet_distance",
    "in_chunks",
    "train_classifier",
]
