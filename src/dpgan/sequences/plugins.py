"""The sequence kind's plug-ins: DP statistics released before the GAN, handed to the generator.

Each is one release at its share of ε, calibrated after the releases before it (dpgan.fit runs
them in order and moves the spent share on), and what it gives G is post-processing of it:
- `StepStatisticsPlugin`: per-label, per-step means and spreads (dpgan.sequences.anchor) as G's
  label profile and/or its step anchor;
- `GaussianBasePlugin`: the DP Gaussian (dpgan.sequences.baseline: per-label mean and covariance
  factor, its noise scaled to the unit's k series) as G's base, a gated LSTM residual on top
  ("gaussian+gan"; the statistics models alone are dpgan.sequences.released_gaussian's);
- `MomentAnchorPlugin`: the same Gaussian's moments as an anchor on G's loss (series unit only);
- `SeriesLabelGuidePlugin`: a DP-SGD classifier of the label from the values guiding G (series unit).
The moment anchor measures one series per unit: with an entity column a unit owns several series,
so `SequenceKind` refuses it there (public facts only, before any read).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from dpgan.fit import KindData
from dpgan.sequences.anchor import MomentAnchorHook, StepStatisticsHook, measure_step_statistics
from dpgan.sequences.baseline import PLAIN_FORM, DPGaussianSeries, GaussianForm
from dpgan.sequences.codec import SeriesSet
from dpgan.sequences.label_guide import LabelGuideHook
from dpgan.statistics.blocks import VectorBlocks
from dpgan.training.aux_classifier import fit_label_guide
from dpgan.training.config import TrainingConfig
from dpgan.training.context import FitContext
from dpgan.training.gan_loop import GeneratorHook


def _tensor(array: np.ndarray) -> torch.Tensor:
    return torch.tensor(np.asarray(array), dtype=torch.float32)


@dataclass(frozen=True)
class StepStatisticsPlugin:
    """Per-label, per-step DP statistics: G's label shares and mean profile (`profile`) and/or the
    step anchor on its loss (`anchor`)."""

    share: float
    n_values: int
    n_labels: int
    profile: bool
    anchor: bool
    warmup: int
    weight: float

    def release(self, ctx: FitContext, data: KindData, generator: torch.nn.Module) -> Sequence[GeneratorHook]:
        stats = measure_step_statistics(
            data.units, self.n_values, self.n_labels, share=ctx.target(self.share), ledger=ctx.ledger, rng=ctx.rng
        )
        if self.profile:
            generator.set_profile(stats.shares, stats.mean)  # type: ignore[operator]
        return (StepStatisticsHook(stats, self.n_values, self.warmup, self.weight),) if self.anchor else ()


def release_gaussian(
    ctx: FitContext,
    data: KindData,
    share: float,
    n_labels: int,
    whole: bool = False,
    form: GaussianForm = PLAIN_FORM,
) -> DPGaussianSeries:
    """The DP Gaussian of the units' series (the baseline's mechanism; its sensitivities times the
    series per unit), calibrated so that the ledger reaches the spent share plus `share` of ε, or
    (`whole`) all of ε: the release that is the whole model, nothing after it; `form`: the public
    basis and clip shares and the shrink (dpgan.sequences.baseline)."""
    budget = ctx.budget
    target = budget.whole_target() if whole else ctx.target(share)
    values, labels, per_unit, shape = unit_vectors(data, n_labels)
    basis_fraction, clip_fraction, shrink, residual_fraction = form
    model = DPGaussianSeries(
        budget,
        basis_fraction=basis_fraction,
        clip_fraction=clip_fraction,
        shrink=shrink,
        residual_fraction=residual_fraction,
    )
    return model.fit_vectors(
        values, labels, n_labels, ctx.rng, shape=shape, ledger=ctx.ledger, share=target, per_unit=per_unit
    )


def unit_vectors(
    data: KindData, n_labels: int
) -> tuple[np.ndarray | VectorBlocks, np.ndarray | None, int, tuple[int, int]]:
    """The units' series flattened for a statistics model: (count, T·F) values, or a file's blocks
    (dpgan.statistics.blocks), their label codes (None with blocks: they travel in the blocks), k
    the series per unit, and (T, F)."""
    blocks = getattr(data.details, "blocks", None)
    if blocks is not None:  # a file's series: one unit each
        schema = data.details.schema
        return blocks, None, 1, (schema.length, len(schema.values))
    units, per_unit = unit_series(data, n_labels)
    count, length, features = units.values.shape
    return units.values.reshape(count, length * features), units.labels, per_unit, (length, features)


def unit_series(data: KindData, n_labels: int) -> tuple[SeriesSet, int]:
    """The series the units hold, as one set, and k, the series per unit: one unit (a series, or an
    entity's k series drawn by dpgan.sequences.fit_kind.series_units) is what the Gaussian's
    sensitivities are counted in. With the series unit this is the kept series in order."""
    units = data.units.detach().cpu().numpy()
    count, per_unit, length, channels = units.shape
    features = channels - n_labels
    values = units[..., :features].reshape(count * per_unit, length, features)
    labels = units[:, :, 0, features:].argmax(axis=-1).reshape(-1) if n_labels else None
    return SeriesSet(values, labels, None, data.details.series.tally), per_unit


def label_shares_tensor(released: np.ndarray) -> torch.Tensor:
    """Released label shares as G draws from them: each at least 10⁻³, normalised (float32)."""
    shares = np.maximum(released, 1e-3)
    return _tensor(shares / shares.sum())


@dataclass(frozen=True)
class GaussianBasePlugin:
    """G's series are draws of the DP Gaussian plus its residual (dpgan.models.sequence_units): the
    "gaussian+gan" model, a GAN on the statistics. With `anchor_weight` > 0 the residual is held to
    the Gaussian's own released mean and covariance (the moment penalty, no warm start: G starts at
    its base), so the GAN can add only what those moments do not pin down (modes, spikes, shapes);
    post-processing of the one release, free."""

    share: float
    n_labels: int
    n_values: int = 1
    anchor_weight: float = 0.0
    form: GaussianForm = PLAIN_FORM  # basis, clip, shrink, residual (settings)

    def release(self, ctx: FitContext, data: KindData, generator: torch.nn.Module) -> Sequence[GeneratorHook]:
        gauss = release_gaussian(ctx, data, self.share, self.n_labels, form=self.form)
        shares, means = label_shares_tensor(gauss.shares), _tensor(np.stack(gauss.means))
        generator.set_base(shares, means, _tensor(np.stack(gauss.factors)))  # type: ignore[operator]
        if self.anchor_weight <= 0:
            return ()
        covariances = _tensor(np.stack(gauss.covariances()))
        return (MomentAnchorHook(shares, means, covariances, self.n_values, 0, self.anchor_weight),)


@dataclass(frozen=True)
class MomentAnchorPlugin:
    """The DP Gaussian's per-label means and covariances as an anchor on G's loss."""

    share: float
    n_values: int
    n_labels: int
    warmup: int
    weight: float

    def release(self, ctx: FitContext, data: KindData, generator: torch.nn.Module) -> Sequence[GeneratorHook]:
        gauss = release_gaussian(ctx, data, self.share, self.n_labels)
        means, covariances = _tensor(np.stack(gauss.means)), _tensor(np.stack(gauss.covariances()))
        shares = label_shares_tensor(gauss.shares)
        return (MomentAnchorHook(shares, means, covariances, self.n_values, self.warmup, self.weight),)


@dataclass(frozen=True)
class SeriesLabelGuidePlugin:
    """A DP-SGD classifier of the label from the values (one record per series), trained before the
    critic, whose cross-entropy on G's series joins G's loss (dpgan.sequences.label_guide)."""

    share: float
    n_values: int
    n_labels: int
    epochs: float
    weight: float
    config: TrainingConfig

    def release(self, ctx: FitContext, data: KindData, generator: torch.nn.Module) -> Sequence[GeneratorHook]:
        units = data.units
        classifier = fit_label_guide(
            ctx,
            units[:, 0, :, : self.n_values].reshape(units.shape[0], -1),
            units[:, 0, 0, self.n_values :].argmax(dim=1),
            self.n_labels,
            rows=data.rows,
            epochs=self.epochs,
            hidden=(128,),
            config=self.config,
            share=self.share,
            note="Poisson; each series' cross-entropy gradient clipped",
        )
        return (LabelGuideHook(classifier, self.n_values, self.weight),)


__all__ = [
    "GaussianBasePlugin",
    "MomentAnchorPlugin",
    "SeriesLabelGuidePlugin",
    "StepStatisticsPlugin",
    "label_shares_tensor",
    "release_gaussian",
    "unit_series",
    "unit_vectors",
]
