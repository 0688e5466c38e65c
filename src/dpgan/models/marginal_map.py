"""A DP copula's map from normal scores back to values, in torch (dpgan.statistics.copula releases
the CDFs; the series and image statistics models draw scores and map them here, as numpy's interp does),
and the matched marginals' map from a Gaussian's own draws to the released marginal (cdf_at, then
quantile_values).

Post-processing of the released CDFs: no data is read."""

from __future__ import annotations

import torch


def quantile_values(quantiles: torch.Tensor, cdfs: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
    """Quantiles (n, C, L) in [0, 1] → values (n, C, L) through the inverse of each row's and
    channel's CDF (n, C, bins + 1) on the equal bins `edges`, linear within a bin."""
    bins = cdfs.shape[-1] - 1
    quantiles = quantiles.contiguous()
    upper = torch.searchsorted(cdfs.contiguous(), quantiles).clamp(1, bins)
    low, high = cdfs.gather(2, upper - 1), cdfs.gather(2, upper)
    share = ((quantiles - low) / (high - low).clamp_min(1e-12)).clamp(0.0, 1.0)
    return edges[upper - 1] + share * (edges[upper] - edges[upper - 1])


def inverse_cdf(scores: torch.Tensor, cdfs: torch.Tensor, edges: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Scores (n, C, L) in [-1, 1] → values (n, C, L): Φ(q·score) through the inverse of each row's
    and channel's CDF (n, C, bins + 1) on the equal bins `edges`, linear within a bin."""
    return quantile_values(torch.special.ndtr(scores * scale), cdfs, edges)


def cdf_at(values: torch.Tensor, cdfs: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
    """Values (n, L) → each row's CDF (n, bins + 1), tabulated at the equal bins `edges`, at them:
    linear within a bin, the ends outside (numpy's interp)."""
    bins = cdfs.shape[-1] - 1
    upper = torch.searchsorted(edges, values.contiguous()).clamp(1, bins)
    left, right = edges[upper - 1], edges[upper]
    share = ((values - left) / (right - left)).clamp(0.0, 1.0)
    return cdfs.gather(1, upper - 1) * (1.0 - share) + cdfs.gather(1, upper) * share


__all__ = ["cdf_at", "inverse_cdf", "quantile_values"]
