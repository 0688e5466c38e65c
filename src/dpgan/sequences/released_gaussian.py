"""The series' Gaussian statistics models, "gaussian" and "gaussian-copula" (the default): released
arrays that sample, with no network.

The releases are dpgan.statistics' (sensitivities argued there): "gaussian" is the DP Gaussian of
each label's flattened series (dpgan.sequences.baseline) on all of ε; "gaussian-copula" is each
label's DP value histogram per value column at `copula_fraction` of ε, then the DP Gaussian of the
normal scores through it on the rest (dpgan.statistics.copula). With an entity unit every Δ is k
times the series'. What the model holds is what was released, as float32 arrays: the label shares,
each label's mean and (d × d) factor, and for the copula each label's CDF per value column and q,
the score that [-1, 1] scales to. Its files hold those arrays alone (statistics.safetensors) and its
public form (model.json: the length, the value columns, the labels).

Sampling is post-processing of the release, and draws exactly what the models fitted before the
statistics left the GAN's generator drew (so seeded samples are unchanged): per series, normals for
the lead the generator read first (`lead`: its per-step and series-wide noise, drawn and not used)
then d for the Gaussian; the label from the shares; mean + factor · normals, clipped to [-1, 1];
for the copula each value through its label's inverse CDF; and last tanh(atanh(·)) at the edge
1 − 10⁻⁴ (what that generator applied to its base).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from dpgan.model import KindData, check_arrays
from dpgan.models.marginal_map import inverse_cdf
from dpgan.sequences.baseline import gaussian_arguments, square_factors
from dpgan.sequences.plugins import label_shares_tensor, release_gaussian, unit_vectors
from dpgan.sequences.settings import SequenceSettings
from dpgan.statistics.copula import DPGaussianCopula
from dpgan.training.context import FitContext

ATANH_EDGE = 1.0 - 1e-4  # the draw's last map, as the GAN composition applies it to its base
COPULA_EVENT = "Gaussian mean and covariance of the series' normal scores per label (a copula)"


def _tensor(array: Any) -> torch.Tensor:
    return torch.tensor(np.asarray(array), dtype=torch.float32)


def normalised(shares: np.ndarray) -> torch.Tensor:
    """The released label shares as the model holds them: floored at 10⁻³, normalised, then (float32)
    normalised again, as the generator that held them before did."""
    tensor = label_shares_tensor(shares)
    return tensor / tensor.sum()


class ReleasedSeriesGaussian:
    """Per label: shares, mean (d,), factor (d, d); for a copula, CDFs (F, bins + 1) and q."""

    def __init__(
        self,
        name: str,
        *,
        length: int,
        n_values: int,
        n_labels: int,
        lead: int,
        shares: torch.Tensor,
        means: torch.Tensor,
        factors: torch.Tensor,
        cdfs: torch.Tensor | None = None,
        scale: torch.Tensor | None = None,
    ) -> None:
        self.name, self.length, self.n_values, self.n_labels, self.lead = name, length, n_values, n_labels, lead
        self.label_shares = shares  # normalised when released (`normalised`), read back as saved
        self.means, self.factors, self.cdfs, self.scale = means, factors, cdfs, scale
        self.edges = None if cdfs is None else torch.linspace(-1.0, 1.0, cdfs.shape[-1])

    # ------------------------------------------------------------------ release
    @classmethod
    def release(cls, ctx: FitContext, data: KindData, settings: SequenceSettings, name: str) -> ReleasedSeriesGaussian:
        """The model `name`'s releases on all of ε that is left, charged to the fit's ledger."""
        schema = data.details.schema
        n_labels = schema.n_labels
        shape = {
            "length": schema.length,
            "n_values": len(schema.values),
            "n_labels": n_labels,
            "lead": schema.length * settings.step_noise + settings.series_noise,
        }
        if name == "gaussian":
            net = settings
            form = (net.gaussian_basis, net.gaussian_clip, net.gaussian_shrink, net.gaussian_residual)
            gauss = release_gaussian(ctx, data, 1.0, n_labels, whole=True, form=form)
            means, factors = _tensor(np.stack(gauss.means)), _tensor(np.stack(gauss.factors))
            return cls(name, **shape, shares=normalised(gauss.shares), means=means, factors=factors)
        scores_form = (settings.copula_basis, settings.copula_clip, settings.gaussian_shrink, settings.copula_residual)
        copula = release_copula(ctx, data, settings.copula_fraction, n_labels, settings.copula_bins, scores_form)
        gaussian = copula.gaussian
        return cls(
            name, **shape, shares=normalised(copula.shares), means=_tensor(np.stack(gaussian.means)),
            factors=_tensor(np.stack(square_factors(gaussian))), cdfs=_tensor(np.stack(copula.cdfs)),
            scale=torch.tensor(copula.scale, dtype=torch.float32),
        )  # fmt: skip

    # ------------------------------------------------------------------ sample
    @torch.no_grad()
    def sample(
        self, n: int, generator: torch.Generator, labels: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """n scaled series (n, T, F) in (-1, 1) and their label codes (drawn from the shares, or imposed)."""
        d = self.length * self.n_values
        z = torch.randn(n, self.lead + d, generator=generator, device=generator.device)
        if self.n_labels and labels is None:
            labels = torch.multinomial(self.label_shares, n, replacement=True, generator=generator)
        codes = labels if self.n_labels else None
        return self.values(z, codes), codes

    def values(self, z: torch.Tensor, codes: torch.Tensor | None) -> torch.Tensor:
        """Noise (n, lead + d) and codes → the draws (n, T, F)."""
        n, d = z.shape[0], self.length * self.n_values
        normals = z[:, z.shape[1] - d :]
        index = codes if codes is not None else torch.zeros(n, dtype=torch.long, device=z.device)
        draw = (self.means[index] + torch.einsum("nij,nj->ni", self.factors[index], normals)).clamp(-1.0, 1.0)
        if self.cdfs is not None:
            assert self.edges is not None and self.scale is not None
            columns = draw.reshape(n, -1, self.n_values).transpose(1, 2)  # (n, F, T)
            mapped = inverse_cdf(columns, self.cdfs[index], self.edges, self.scale)
            draw = mapped.transpose(1, 2).reshape(n, -1)
        draw = draw.reshape(n, self.length, self.n_values)
        return torch.tanh(torch.atanh(draw.clamp(-ATANH_EDGE, ATANH_EDGE)))

    def to(self, device: str | torch.device) -> ReleasedSeriesGaussian:
        """The arrays moved to `device` (a fit on a GPU releases on the CPU: dpgan.devices)."""
        for key in ("label_shares", "means", "factors", "cdfs", "scale", "edges"):
            value = getattr(self, key)
            if value is not None:
                setattr(self, key, value.to(device))
        return self

    # ------------------------------------------------------------------ files
    def form(self) -> dict[str, Any]:
        """The public form model.json holds beside the arrays."""
        return {"length": self.length, "n_values": self.n_values, "n_labels": self.n_labels, "lead": self.lead}

    def state_dict(self) -> dict[str, torch.Tensor]:
        """What was released, and nothing else, by name (what the model's file holds)."""
        out = {"label_shares": self.label_shares, "means": self.means, "factors": self.factors}
        if self.cdfs is not None and self.scale is not None:
            out |= {"cdfs": self.cdfs, "scale": self.scale}
        return out

    @classmethod
    def from_files(cls, name: str, form: dict[str, Any], tensors: dict[str, torch.Tensor]) -> ReleasedSeriesGaussian:
        """The model from its files, strictly: every array present, of its form's shape, finite."""
        length, n_values, n_labels, lead = (int(form[key]) for key in ("length", "n_values", "n_labels", "lead"))
        groups, d = max(1, n_labels), length * n_values
        expected = {"label_shares": (groups,), "means": (groups, d), "factors": (groups, d, d)}
        if name == "gaussian-copula":
            bins = tensors["cdfs"].shape[-1] if "cdfs" in tensors and tensors["cdfs"].dim() == 3 else 0
            expected |= {"cdfs": (groups, n_values, bins), "scale": ()}
            if bins < 3:
                raise ValueError("the copula's CDFs need at least two bins")
        check_arrays(tensors, expected)
        if not float(tensors["label_shares"].min()) >= 0 or not float(tensors["label_shares"].sum()) > 0:
            raise ValueError("the label shares must be non-negative, not all zero")
        return cls(
            name, length=length, n_values=n_values, n_labels=n_labels, lead=lead,
            shares=tensors["label_shares"], means=tensors["means"], factors=tensors["factors"],
            cdfs=tensors.get("cdfs"), scale=tensors.get("scale"),
        )  # fmt: skip


def release_copula(
    ctx: FitContext, data: KindData, share: float, n_labels: int, bins: int, form: tuple
) -> DPGaussianCopula:
    """Each label's values, per value column pooled over the steps, in a DP histogram at `share` of ε,
    then the DP Gaussian of the normal scores through it on all of ε that is left
    (dpgan.statistics.copula, where the sensitivities are argued). With an entity unit every Δ is k
    times the series'."""
    values, labels, per_unit, (length, features) = unit_vectors(data, n_labels)
    arguments = gaussian_arguments(length, features, form)
    second = (
        "second moments (Δ d)" if arguments["clip"] is None else f"centred second moments (Δ {arguments['clip']:.3g}²)"
    )
    residual = ""
    if "residual_clip" in arguments:
        residual = f", their residual's spectrum (Δ {arguments['residual_clip']:.3g}²)"
    entity = f"; a unit's {per_unit} series: every Δ × {per_unit}" if per_unit > 1 else ""
    return DPGaussianCopula(-1.0, 1.0, bins=bins, channels=features, **arguments).fit(
        values,
        labels,
        n_labels,
        ctx.rng,
        ledger=ctx.ledger,
        histogram_target=ctx.target(share),
        target=ctx.budget.whole_target(),
        event=COPULA_EVENT,
        note=f"per label: count (Δ 1), sum (Δ √d), {second} of the normal scores{residual}; labels in parallel{entity}",
        per_unit=per_unit,
    )


__all__ = ["ATANH_EDGE", "COPULA_EVENT", "ReleasedSeriesGaussian", "release_copula"]
