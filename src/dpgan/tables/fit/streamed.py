"""The fit of a tabular synthesizer on a Parquet file or directory larger than memory.

The same flow as dpgan.tables.fit.plan (read its docstring), with the table read in record
batches (dpgan.tables.reading.parquet_source) instead of held as a DataFrame:
1. the ledger opens with the schema's purchase, if any;
2. dpgan.tables.fit.stream_preparation: N̂, the DP schema and the repair counts from streaming passes, the
   same releases as the in-memory path (equal for an equally seeded rng);
3. the encoder from the schema only;
4. a condition only from the schema's public or DP frequencies (no extra read);
5. the marginal and 2-way anchors (and the label model read off the 2-way tables): their exact
   counts are sums over rows, added batch by batch over the encoded rows (the in-memory path
   makes the same `AnchorCounts.add` call on the whole table; the sums are equal bit for bit) and
   released by the same plug-ins (dpgan.tables.fit.plugins) at the same σ from the same `rng`,
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
The marginals model (dpgan.tables.fit.marginals) takes the same steps 1-3, then, instead of steps
4-6, its releases read exact count tables summed in the same conform pass (`ConformPass`: each
batch's discrete codes added to them; under torchrun each rank adds its share of the batches and
the tables are summed over the ranks once, before any noise), so its ledger, tables and seeded
rows are the in-memory fit's; nothing is held but the tables (their cells capped, from the schema).

Whether a fit streams is public (dpgan.tables.reading.parquet_source.should_stream: a directory or `--stream`,
never the file's size), so the record's `"streamed": true` says nothing about the rows; a table
with no rows streams like any other (N̂ says how many there were, dpgan.privacy.unit_rule).
What a stream cannot do yet is refused before any read, by public settings only
(dpgan.tables.fit.stream_options); a target's label model read off the 2-way tables has its bias
matched on G's own rows after training, as in memory (post-processing). The fit is started by
dpgan.tables.fit.run (`fit_stream`), which opens the ledger and runs the pipeline with this kind.
The Poisson sampler's seed is drawn from `rng` after the anchors, so every draw before it is
the in-memory fit's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan.errors import DPGanWarning, InputError
from dpgan.fit import KindData, register_kind
from dpgan.model import ReleasedModel
from dpgan.privacy.block_sampling import BlockPoissonSampler
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.statistics.blocks import rank_sum
from dpgan.statistics.tables.exact_tables import ExactTables
from dpgan.tables.codec.conditioning import build_condition, condition_column_for
from dpgan.tables.codec.encoder import TableEncoder, public_dtypes
from dpgan.tables.fit.kind import TableData, TableKind, cuts_cells, table_extras, training_schema
from dpgan.tables.fit.marginals import stream_tables
from dpgan.tables.fit.plan import FitSettings
from dpgan.tables.fit.plugins import AnchorCounts
from dpgan.tables.fit.public_data import encode_public
from dpgan.tables.fit.stream_preparation import StreamPrepared, prepare_stream
from dpgan.tables.reading.conform import conform
from dpgan.tables.reading.parquet_source import OpenSource
from dpgan.tables.sampling.marginals_model import MARGINALS_MODEL
from dpgan.tables.schema.keys import KeySpec
from dpgan.tables.schema.table import Schema
from dpgan.training.context import FitContext
from dpgan.training.public_warm_start import PublicWarmStart
from dpgan.training.row_source import BlockRows, RowSource, TensorRows
from dpgan.training.schedule import gan_schedule_for
from dpgan.training.strategies import DPCriticStrategy, DPGeneratorStrategy

BYTES_PER_CELL = 4  # the encoded table is float32


class StreamedTableKind(TableKind):
    """The table kind on a Parquet source read in record batches (the module docstring's steps):
    its data releases come from streaming passes, its units are a row source built with the
    strategy (the block sampler's seed is drawn after the plug-ins' releases, so every draw before
    it is the in-memory fit's); no selection, no resume (refused before any read)."""

    name = "table-stream"

    def release_data(self, ctx: FitContext, data: OpenSource) -> KindData:
        self.ctx, settings, self.opened = ctx, self.settings, data
        torch_gen = ctx.torch_generator()  # the first draw: on the fit's device (dpgan.devices)
        condition_column = condition_column_for(
            settings.condition_column, recipe=settings.recipe.name, conditional=settings.recipe.conditional,
            schema=self.schema, target_hint=self.options.hints.target,
        )  # fmt: skip
        if condition_column is not None and self.schema is not None and not self.schema[condition_column].frequencies:
            raise InputError(
                f"the schema gives no frequencies for {condition_column!r}: add them to condition a Parquet stream"
            )
        fraction = settings.preprocessing_share(self.schema is None)
        marginals = settings.recipe.name == MARGINALS_MODEL
        self.folded = ConformPass(data, settings, condition_column, self.options.keys, self.context, marginals)
        if marginals and self.schema is not None:  # a hand schema: the tables (and their cap) before any read
            self.folded.prepare(self.schema)
        prepared = prepare_stream(  # step 2 (with step 5's counts and the held rows in its conform pass)
            data, schema=self.schema, hints=self.options.hints, budget=settings.budget, fraction=fraction,
            needs_prior=False, ledger=ctx.ledger, rng=ctx.rng, consume=self.folded.start,
            row_budget=settings.row_budget, quantile_cells=cuts_cells(self.schema, settings),
        )  # fmt: skip
        ctx.spend(prepared.spent_share)
        self.settings = settings = settings.resolved(prepared.schema)  # the conform pass chose the same
        for note in prepared.notes:
            warnings.warn(note, DPGanWarning, stacklevel=9)  # the user's call of fit
        encoder, counts = self.folded.encoder, self.folded.counts  # step 3 (built from the released schema)
        schema = encoder.schema
        warm_start = None
        if self.public is not None:
            warm_start = PublicWarmStart(encode_public(self.public, schema, encoder), self.public.steps)
        condition = None
        if condition_column is not None:  # step 4: the schema's frequencies, no read
            empty = pd.Series([], dtype=object)
            condition, _ = build_condition(
                schema, encoder, condition_column, empty, prepared.plan.noise_multiplier, ctx.rng
            )
        extras = table_extras(None, encoder, condition, prepared.rows, settings, torch_gen, self.context, counts)
        if self.folded.tables is not None:  # the marginals model's counts: one all-reduce, before any noise
            extras.tables = self.folded.tables.summed(rank_sum(self.context))
            extras.read_rate = prepared.read_rate  # of a Poisson sample of the rows past its budget
        self.table = TableData(prepared, None, warm_start)  # type: ignore[arg-type]
        self.data = KindData(None, prepared.rows, extras)  # the row source comes with the strategy
        return self.data

    def strategy(self, generator: None) -> DPCriticStrategy | DPGeneratorStrategy:  # step 6
        assert self.data is not None and self.ctx is not None
        assert self.table is not None
        prepared, extras = self.table.prepared, self.data.details
        schedule = gan_schedule_for(self.settings.config, prepared.rows, self.settings.recipe.dp_on)
        seed = int(self.ctx.rng.integers(0, 2**63 - 1))
        sampler = BlockPoissonSampler(prepared.kept_rows, schedule.sample_rate, np.random.default_rng(seed))
        self.data.units = streamed_rows(self.opened, prepared, extras.encoder, sampler, self.folded.held())
        return super().strategy(generator)

    def record(self, data: KindData, trained: ReleasedModel) -> dict[str, Any]:
        items = list(super().record(data, trained).items())
        at = [key for key, _ in items].index("world_size")
        return dict([*items[:at], ("streamed", True), *items[at:]])


class ConformPass:
    """The work folded into step 2's conform pass: from the released schema (public) the encoder
    and the anchors' counters are built; each conformed batch is then encoded once, added to
    the anchors' exact sums (the same batches in the same order as a pass of their own, so the
    same sums) and kept while the encoded rows so far fit the memory budget (the held table;
    past it the blocks are dropped, so memory stays within the budget plus one batch). Whether
    the table is held decides only the work of the training passes, never a release.

    For the marginals model (`marginals`) nothing is held and no anchor is counted: each batch's
    discrete codes are added to the model's exact count tables instead (`tables`). Under torchrun
    every rank conforms every batch (the data releases above need them all) but adds only its share
    of them (batch k on rank k mod world size), and the fit sums the tables over the ranks once
    (`rank_sum`) before any noise: the one-process counts on every rank, less encoding per rank."""

    def __init__(
        self,
        opened: OpenSource,
        settings: FitSettings,
        condition_column: str | None,
        keys: tuple[KeySpec, ...] = (),
        context: ProcessGroupContext = SINGLE_PROCESS,
        marginals: bool = False,
    ) -> None:
        self.opened, self.settings, self.condition_column, self.keys = opened, settings, condition_column, keys
        self.context, self.marginals = context, marginals
        self._blocks: list[np.ndarray] | None = []
        self._rows = self._batches = 0
        self.tables: ExactTables | None = None
        self._prepared: Schema | None = None

    def prepare(self, schema: Schema) -> None:
        """The encoder from `schema` (public), and for the marginals model its codec and zero count
        tables, refused in one line over the cap on cells: a hand schema's before any read (the
        conform pass then reuses them), a released one's when its pass starts."""
        if self.settings.default_on_release:  # the default model for the released schema's target
            self.marginals = self.settings.resolved(schema).recipe.name == MARGINALS_MODEL
        rewritten = training_schema(schema, self.settings, self.condition_column, self.keys)
        self.encoder = TableEncoder(rewritten, public_dtypes(rewritten))
        if self.marginals:
            self.codec, self.tables = stream_tables(self.encoder)
        self._prepared = schema

    def start(self, schema: Schema) -> Callable[[pd.DataFrame], None]:
        if self._prepared is not schema:
            self.prepare(schema)
        if self.marginals:  # public: the recipe; the tables' cap was checked before a row is added
            self.counts, self._blocks = AnchorCounts(None, None), None
            return self._count
        self.counts = AnchorCounts.for_settings(self.settings.table, self.encoder, self.condition_column)
        self._budget = _budget_rows(self.opened, self.encoder.width)
        return self._receive

    def _count(self, frame: pd.DataFrame) -> None:
        """The marginals model's share of the batches: its codes added to the exact tables."""
        number, self._batches = self._batches, self._batches + 1
        if self.context.owns(number) and self.tables is not None:
            self.tables.add(self.codec.encode(encode_frame(frame, self.encoder)))

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


register_kind(StreamedTableKind.name, StreamedTableKind)
