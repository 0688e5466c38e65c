"""The fit of a tabular synthesizer on a Parquet file or directory larger than memory.

The same flow as dpgan.synthesizers.fit_plan (read its docstring), with the table read in record
batches (dpgan.tables.parquet_source) instead of held as a DataFrame:
1. the ledger opens with the schema's purchase, if any;
2. dpgan.tables.stream_preparation: N̂, the DP schema and the repair counts from streaming passes, the
   same releases as the in-memory path (equal for an equally seeded rng);
3. the encoder from the schema only;
4. a condition only from the schema's public or DP frequencies (no extra read);
5. the marginal and 2-way anchors (and the label model read off the 2-way tables): their exact
   counts are sums over rows, added batch by batch over the encoded rows (the in-memory path
   makes the same `AnchorCounts.add` call on the whole table; the sums are equal bit for bit) and
   released by fit_plan's `_fit_extras` (dpgan.tables.plugins) at the same σ from the same `rng`,
   so their ledger entries and released tables equal the in-memory ones. They are added in the conform pass of step 2
   (`ConformPass`: each batch is conformed once, then encoded, counted and, while the encoded
   table fits the memory budget, held), so no pass of its own;
6. σ and the steps from what is left, then the DP-critic loop. Its rows come through a row
   source (dpgan.training.row_source): when the encoded table fits `memory_budget_mb` it is
   encoded once and held (as in memory), otherwise each block of steps is gathered in one pass.
   Either way the batches come from one `BlockPoissonSampler` seeded from `rng`, so the budget
   changes how often the files are read, never which rows a step reads nor what is released
   (dpgan.privacy.block_sampling has the argument that this is Poisson sampling per step).
Peak memory: one record batch (raw, conformed, encoded) plus the block, whatever the row count.

Whether a fit streams is public (dpgan.tables.parquet_source.should_stream: a directory or `--stream`,
never the file's size), so the record's `"streamed": true` says nothing about the rows; a table
with no rows streams like any other (N̂ says how many there were, dpgan.privacy.unit_rule).
What a stream cannot do yet is refused before any read, by public settings only (never by the
data, so whether a fit runs says nothing about the rows): the extras trained with DP-SGD on the
whole encoded table or on a held-out split (the DP-SGD label model, the auxiliary classifier,
checkpoint selection), dtgan-g's shard critics, the non-private schema path, strict mode and
resuming. A target's label model is allowed when it is read off the 2-way tables
(`label_model_from_tables`, decided by the settings and the target's name only); its bias is
matched on G's own rows after training, as in memory (post-processing).
The Poisson sampler's seed is drawn from `rng` after the anchors, so every draw before it is
the in-memory fit's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from dpgan.devices import seeded_generator
from dpgan.errors import BudgetError, DPGanWarning, InputError
from dpgan.privacy.block_sampling import BlockPoissonSampler
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.synthesizers.arguments import FitOptions, schema_with_hints
from dpgan.synthesizers.fit_plan import (
    FitSettings,
    FittedTable,
    _fit_extras,
    _open_ledger,
    _train_gan,
    match_label_prior,
)
from dpgan.synthesizers.public_data import PublicTable, encode_public
from dpgan.tables.conditioning import build_condition, condition_column_for
from dpgan.tables.conform import check_columns, conform
from dpgan.tables.encoder import TableEncoder, public_dtypes
from dpgan.tables.parquet_source import OpenSource, ParquetSource
from dpgan.tables.plugins import AnchorCounts, label_model_from_tables
from dpgan.tables.schema import Schema, binary_coded, with_geo
from dpgan.tables.stream_preparation import StreamPrepared, prepare_stream
from dpgan.training.progress import FitProgressFn
from dpgan.training.public_warm_start import PublicWarmStart
from dpgan.training.row_source import BlockRows, RowSource, TensorRows
from dpgan.training.schedule import gan_schedule_for

BYTES_PER_CELL = 4  # the encoded table is float32


def stream_arguments(
    data: ParquetSource | str | Path,
    schema: Schema | str | Path | dict | None,
    settings: FitSettings,
    *,
    target: str | None,
    categorical,
    bounds,
    categories,
    strict: bool,
    checkpoint: object,
) -> tuple[OpenSource, Schema | None, FitOptions]:
    """The checks of dpgan.synthesizers.arguments for a stream, plus the refusals of the module
    docstring: all from public settings, the file footers and the column names."""
    if strict:
        raise InputError("strict mode is not available when fitting from Parquet in batches; fit a DataFrame")
    if checkpoint is not None:
        raise InputError("checkpoint/resume is not available when fitting from Parquet in batches")
    _refuse_unsupported(settings)
    source = data if isinstance(data, ParquetSource) else ParquetSource(data)
    opened = source.open()
    schema, hints = schema_with_hints(schema, target, categorical, bounds, categories)
    if schema is not None:
        check_columns(list(opened.columns), schema)
    else:
        hints.check(opened.columns)
    target = schema.target if schema is not None else hints.target
    if settings.config.label_model and target is not None:
        condition = settings.condition_column or (target if settings.recipe.conditional else None)
        if not label_model_from_tables(settings.config, target, condition):
            raise InputError(
                "the DP-SGD label model is not available when fitting from Parquet in batches: "
                "label_model=False, or keep the 2-way anchor on and label_model_kind='pair-tables'"
            )
    return opened, schema, FitOptions(hints, False, False)


def _refuse_unsupported(settings: FitSettings) -> None:
    cfg = settings.config
    reasons = []
    if settings.recipe.dp_on != "critic":
        reasons.append(f"recipe {settings.recipe.name} (its shard critics read the whole table)")
    if settings.schema_from_data_without_dp:
        reasons.append("schema_from_data_without_dp")
    if cfg.select_checkpoints:
        reasons.append("select_checkpoints")
    if cfg.classifier_loss_weight > 0:
        reasons.append("classifier_loss_weight > 0")
    if reasons:
        raise InputError("not available when fitting from Parquet in batches: " + "; ".join(reasons))


def fit_stream(
    opened: OpenSource,
    schema: Schema | None,
    options: FitOptions,
    settings: FitSettings,
    progress: FitProgressFn | None,
    rng: np.random.Generator,
    public: PublicTable | None = None,
    context: ProcessGroupContext = SINGLE_PROCESS,
) -> FittedTable:
    """Train on the stream following the module's flow; the draws from `rng` come in the order of
    dpgan.synthesizers.fit_plan's, so the ledger equals the in-memory fit's for the same seed.

    Data-parallel (`context`, under torchrun): every rank reads the whole stream in the same order
    with the same `rng` (its seed broadcast by the facade), so every release before training is
    made identically on every rank, and the Poisson batches are the same row indices on every rank;
    each rank gathers a batch's rows from the stream and clips its share of positions, and the
    clipped sums are all-reduced before the one noise draw (dpgan.privacy.distributed), as for a
    table in memory. The ledger is the single-process one."""
    torch_gen = seeded_generator(int(rng.integers(0, 2**63 - 1)))  # on the fit's device (dpgan.devices)
    ledger, purchased = _open_ledger(schema, settings)  # step 1
    condition_column = condition_column_for(
        settings.condition_column, recipe=settings.recipe.name, conditional=settings.recipe.conditional,
        schema=schema, target_hint=options.hints.target,
    )  # fmt: skip
    needs_prior = condition_column is not None and schema is not None and not schema[condition_column].frequencies
    if needs_prior:
        raise InputError(
            f"the schema gives no frequencies for {condition_column!r}: add them to condition a Parquet stream"
        )
    infer = schema is None
    fraction = settings.preprocessing_share(infer)
    folded = ConformPass(opened, settings, condition_column)
    prepared = prepare_stream(  # step 2 (with step 5's counts and the held rows in its conform pass)
        opened,
        schema=schema,
        hints=options.hints,
        epsilon=settings.epsilon,
        delta=settings.delta,
        fraction=fraction,
        accountant=settings.accountant,
        needs_prior=False,
        ledger=ledger,
        rng=rng,
        consume=folded.start,
    )
    for note in prepared.notes:
        warnings.warn(note, DPGanWarning, stacklevel=7)  # the user's call of fit
    encoder, counts = folded.encoder, folded.counts  # step 3 (built from the released schema)
    schema = encoder.schema
    warm_start = None
    if public is not None:
        warm_start = PublicWarmStart(encode_public(public, schema, encoder), public.steps)
    condition = None
    if condition_column is not None:  # step 4: the schema's frequencies, no read
        condition, _ = build_condition(
            schema, encoder, condition_column, pd.Series([], dtype=object), prepared.plan.noise_multiplier, rng
        )
    held = folded.held()  # the encoded table, if it fit the budget
    extras = _fit_extras(
        None,
        encoder,
        condition,
        prepared.rows,
        settings,
        spent=purchased + fraction,
        ledger=ledger,
        rng=rng,
        torch_gen=torch_gen,
        context=context,
        counts=counts,
    )
    schedule = gan_schedule_for(settings.config, prepared.rows, settings.recipe.dp_on)
    sampler = BlockPoissonSampler(
        prepared.kept_rows, schedule.sample_rate, np.random.default_rng(int(rng.integers(0, 2**63 - 1)))
    )
    rows = streamed_rows(opened, prepared, encoder, sampler, held)
    trained = _train_gan(  # step 6
        rows,  # type: ignore[arg-type]  # a row source where fit_plan passes a tensor
        encoder,
        condition,
        extras,
        prepared.rows,
        settings,
        ledger=ledger,
        progress=progress,
        rng=rng,
        torch_gen=torch_gen,
        checkpoint=None,
        public=warm_start,
        context=context,
    )
    match_label_prior(extras, trained.generator, encoder, condition, settings, rng)
    spent = ledger.epsilon(settings.delta, settings.accountant)
    if spent > settings.epsilon * (1 + 1e-9):
        raise BudgetError(f"internal error: the ledger spent ε={spent:.4f} > target {settings.epsilon}")
    training = {
        "recipe": settings.recipe.name,
        **trained.record,  # σ, the rate, the expected batch, the steps
        "estimated_rows": prepared.rows,
        "preprocessing_noise_multiplier": prepared.plan.noise_multiplier,
        "schema_source": schema.source,
        "preprocessing_repairs": prepared.repairs,
        "notes": prepared.notes,
        "condition": None if condition is None else condition.column,
        "condition_prior_source": None if condition is None else condition.prior_source,
        "label_model": extras.label_column,
        "label_model_kind": extras.label_model_kind,
        "seeded": settings.seeded,
        "streamed": True,
        "world_size": context.world_size,
    }
    if public is not None:
        training["public_data"] = dict(public.record)
    return FittedTable(
        ledger, schema, encoder, trained.generator, condition, extras.label_model, training, trained.critic
    )


def training_schema(schema: Schema, settings: FitSettings, condition_column: str | None) -> Schema:
    """The released schema as the encoder reads it (binary codes, geo pairs: public settings)."""
    if settings.config.binary_codes:
        schema = binary_coded(schema, keep=tuple(c for c in (schema.target, condition_column) if c))
    return with_geo(schema, settings.config.geo_pairs)


class ConformPass:
    """The work folded into step 2's conform pass: from the released schema (public) the encoder
    and the anchors' counters are built; each conformed batch is then encoded once, added to
    the anchors' exact sums (the same batches in the same order as a pass of their own, so the
    same sums) and kept while the encoded rows so far fit the memory budget (the held table;
    past it the blocks are dropped, so memory stays within the budget plus one batch). Whether
    the table is held decides only the work of the training passes, never a release."""

    def __init__(self, opened: OpenSource, settings: FitSettings, condition_column: str | None) -> None:
        self.opened, self.settings, self.condition_column = opened, settings, condition_column
        self._blocks: list[np.ndarray] | None = []
        self._rows = 0

    def start(self, schema: Schema) -> Callable[[pd.DataFrame], None]:
        rewritten = training_schema(schema, self.settings, self.condition_column)
        self.encoder = TableEncoder(rewritten, public_dtypes(rewritten))
        self.counts = AnchorCounts.for_config(self.settings.config, self.encoder, self.condition_column)
        self._budget = _budget_rows(self.opened, self.encoder.width)
        return self._receive

    def _receive(self, frame: pd.DataFrame) -> None:
        self._rows += len(frame)
        if self._rows > self._budget:
            self._blocks = None  # the table will not be held: its blocks are gathered per step block
        if self._blocks is None and not self.counts.wanted:
            return
        encoded = encode_frame(frame, self.encoder)
        if self.counts.wanted:
            self.counts.add(torch.from_numpy(encoded))
        if self._blocks is not None:
            self._blocks.append(encoded)

    def held(self) -> np.ndarray | None:
        """The whole encoded table if it fit the budget, else None."""
        if self._blocks is None:
            return None
        if not self._blocks:
            return np.zeros((0, self.encoder.width), dtype=np.float32)
        return np.concatenate(self._blocks, axis=0)


def encode_frame(frame: pd.DataFrame, encoder: TableEncoder) -> np.ndarray:
    """Conformed rows, encoded (the encoder's warnings are the in-memory path's, already given)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return encoder.encode(frame)


