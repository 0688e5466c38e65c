"""Checks of the image evaluation's inputs, and the thread limit its torch students run under.

Shared by the students and memorisation (metrics.py) and the Fréchet feature distance
(features.py). Every message names the argument and a shape or a count, never a
pixel or a label value (error text ends up in logs).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import torch

from dpgan.errors import InputError


def check_images(images: np.ndarray, name: str) -> np.ndarray:
    """(N, C, H, W) float in [0, 1] as float32; one line naming the argument otherwise (no values)."""
    array = np.asarray(images)
    if array.ndim != 4:
        raise InputError(f"{name} must be an array of shape (N, C, H, W); it has {array.ndim} dimensions")
    if len(array) == 0:
        raise InputError(f"{name} holds no images")
    if not np.issubdtype(array.dtype, np.floating):
        raise InputError(f"{name} must be float in [0, 1] (divide uint8 images by 255)")
    array = array.astype(np.float32, copy=False)
    if not np.isfinite(array).all():
        raise InputError(f"{name} contains NaN or infinite pixels")
    if array.min() < 0.0 or array.max() > 1.0:
        raise InputError(f"{name} has pixels outside [0, 1] (divide uint8 images by 255)")
    return array


def check_labels(labels: np.ndarray, n: int, n_classes: int, name: str) -> np.ndarray:
    """(n,) integer codes in 0..n_classes-1 as int64."""
    array = np.asarray(labels)
    if array.shape != (n,):
        raise InputError(f"{name} must hold one label per image ({n}); it has shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise InputError(f"{name} must be integer class codes 0..n_classes-1")
    if n and (array.min() < 0 or array.max() >= n_classes):
        raise InputError(f"{name} has codes outside 0..{n_classes - 1} (n_classes = {n_classes})")
    return array.astype(np.int64, copy=False)


def check_classes(n_classes: int) -> None:
    """The number of classes is public metadata given by the caller, at least 2."""
    if not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
        raise InputError("n_classes must be an integer of at least 2")


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Limit torch's intra-op threads for the block and restore the caller's setting afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
