"""Where and how a table fit runs: its seed, device and threads, resume, and torchrun's ranks.

The fit itself is dpgan.tables.fit.plan's (in memory) or dpgan.tables.fit.streamed's (Parquet in
record batches), started by dpgan.tables.fit.run; this module puts it in place:
- the fit's generator comes from the seed (the user's, a checkpoint's, or OS entropy); seeded, the
  networks' weights (torch's global RNG) are seeded too and the caller's RNG state is restored;
- with a checkpoint directory the seed is the one the checkpoint keeps (dpgan.tables.fit.resume);
- data-parallel (torchrun, dpgan.privacy.distributed): every rank must hold the same table (or the
  same Parquet files), checked by a digest compared between the processes only (never released),
  and every rank uses rank 0's seed, so the releases are made identically on every rank; only rank
  0 writes files. On GPUs each rank trains on its own device (LOCAL_RANK).
"""

from __future__ import annotations

import secrets
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd
import torch

from dpgan.devices import on_device, seeded_fork
from dpgan.errors import DPGanWarning
from dpgan.privacy.distributed import ProcessGroupContext, process_group_context
from dpgan.tables.fit.options import FitOptions
from dpgan.tables.fit.plan import FitSettings, FittedTable
from dpgan.tables.fit.public_data import PublicTable
from dpgan.tables.fit.resume import resumable_fit, table_fingerprint
from dpgan.tables.fit.run import fit_stream, fit_table
from dpgan.tables.reading.parquet_source import OpenSource, files_digest
from dpgan.tables.schema.table import Schema
from dpgan.threads import fit_threads
from dpgan.training.progress import FitProgressFn

T = TypeVar("T")


@dataclass(frozen=True)
class RunPlace:
    """The facade's device and CPU threads (its seed is the budget's: `FitSettings.budget.seed`)."""

    device: torch.device
    threads: int


@dataclass(frozen=True)
class TableRun:
    fitted: FittedTable
    writes_files: bool  # rank 0 of a data-parallel fit, or the one process


def run_in_memory(
    data: pd.DataFrame,
    schema: Schema | None,
    options: FitOptions,
    settings: FitSettings,
    place: RunPlace,
    progress: FitProgressFn | None,
    checkpoint: str | Path | None,
    checkpoint_every: int,
    public: PublicTable | None,
) -> TableRun:
    """A table held in memory, optionally resumable and data-parallel."""
    user_seed = settings.budget.seed  # None: OS entropy
    resume = None
    if checkpoint is not None:
        resume = resumable_fit(
            checkpoint,
            checkpoint_every,
            data=data,
            schema=schema,
            options=options,
            settings=settings.identity(),
            user_seed=user_seed,
            public=None if public is None else public.record,
        )
    fit_seed = user_seed if resume is None else resume.fit_seed
    context = process_group_context(device=str(place.device))
    if context.distributed:
        fit_seed = context.lockstep_seed(int(table_fingerprint(data)[:15], 16), "tables", fit_seed)
        if resume is not None:  # rank 0's seed is the one its checkpoint keeps
            resume = replace(resume, identity={**resume.identity, "fit_seed": fit_seed})
    note = None if resume is None or not context.is_main else resume.started_note(user_seed is not None)
    if note is not None:
        warnings.warn(note, DPGanWarning, stacklevel=3)  # the user's call of fit
    fitted = seeded_run(
        fit_seed,
        _device(context, place.device),
        place.threads,
        lambda rng: fit_table(data, schema, options, settings, progress, rng, resume, public, context),
    )
    return TableRun(fitted, context.is_main)


def run_streamed(
    opened: OpenSource,
    schema: Schema | None,
    options: FitOptions,
    settings: FitSettings,
    place: RunPlace,
    progress: FitProgressFn | None,
    public: PublicTable | None,
) -> TableRun:
    """A Parquet source read in record batches; under torchrun every rank streams the same files."""
    context = process_group_context(device=str(place.device))
    seed = settings.budget.seed
    if context.distributed:
        seed = context.lockstep_seed(files_digest(opened.files), "Parquet files", seed)
    fitted = seeded_run(
        seed,
        _device(context, place.device),
        place.threads,
        lambda rng: fit_stream(opened, schema, options, settings, progress, rng, public, context),
    )
    return TableRun(fitted, context.is_main)


def _device(context: ProcessGroupContext, device: torch.device) -> torch.device:
    """Data-parallel on GPUs: each rank trains on its own GPU (LOCAL_RANK), NCCL between them."""
    return torch.device(context.device) if context.distributed and device.type == "cuda" else device


def seeded_run(seed: int | None, device: torch.device, threads: int, run: Callable[[np.random.Generator], T]) -> T:
    """`run(rng)` on `device` with `threads` CPU threads (dpgan.threads) and the fit's generator: from
    `seed`, or OS entropy without one. Seeded, the network weights (drawn from torch's global RNG) are
    seeded too, and the caller's global RNG state is left as it was."""
    rng = np.random.default_rng(secrets.randbits(64) if seed is None else seed)
    if seed is None:
        with on_device(device), fit_threads(threads):
            return run(rng)
    with seeded_fork(device), on_device(device), fit_threads(threads):
        torch.manual_seed(int(rng.integers(0, 2**63 - 1)))
        return run(rng)


__all__ = ["RunPlace", "TableRun", "run_in_memory", "run_streamed", "seeded_run"]
