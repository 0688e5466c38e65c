"""The entity kind in the fit pipeline (dpgan.fit): its data release (the unit tally) and its
model's releases on all of ε that is left: a statistics model's (statistics.py), or the gan model's
private steps (gan/model.py).

The tally: (kept, dropped per reason) over the units, each unit in one cell, and the two counts of
entities with an event dropped for its time or a value mapped into the schema (each entity at most
once in each): one entity moves the vector by at most √3 in L2. It takes TALLY_SHARE of ε; it only
tells the report what was read (the model's own count histogram carries the counts it samples).
Without a whole schema (the CSV-only path), the parts not given are bought first (inference.py, its
own share of ε), and the tally's share is taken on top of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpgan.entities.blocks import EntityReads
from dpgan.entities.inference import SchemaPurchase
from dpgan.entities.reader import FLAGS, UNIT_REASONS, EntityRead, read_entities, subsample_seed
from dpgan.entities.schema import EntitySchema
from dpgan.entities.settings import EntitySettings
from dpgan.entities.statistics import EntityStatistics
from dpgan.fit import register_kind
from dpgan.model import KindData, Model, ReleasedModel
from dpgan.privacy.mechanisms import noisy_counts
from dpgan.privacy.releases import charge_gaussian
from dpgan.privacy.unit_rule import ReleasedTally
from dpgan.training.config import TrainingConfig
from dpgan.training.context import FitContext
from dpgan.training.progress import FitProgressFn

TALLY_SHARE = 0.05
TALLY = "entities kept and dropped per reason"


@dataclass(frozen=True)
class EntityTables:
    """The private input of one fit: the two tables in memory (or, in their place, the Parquet tables
    read in buckets: dpgan.entities.parquet.EntityParquet, whose `reads` are the kept entities)."""

    parents: pd.DataFrame
    events: pd.DataFrame


@dataclass(frozen=True)
class EntityStatisticsModel:
    """The statistics model (dpgan.model.Model): its releases on all of ε that is left, no steps."""

    schema: EntitySchema
    settings: EntitySettings

    def release(self, ctx: FitContext, data: KindData, progress: FitProgressFn | None) -> ReleasedModel:
        released = EntityStatistics.release(
            data.units, self.schema, self.settings,
            ledger=ctx.ledger, target=ctx.budget.whole_target(), rng=ctx.rng,
        )  # fmt: skip
        return ReleasedModel(released, None, {"steps": 0})


@dataclass(frozen=True)
class EntityKind:
    """The kind's part in the pipeline (dpgan.fit.DataKind)."""

    schema: EntitySchema | None  # None: bought by `purchase` (the CSV-only path, inference.py)
    settings: EntitySettings
    config: TrainingConfig | None = None  # the training loop's settings: the gan model's
    name: str = "entity"
    certified: bool = True
    purchase: SchemaPurchase | None = None

    def release_data(self, ctx: FitContext, data: Any) -> KindData:
        """The schema (bought first when it is to buy: in memory only), the kept entities (one block,
        or a bucket at a time) and the tally's release, summed over the blocks and ranks."""
        schema, notes, bought = self.schema, [], []
        if self.purchase is not None:  # first: its share of ε, then the tally's on top (cumulative shares)
            schema, notes = self.purchase.buy(ctx, data.parents, data.events)
            bought = self.purchase.parts()
        assert schema is not None
        if isinstance(data, EntityTables):  # in memory: one block
            units: EntityRead | EntityReads = read_entities(data.parents, data.events, schema, self.settings.bins,
                                                            ctx.rng)  # fmt: skip
            reads = EntityReads.whole(units)
        else:  # Parquet tables in buckets (parquet.py): the same one draw of the fit's generator first
            units = reads = data.reads(schema, self.settings.bins, subsample_seed(ctx.rng))
        exact = reads.sum(lambda read: {"tally": read.tally.vector(), "flags": read.flags})
        sigma = ctx.target(TALLY_SHARE).sigma(1.0, 1, ctx.ledger.entries)
        note = "each unit in one of kept and the reasons, each kept entity at most once in each flag: Δ = √3"
        charge_gaussian(ctx.ledger, TALLY, sigma, note=note)
        std = sigma * math.sqrt(3.0)
        noisy = noisy_counts(np.concatenate([exact["tally"], exact["flags"]]), std, ctx.rng)
        reasons = UNIT_REASONS
        tally = ReleasedTally("entity", "entities", float(noisy[0]),
                              {r: float(c) for r, c in zip(reasons, noisy[1 : 1 + len(reasons)])}, std)  # fmt: skip
        flags = {f: int(round(max(float(c), 0.0))) for f, c in zip(FLAGS, noisy[1 + len(reasons) :])}
        ctx.spend(TALLY_SHARE)
        details = {"tally": tally, "flags": flags, "schema": schema, "dp_schema": bought, "schema_notes": notes}
        return KindData(units, tally.estimated_units, details)

    def model(self, data: KindData) -> Model:
        schema = data.details["schema"]
        if self.settings.model == "gan":
            from dpgan.entities.gan.model import EntityGANModel  # torch's networks: only when asked

            return EntityGANModel(schema, self.settings, self.config or TrainingConfig())
        return EntityStatisticsModel(schema, self.settings)

    def finish(self, ctx: FitContext, data: KindData, trained: ReleasedModel) -> ReleasedModel:
        return trained

    def record(self, data: KindData, trained: ReleasedModel) -> dict[str, Any]:
        bought = {"dp_schema": data.details["dp_schema"], "schema_notes": data.details["schema_notes"]}
        return {"units": data.details["tally"].to_dict(), "flags": data.details["flags"],
                **(bought if data.details["dp_schema"] else {}), **trained.record}  # fmt: skip


register_kind("entity", EntityKind)

__all__ = ["EntityKind", "EntityStatisticsModel", "EntityTables", "TALLY", "TALLY_SHARE"]
