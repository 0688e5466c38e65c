"""What an audit examines: the public settings of a configuration, never its data.

An audit needs the recipe, the training configuration (critic shape, C, loss, microbatches), the
schema (the encoded layout), the noise multiplier σ, the sampling rate q and the number of steps,
and the ε the ledger claims. A saved model holds all of them in model.json (`from_model_dir`);
a sequence or image model's critic is described by its facade instead (`units`,
dpgan.evaluation.audit.units: its own critic constructor, from model.json's settings);
`from_settings` builds them for a configuration that was never fitted, calibrating σ with
dpgan's accountant. Rows the audit feeds to the private step are drawn at random from the
schema's public domain (`public_rows`): the audit never reads private data.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError, ModelFileError
from dpgan.evaluation.audit.units import AUDITED_KINDS, UnitCritic, image_unit_critic, sequence_unit_critic
from dpgan.kinds import kind_of_model
from dpgan.privacy.accounting import (
    ACCOUNTANTS,
    ONE_OF_SHARDS,
    POISSON,
    PrivacyLedger,
    check_epsilon_delta,
)
from dpgan.privacy.calibration import calibrate_noise_multiplier
from dpgan.privacy.epsilon_range import check_target_epsilon
from dpgan.recipes import MARGINALS, Recipe, get_recipe
from dpgan.serialization import read_model_dir
from dpgan.tables.codec.conditioning import Condition, check_condition_column
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.fit.options import default_examples_cap
from dpgan.tables.schema.table import Schema
from dpgan.tables.settings import loop_config
from dpgan.training.config import TrainingConfig
from dpgan.training.schedule import gan_schedule_for

PUBLIC_PRIOR = "uniform over the schema's categories (public; audit configuration)"


@dataclass(frozen=True)
class AuditTarget:
    """The public description of one training configuration, as the audit needs it.

    `epsilon` is the ε claimed for the whole training (the model's ledger, or the target the
    configuration was calibrated to); `noise_multiplier`, `sample_rate` and `steps` describe the
    private steps of the recipe (critic steps, or dtgan-g's generator steps).
    """

    recipe: Recipe
    config: TrainingConfig
    schema: Schema | None  # None for a sequence or image model (`units` describes its critic)
    dtypes: dict[str, str] | None
    condition: Condition | None
    noise_multiplier: float
    sample_rate: float
    steps: int
    expected_batch_size: float
    epsilon: float
    delta: float
    accountant: str
    source: str
    units: UnitCritic | None = None  # a sequence or image model's critic (dpgan.evaluation.audit.units)

    @property
    def sampling(self) -> str:
        return ONE_OF_SHARDS if self.recipe.dp_on == "generator" else POISSON

    @property
    def kind(self) -> str:
        return "table" if self.units is None else self.units.kind

    def encoder(self) -> TableEncoder:
        if self.schema is None:
            raise InputError(f"a {self.kind} model has no table encoding: only --mode step audits it")
        return TableEncoder(self.schema, self.dtypes)

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "recipe": self.recipe.name,
            "noise_multiplier": self.noise_multiplier,
            "sample_rate": self.sample_rate,
            "steps": self.steps,
            "max_grad_norm": self.config.max_grad_norm,
            "microbatches": self.config.microbatches,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accountant": self.accountant,
        }


def from_model_dir(path: str | Path) -> AuditTarget:
    """The settings of a saved model (model.json), by its kind's audit (dpgan.kinds: `Kind.audit`);
    its weights and data are not used."""
    kind = kind_of_model(path)
    if kind.audit is None:
        raise ModelFileError(f"{path} is a model of kind {kind.name!r}; dpgan audit audits {AUDITED_KINDS}")
    return kind.load("audit")(path)


def table_model_target(path: str | Path) -> AuditTarget:
    """A table model's settings (the table kind's audit, dpgan.tables.registration)."""
    _, meta = read_model_dir(path)
    if meta.get("recipe") == MARGINALS.name:  # a statistics model: no private step to audit
        raise ModelFileError(
            f"{path} is a marginals model: it has no DP-SGD step to audit (its Gaussian and "
            "exponential-mechanism releases are in its ledger: dpgan inspect)"
        )
    try:
        recipe = get_recipe(meta.get("recipe", "dp-gan"))
        training = meta["training"]
        delta, accountant = float(meta["delta"]), str(meta["accountant"])
        ledger = PrivacyLedger.from_dict(meta["ledger"])
        condition = meta.get("condition")
        target = AuditTarget(
            recipe=recipe,
            config=loop_config(meta["config"]),
            schema=Schema.from_dict(meta["schema"]),
            dtypes=meta.get("dtypes"),
            condition=None if condition is None else Condition.from_dict(condition),
            noise_multiplier=float(training["noise_multiplier"]),
            sample_rate=float(training["sample_rate"]),
            steps=int(training["steps"]),
            expected_batch_size=float(training.get("expected_batch_size") or meta["config"]["batch_size"]),
            epsilon=ledger.epsilon(delta, accountant),
            delta=delta,
            accountant=accountant,
            source=f"model directory {path}",
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{path} holds an inconsistent model: {exc}") from None
    _check_positive(target)
    return target


def sequence_model_target(path: str | Path) -> AuditTarget:
    """A sequence model's critic step (the series kind's audit, dpgan.sequences.registration)."""
    return unit_model_target(path, sequence_unit_critic)


def image_model_target(path: str | Path) -> AuditTarget:
    """An image model's critic step (the image kind's audit, dpgan.images.registration)."""
    return unit_model_target(path, image_unit_critic)


def unit_model_target(path: str | Path, critic_of: Callable[[Any], UnitCritic]) -> AuditTarget:
    """A model over units (series, images): its critic from its facade (`critic_of`, the kind's),
    its step's settings from its record."""
    from dpgan.synthesizers import load_model

    synth = load_model(path)
    units = critic_of(synth)
    kind = units.kind
    try:
        training = synth.training
        target = AuditTarget(
            recipe=Recipe(
                name=units.recipe,
                paper="",
                summary=f"the {kind} model's DP-SGD critic",
                strategy="dp-critic",
                conditional=False,
            ),
            config=synth.config,
            schema=None,
            dtypes=None,
            condition=None,
            noise_multiplier=float(training["noise_multiplier"]),
            sample_rate=float(training["sample_rate"]),
            steps=int(training["steps"]),
            expected_batch_size=float(training["expected_batch_size"]),
            epsilon=synth.ledger.epsilon(synth.delta, synth.accountant),
            delta=float(synth.delta),
            accountant=str(synth.accountant),
            source=f"model directory {path} ({kind})",
            units=units,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{path} holds an inconsistent model: {exc}") from None
    _check_positive(target)
    return target


def from_settings(
    *,
    epsilon: float,
    delta: float = 1e-5,
    recipe: str = "dp-gan",
    rows: int = 32561,
    batch_size: int | None = None,
    epochs: float | None = None,
    schema: Schema | None = None,
    accountant: str = "pld",
) -> AuditTarget:
    """A configuration that was never fitted: σ is calibrated so that its private steps alone
    spend (ε, δ). A fit also spends part of ε on other releases (row count, label model, ...), so
    its σ is a little larger: auditing this σ is the harder test. `schema` defaults to the bundled
    Adult schema (public); `rows` is the table size N the sampling rate q = B/N is computed from."""
    check_epsilon_delta(epsilon, delta)
    check_target_epsilon(epsilon)
    if accountant not in ACCOUNTANTS:
        raise InputError(f"accountant must be one of {', '.join(ACCOUNTANTS)}, not {accountant!r}")
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 2:
        raise InputError(f"rows must be an integer ≥ 2, got {rows!r}")
    chosen = get_recipe(recipe)
    config = TrainingConfig(**chosen.overrides)
    if batch_size is not None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch size must be a positive integer, got {batch_size!r}")
        config = replace(config, batch_size=batch_size)
    if epochs is not None:
        if not (isinstance(epochs, (int, float)) and epochs > 0 and math.isfinite(epochs)):
            raise InputError(f"epochs must be a positive number, got {epochs!r}")
        config = replace(config, epochs=float(epochs))
    else:  # the table fit's default budget (60 epochs, at most 2M per-example gradients): what a fit runs
        config = replace(config, max_examples=default_examples_cap(chosen))
    if schema is None:
        from dpgan import datasets

        schema = Schema.from_json(datasets.adult_schema_path())
    schedule = gan_schedule_for(config, rows, chosen.dp_on)
    sigma = calibrate_noise_multiplier(
        sample_rate=schedule.sample_rate,
        steps=schedule.steps,
        epsilon=epsilon,
        delta=delta,
        accountant=accountant,
        sampling=schedule.sampling,
    )
    condition = _public_condition(schema, chosen)
    source = (
        f"configuration: {chosen.name}, ε={epsilon:g}, δ={delta:g}, N={rows}, B={config.batch_size}, "
        f"{config.epochs:g} epochs (σ calibrated for the private steps alone)"
    )
    return AuditTarget(
        recipe=chosen,
        config=config,
        schema=schema,
        dtypes=None,
        condition=condition,
        noise_multiplier=sigma,
        sample_rate=schedule.sample_rate,
        steps=schedule.steps,
        expected_batch_size=schedule.expected_batch_size,
        epsilon=float(epsilon),
        delta=float(delta),
        accountant=accountant,
        source=source,
    )


def _public_condition(schema: Schema, recipe: Recipe) -> Condition | None:
    """Conditional recipes condition on the schema's target; its prior is the schema's public
    frequencies, else uniform (a fit would use a DP histogram: any prior is a public choice here)."""
    if not recipe.conditional:
        return None
    if schema.target is None:
        raise InputError(f"recipe {recipe.name} conditions on a column: the schema needs a 'target'")
    check_condition_column(schema, schema.target)
    spec = schema[schema.target]
    start = next(s.start for s in TableEncoder(schema).spans if s.column == schema.target)
    prior = tuple(spec.frequencies) or tuple(1.0 / len(spec.categories) for _ in spec.categories)
    return Condition(
        schema.target, spec.categories, start, prior, "schema (public)" if spec.frequencies else PUBLIC_PRIOR
    )


def _check_positive(target: AuditTarget) -> None:
    if not (target.noise_multiplier > 0 and 0 < target.sample_rate <= 1 and target.steps > 0):
        raise ModelFileError(f"{target.source} has no private training steps to audit")


def public_rows(schema: Schema, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """n rows drawn uniformly from the schema's public domain (bounds, categories, nulls): no
    record of any private table enters them."""
    columns: dict[str, Any] = {}
    for spec in schema.columns:
        if spec.is_numeric:
            values = rng.uniform(float(spec.min), float(spec.max), n)  # type: ignore[arg-type]
            if spec.point_masses:
                at_mass = rng.random(n) < 0.25
                values[at_mass] = rng.choice(np.asarray(spec.point_masses, dtype=np.float64), int(at_mass.sum()))
            if spec.kind == "integer":
                values = np.clip(np.round(values), math.ceil(spec.min), math.floor(spec.max))  # type: ignore[arg-type]
            series = pd.Series(values)
        else:
            categories = np.asarray(spec.categories, dtype=object)
            series = pd.Series(categories[rng.integers(len(categories), size=n)], dtype=object)
        if spec.nullable:
            series = series.astype(object)
            series[rng.random(n) < 0.1] = None
        columns[spec.name] = series
    return pd.DataFrame(columns)
