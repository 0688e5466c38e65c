"""TSTR with every column in turn as the target: utility that a label model cannot carry alone.

Why: dpgan's label model redraws the schema's target from the other columns, so the target's TSTR
score says how well that one classifier works, not how well the rows keep the dependencies an
analyst will model (any column from the others). This scores each column as a target in turn with
one model (a random forest: it needs no tuning and catches non-linear dependence), trained on the
synthetic rows and, for the reference, on the real training rows, both tested on real held-out
rows: ROC AUC (macro one-vs-rest for more than two classes) for categorical and boolean columns, R²
for numeric ones. Rows whose target cell is missing are left out of that column's three sets.
Frames are capped at `max_rows` rows (a seeded subset) so that a wide table stays quick.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpgan.evaluation.fidelity import column_kinds, is_numeric_kind
from dpgan.evaluation.ml_efficacy import ml_efficacy
from dpgan.schema import Schema

MODEL = "random_forest"
MAX_ROWS = 5000


def _capped(frame: pd.DataFrame, max_rows: int, rng: np.random.Generator) -> pd.DataFrame:
    if len(frame) <= max_rows:
        return frame.reset_index(drop=True)
    return frame.iloc[np.sort(rng.choice(len(frame), max_rows, replace=False))].reset_index(drop=True)


def every_column_tstr(
    real_train: pd.DataFrame,
    synthetic: pd.DataFrame,
    real_test: pd.DataFrame,
    schema: Schema | None = None,
    *,
    seed: int = 0,
    n_jobs: int = 1,
    max_rows: int = MAX_ROWS,
) -> dict[str, Any]:
    """{"columns": {name: {"task", "metric", "tstr", "trtr", "diff"}}, "mean_auc": {tstr, trtr},
    "mean_r2": {tstr, trtr}}; a column whose real training rows hold one class, or whose synthetic
    rows hold one class (no classifier can be trained: TSTR is scored as chance, AUC 0.5), is said so
    in its entry's "note"."""
    kinds = column_kinds(real_train, schema)
    columns: dict[str, dict[str, Any]] = {}
    for target in real_train.columns:
        rng = np.random.default_rng(seed)
        frames = [_capped(f[f[target].notna()], max_rows, rng) for f in (real_train, synthetic, real_test)]
        regression = is_numeric_kind(kinds[target])
        metric = "r2" if regression else "roc_auc"
        entry: dict[str, Any] = {"task": "regression" if regression else "classification", "metric": metric}
        if min(len(f) for f in frames) < 2 or (not regression and frames[0][target].nunique() < 2):
            columns[target] = entry | {"tstr": None, "trtr": None, "diff": None, "note": "too few rows or classes"}
            continue
        scores = ml_efficacy(*frames, target, kinds, models=[MODEL], seed=seed, n_jobs=n_jobs)["scores"][MODEL][metric]
        tstr, trtr = scores["tstr"], scores["trtr"]
        if tstr is None and not regression:  # one synthetic class: it predicts that class, chance ranking
            tstr, entry["note"] = 0.5, "the synthetic rows hold one class: scored as chance (AUC 0.5)"
        entry |= {"tstr": tstr, "trtr": trtr, "diff": None if None in (tstr, trtr) else trtr - tstr}
        columns[target] = entry
    out: dict[str, Any] = {"model": MODEL, "columns": columns}
    for key, metric in (("mean_auc", "roc_auc"), ("mean_r2", "r2")):
        chosen = [
            e for e in columns.values() if e["metric"] == metric and e["tstr"] is not None and e["trtr"] is not None
        ]
        out[key] = (
            {side: float(np.mean([e[side] for e in chosen])) for side in ("tstr", "trtr")} | {"columns": len(chosen)}
            if chosen
            else None
        )
    return out


__all__ = ["every_column_tstr"]
