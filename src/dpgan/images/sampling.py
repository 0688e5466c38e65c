"""Sampling a released image model (a GAN's generator or a statistics model: either has
`sample(n, generator, labels)`): post-processing, no privacy cost."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

CHUNK = 4096  # images generated at once: memory stays flat in n


def render_samples(
    G: Any,
    n: int,
    generator: torch.Generator,
    imposed: torch.Tensor | None,
    input_dtype: str,
    input_rank: int,
    label_names: Sequence[str],
    pixel_range: tuple[float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """n images in the fitted input's form: uint8, or float32 in [0, 1] (in `pixel_range` when the
    fit declared one), as the input was; (n, H, W) for an N×H×W input (C = 1) else (n, C, H, W);
    and their label names (None: unlabelled)."""
    chunks, codes_out = [], []
    for start in range(0, n, CHUNK):
        size = min(CHUNK, n - start)
        part = None if imposed is None else imposed[start : start + size]
        images, codes = G.sample(size, generator, part)
        chunks.append(((images.clamp(-1, 1) + 1) / 2).cpu().numpy())
        if codes is not None:
            codes_out.append(codes.cpu().numpy())
    unit = np.concatenate(chunks)
    if input_dtype == "uint8":
        out = np.round(unit * 255).astype(np.uint8)
    elif pixel_range is None:
        out = unit.astype(np.float32)
    else:
        low, high = pixel_range
        out = np.clip(low + unit.astype(np.float64) * (high - low), low, high).astype(np.float32)
    if input_rank == 3:  # one channel (an N×H×W input has C = 1): drop its axis again
        out = out[:, 0]
    labels = np.array(label_names)[np.concatenate(codes_out)] if codes_out else None
    return out, labels


__all__ = ["render_samples"]
