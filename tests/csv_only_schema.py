"""The schema a default CSV-only fit learns of a frame, at the noise such a fit adds: shared by the
tests of the CSV-only path's releases (numbers, nulls, dates), so each checks the σ of one plan."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.preprocessing import TARGET_HISTOGRAM_SCALE
from dpgan.tables.fit.plan import NO_SCHEMA_PREPROCESSING_FRACTION
from dpgan.tables.fit.preparation import plan_for
from dpgan.tables.inference.column_kinds import PublicHints
from dpgan.tables.inference.infer import infer_schema_private
from dpgan.tables.schema.table import Schema


def learn_csv_only(frame: pd.DataFrame, seed: int, epsilon: float, columns: int, target: str | None = None) -> Schema:
    """The schema a default CSV-only fit learns of `frame` at `epsilon`, its σ that of a table of
    `columns` columns (the plan's, at the default share of ε for the schema releases)."""
    hints = PublicHints(target=target)
    plan = plan_for(
        [f"c{i}" for i in range(columns)], hints=hints, infer=True, count_repairs=True, needs_prior=False,
        budget=FitBudget(epsilon, 1e-5, "rdp"), fraction=NO_SCHEMA_PREPROCESSING_FRACTION,
    )  # fmt: skip
    schema, _ = infer_schema_private(
        frame, hints=hints, noise_multiplier=plan.sigma(), target_noise_multiplier=plan.sigma(TARGET_HISTOGRAM_SCALE),
        threshold_delta=plan.threshold_delta, estimated_rows=float(len(frame)), rng=np.random.default_rng(seed),
    )  # fmt: skip
    return schema
