"""A table held in memory as the fit pipeline's kind (dpgan.fit): `TableKind` and its steps' parts.

The flow and where each read is charged are dpgan.tables.fit.plan's (its docstring): the
ledger opens with the schema's purchase (step 1, dpgan.tables.fit.run, which then runs the
pipeline with this kind; nothing here calls back up into it); steps 2-4 (preparation, encoder,
public warm start, the selection's held-out part, the condition's frequencies) are the kind's
data releases; step 5 its plug-ins (dpgan.tables.fit.plugins); step 6 its strategy
(dpgan.training.strategies), with the selection reserved and the resume checkpoint's fingerprint
taken just before σ is calibrated; the selection's choice and the label model's prior match are
its finish; step 7 the pipeline's final check.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan.devices import to_device
from dpgan.errors import DPGanWarning
from dpgan.fit import KindData, Plugin, register_kind
from dpgan.model import GANModel, ReleasedModel
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.tables.codec.conditioning import Condition, build_condition, condition_column_for
from dpgan.tables.codec.encoder import TableEncoder, public_dtypes
from dpgan.tables.fit.marginals import TableMarginalsModel
from dpgan.tables.fit.options import FitOptions
from dpgan.tables.fit.plan import FitSettings
from dpgan.tables.fit.plugins import AnchorCounts, TableExtras, label_model_from_tables, table_plugins
from dpgan.tables.fit.preparation import Prepared, prepare_table
from dpgan.tables.fit.public_data import PublicTable, encode_public
from dpgan.tables.fit.resume import ResumableFit, releases_before_training
from dpgan.tables.fit.selection import Holdout, Selection, reserve_selection, select_released, split_heldout
from dpgan.tables.sampling.label_model import label_target
from dpgan.tables.sampling.marginals_model import MARGINALS_MODEL
from dpgan.tables.sampling.rows import TableSampler
from dpgan.tables.sampling.table_label_model import match_prior
from dpgan.tables.schema.keys import KeySpec
from dpgan.tables.schema.rule_checks import check_condition
from dpgan.tables.schema.table import Schema, binary_coded, with_geo, with_keys
from dpgan.training.checkpoint import FitCheckpoint
from dpgan.training.context import FitContext
from dpgan.training.generator_losses import GeneratorObjective
from dpgan.training.public_warm_start import PublicWarmStart
from dpgan.training.strategies import STRATEGIES, DPCriticStrategy, DPGeneratorStrategy, LoopExtras

PRIOR_MATCH_ROWS = 4000  # G's rows the naive-Bayes label model's bias is matched on


@dataclass
class TableData:
    """The table kind's released facts besides the plug-ins' inputs and outputs (TableExtras, the
    units' details): the preparation (N̂, notes, repairs), the selection's held-out part and the
    public warm start."""

    prepared: Prepared
    holdout: Holdout | None
    warm_start: PublicWarmStart | None


class TableKind:
    """A table held in memory as the fit pipeline's kind (dpgan.fit): steps 2-4 are its data
    releases, step 5 its plug-ins, step 6 its strategy and, with a selection, its finish."""

    name = "table"
    certified = True

    def __init__(
        self,
        schema: Schema | None,
        options: FitOptions,
        settings: FitSettings,
        resume: ResumableFit | None,
        public: PublicTable | None,
        context: ProcessGroupContext,
    ) -> None:
        self.schema, self.options, self.settings = schema, options, settings
        self.resume, self.public, self.context = resume, public, context
        self.selection: Selection | None = None
        self.selection_record: dict[str, Any] | None = None  # what the DP selection chose (public)
        self.checkpoint: FitCheckpoint | None = None
        self.data: KindData | None = None
        self.table: TableData | None = None
        self.ctx: FitContext | None = None

    def release_data(self, ctx: FitContext, data: pd.DataFrame) -> KindData:
        self.ctx, settings = ctx, self.settings
        torch_gen = ctx.torch_generator()  # the first draw: on the fit's device (dpgan.devices)
        prepared, condition_column = _prepare(data, self.schema, self.options, settings, ctx.ledger, ctx.rng)
        ctx.spend(prepared.spent_share)  # step 2 (`fraction`, and the marginals model's cells on a hand schema)
        self.settings = settings = settings.resolved(prepared.schema)  # the default model, from the released schema
        if self.resume is not None:  # the seed kept before anything noisy leaves the process (tables.resume)
            self.resume.pin(self.context.is_main)
        for note in prepared.notes:  # N̂ and the repair counts: printed releases
            warnings.warn(note, DPGanWarning, stacklevel=8)  # the user's call of fit
        schema, rows = prepared.schema, prepared.rows
        schema = training_schema(schema, settings, condition_column, self.options.keys)  # public rewrites: free
        encoder = TableEncoder(schema, public_dtypes(schema))  # step 3
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            encoded = to_device(torch.from_numpy(encoder.encode(prepared.frame)))
        warm_start = None
        if self.public is not None:  # step 3a: public rows in the same encoding (no private read, no charge)
            warm_start = PublicWarmStart(encode_public(self.public, schema, encoder), self.public.steps)
        holdout, train_rows = None, rows
        if settings.table.select_checkpoints:  # step 3b: the held-out part of a DP selection
            holdout = split_heldout(encoded, settings.table, ctx.rng)
            encoded, train_rows = holdout.training, holdout.training_rows(rows, settings.table)
        condition = None
        if condition_column is not None:  # step 4
            frequencies = prepared.frame[condition_column]
            condition, prior_entry = build_condition(
                schema, encoder, condition_column, frequencies, prepared.plan.noise_multiplier, ctx.rng
            )
            if prior_entry is not None:
                ctx.ledger.add(prior_entry)
        extras = table_extras(encoded, encoder, condition, train_rows, settings, torch_gen, self.context)
        extras.read_rate = prepared.read_rate  # the marginals model's rows may be a sample of them
        self.table = TableData(prepared, holdout, warm_start)
        self.data = KindData(encoded, train_rows, extras)
        return self.data

    def model(self, data: KindData) -> GANModel | TableMarginalsModel:
        if self.settings.recipe.name == MARGINALS_MODEL:  # the statistics model: no plug-ins, no GAN
            return TableMarginalsModel()
        return GANModel(self)  # the GAN: the parts below

    def generator(self, data: KindData) -> None:
        return None  # the loop builds the configured tabular networks

    def plugins(self, data: KindData) -> list[Plugin]:  # step 5
        extras: TableExtras = data.details
        skip = None if extras.condition is None else extras.condition.column
        settings = self.settings
        column = label_target(extras.encoder.schema) if settings.table.label_model else None
        from_tables = label_model_from_tables(settings.table, column, skip)
        return table_plugins(
            settings.table, settings.config, settings.recipe.dp_on, extras.condition, column, from_tables,
            extras.encoder.schema.target,
        )  # fmt: skip

    def critic(self, data: KindData) -> None:
        return None

    def strategy(self, generator: None) -> DPCriticStrategy | DPGeneratorStrategy:  # step 6
        assert self.data is not None and self.table is not None and self.ctx is not None
        ledger, table, settings = self.ctx.ledger, self.table, self.settings
        extras: TableExtras = self.data.details
        if table.holdout is not None:  # reserved before σ is calibrated, so training leaves room for it
            self.selection = reserve_selection(ledger, settings.table, settings.budget)
        if self.resume is not None:
            self.checkpoint = self.resume.checkpoint(releases_before_training(ledger, extras, self.data.hooks))
            self.checkpoint.writer = self.context.is_main
        loop = LoopExtras(
            spans=extras.encoder.spans, condition=extras.condition, objective=extras.objective,
            checkpoint=self.checkpoint, keeper=None if self.selection is None else self.selection.keeper,
            public=table.warm_start, context=self.context, cap_steps=settings.epochs_given, torch_gen=extras.torch_gen,
        )  # fmt: skip
        return STRATEGIES[settings.recipe.strategy](settings.config, loop)  # type: ignore[call-arg]

    def finish(self, ctx: FitContext, data: KindData, trained: ReleasedModel) -> ReleasedModel:
        assert self.table is not None
        table, extras = self.table, data.details
        if self.selection is not None and table.holdout is not None:  # step 6b
            generator, self.selection_record = select_released(
                self.selection, table.holdout, extras.encoder, extras.condition, self.settings.config,
                self.settings.table, extras.torch_gen, ctx.rng,
            )  # fmt: skip
            trained = replace(trained, model=generator)
        match_label_prior(extras, trained.model, extras.encoder, extras.condition, self.settings, ctx.rng)
        return trained

    def record(self, data: KindData, trained: ReleasedModel) -> dict[str, Any]:
        assert self.table is not None
        prepared, extras = self.table.prepared, data.details
        condition = extras.condition
        training = {
            "recipe": self.settings.recipe.name,
            **trained.record,  # σ, the rate, the expected batch, the steps
            "estimated_rows": prepared.rows,
            "preprocessing_noise_multiplier": prepared.plan.noise_multiplier,
            "schema_source": extras.encoder.schema.source,
            "preprocessing_repairs": prepared.repairs,
            "notes": prepared.notes,
            "condition": None if condition is None else condition.column,
            "condition_prior_source": None if condition is None else condition.prior_source,
            "label_model": extras.label_column,
            "label_model_kind": extras.label_model_kind,
            "seeded": self.settings.seeded,
            "world_size": self.context.world_size,
        }
        if self.selection_record is not None:
            training["selection"] = self.selection_record
        if self.public is not None:
            training["public_data"] = dict(self.public.record)
        return training


def _prepare(
    data: pd.DataFrame,
    schema: Schema | None,
    options: FitOptions,
    settings: FitSettings,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> tuple[Prepared, str | None]:
    """The table in the schema's domain and its noisy row count, charged at the preprocessing share
    of ε (dpgan.tables.fit.preparation; `Prepared.spent_share` says where the ledger then stands);
    returns it and the condition column (checked first). Its
    notes are the caller's to print (after a resumable fit has pinned its seed)."""
    without_dp = schema is None and settings.schema_from_data_without_dp
    condition_column = condition_column_for(
        settings.condition_column, recipe=settings.recipe.name, conditional=settings.recipe.conditional,
        schema=schema, target_hint=options.hints.target, columns=list(data.columns),
    )  # fmt: skip
    needs_prior = condition_column is not None and (
        without_dp or (schema is not None and not schema[condition_column].frequencies)
    )
    infer_dp = schema is None and not without_dp
    fraction = settings.preprocessing_share(infer_dp)
    prepared = prepare_table(
        data,
        schema=schema,
        hints=options.hints,
        strict=options.strict,
        without_dp=without_dp,
        keep_identifiers=options.keep_identifiers,
        budget=settings.budget,
        fraction=fraction,
        needs_prior=needs_prior,
        ledger=ledger,
        rng=rng,
        row_budget=settings.row_budget,
        quantile_cells=cuts_cells(schema, settings),
    )
    return prepared, condition_column


def cuts_cells(schema: Schema | None, settings: FitSettings) -> bool:
    """Whether the fit cuts a hand schema's numeric bins at DP quantiles (dpgan.tables.fit.quantile_cells):
    the marginals model on the user's schema (a DP schema's bins are cut at its own quantiles already)."""
    return schema is not None and settings.resolved(schema).recipe.name == MARGINALS_MODEL


def table_extras(
    encoded: torch.Tensor | None,
    encoder: TableEncoder,
    condition: Condition | None,
    rows: int,
    settings: FitSettings,
    torch_gen: torch.Generator,
    context: ProcessGroupContext = SINGLE_PROCESS,
    counts: AnchorCounts | None = None,
) -> TableExtras:
    """What the table plug-ins read: G's objective, the anchors' exact counts (counted here from
    `encoded` when not given: a streamed fit passes the counts it added up batch by batch)."""
    cfg = settings.config
    objective = GeneratorObjective(
        cfg.loss, info_weight=cfg.info_loss_weight, classifier_weight=settings.table.classifier_loss_weight
    )
    if counts is None:
        if encoded is None:
            raise RuntimeError("internal error: the anchors need the encoded table or its counts")
        counts = AnchorCounts.for_settings(settings.table, encoder, None if condition is None else condition.column)
        counts.add(encoded)  # the same counting a streamed fit does batch by batch
    return TableExtras(encoded, encoder, condition, rows, counts, objective, torch_gen, context)


def training_schema(
    schema: Schema, settings: FitSettings, condition_column: str | None, keys: tuple[KeySpec, ...] = ()
) -> Schema:
    """The released schema as the encoder reads it (binary codes, geo pairs: public settings), with
    the key columns the sampler generates (public hints: the encoder codes none of them); a
    condition column that a rule sets is refused (the rules' learned columns: dpgan.tables.codec.rules)."""
    check_condition(schema.rules, condition_column)
    if settings.table.binary_codes:
        schema = binary_coded(schema, keep=tuple(c for c in (schema.target, condition_column) if c))
    return with_keys(with_geo(schema, settings.table.geo_pairs), keys)


def match_label_prior(
    extras: TableExtras,
    generator: torch.nn.Module,
    encoder: TableEncoder,
    condition: Condition | None,
    settings: FitSettings,
    rng: np.random.Generator,
) -> None:
    """The naive-Bayes label model's bias, matched on G's own rows (post-processing of released
    models and public noise); draws one seed from `rng`, only for a "pair-tables" label model."""
    if extras.label_model_kind != "pair-tables" or extras.label_model is None:
        return
    sampler = TableSampler(generator, encoder, condition, settings.config.noise_dim, ())
    own_rows = sampler.sample(PRIOR_MATCH_ROWS, {}, int(rng.integers(0, 2**31 - 1)))
    match_prior(extras.label_model, to_device(torch.from_numpy(encoder.encode(own_rows))))


register_kind(TableKind.name, TableKind)
