"""Where a table fit enters the fit pipeline: step 1, the pipeline with the table kind, the cleanup.

The flow is dpgan.tables.fit.plan's (its docstring). This module opens the ledger with the
schema's purchase (step 1: the one table step before the pipeline), runs the pipeline (dpgan.fit)
with the table kind (in memory: dpgan.tables.fit.kind; Parquet in record batches:
dpgan.tables.fit.streamed) on the facade's one `FitBudget` (carried by `FitSettings`, never
copied), and deletes the resume checkpoint once the fit has succeeded.

Why apart from the kinds: the flow goes down the spine without going back up into a file it
left. The facade's runs (dpgan.synthesizers.table_runs) call here; here calls the pipeline; the
pipeline calls the kind's steps; the kind calls the preparation, the plug-ins and the engine. A
kind's file that also started the pipeline would be entered twice (it was: kind.py → fit.py →
kind.py; bench/notes/31 has the counts).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import BudgetError
from dpgan.fit import data_kind, run_fit
from dpgan.privacy.accounting import Entry, PrivacyLedger, entry_from_dict
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.tables.fit.kind import TableKind
from dpgan.tables.fit.options import FitOptions
from dpgan.tables.fit.plan import FitSettings, FittedTable
from dpgan.tables.fit.plugins import TableExtras
from dpgan.tables.fit.public_data import PublicTable
from dpgan.tables.fit.resume import ResumableFit
from dpgan.tables.fit.streamed import StreamedTableKind
from dpgan.tables.reading.parquet_source import OpenSource
from dpgan.tables.schema.table import Schema
from dpgan.training.context import FitContext
from dpgan.training.progress import FitProgressFn


def fit_table(
    data: pd.DataFrame,
    schema: Schema | None,
    options: FitOptions,
    settings: FitSettings,
    progress: FitProgressFn | None,
    rng: np.random.Generator,
    resume: ResumableFit | None = None,
    public: PublicTable | None = None,
    context: ProcessGroupContext = SINGLE_PROCESS,
) -> FittedTable:
    """Train on `data` following dpgan.tables.fit.plan's flow, through the one fit pipeline
    (dpgan.fit) with the table kind; every random draw comes from `rng` or torch's (possibly seeded)
    global RNG. With `resume`, the loop checkpoints and resumes (dpgan.tables.fit.resume); the
    checkpoint is deleted once the fit has succeeded."""
    return run_table_kind(TableKind.name, data, progress, rng, schema=schema, options=options, settings=settings,
                          resume=resume, public=public, context=context)  # fmt: skip


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
    """Train on the stream following dpgan.tables.fit.streamed's flow, through the one fit pipeline
    (dpgan.fit) with `StreamedTableKind`; the draws from `rng` come in the order of the in-memory
    fit's, so the ledger equals the in-memory fit's for the same seed.

    Data-parallel (`context`, under torchrun): every rank reads the whole stream in the same order
    with the same `rng` (its seed broadcast by the facade), so every release before training is
    made identically on every rank, and the Poisson batches are the same row indices on every rank;
    each rank gathers a batch's rows from the stream and clips its share of positions, and the
    clipped sums are all-reduced before the one noise draw (dpgan.privacy.distributed), as for a
    table in memory. The ledger is the single-process one."""
    return run_table_kind(StreamedTableKind.name, opened, progress, rng, schema=schema, options=options,
                          settings=settings, resume=None, public=public, context=context)  # fmt: skip


def run_table_kind(
    name: str,
    data: Any,
    progress: FitProgressFn | None,
    rng: np.random.Generator,
    *,
    schema: Schema | None,
    settings: FitSettings,
    **kind_settings: Any,
) -> FittedTable:
    """The pipeline with the table kind `name` (in memory or streamed): the ledger opens with the
    schema's purchase (step 1), the fit runs, the resume checkpoint (secret material) is deleted."""
    budget = settings.budget  # the facade's one object (dpgan.api.Synthesizer.budget), not a copy
    ledger, purchased = open_ledger(schema, settings)  # step 1
    ctx = FitContext(budget, ledger, rng, purchased)
    kind: TableKind = data_kind(name, schema=schema, settings=settings, **kind_settings)  # type: ignore[assignment]
    fitted = run_fit(kind, data, budget, progress, ctx)
    if kind.checkpoint is not None:
        kind.context.barrier()  # every rank has read it before rank 0 deletes it
        kind.checkpoint.remove()  # secret material (dpgan.training.checkpoint)
    extras: TableExtras = fitted.data.details
    return FittedTable(
        ledger, extras.encoder.schema, extras.encoder, fitted.model, extras.condition, extras.label_model,
        fitted.record, fitted.critic,
    )  # fmt: skip


def purchased_schema_entries(schema: Schema | None) -> list[Entry]:
    """The ledger events a schema learned with DP carries (`dpgan schema`): they open the fit's
    ledger, so the ε printed for the model covers the schema's purchase too."""
    if schema is None:
        return []
    return [entry_from_dict(entry) for entry in schema.ledger]


def open_ledger(schema: Schema | None, settings: FitSettings) -> tuple[PrivacyLedger, float]:
    """Step 1: the ledger, capped at the fit's budget and holding the schema's recorded DP purchase
    if any, and the share of ε that purchase spent (half of ε or more is refused before any read)."""
    budget = settings.budget
    # every release after this is refused if it would take the ledger past (ε, δ)
    ledger = PrivacyLedger(purchased_schema_entries(schema), budget.ledger_budget())
    purchased = ledger.epsilon(budget.delta, budget.accountant) / budget.epsilon if ledger.entries else 0.0
    if purchased >= 0.5:
        raise BudgetError(
            f"the schema's DP purchase already spends {purchased:.0%} of ε={budget.epsilon:g}: fit with a larger ε"
        )
    return ledger, purchased


__all__ = ["fit_stream", "fit_table", "open_ledger", "purchased_schema_entries", "run_table_kind"]
