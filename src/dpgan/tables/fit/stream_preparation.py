"""dpgan.tables.fit.preparation's private reads for a table read in record batches
(dpgan.tables.reading.parquet_source).

The same releases, in the same order, at the same σ, drawing from the same `rng`:
1. the noisy row count N̂ of the files' row count (the footers' sum, equal to len(data));
2. without a schema: one pass counts every column's classes, grid bins and values batch by batch
   (dpgan.tables.inference.stream_counts; mergeable, so the sums are the table's exact counts) and
   `schema_from_counts` releases them exactly as the in-memory path does;
3. a second pass maps each batch into the schema (dpgan.tables.reading.conform: per-row rules, so a batch
   conformed alone gives the rows the whole table would) and adds the repair indicators;
4. their sums are released as the in-memory path releases the column sums of the indicators.
So with an equally seeded `rng`, N̂, the schema, the repair counts and the ledger equal the
in-memory path's. The conform pass can carry more work (`consume`: built from the released
schema, public, and handed each conformed batch; a streamed fit encodes it there and adds the
anchors' exact sums, or holds it), so one read serves what took two; nothing it does draws
from `rng` or changes what is released here. The pass also records how many rows each batch
keeps: row i of the conformed table is then found by batch without holding the table (dpgan.tables.fit.streamed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.preprocessing import (
    ROW_COUNT_SCALE,
    TARGET_HISTOGRAM_SCALE,
    PreprocessingPlan,
    private_row_count,
)
from dpgan.tables.fit.preparation import (
    charge_schema,
    plan_for,
    release_read_repairs,
    small_table_notes,
    target_second_cap,
    target_second_chance,
)
from dpgan.tables.fit.quantile_cells import CellCounts, release_cells
from dpgan.tables.fit.row_sample import (
    RowBudget,
    RowSample,
    draw_row_sample,
    model_sample,
    read_rate,
    sampled_batches,
    sampled_rows,
)
from dpgan.tables.inference.column_kinds import PublicHints
from dpgan.tables.inference.infer import schema_from_counts
from dpgan.tables.inference.stream_counts import DEFAULT_DISTINCT_CAP, count_batches, recount_values, recount_wholes
from dpgan.tables.reading.conform import REASONS, conform
from dpgan.tables.reading.parquet_source import OpenSource
from dpgan.tables.schema.table import Schema


@dataclass
class StreamPrepared:
    """What a streamed fit trains on: the schema, N̂, and the conformed rows kept per batch."""

    schema: Schema
    rows: int
    plan: PreprocessingPlan
    kept_per_batch: list[int]
    repairs: dict[str, float] | None = None
    notes: list[str] = field(default_factory=list)
    recounted: tuple[str, ...] = ()  # columns re-read past the distinct-value cap (work, not output)
    read_rate: float = 1.0  # the conform pass read a Poisson sample at this rate (dpgan.tables.fit.row_sample)
    spent_share: float = 0.0  # the share of ε the ledger reaches after these releases

    @property
    def kept_rows(self) -> int:
        return sum(self.kept_per_batch)


def prepare_stream(
    source: OpenSource,
    *,
    schema: Schema | None,
    hints: PublicHints,
    budget: FitBudget,
    fraction: float,
    needs_prior: bool,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    distinct_cap: int = DEFAULT_DISTINCT_CAP,
    consume: Callable[[Schema], Callable[[pd.DataFrame], None]] | None = None,
    row_budget: RowBudget | None = None,
    quantile_cells: bool = False,
) -> StreamPrepared:
    """Steps 1–4 of the module docstring at `fraction` of the fit's `budget` (the DP schema path,
    or a given public schema);
    `consume(schema)`, if given, returns what receives each conformed batch of the conform pass.
    With `row_budget`, the passes take the Poisson sample of dpgan.tables.fit.row_sample when N̂
    exceeds it, as dpgan.tables.fit.preparation.prepare_table does (the same coins in the same order,
    so the same rows). With `quantile_cells` (the marginals model on a hand schema), a pass before
    the conform pass counts the repairs and the numeric cells, released as in memory (the repairs,
    then dpgan.tables.fit.quantile_cells), so the conform pass starts from the cut schema."""
    infer = schema is None
    columns = list(source.columns)
    plan = plan_for(
        columns,
        hints=hints,
        infer=infer,
        count_repairs=True,
        needs_prior=needs_prior,
        budget=budget,
        fraction=fraction,
    )
    rows, count_entry = private_row_count(source.num_rows, plan.sigma(ROW_COUNT_SCALE), rng)
    ledger.add(count_entry)
    sample = None if row_budget is None else draw_row_sample(rows, row_budget(schema), rng)
    notes: list[str] = []
    recounted: list[str] = []
    if schema is None:
        counters = count_batches(sampled_batches(source.batches(), sample), columns, hints, distinct_cap)

        def recount(name: str, wholes: bool):
            recounted.append(name)
            batches = sampled_batches(source.batches(columns=[name]), sample)
            return recount_wholes(batches, name) if wholes else recount_values(batches, name)

        charge_schema(ledger, plan, len(columns), hints, columns)  # as the in-memory path: before the release
        second_cap = target_second_cap(budget, fraction)
        estimated = sampled_rows(rows, sample)
        schema, notes = schema_from_counts(
            columns,
            lambda name: counters[name].class_counts(),
            lambda name, kind: counters[name].domain(kind, recount),
            hints=hints,
            noise_multiplier=plan.sigma(),
            target_noise_multiplier=plan.sigma(TARGET_HISTOGRAM_SCALE),
            threshold_delta=plan.threshold_delta,
            estimated_rows=estimated,
            rng=rng,
            second_chance=target_second_chance(ledger, second_cap, estimated, rng),
        )
    read = model_sample(sample, row_budget, schema)
    spent = fraction
    cells = CellCounts.empty(schema) if quantile_cells else None
    if cells is not None:  # a pass of its own before the conform pass: the repairs, then the cells
        sums, _ = conform_pass(source, read, schema, cells.add)
        repairs, repaired = release_read_repairs(sums, read_rate(read), plan, ledger, rng)
        schema, spent = release_cells(cells, budget=budget, fraction=fraction, ledger=ledger, rng=rng)
    sums, kept = conform_pass(source, read, schema, consume(schema) if consume is not None else None)
    if cells is None:  # else released from the cells' pass (the cut bins change no cell: the same sums)
        repairs, repaired = release_read_repairs(sums, read_rate(read), plan, ledger, rng)
    notes += repaired + small_table_notes(rows, budget.epsilon, plan.sigma(ROW_COUNT_SCALE))
    return StreamPrepared(schema, rows, plan, kept, repairs, notes, tuple(recounted), read_rate(read), spent)


def conform_pass(
    source: OpenSource,
    read: RowSample | None,
    schema: Schema,
    receive: Callable[[pd.DataFrame], None] | None,
) -> tuple[np.ndarray, list[int]]:
    """One pass over the (sampled) batches mapped into `schema`: the repair indicators' sums and the
    rows each batch keeps; `receive`, if given, gets each conformed batch."""
    sums = np.zeros(len(REASONS), dtype=np.int64)
    kept: list[int] = []
    for batch in sampled_batches(source.batches(), read):
        conformed = conform(batch, schema)
        sums += conformed.repairs.sum(axis=0)
        kept.append(len(conformed.frame))
        if receive is not None:
            receive(conformed.frame)
    return sums, kept
