"""TSTR with every column in turn as the target: utility that a label model cannot carry alone.

Why: dpgan's label model redraws the schema's target from the other columns, so the target's TSTR
score says how well that one classifier works, not how well the rows keep the dependencies an
analyst will model (any column from the others). This scores each column as a target in turn with
one model (a random forest: it needs no tuning and catches non-linear dependence), trained on the
synthetic rows and, for the reference, on the real training rows, both tested on real held-out
rows: ROC AUC (macro one-vs-rest for more than two classes) for categorical and boolean columns, R²
for numeric ones. The features and their encoding are ml_efficacy's (`FeatureEncoder`: one-hot,
min-max, a missing numeric cell reads as 0, a missing category is a category of its own).

Rows whose target cell is missing are left out of that column's three sets. Each set is capped at
`max_rows` rows, a subset drawn with its own generator from `seed`: two identical sets keep the
same rows, so synthetic rows equal to the real ones score exactly what the real ones score.

When the synthetic rows cannot train a model for a column (one class, or fewer than two rows with
the target present), the column's TSTR is chance: AUC 0.5, or R² 0.0 (predicting the mean), with a
"note"; it still counts in the means, so a synthesizer that loses a column is not flattered. When
the real rows cannot score a column (one class, or too few rows, in the training or test set),
there is no reference: TSTR and TRTR are None, a "note" says why, and the column is left out of
the means.

Privacy: this reads the real training and test rows exactly; it is an evaluation for the data
owner, like ml_efficacy, and its numbers are not differentially private.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.evaluation.tables.fidelity import as_labels, column_kinds, is_numeric_kind
from dpgan.evaluation.tables.ml_efficacy import ml_efficacy
from dpgan.tables.schema.table import Schema

MODEL = "random_forest"
MAX_ROWS = 5000
CHANCE = {"roc_auc": 0.5, "r2": 0.0}  # a model that ranks at random / predicts the mean


def _capped(frame: pd.DataFrame, max_rows: int, seed: int) -> pd.DataFrame:
    """A seeded subset of at most `max_rows` rows; the same frame and seed give the same rows."""
    if len(frame) <= max_rows:
        return frame.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    return frame.iloc[np.sort(rng.choice(len(frame), max_rows, replace=False))].reset_index(drop=True)


def _present(frame: pd.DataFrame, target: str, regression: bool) -> pd.DataFrame:
    """The rows whose target cell holds a value (a number, for a numeric target)."""
    values = pd.to_numeric(frame[target], errors="coerce") if regression else frame[target]
    return frame[values.notna().to_numpy()]


def _check(real_train: pd.DataFrame, synthetic: pd.DataFrame, real_test: pd.DataFrame, max_rows: int) -> None:
    for name, frame in (("real training", real_train), ("synthetic", synthetic), ("real test", real_test)):
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"the {name} table must be a pandas DataFrame, not {type(frame).__name__}")
        missing = [c for c in real_train.columns if c not in frame.columns]
        if missing:
            raise InputError(f"the {name} table lacks {len(missing)} of the real training columns, e.g. {missing[0]!r}")
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 2:
        raise InputError(f"max_rows must be an integer of at least 2, not {max_rows!r}")


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
    """Each column of `real_train` in turn as the target; see the module docstring for the protocol.

    Returns {"model", "max_rows", "columns": {name: {"task", "metric", "tstr", "trtr", "diff"
    (TRTR − TSTR), "note" (only where a score is chance or missing)}}, "mean_auc": {"tstr", "trtr",
    "columns"} or None, "mean_r2": likewise}. Deterministic given `seed`.
    """
    _check(real_train, synthetic, real_test, max_rows)
    kinds = column_kinds(real_train, schema)
    columns: dict[str, dict[str, Any]] = {}
    for target in real_train.columns:
        regression = is_numeric_kind(kinds[target])
        metric = "r2" if regression else "roc_auc"
        entry: dict[str, Any] = {"task": "regression" if regression else "classification", "metric": metric}
        train, synth, test = (
            _capped(_present(f[list(real_train.columns)], target, regression), max_rows, seed)
            for f in (real_train, synthetic, real_test)
        )
        reference = _no_reference(train, test, target, regression)
        if reference is not None:
            columns[target] = entry | {"tstr": None, "trtr": None, "diff": None, "note": reference}
            continue
        scores = ml_efficacy(train, synth, test, target, kinds, models=[MODEL], seed=seed, n_jobs=n_jobs)
        tstr, trtr = (scores["scores"][MODEL][metric][side] for side in ("tstr", "trtr"))
        untrainable = _cannot_train(synth, target, regression)
        if untrainable is not None:  # nothing to train on: the synthetic side scores as chance
            tstr = CHANCE[metric]
            entry["note"] = f"the synthetic rows hold {untrainable}: TSTR scored as chance ({metric} {tstr})"
        entry |= {"tstr": tstr, "trtr": trtr, "diff": None if None in (tstr, trtr) else trtr - tstr}
        columns[target] = entry
    out: dict[str, Any] = {"model": MODEL, "max_rows": max_rows, "columns": columns}
    for key, metric in (("mean_auc", "roc_auc"), ("mean_r2", "r2")):
        chosen = [e for e in columns.values() if e["metric"] == metric and None not in (e["tstr"], e["trtr"])]
        out[key] = (
            {side: float(np.mean([e[side] for e in chosen])) for side in ("tstr", "trtr")} | {"columns": len(chosen)}
            if chosen
            else None
        )
    return out


def _cannot_train(frame: pd.DataFrame, target: str, regression: bool) -> str | None:
    """Why no model can be trained on `frame` to predict `target` (None: one can)."""
    if len(frame) < 2:
        return "fewer than two rows with the target present"
    if not regression and as_labels(frame[target]).nunique() < 2:
        return "one class of the target"
    return None


def _no_reference(train: pd.DataFrame, test: pd.DataFrame, target: str, regression: bool) -> str | None:
    """Why the real rows give no TRTR reference for `target` (None: they do)."""
    reason = _cannot_train(train, target, regression)
    if reason is not None:
        return f"the real training rows hold {reason}: no reference"
    if len(test) < 2:
        return "the real test rows hold fewer than two rows with the target present: no reference"
    if not regression and as_labels(test[target]).nunique() < 2:
        return "the real test rows hold one class: AUC undefined, no reference"
    if regression and pd.to_numeric(test[target]).nunique() < 2:
        return "the real test rows hold one value: R² undefined, no reference"
    return None


__all__ = ["every_column_tstr"]
