"""A DP copula's map from normal scores back to values, in torch (dpgan.statistics.copula releases
the CDFs; the series and image generators draw scores and map them here, as numpy's interp does),
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


def register_marginal(module: torch.nn.Module, bins: int, cdf_shape: tuple[int, ...], end_atoms: bool = False) -> None:
    """A generator's copula buffers, saved with the model: the cells' edges on [-1, 1] (`bins` equal
    bins, and with `end_atoms` a zero-width cell at each end first: dpgan.statistics.matched), the
    CDFs (`cdf_shape` + (edges,), uniform until a release sets them) and q, the score [-1, 1] scales to."""
    edges = torch.linspace(-1.0, 1.0, bins + 1)
    if end_atoms:
        edges = torch.cat([edges[:1], edges, edges[-1:]])
    module.register_buffer("marginal_edges", edges)
    module.register_buffer("marginal_cdfs", torch.linspace(0.0, 1.0, len(edges)).repeat(*cdf_shape, 1))
    module.register_buffer("marginal_scale", torch.tensor(1.0))


@torch.no_grad()
def set_marginal(module: torch.nn.Module, cdfs: torch.Tensor, scale: float) -> None:
    """A copula's released CDFs and q into the buffers `register_marginal` made."""
    if not getattr(module, "marginal_bins", 0):
        raise ValueError("this generator was built without a copula's marginal")
    module.marginal_cdfs.copy_(cdfs.reshape(module.marginal_cdfs.shape))  # type: ignore[operator, union-attr]
    module.marginal_scale.fill_(scale)  # type: ignore[operator, union-attr]


__all__ = ["cdf_at", "inverse_cdf", "quantile_values", "register_marginal", "set_marginal"]
