"""Sampling a released image model (a GAN's generator or a statistics model: either has
`sample(n, generator, labels)`): post-processing, no privacy cost."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

CHUNK = 4096  # images generated at once: memory stays flat in n


def sample_chunks(
    G: Any,
    n: int,
    generator: torch.Generator,
    imposed: torch.Tensor | None,
    input_dtype: str,
    input_rank: int,
    pixel_range: tuple[float, float] | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """n images in the fitted input's form, CHUNK at a time, with their label codes (None:
    unlabelled): uint8, or float32 in [0, 1] (in `pixel_range` when the fit declared one), as the
    input was; (size, H, W) for an N×H×W input (C = 1) else (size, C, H, W). Memory flat in n."""
    for start in range(0, n, CHUNK):
        size = min(CHUNK, n - start)
        part = None if imposed is None else imposed[start : start + size]
        images, codes = G.sample(size, generator, part)
        unit = ((images.clamp(-1, 1) + 1) / 2).cpu().numpy()
        if input_dtype == "uint8":
            out = np.round(unit * 255).astype(np.uint8)
        elif pixel_range is None:
            out = unit.astype(np.float32)
        else:
            low, high = pixel_range
            out = np.clip(low + unit.astype(np.float64) * (high - low), low, high).astype(np.float32)
        if input_rank == 3:  # one channel (an N×H×W input has C = 1): drop its axis again
            out = out[:, 0]
        yield out, None if codes is None else codes.cpu().numpy()


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
    """n images in the fitted input's form (`sample_chunks`, joined) and their label names (None:
    unlabelled)."""
    chunks, codes_out = [], []
    for images, codes in sample_chunks(G, n, generator, imposed, input_dtype, input_rank, pixel_range):
        chunks.append(images)
        if codes is not None:
            codes_out.append(codes)
    labels = np.array(label_names)[np.concatenate(codes_out)] if codes_out else None
    return np.concatenate(chunks), labels


__all__ = ["CHUNK", "render_samples", "sample_chunks"]
