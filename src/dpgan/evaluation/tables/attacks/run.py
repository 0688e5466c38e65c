"""Privacy attacks on a synthetic table and the recipe that made it (issue 3, "Privacy attacks").

`run_attacks` runs four attacks and returns one JSON-ready dict:
- "dcr": distance to closest record against an equal-size holdout (black box, the table only);
- "attribute": Stadler et al.'s linear attribute inference, members vs non-members;
- "membership": Stadler et al.'s shadow-model membership inference on outlier targets;
- "logan": Hayes et al.'s white-box attack with the critic of a stand-in trained by the recipe.
Series have their own shadow-model attack (`shadow_membership_series`, dpgan.evaluation.sequences.membership):
it takes the synthesizer as a fit-and-sample callable, since a sequence model's refits are the caller's.
The last two retrain the synthesizer, so they need the saved model (`model_dir`) for its recipe, or
an injected `synthesizer_factory`; without either they are reported as skipped, with the reason.
Attacks are regression alarms: a result near chance is no proof of DP (the audit tests that).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import DPGanError, InputError
from dpgan.evaluation.attacks.config import ATTACKS, AttackConfig
from dpgan.evaluation.attacks.progress import Progress, TqdmProgress, reporter
from dpgan.evaluation.attacks.results import jsonable, skipped
from dpgan.evaluation.attacks.synthesizers import SynthesizerFactory
from dpgan.evaluation.tables.attacks.attribute import attribute_attack, choose_sensitive
from dpgan.evaluation.tables.attacks.dcr import dcr_attack
from dpgan.evaluation.tables.attacks.encoding import AttackEncoder
from dpgan.evaluation.tables.attacks.logan import logan_attack
from dpgan.evaluation.tables.attacks.membership import shadow_membership_attack
from dpgan.evaluation.tables.attacks.recipe import ModelRecipe, model_recipe
from dpgan.evaluation.tables.attacks.targets import craft_outlier, isolated_records
from dpgan.tables.schema.table import Schema
from dpgan.training.progress_bar import quiet_fits

__all__ = ["run_attacks"]

NEEDS_MODEL = (
    "needs model_dir: this attack retrains the synthesizer with the model's recipe "
    "(ε, δ, schema, training configuration), which only the saved model holds"
)


def run_attacks(
    real_train: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    target: str,
    schema: Schema | dict | str | Path | None = None,
    model_dir: str | Path | None = None,
    config: AttackConfig | None = None,
    progress: Progress | None = None,
    synthesizer_factory: SynthesizerFactory | None = None,
) -> dict[str, Any]:
    """Run the attacks of `config.run` and return {"dcr", "attribute", "membership", "logan"}.

    `real_train` is the table the model was trained on, `holdout` real rows it never saw (the
    attacker's reference data), `synthetic` the released table. `target` is the prediction target
    (the default sensitive column when no numeric column exists). `schema` (else the model's)
    fixes bounds and categories for the encodings. `progress(stage, done, total)` replaces the
    default tqdm bars. `synthesizer_factory` replaces the model's recipe for the retraining attacks.
    """
    config = config or AttackConfig()
    columns = _check_tables(real_train, holdout, synthetic)
    holdout, synthetic = holdout[columns], synthetic[columns]
    if target not in columns:
        raise InputError(f"target {target!r} is not a column of the tables")
    schema = _coerce_schema(schema)
    recipe = None
    if model_dir is not None:
        recipe = model_recipe(
            model_dir, epochs=config.epochs, accountant=config.accountant, match_sample_rate=config.match_sample_rate
        )
    public_schema = schema if schema is not None else (recipe.schema if recipe else None)
    encoder = AttackEncoder.build([real_train, holdout], public_schema)
    rngs = dict(zip(ATTACKS, (np.random.default_rng(s) for s in np.random.SeedSequence(config.seed).spawn(4))))
    report = reporter(progress)
    factory = synthesizer_factory or (recipe.factory() if recipe else None)
    fit_schema = recipe.schema if recipe is not None and synthesizer_factory is None else public_schema
    how = _describe_factory(recipe, synthesizer_factory)

    results: dict[str, Any] = {}
    try:
        for name in ATTACKS:
            if name not in config.run:
                results[name] = skipped("not requested (AttackConfig.run)")
            elif name in ("membership", "logan") and factory is None:
                results[name] = skipped(NEEDS_MODEL)
        if "dcr" not in results:
            results["dcr"] = dcr_attack(
                real_train, holdout, synthetic, encoder=encoder, config=config, rng=rngs["dcr"], progress=report
            )
        if "attribute" not in results:
            sensitive = choose_sensitive(encoder, target, config.sensitive)
            results["attribute"] = attribute_attack(
                real_train, holdout, synthetic, encoder=encoder, sensitive=sensitive, config=config,
                rng=rngs["attribute"], progress=report,
            )  # fmt: skip
        if "membership" not in results:
            results["membership"] = _retraining(
                lambda f: _membership(real_train, holdout, f, fit_schema, encoder, config, rngs["membership"], report),
                factory,
                how,
            )
        if "logan" not in results:
            results["logan"] = _retraining(
                lambda f: logan_attack(
                    real_train, holdout, factory=f, config=config, schema=fit_schema, rng=rngs["logan"], progress=report
                ),
                factory,
                how,
            )
    finally:
        if isinstance(report, TqdmProgress):
            report.close()
    return jsonable({name: results[name] for name in ATTACKS})


def _membership(
    real_train: pd.DataFrame,
    holdout: pd.DataFrame,
    factory: SynthesizerFactory,
    schema: Schema | None,
    encoder: AttackEncoder,
    config: AttackConfig,
    rng: np.random.Generator,
    progress: Progress,
) -> dict[str, Any]:
    """Targets: a crafted outlier from the reference data, then the most isolated training records."""
    train = real_train.reset_index(drop=True)
    targets: list[tuple[str, pd.DataFrame]] = [("crafted outlier", craft_outlier(holdout, encoder))]
    picked = isolated_records(train, encoder, config.n_targets - 1, rng)
    # Only positions are reported: a real record's values must not end up in metrics.json.
    targets += [(f"training record (row {i})", train.iloc[[i]].reset_index(drop=True)) for i in picked]
    test_pool = train.drop(index=picked).reset_index(drop=True)
    return shadow_membership_attack(
        holdout.reset_index(drop=True), test_pool, targets, factory=factory, encoder=encoder, config=config,
        schema=schema, rng=rng, progress=progress,
    )  # fmt: skip


def _retraining(
    run: Callable[[SynthesizerFactory], dict[str, Any]], factory: SynthesizerFactory | None, how: Any
) -> dict[str, Any]:
    """Run an attack that retrains the synthesizer, and say which synthesizer it retrained.

    A retraining that the data or the budget refuses (e.g. ε too small for a tiny shadow set) is
    reported as skipped with dpgan's one-line reason, instead of losing the other results. Its many
    fits show no bar of their own (the attack's stage bar counts them).
    """
    assert factory is not None
    try:
        with quiet_fits():
            result = run(factory)
    except DPGanError as exc:
        result = skipped(f"the retraining failed: {exc}")
    result.setdefault("settings", {})["synthesizer"] = how
    return result


def _describe_factory(recipe: ModelRecipe | None, factory: SynthesizerFactory | None) -> Any:
    if factory is not None:
        return f"injected factory {getattr(factory, '__name__', type(factory).__name__)}"
    if recipe is not None:
        return {"kind": "TabularSynthesizer with the model's recipe", **recipe.describe()}
    return None


def _check_tables(real_train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame) -> list:
    for name, frame in (("real_train", real_train), ("holdout", holdout), ("synthetic", synthetic)):
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"{name} must be a pandas DataFrame")
        if len(frame) == 0:
            raise InputError(f"{name} is empty")
    columns = list(real_train.columns)
    for name, frame in (("holdout", holdout), ("synthetic", synthetic)):
        missing = [str(c) for c in columns if c not in frame.columns]
        if missing:
            raise InputError(f"{name} lacks columns of the training table: {', '.join(missing)}")
    return columns


def _coerce_schema(schema: Schema | dict | str | Path | None) -> Schema | None:
    if schema is None or isinstance(schema, Schema):
        return schema
    if isinstance(schema, dict):
        return Schema.from_dict(schema)
    return Schema.from_json(schema)
