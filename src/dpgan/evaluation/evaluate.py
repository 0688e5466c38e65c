"""One call that scores a synthetic table: utility, fidelity, the model's privacy ledger, attacks.

The result is the `metrics.json` structure of `dpgan evaluate`; `dpgan.evaluation.tables.report` turns
it into a page a person can read. Inputs are checked before any model is trained, so a typo in a
column name costs one line on stderr, not minutes of fitting.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.evaluation.headline import table_headline
from dpgan.evaluation.jsonable import to_jsonable
from dpgan.evaluation.tables.code_levels import add_level_scores, without_keys
from dpgan.evaluation.tables.dates import temporal_columns, with_date_parts
from dpgan.evaluation.tables.fidelity import MISSING, column_kinds, fidelity, is_numeric_kind
from dpgan.evaluation.tables.learned_columns import learned_entry
from dpgan.evaluation.tables.ml_efficacy import Progress, ml_efficacy
from dpgan.evaluation.tables.rules import rules_entry, rules_schema
from dpgan.evaluation.tables.utility import balanced_rf_accuracy
from dpgan.tables.schema.table import Schema

UTILITY_PROTOCOL = (
    "DTGAN: scikit-learn defaults, one-hot categoricals, min-max scaled numerics; "
    "trained on synthetic rows (TSTR) or real training rows (TRTR), scored on the real test rows; "
    "diff = real − synthetic"
)
BALANCED_RF_PROTOCOL = "dp-GAN: classes down-sampled to balance in train and test, random forest accuracy on test"


def evaluate(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    test: pd.DataFrame,
    target: str,
    *,
    schema: Schema | None = None,
    model_dir: str | Path | None = None,
    attacks: bool = False,
    attack_config: Any | None = None,
    progress: Progress | None = None,
    models: Sequence[str] | None = None,
    seed: int = 0,
    n_jobs: int = 1,
) -> dict[str, Any]:
    """Score `synthetic` against the real training rows `real` and the held-out real rows `test`.

    `progress(stage, done, total)` is called as work advances. `attack_config` (an
    `attacks.AttackConfig`) sets the attacks' cost knobs; None keeps their defaults. `models` restricts the utility
    models (default: all four). The privacy section is the saved model's ledger, so it is only as
    good as `model_dir` is the model that made `synthetic`; without it the section is None.
    """
    if not isinstance(n_jobs, int) or n_jobs < 1:
        raise InputError(f"n_jobs (--jobs) must be a positive number of cores, not {n_jobs!r}")
    real, synthetic, test = (without_keys(frame, schema) for frame in (real, synthetic, test))  # never learned
    _check_frames(real, synthetic, test, target, schema)
    columns = list(real.columns)
    kinds = column_kinds(real, schema)
    # dates and times: their number and their parts (year, month, weekday, hour), not their text
    dated, kinds = with_date_parts(_named(real, synthetic, test), kinds, temporal_columns(real, kinds, schema))
    frames = {name: _harmonise(frame, kinds, name) for name, frame in dated.items()}
    if not is_numeric_kind(kinds[target]) and frames["real"][target].nunique() < 2:
        raise InputError(f"target {target!r} has a single class in the real training table: nothing to predict")

    utility = ml_efficacy(
        frames["real"], frames["synthetic"], frames["test"], target, kinds,
        models=models, seed=seed, n_jobs=n_jobs, progress=progress,
    )  # fmt: skip
    metrics: dict[str, Any] = {
        "target": target,
        "rows": {name: len(frame) for name, frame in frames.items()},
        "columns": kinds,
        "utility": utility["scores"],
        "utility_summary": {
            "task": utility["task"],
            "positive_label": utility["positive_label"],
            "classes": utility["classes"],
            "mean": utility["mean"],
            "protocol": UTILITY_PROTOCOL,
            "notes": utility["notes"],
        },
        "balanced_rf_accuracy": _balanced_rf(frames, target, kinds, seed, n_jobs, progress),
    }
    if progress is not None:
        progress("fidelity", 0, 2)
    metrics["fidelity"] = fidelity(frames["real"], frames["synthetic"], kinds)
    add_level_scores(metrics["fidelity"]["per_column"], frames["real"], frames["synthetic"], schema)
    if progress is not None:
        progress("fidelity", 1, 2)
    # the same measures for the held-out rows: the real side of the headline score
    metrics["headline"] = table_headline(metrics, fidelity(frames["real"], frames["test"], kinds))
    if progress is not None:
        progress("fidelity", 2, 2)
    metrics["privacy"] = _privacy(model_dir)
    # the schema's rules: real rows breaking each, and the synthetic ones (0 when the model kept them)
    metrics["rules"] = rules_entry(_named(real, synthetic, test), rules_schema(schema, model_dir))
    # per column, what the model learned and what that misses on the real rows (nothing lost silently)
    metrics["learned"] = learned_entry(schema, model_dir, real, synthetic)
    metrics["attacks"] = None
    if attacks:
        run_attacks = _attacks_entry_point()
        options = {} if attack_config is None else {"config": attack_config}
        metrics["attacks"] = run_attacks(
            real[columns], test[columns], synthetic[columns],
            target=target, schema=schema, model_dir=None if model_dir is None else str(model_dir), progress=progress,
            **options,
        )  # fmt: skip
    return to_jsonable(metrics)


def save_metrics(metrics: dict[str, Any], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_jsonable(metrics), indent=1, allow_nan=False))
    return path


def _named(real: pd.DataFrame, synthetic: pd.DataFrame, test: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {"real": real, "synthetic": synthetic, "test": test}


def _check_frames(
    real: pd.DataFrame, synthetic: pd.DataFrame, test: pd.DataFrame, target: str, schema: Schema | None
) -> None:
    for name, frame in _named(real, synthetic, test).items():
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"the {name} table must be a pandas DataFrame, not {type(frame).__name__}")
        if len(frame) == 0 or frame.shape[1] == 0:
            raise InputError(f"the {name} table is empty")
        if len(set(map(str, frame.columns))) != frame.shape[1]:
            raise InputError(f"the {name} table has duplicate column names")
    if target not in real.columns:
        raise InputError(f"target {target!r} is not a column of the real table ({', '.join(map(str, real.columns))})")
    if real.shape[1] < 2:
        raise InputError("the tables need at least one column besides the target")
    expected = set(real.columns)
    for name, frame in (("synthetic", synthetic), ("test", test)):
        missing = [str(c) for c in real.columns if c not in frame.columns]
        extra = [str(c) for c in frame.columns if c not in expected]
        if missing or extra:
            detail = "; ".join(
                part
                for part in (
                    f"missing {', '.join(missing)}" if missing else "",
                    f"not in the real table: {', '.join(extra)}" if extra else "",
                )
                if part
            )
            raise InputError(f"the {name} table's columns do not match the real table's ({detail})")
    if schema is not None:
        absent = [str(c) for c in real.columns if c not in schema.names]
        if absent:
            raise InputError(f"columns not in the schema: {', '.join(absent)}")


def _harmonise(frame: pd.DataFrame, kinds: dict[str, str], name: str) -> pd.DataFrame:
    """Numeric columns as float, others as strings with missing values as one category.

    CSV round trips change dtypes (1 vs "1", int vs float): comparing the values by kind keeps
    the same category from counting as two.
    """
    out = {}
    for column, kind in kinds.items():
        series = frame[column]
        if is_numeric_kind(kind):
            numeric = pd.to_numeric(series, errors="coerce")
            bad = numeric.isna() & series.notna()
            if bool(bad.any()):
                raise InputError(
                    f"column {column!r} of the {name} table is {kind} but holds cells that are not numbers"
                )
            out[column] = numeric.astype(np.float64)
        else:
            out[column] = series.astype(object).where(series.notna(), MISSING).astype(str)
    return pd.DataFrame(out, index=frame.index).reset_index(drop=True)


def _balanced_rf(
    frames: dict[str, pd.DataFrame],
    target: str,
    kinds: dict[str, str],
    seed: int,
    n_jobs: int,
    progress: Progress | None,
) -> dict[str, Any]:
    if is_numeric_kind(kinds[target]):
        return {"synthetic": None, "real": None, "note": "classification only: the target is numeric"}
    if progress is not None:
        progress("balanced random forest", 0, 2)
    real = balanced_rf_accuracy(frames["real"], frames["test"], target, seed, n_jobs=n_jobs)
    if progress is not None:
        progress("balanced random forest", 1, 2)
    synthetic = balanced_rf_accuracy(frames["synthetic"], frames["test"], target, seed, n_jobs=n_jobs)
    if progress is not None:
        progress("balanced random forest", 2, 2)
    out: dict[str, Any] = {"synthetic": synthetic, "real": real, "protocol": BALANCED_RF_PROTOCOL}
    if synthetic is None:
        out["note"] = "the synthetic table has a single class: no classifier can be trained on it"
    return out


def _privacy(model_dir: str | Path | None) -> dict[str, Any] | None:
    if model_dir is None:
        return None
    from dpgan.inspection import inspect_model

    report = inspect_model(model_dir)
    report["model_dir"] = str(model_dir)
    return report


def _attacks_entry_point() -> Any:
    try:
        from dpgan.evaluation.attacks import run_attacks
    except ImportError as exc:
        if exc.name != "dpgan.evaluation.attacks":
            raise  # the module exists but is broken: show the real error
        raise InputError(f"privacy attacks are not available in this installation ({exc})") from None
    return run_attacks