def encode_batch(
    batch: pd.DataFrame, schema: Schema, encoder: TableEncoder, keep: np.ndarray | None = None
) -> np.ndarray:
    """One record batch conformed (per-row rules) and encoded (only its kept rows `keep`, if
    given): the rows the in-memory path would give for the same rows of the table."""
    frame = conform(batch, schema).frame
    if keep is not None:
        frame = frame.iloc[keep].reset_index(drop=True)
    return encode_frame(frame, encoder)


def _budget_rows(opened: OpenSource, width: int) -> int:
    return max(1, opened.source.budget_bytes // (BYTES_PER_CELL * max(width, 1)))


def streamed_rows(
    opened: OpenSource,
    prepared: StreamPrepared,
    encoder: TableEncoder,
    sampler: BlockPoissonSampler,
    held: np.ndarray | None,
) -> RowSource:
    """The training rows: the whole encoded table `held` when it fit the memory budget, else blocks."""
    if held is not None:
        return TensorRows(torch.from_numpy(held), sampler)
    width = encoder.width
    schema = prepared.schema
    offsets = np.concatenate([[0], np.cumsum(prepared.kept_per_batch)])

    def gather(index: np.ndarray) -> torch.Tensor:
        """One sequential pass: the rows `index` (sorted) names, encoded, in that order."""
        out = np.empty((len(index), width), dtype=np.float32)
        for number, batch in enumerate(opened.batches()):
            low, high = np.searchsorted(index, offsets[number : number + 2])
            if high > low:
                out[low:high] = encode_batch(batch, schema, encoder, index[low:high] - offsets[number])
            if high == len(index):
                break
        return torch.from_numpy(out)

    return BlockRows(prepared.kept_rows, width, sampler, gather, _budget_rows(opened, width))
