"""A DP copula's map from normal scores back to values, in torch (dpgan.statistics.copula releases
the CDFs; the series and image generators draw scores and map them here, as numpy's interp does).

Post-processing of the released CDFs: no data is read."""

from __future__ import annotations

import torch


def inverse_cdf(scores: torch.Tensor, cdfs: torch.Tensor, edges: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Scores (n, C, L) in [-1, 1] → values (n, C, L): Φ(q·score) through the inverse of each row's
    and channel's CDF (n, C, bins + 1) on the equal bins `edges`, linear within a bin."""
    bins = cdfs.shape[-1] - 1
    quantiles = torch.special.ndtr(scores * scale).contiguous()
    upper = torch.searchsorted(cdfs.contiguous(), quantiles).clamp(1, bins)
    low, high = cdfs.gather(2, upper - 1), cdfs.gather(2, upper)
    share = ((quantiles - low) / (high - low).clamp_min(1e-12)).clamp(0.0, 1.0)
    return edges[upper - 1] + share * (edges[upper] - edges[upper - 1])


__all__ = ["inverse_cdf"]
