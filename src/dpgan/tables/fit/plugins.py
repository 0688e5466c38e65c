"""The table kind's plug-ins: releases before the GAN, each at its share of ε, and what they give it.

In the order a fit makes them (dpgan.fit's plug-in loop: each is calibrated so that the ledger
reaches the spent share plus its own, then the share counts as spent):
- `AuxClassifierPlugin`: DTGAN's auxiliary classifier of the condition, DP-SGD on the rows (one
  record each); its loss guides G (conditional recipes with a classifier loss);
- `LabelModelPlugin`: the label model, a DP-SGD classifier of the target that redraws it in sampled
  rows (a post-processor of G's rows: dpgan.tables.sampling.label_model);
- `MarginalAnchorPlugin`: noisy one-way marginals (dpgan.statistics.tables.marginals) as G's warm start and
  anchor;
- `PairAnchorPlugin`: noisy 2-way tables of every pair of columns (dpgan.statistics.tables.pair_marginals) as
  G's warm start and anchor; when the label model is read off these tables ("pair-tables"), it is
  built here as post-processing of them, with no ledger entry of its own.
The anchors read only `AnchorCounts`, the table's exact per-row sums, which a streamed fit adds up
batch by batch (equal bit for bit to the in-memory sums, so the releases are equal too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from dpgan.fit import KindData, Plugin
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.statistics.tables.exact_tables import ExactTables
from dpgan.statistics.tables.marginals import MarginalCounts, measure_anchor
from dpgan.statistics.tables.pair_marginals import PairCounts, measure_pair_anchor
from dpgan.statistics.tables.pair_selection import PROBE_SHARE
from dpgan.tables.codec.conditioning import Condition
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.sampling.label_model import LabelModel, fit_label_model
from dpgan.tables.sampling.table_label_model import naive_bayes_label_model
from dpgan.tables.settings import TableSettings
from dpgan.training.aux_classifier import fit_aux_classifier
from dpgan.training.config import TrainingConfig
from dpgan.training.context import FitContext
from dpgan.training.gan_loop import GeneratorHook
from dpgan.training.generator_losses import GeneratorObjective
from dpgan.training.schedule import gan_schedule_for
from dpgan.training.table_anchors import AnchorHook, PairAnchorHook


@dataclass
class AnchorCounts:
    """The exact per-row sums the anchors the config asks for release (None for one that is off).

    `add` takes encoded rows: the whole table in memory, or a streamed fit's batches in table
    order; the sums are equal either way (dpgan.statistics.tables.marginals.continued_sums), so the
    releases, drawn from the same rng at the same σ, are equal too."""

    marginals: MarginalCounts | None
    pairs: PairCounts | None

    @classmethod
    def for_settings(cls, settings: TableSettings, encoder: TableEncoder, condition_column: str | None) -> AnchorCounts:
        marginals = MarginalCounts.empty(encoder.spans, condition_column) if settings.marginal_anchor else None
        pairs = PairCounts.empty(encoder.spans, condition_column) if settings.pair_anchor else None
        return cls(marginals, pairs)

    @property
    def wanted(self) -> bool:
        return self.marginals is not None or self.pairs is not None

    def add(self, encoded: torch.Tensor) -> None:
        for counts in (self.marginals, self.pairs):
            if counts is not None:
                counts.add(encoded)


@dataclass
class TableExtras:
    """What the table plug-ins read (the encoded rows, or only the anchors' counts for a streamed
    fit; the encoder, the condition, N̂) and what they leave for the loop and the sampler: G's
    objective (with an auxiliary classifier), the label model, its column and how it was made
    ("dp-sgd" or "pair-tables"; None without one). G's hooks are the pipeline's (KindData.hooks).
    A streamed fit of the marginals model passes its exact count tables (`tables`) instead of rows."""

    encoded: torch.Tensor | None
    encoder: TableEncoder
    condition: Condition | None
    rows: int
    counts: AnchorCounts
    objective: GeneratorObjective
    torch_gen: torch.Generator
    context: ProcessGroupContext = SINGLE_PROCESS
    label_column: str | None = None
    label_model: LabelModel | None = None
    label_model_kind: str | None = None
    tables: ExactTables | None = None  # the marginals model's counts, summed over a stream's batches
    read_rate: float = 1.0  # its rows are a Poisson sample at this rate (dpgan.tables.fit.row_sample)

    def rows_in_memory(self, what: str) -> torch.Tensor:
        if self.encoded is None:  # a streamed fit refuses these extras before it starts
            raise RuntimeError(f"internal error: {what} needs the encoded table")
        return self.encoded


@dataclass(frozen=True)
class AuxClassifierPlugin:
    share: float
    config: TrainingConfig  # the loop's batch and clipping norm
    epochs: float

    def release(self, ctx: FitContext, data: KindData, generator: torch.nn.Module | None) -> Sequence[GeneratorHook]:
        extras: TableExtras = data.details
        assert extras.condition is not None
        extras.objective.condition = extras.condition
        extras.objective.classifier = fit_aux_classifier(
            extras.rows_in_memory("the auxiliary classifier"),
            extras.condition,
            self.config,
            epochs=self.epochs,
            rows=extras.rows,
            share=ctx.target(self.share),
            ledger=ctx.ledger,
            generator=extras.torch_gen,
            context=extras.context,
        )
        return ()


@dataclass(frozen=True)
class LabelModelPlugin:
    share: float
    settings: TableSettings  # its label_model_* fields
    column: str

    def release(self, ctx: FitContext, data: KindData, generator: torch.nn.Module | None) -> Sequence[GeneratorHook]:
        extras: TableExtras = data.details
        extras.label_model = fit_label_model(
            extras.rows_in_memory("the DP-SGD label model"),
            extras.encoder,
            self.column,
            self.settings,
            rows=extras.rows,
            share=ctx.target(self.share),
            ledger=ctx.ledger,
            generator=extras.torch_gen,
            context=extras.context,
        )
        extras.label_column, extras.label_model_kind = self.column, "dp-sgd"
        return ()


@dataclass(frozen=True)
class MarginalAnchorPlugin:
    share: float
    config: TrainingConfig  # the loop's G learning rate
    warmup_steps: int
    weight: float

    def release(self, ctx: FitContext, data: KindData, generator: torch.nn.Module | None) -> Sequence[GeneratorHook]:
        counts = data.details.counts.marginals
        assert counts is not None
        anchor = measure_anchor(counts, share=ctx.target(self.share), ledger=ctx.ledger, rng=ctx.rng)
        return (AnchorHook.from_config(anchor, self.config, self.warmup_steps, self.weight),)


@dataclass(frozen=True)
class PairAnchorPlugin:
    share: float
    config: TrainingConfig  # the loop's schedule and G learning rate
    warmup_steps: int
    weight: float
    dp_on: str  # the recipe's DP side: the GAN's schedule caps the anchor's warm-up
    label_column: str | None = None  # the label model to read off the tables, if any
    select: bool = True  # probe every pair and measure the target's and the most dependent ones
    target_column: str | None = None  # the schema's target: its pairs are always measured

    def release(self, ctx: FitContext, data: KindData, generator: torch.nn.Module | None) -> Sequence[GeneratorHook]:
        extras: TableExtras = data.details
        counts = extras.counts.pairs
        assert counts is not None
        probe = ctx.target(self.share * PROBE_SHARE) if self.select else None
        pairs = measure_pair_anchor(
            counts, share=ctx.target(self.share), ledger=ctx.ledger, rng=ctx.rng, probe=probe,
            target_column=self.target_column,
        )  # fmt: skip
        # never warm up for longer than the GAN trains (a short fit, e.g. a test's, stays short)
        steps = gan_schedule_for(self.config, extras.rows, self.dp_on).steps
        if self.label_column is not None:  # post-processing of the tables: no entry
            extras.label_model = naive_bayes_label_model(pairs, extras.encoder, self.label_column)
            if extras.label_model is not None:
                extras.label_column, extras.label_model_kind = self.label_column, "pair-tables"
        return (PairAnchorHook.from_config(pairs, self.config, self.warmup_steps, self.weight, max_warmup_steps=steps),)


def label_model_from_tables(cfg: TableSettings, label_column: str | None, condition_column: str | None) -> bool:
    """Whether the label model is read off the 2-way tables: asked for, or "auto" with the anchor
    on and the target measured (the conditioning column is not)."""
    if cfg.label_model_kind == "auto":
        measured = cfg.pair_anchor and condition_column != label_column
        return label_column is not None and measured
    return cfg.label_model_kind == "pair-tables"


def table_plugins(
    settings: TableSettings,
    config: TrainingConfig,
    dp_on: str,
    condition: Condition | None,
    label_column: str | None,
    from_tables: bool,
    target_column: str | None = None,
) -> list[Plugin]:
    """The plug-ins the settings ask for (the recipe's defaults under the user's), in the order of
    their releases, each with its own share and knobs."""
    s, plugins = settings, list[Plugin]()
    if s.classifier_loss_weight > 0 and condition is not None:
        plugins.append(AuxClassifierPlugin(s.classifier_budget_fraction, config, s.classifier_epochs))
    if label_column is not None and not from_tables:
        plugins.append(LabelModelPlugin(s.label_model_budget_fraction, s, label_column))
    if s.marginal_anchor:
        plugins.append(
            MarginalAnchorPlugin(s.marginal_budget_fraction, config, s.marginal_warmup_steps, s.marginal_weight)
        )
    if s.pair_anchor:
        column = label_column if from_tables else None
        plugins.append(
            PairAnchorPlugin(
                s.pair_budget_fraction,
                config,
                s.pair_warmup_steps,
                s.pair_weight,
                dp_on,
                column,
                s.pair_selection,
                target_column,
            )  # fmt: skip
        )
    return plugins


__all__ = [
    "AnchorCounts",
    "AuxClassifierPlugin",
    "LabelModelPlugin",
    "MarginalAnchorPlugin",
    "PairAnchorPlugin",
    "TableExtras",
    "label_model_from_tables",
    "table_plugins",
]
