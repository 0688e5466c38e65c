"""The sequence kind in the fit pipeline (dpgan.fit): its data releases, networks, plug-ins, record.

The data releases, each charged to the fit's ledger:
1. what the schema leaves unknown (value bounds, the label set) is released with DP
   (dpgan.sequences.dp_schema: minima/maxima histograms, Gaussian partition selection), then the
   series are scaled with the completed schema, clipped to its bounds, and those whose label was
   not released are dropped;
2. one Gaussian release of the unit counts (units kept, units dropped per reason, after 1): adding
   or removing one unit (a series, or an entity with all its series) changes one count by 1, so
   sensitivity 1 (dpgan.privacy.unit_rule). The kept count N̂ sets the Poisson rate q = L/N̂ and the
   step count; the dropped counts are the report's. A fit on no readable series still runs (warned);
3. units are built: one series each, or, with an entity column, `max_series_per_entity` series
   drawn at random (with replacement when an entity has fewer) from each entity's complete series,
   so one entity is one unit however many series it owns: the accountant's neighbour is one entity.
Then the model (dpgan.model): a statistics model (the default "gaussian-copula", "gaussian", ...:
dpgan.sequences.statistics_models) releases on all of ε that is left, with no network; the GAN model
("gan", "gaussian+gan") releases its plug-ins (dpgan.sequences.plugins), then trains WGAN-GP with
DP-SGD on the critic through the engine.

An .npy file (dpgan.sequences.series_file.SeriesFile) is read a block at a time: the same releases,
in the same order, each sum added over the blocks (and torchrun's ranks) before its noise; the
statistics model reads the encoded blocks (`SeriesDetails.blocks`). The GAN models hold their
series in memory: the synthesizer refuses them on a file before anything is read.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from dpgan.devices import to_device
from dpgan.errors import DPGanWarning, InputError
from dpgan.fit import KindData, Plugin, register_kind
from dpgan.model import GANModel, Model, ReleasedModel
from dpgan.models.sequence_units import SeriesUnitCritic, SeriesUnitGenerator
from dpgan.privacy.unit_rule import ReleasedTally, none_usable_note, release_tally
from dpgan.sequences.codec import RawSeries, SeriesSet, encode
from dpgan.sequences.describe import dp_bounds, dropped_policy
from dpgan.sequences.dp_schema import complete_schema
from dpgan.sequences.plugins import (
    GaussianBasePlugin,
    MomentAnchorPlugin,
    SeriesLabelGuidePlugin,
    StepStatisticsPlugin,
)
from dpgan.sequences.schema import SequenceSchema
from dpgan.sequences.series_file import SeriesBlocks
from dpgan.sequences.settings import COUNT_EVENT, COUNT_SHARE, SequenceSettings
from dpgan.sequences.statistics_models import SeriesStatisticsModel
from dpgan.statistics.blocks import VectorBlocks
from dpgan.training.config import TrainingConfig
from dpgan.training.context import FitContext
from dpgan.training.strategies import DPCriticStrategy


@dataclass(frozen=True)
class SeriesDetails:
    """The sequence kind's released facts: the completed schema, the encoded series (or, for a file
    read in blocks, their blocks), the DP tally."""

    schema: SequenceSchema
    series: SeriesSet
    tally: ReleasedTally
    blocks: VectorBlocks | None = None  # a file's series, read a block at a time (then `series` holds none)


def series_generator(networks: SequenceSettings, schema: SequenceSchema) -> SeriesUnitGenerator:
    """The LSTM generator of one unit (k series with an entity column)."""
    net = networks
    return SeriesUnitGenerator(
        length=schema.length,
        n_values=len(schema.values),
        n_labels=schema.n_labels,
        per_unit=schema.max_series_per_entity if schema.entity is not None else 1,
        step_noise=net.step_noise,
        hidden_size=net.generator_hidden,
        num_layers=net.generator_layers,
        profile=net.label_profile,
        offset=net.profile_offset,
        series_noise=net.series_noise,
        base=net.gaussian_base,
        gate=net.gaussian_base_gate,
    )


def series_critic(networks: SequenceSettings, schema: SequenceSchema) -> SeriesUnitCritic:
    labels = schema.n_labels
    return SeriesUnitCritic(
        length=schema.length,
        channels=len(schema.values) + labels,
        kind=networks.critic,
        hidden=networks.critic_hidden,
        n_labels=labels,
        projection=networks.label_projection and labels >= 2,
        differences=networks.critic_differences,
    )


def series_units(series: SeriesSet, schema: SequenceSchema, rng: np.random.Generator) -> torch.Tensor:
    """(units, k, T, C): the values and the label one-hot along time; k series per entity."""
    channels = series.values
    if schema.label is not None and series.labels is not None:
        one_hot = np.eye(len(schema.categories), dtype=np.float32)[series.labels]
        channels = np.concatenate([channels, np.repeat(one_hot[:, None, :], schema.length, axis=1)], axis=2)
    if schema.entity is None or series.entities is None:
        return torch.from_numpy(channels[:, None])
    k = schema.max_series_per_entity
    chosen = []
    for entity in np.unique(series.entities):
        owned = np.flatnonzero(series.entities == entity)
        chosen.append(rng.choice(owned, size=k, replace=len(owned) < k))
    return torch.from_numpy(channels[np.stack(chosen)])


def count_units(ctx: FitContext, series: SeriesSet, schema: SequenceSchema) -> ReleasedTally:
    """One sensitivity-1 Gaussian release of (units kept, units dropped per reason), COUNT_SHARE of ε
    after the schema's releases (dpgan.privacy.unit_rule). The fit runs whatever it says: a
    warning, not a refusal, when the kept count does not clear its noise."""
    released, _ = release_tally(
        series.tally,
        unit=schema.unit,
        units=schema.units,
        event=COUNT_EVENT,
        target=ctx.target(COUNT_SHARE),
        ledger=ctx.ledger,
        rng=ctx.rng,
    )
    ctx.spend(COUNT_SHARE)
    note = none_usable_note(
        released, "check the column roles and the length: each series needs exactly `length` readings"
    )
    if note is not None:
        warnings.warn(note, DPGanWarning, stacklevel=6)
    return released


class SequenceKind:
    """Series of one schema: the fit pipeline's sequence kind."""

    name = "sequence"
    certified = True

    def __init__(self, networks: SequenceSettings, config: TrainingConfig, schema: SequenceSchema) -> None:
        if schema.entity is not None and networks.moment_anchor:  # public facts: refused before any read
            raise InputError("moment_anchor measures one series per unit: it does not take an entity column")
        if networks.label_guide and (schema.label is None or schema.entity is not None):
            raise InputError("label_guide needs a label column and the series unit (no entity column)")
        self.networks, self.config, self.schema = networks, config, schema

    def release_data(self, ctx: FitContext, data: RawSeries | SeriesBlocks) -> KindData:
        released = complete_schema(data, self.schema, budget=ctx.budget, ledger=ctx.ledger, rng=ctx.rng)
        ctx.spend(released.share)
        schema = released.schema
        if isinstance(data, SeriesBlocks):  # the same releases, their sums added block by block
            counted = data.tally(schema)
            tally = count_units(ctx, counted, schema)
            channels = len(schema.values) + schema.n_labels
            empty = torch.zeros((0, 1, schema.length, channels))  # the model reads the blocks
            return KindData(empty, tally.estimated_units, SeriesDetails(schema, counted, tally, data.encoded(schema)))
        series = encode(data, schema)
        tally = count_units(ctx, series, schema)
        units = to_device(series_units(series, schema, ctx.rng))  # read from NumPy on the CPU: onto the device
        return KindData(units, tally.estimated_units, SeriesDetails(schema, series, tally))

    def model(self, data: KindData) -> Model:
        """The statistics model named by `model`, or the GAN model of the parts below."""
        if self.networks.released_only:
            return SeriesStatisticsModel(self.networks.model, self.networks)
        return GANModel(self)

    def generator(self, data: KindData) -> torch.nn.Module:
        return series_generator(self.networks, data.details.schema)

    def plugins(self, data: KindData) -> Sequence[Plugin]:
        net, schema = self.networks, data.details.schema
        values, labels = len(schema.values), schema.n_labels
        found: list[Plugin] = []
        if net.step_anchor or net.label_profile:
            found.append(
                StepStatisticsPlugin(
                    net.step_anchor_fraction,
                    values,
                    labels,
                    net.label_profile,
                    net.step_anchor,
                    net.step_anchor_warmup,
                    net.step_anchor_weight,
                )  # fmt: skip
            )
        form = (net.gaussian_basis, net.gaussian_clip, net.gaussian_shrink, net.gaussian_residual)  # public form
        if net.gaussian_base:
            found.append(
                GaussianBasePlugin(
                    net.gaussian_base_fraction,
                    labels,
                    n_values=values,
                    anchor_weight=net.base_anchor,
                    form=form,
                )
            )
        if net.moment_anchor:
            found.append(
                MomentAnchorPlugin(
                    net.step_anchor_fraction, values, labels, net.step_anchor_warmup, net.step_anchor_weight
                )
            )
        if net.label_guide:
            found.append(
                SeriesLabelGuidePlugin(
                    net.label_guide_fraction,
                    values,
                    labels,
                    net.label_guide_epochs,
                    net.label_guide_weight,
                    self.config,
                )
            )
        return found

    def critic(self, data: KindData) -> torch.nn.Module:
        return series_critic(self.networks, data.details.schema)

    def strategy(self, generator: torch.nn.Module) -> DPCriticStrategy:
        return DPCriticStrategy(replace(self.config, noise_dim=generator.noise_dim))  # type: ignore[arg-type]

    def finish(self, ctx: FitContext, data: KindData, trained: ReleasedModel) -> ReleasedModel:
        return trained  # nothing to choose or post-process

    def record(self, data: KindData, trained: ReleasedModel) -> dict[str, Any]:
        schema, tally = data.details.schema, data.details.tally
        estimated = dp_bounds(schema)
        clipping = "values outside the value columns' bounds are clipped to them"
        gated = self.networks.model == "gaussian+gan"
        gate = {"gaussian_base_gate": float(trained.model.gate.detach())} if gated else {}
        return {
            "unit": schema.unit,
            "max_series_per_entity": schema.max_series_per_entity if schema.entity else None,
            "estimated_units": data.rows,
            "estimated_dropped_units": tally.estimated_dropped,
            "units": tally.to_dict(),
            "dropped_policy": dropped_policy(schema),
            "clipping": clipping + (f" (bounds estimated with DP: {', '.join(estimated)})" if estimated else ""),
            **trained.record,
            **gate,
        }


register_kind(SequenceKind.name, SequenceKind)

__all__ = ["SequenceKind", "SeriesDetails", "count_units", "series_critic", "series_generator",
           "series_units"]  # fmt: skip
