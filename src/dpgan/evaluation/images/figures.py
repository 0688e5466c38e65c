"""The image report's figures: sample grids per class, nearest real images, distance histograms."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from dpgan.evaluation.images.inputs import check_classes, check_images, check_labels
from dpgan.evaluation.images.metrics import nearest_real
from dpgan.evaluation.plots import REAL_COLOUR, SYNTH_COLOUR, to_png_base64


def _tile(image: np.ndarray) -> np.ndarray:
    """(C, H, W) → what imshow takes: (H, W) for one channel, (H, W, C) for three."""
    return image[0] if image.shape[0] == 1 else np.moveaxis(image, 0, -1)


def _show(ax: Any, image: np.ndarray) -> None:
    ax.imshow(_tile(image), cmap="gray" if image.shape[0] == 1 else None, vmin=0.0, vmax=1.0)
    ax.set_xticks([])
    ax.set_yticks([])


def sample_grid(
    images: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    per_class: int = 10,
    *,
    class_names: Sequence[str] | None = None,
    title: str = "",
) -> str:
    """One row per class with up to per_class of its images (the first ones; a row stays blank
    where a class has none), as a base64 PNG. One mosaic, one imshow: fast for 10 × 10 grids."""
    check_classes(n_classes)
    images = check_images(images, "images")
    labels = check_labels(labels, len(images), n_classes, "labels")
    channels, height, width = images.shape[1:]
    pad = max(1, height // 14)
    mosaic = np.ones((n_classes * (height + pad) - pad, per_class * (width + pad) - pad, channels), np.float32)
    for row in range(n_classes):
        for col, index in enumerate(np.flatnonzero(labels == row)[:per_class]):
            y, x = row * (height + pad), col * (width + pad)
            mosaic[y : y + height, x : x + width] = np.moveaxis(images[index], 0, -1)
    fig = Figure(figsize=(0.45 * per_class + 0.8, 0.45 * n_classes + 0.5))
    ax = fig.add_subplot()
    ax.imshow(mosaic[:, :, 0] if channels == 1 else mosaic, cmap="gray" if channels == 1 else None, vmin=0, vmax=1)
    names = list(class_names) if class_names is not None else [str(c) for c in range(n_classes)]
    ax.set_yticks([r * (height + pad) + height / 2 for r in range(n_classes)], [n[:12] for n in names], fontsize=7)
    ax.set_xticks([])
    if title:
        ax.set_title(title, fontsize=9)
    return to_png_base64(fig)


def nearest_figure(synthetic: np.ndarray, real: np.ndarray, n: int = 8, *, seed: int = 0, title: str = "") -> str:
    """Generated images (top row) above their nearest real training images (bottom row), with the
    L2 distance: the memorisation figure of the seed papers. n generated images drawn at random."""
    synthetic, real = check_images(synthetic, "synthetic"), check_images(real, "real")
    chosen = synthetic[np.random.default_rng(seed).choice(len(synthetic), min(n, len(synthetic)), replace=False)]
    distances, indices = nearest_real(chosen, real)
    fig = Figure(figsize=(1.1 * len(chosen), 2.5))
    axes = fig.subplots(2, len(chosen), squeeze=False)
    for col in range(len(chosen)):
        _show(axes[0, col], chosen[col])
        _show(axes[1, col], real[indices[col, 0]])
        axes[1, col].set_title(f"{distances[col, 0]:.2f}", fontsize=7)
    axes[0, 0].set_ylabel("generated", fontsize=7)
    axes[1, 0].set_ylabel("nearest real", fontsize=7)
    fig.suptitle(title or "generated images and their nearest real training images (L2)", fontsize=9)
    return to_png_base64(fig)


def distance_histogram(histogram: dict[str, list[float]]) -> str:
    """The shared-bin histogram of `memorisation`: synthetic → train against held-out → train."""
    edges = np.asarray(histogram["edges"])
    widths = np.diff(edges)
    fig = Figure(figsize=(4.2, 2.8))
    ax = fig.add_subplot()
    for side, colour, label in (
        ("heldout", REAL_COLOUR, "held-out real (floor)"),
        ("synthetic", SYNTH_COLOUR, "synthetic"),
    ):
        counts = np.asarray(histogram[side], dtype=float)
        density = counts / max(counts.sum(), 1.0) / np.where(widths > 0, widths, 1.0)
        ax.bar(edges[:-1], density, width=widths, align="edge", alpha=0.5, color=colour, label=label)
    ax.set_xlabel("L2 distance to the nearest real training image", fontsize=8)
    ax.set_ylabel("density", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7)
    return to_png_base64(fig)


__all__ = ["distance_histogram", "nearest_figure", "sample_grid"]
