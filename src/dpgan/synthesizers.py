"""The public synthesizer: fit a DP generator on a private table, sample, report, save, load.

Flow (every private read is a ledger event): noisy row count → schema (public, or DP
histograms) → encoder (public spec only) → DP label model of the target → DP-WGAN-GP with
Poisson batches → release G and the label model.
"""

from __future__ import annotations

import math
import secrets
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import replace as dataclass_replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan import __version__
from dpgan.api import Synthesizer
from dpgan.conditioning import Condition, build_condition, check_condition_column, condition_codes
from dpgan.conform import check_structure
from dpgan.errors import BudgetError, DPGanWarning, InputError, ModelFileError
from dpgan.extras.label_model import LabelModel, fit_label_model, label_target, split_tensors
from dpgan.preparation import prepare_table, purchased_schema_entries
from dpgan.privacy.accounting import (
    DEFAULT_ACCOUNTANT,
    Budget,
    LedgerEntry,
    PrivacyLedger,
)
from dpgan.privacy.calibration import BudgetShares, sigma_and_steps
from dpgan.recipes import Recipe, get_recipe
from dpgan.schema import Schema
from dpgan.schema_inference import SOURCE_NOT_PRIVATE, PublicHints
from dpgan.serialization import read_model_dir, write_model_dir
from dpgan.training.aux_classifier import fit_aux_classifier
from dpgan.training.config import TrainingConfig, build_generator
from dpgan.training.dp_critic import TrainingResult, train_dp_critic
from dpgan.training.dp_generator import train_dp_generator
from dpgan.training.generator_losses import GeneratorObjective
from dpgan.training.marginals import AnchorHook, measure_anchor
from dpgan.training.progress import FitProgressFn, StepReporter
from dpgan.training.schedule import gan_schedule_for
from dpgan.transforms.encoder import TableEncoder, public_dtypes

MAX_SAMPLE_ROWS = 100_000_000
SAMPLE_CHUNK = 20_000
# conditional sampling through the label model gives up below this acceptance rate
MIN_ACCEPTANCE = 1e-3
UNSAFE_SCHEMA_NOTE = (
    "The schema (bounds and category lists) was read from the data WITHOUT differential privacy: "
    "the guarantee below covers training only, not the schema."
)
# share of ε for the reads before training when the domain is bought with DP (row count, one
# histogram per column, the repair count); with a schema only the row count and repairs: 1 %.
# 0.25 (was 0.1) chosen on the validation splits of the bench tables (bench/RESULTS.md §10)
NO_SCHEMA_PREPROCESSING_FRACTION = 0.25


@dataclass(frozen=True)
class _FitOptions:
    """How `fit` treats the table: public hints, strictness, identifiers (non-private path)."""

    hints: PublicHints
    strict: bool
    keep_identifiers: bool


def _hints(
    target: str | None,
    categorical: Sequence[str],
    bounds: Mapping[str, tuple[float, float]] | None,
    categories: Mapping[str, Sequence[str]] | None = None,
) -> PublicHints:
    if target is not None and not isinstance(target, str):
        raise InputError("target must be a column name")
    if isinstance(categorical, str) or not all(isinstance(c, str) for c in categorical):
        raise InputError("categorical must be a list of column names")
    parsed: dict[str, tuple[float, float]] = {}
    for name, pair in dict(bounds or {}).items():
        try:
            low, high = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise InputError(f"bounds of {name!r} must be a (low, high) pair of numbers") from None
        parsed[str(name)] = (low, high)
    lists: dict[str, tuple[str, ...]] = {}
    for name, values in dict(categories or {}).items():
        if isinstance(values, str) or not all(isinstance(v, (str, int, float, bool)) for v in values):
            raise InputError(f"categories of {name!r} must be a list of values")
        lists[str(name)] = tuple(str(v) for v in values)
    return PublicHints(target, tuple(categorical), parsed, lists)


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise InputError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


class TabularSynthesizer(Synthesizer):
    """DP GAN synthesizer for mixed-type tables; `recipe` picks the paper (dpgan.recipes):
    dp-gan (default; Frigerio et al. 2019), dp-wgan, dp-cgan, dtgan-d, dtgan-g.

    `condition` names a categorical column to condition on (conditional recipes default to the
    schema's target); its value frequencies come from the schema or a DP histogram. Keyword-only
    settings; `config=` replaces the recipe's settings wholesale (keyword overrides apply on
    top). `epochs` fixes the number of passes up front and σ is calibrated to land on ε
    (stopping rule b). Give `noise_multiplier` instead to train until the next step
    would exceed ε (rule a; `epochs` then caps it). `seed` makes runs reproducible for
    experiments only: production noise comes from OS entropy. With a categorical target in the
    schema, a DP label model (dpgan.extras.label_model) redraws the target of sampled rows;
    `label_model=False` keeps the generator's own.
    """

    def __init__(
        self,
        *,
        recipe: str = "dp-gan",
        condition: str | None = None,
        epsilon: float = 3.0,
        delta: float = 1e-5,
        epochs: float | None = None,
        batch_size: int | None = None,
        noise_multiplier: float | None = None,
        accountant: str = DEFAULT_ACCOUNTANT,
        preprocessing_fraction: float | None = None,
        schema_from_data_without_dp: bool = False,
        seed: int | None = None,
        config: TrainingConfig | None = None,
        **config_overrides: Any,
    ) -> None:
        super().__init__(
            epsilon=epsilon, delta=delta, accountant=accountant, seed=seed, noise_multiplier=noise_multiplier
        )
        self.recipe: Recipe = get_recipe(recipe)
        if condition is not None and not isinstance(condition, str):
            raise InputError("condition must be a column name")
        try:
            base = config or TrainingConfig(**self.recipe.overrides)
            base = replace(base, **config_overrides)
        except TypeError as exc:
            raise InputError(f"unknown setting: {exc}") from None
        if batch_size is not None:
            base = replace(base, batch_size=_positive_int(batch_size, "batch_size"))
        if epochs is not None:
            if not (isinstance(epochs, (int, float)) and epochs > 0 and math.isfinite(epochs)):
                raise InputError("epochs must be a positive number")
            base = replace(base, epochs=float(epochs))
        self.epochs_given = epochs is not None
        self.preprocessing_fraction = preprocessing_fraction
        self.schema_from_data_without_dp = schema_from_data_without_dp
        base.check()
        self.config = base
        self.condition_column = condition
        self.condition: Condition | None = None
        self.label_model: LabelModel | None = None
        self.schema: Schema | None = None
        self.encoder: TableEncoder | None = None
        self.critic_for_evaluation: torch.nn.Module | None = None

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        data: pd.DataFrame,
        schema: Schema | str | Path | dict | None = None,
        *,
        target: str | None = None,
        categorical: Sequence[str] = (),
        bounds: Mapping[str, tuple[float, float]] | None = None,
        categories: Mapping[str, Sequence[str]] | None = None,
        strict: bool = False,
        keep_identifiers: bool = False,
        progress: FitProgressFn | None = None,
    ) -> "TabularSynthesizer":
        """Train on `data`; every read of it is charged to the ledger, which never exceeds ε.

        Without a schema the domain is bought with DP (dpgan.schema_inference); public hints make
        parts of it free: `target` (the column a label model and conditional recipes use),
        `categorical` (columns whose every value is a category), a column's public list of
        `categories` ({column: [values]}, e.g. a target's labels) and numeric `bounds`
        ({column: (low, high)}). With a schema, `target` may name or replace its target.
        Cells that do not fit the schema are mapped into it and counted with DP (dpgan.conform);
        `strict=True` refuses them instead. `keep_identifiers` keeps nearly-unique text columns
        on the non-private `schema_from_data_without_dp` path (they are dropped by default).
        """
        if not isinstance(data, pd.DataFrame):
            raise InputError("data must be a pandas DataFrame")
        if len(data) == 0 or data.shape[1] == 0:
            raise InputError("the table is empty: nothing to learn from")
        schema = _coerce_schema(schema)
        hints = _hints(target, categorical, bounds, categories)
        if schema is not None:
            if hints.categorical or hints.bounds or hints.categories:
                raise InputError("categorical, categories and bounds hints apply without a schema: write them into it")
            if hints.target is not None:
                schema = dataclass_replace(schema, target=hints.target)
            check_structure(data, schema)  # table structure is refused before any budget is spent
        else:
            hints.check(data.columns)
        options = _FitOptions(hints, bool(strict), bool(keep_identifiers))
        if self.seed is None:
            return self._fit(data, schema, options, progress, np.random.default_rng(secrets.randbits(64)))
        rng = np.random.default_rng(self.seed)
        # Network weights are drawn from torch's global RNG: seed it, and leave the caller's state as it was.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(rng.integers(0, 2**63 - 1)))
            return self._fit(data, schema, options, progress, rng)

    def _fit(
        self,
        data: pd.DataFrame,
        schema: Schema | None,
        options: "_FitOptions",
        progress: FitProgressFn | None,
        rng: np.random.Generator,
    ) -> "TabularSynthesizer":
        """The body of `fit`: every random draw comes from `rng` or torch's (possibly seeded) global RNG."""
        torch_gen = torch.Generator().manual_seed(int(rng.integers(0, 2**63 - 1)))
        # every release below is refused if it would take the ledger past (ε, δ)
        ledger = PrivacyLedger(purchased_schema_entries(schema), Budget(self.epsilon, self.delta, self.accountant))
        purchased = ledger.epsilon(self.delta, self.accountant) / self.epsilon if ledger.entries else 0.0
        if purchased >= 0.5:
            raise BudgetError(
                f"the schema's DP purchase already spends {purchased:.0%} of ε={self.epsilon:g}: fit with a larger ε"
            )
        without_dp = schema is None and self.schema_from_data_without_dp
        condition_column = self._condition_column(schema, options.hints, data)
        needs_prior = condition_column is not None and (
            without_dp or (schema is not None and not schema[condition_column].frequencies)
        )
        infer_dp = schema is None and not without_dp
        fraction = self.preprocessing_fraction or (NO_SCHEMA_PREPROCESSING_FRACTION if infer_dp else 0.01)
        prepared = prepare_table(
            data,
            schema=schema,
            hints=options.hints,
            strict=options.strict,
            without_dp=without_dp,
            keep_identifiers=options.keep_identifiers,
            epsilon=self.epsilon,
            delta=self.delta,
            fraction=fraction,
            accountant=self.accountant,
            needs_prior=needs_prior,
            ledger=ledger,
            rng=rng,
        )
        for note in prepared.notes:
            warnings.warn(note, DPGanWarning, stacklevel=3)
        schema, data, rows, plan = prepared.schema, prepared.frame, prepared.rows, prepared.plan
        encoder = TableEncoder(schema, public_dtypes(schema))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            encoded = torch.from_numpy(encoder.encode(data))
        condition = None
        if condition_column is not None:
            condition, prior_entry = build_condition(
                schema, encoder, condition_column, data[condition_column], plan.noise_multiplier, rng
            )
            if prior_entry is not None:
                ledger.add(prior_entry)

        cfg = self.config
        objective = GeneratorObjective(
            cfg.loss, info_weight=cfg.info_loss_weight, classifier_weight=cfg.classifier_loss_weight
        )
        spent_fraction = purchased + fraction
        shares = BudgetShares(self.epsilon, self.delta, self.accountant)
        if cfg.classifier_loss_weight > 0 and condition is not None:
            spent_fraction += cfg.classifier_budget_fraction
            objective.condition = condition
            objective.classifier = fit_aux_classifier(
                encoded, condition, cfg, rows=rows, share=shares.at(spent_fraction), ledger=ledger, generator=torch_gen
            )
        label_column = label_target(schema) if cfg.label_model else None
        label_model = None
        if label_column is not None:
            spent_fraction += cfg.label_model_budget_fraction
            label_model = fit_label_model(
                encoded,
                encoder,
                label_column,
                cfg,
                rows=rows,
                share=shares.at(spent_fraction),
                ledger=ledger,
                generator=torch_gen,
            )

        on_generator = self.recipe.dp_on == "generator"
        anchor = None
        if cfg.marginal_anchor:
            spent_fraction += cfg.marginal_budget_fraction
            skip = condition.column if condition is not None else None
            anchor = measure_anchor(
                encoded, encoder.spans, skip, share=shares.at(spent_fraction), ledger=ledger, rng=rng
            )
        hooks = [AnchorHook.from_config(anchor, cfg)] if anchor is not None else []
        schedule = gan_schedule_for(cfg, rows, self.recipe.dp_on)
        budget = sigma_and_steps(
            sample_rate=schedule.sample_rate,
            steps=schedule.steps,
            epsilon=self.epsilon,
            delta=self.delta,
            accountant=self.accountant,
            prior=ledger.entries,
            sampling=schedule.sampling,
            noise_multiplier=self.noise_multiplier,
            cap_steps=self.epochs_given,
        )
        sigma, steps = budget.noise_multiplier, budget.steps

        step_entry = LedgerEntry("step", sigma, sampling_rate=schedule.sample_rate, sampling=schedule.sampling)
        reporter = StepReporter(progress, steps, step_entry, ledger, self.delta, self.accountant)
        result: TrainingResult
        if on_generator:
            result = train_dp_generator(
                encoded,
                encoder.spans,
                cfg,
                noise_multiplier=sigma,
                steps=steps,
                generator=torch_gen,
                shard_key=rng.bytes(32),  # secret per fit, never saved
                ledger=ledger,
                condition=condition,
                objective=objective,
                hooks=hooks,
                progress=reporter,
            )
        else:
            result = train_dp_critic(
                encoded,
                encoder.spans,
                cfg,
                sample_rate=schedule.sample_rate,
                expected_batch_size=schedule.expected_batch_size,
                noise_multiplier=sigma,
                steps=steps,
                generator=torch_gen,
                ledger=ledger,
                condition=condition,
                objective=objective,
                hooks=hooks,
                progress=reporter,
            )
        generator, steps_done = result.generator, result.steps
        # In memory only, for white-box attack evaluation: never saved (invariant 7).
        self.critic_for_evaluation = result.critic
        spent = ledger.epsilon(self.delta, self.accountant)
        if spent > self.epsilon * (1 + 1e-9):
            raise BudgetError(f"internal error: the ledger spent ε={spent:.4f} > target {self.epsilon}")
        self.ledger, self.schema, self.encoder, self.generator = ledger, schema, encoder, generator
        self.condition, self.label_model = condition, label_model
        self.training = {
            "recipe": self.recipe.name,
            "noise_multiplier": sigma,
            "sample_rate": schedule.sample_rate,
            "expected_batch_size": schedule.expected_batch_size,
            "steps": steps_done,
            "estimated_rows": rows,
            "preprocessing_noise_multiplier": plan.noise_multiplier,
            "schema_source": schema.source,
            "preprocessing_repairs": prepared.repairs,
            "notes": prepared.notes,
            "condition": None if condition is None else condition.column,
            "condition_prior_source": None if condition is None else condition.prior_source,
            "label_model": label_column,
            "seeded": self.seed is not None,
        }
        return self

    def _condition_column(self, schema: Schema | None, hints: PublicHints, data: pd.DataFrame) -> str | None:
        """The column to condition on: the user's, else the target for conditional recipes."""
        column = self.condition_column
        if column is None and self.recipe.conditional:
            column = schema.target if schema is not None else hints.target
            if column is None:
                raise InputError(
                    f"recipe {self.recipe.name} conditions on a column: pass condition=COLUMN "
                    "(or name a target: target=COLUMN, --target, or a schema with a 'target')"
                )
        if column is not None:
            if column not in data.columns:
                raise InputError(f"condition column {column!r} is not in the table")
            if schema is not None:
                check_condition_column(schema, column)
        return column

    # --------------------------------------------------------------- sample
    def sample(self, n: int, *, seed: int | None = None, conditions: dict[str, Any] | None = None) -> pd.DataFrame:
        """n synthetic rows: post-processing of the released generator, no privacy cost.

        `conditions={"income": ">50K"}` fixes the condition column's value (conditional models);
        without it the values follow the model's public or DP prior. A model with a label model
        also takes a condition on its target: rows are drawn and kept where the redrawn target
        has that value.
        """
        self._require_fitted()
        n = _positive_int(n, "n")
        if n > MAX_SAMPLE_ROWS:
            raise InputError(f"n={n} is too large; sample at most {MAX_SAMPLE_ROWS} rows per call")
        if conditions is not None and not isinstance(conditions, dict):
            raise InputError("conditions must be a mapping like {'income': '>50K'}")
        conditions = dict(conditions or {})
        assert self.schema is not None
        unknown = [str(c) for c in conditions if c not in self.schema.names]
        if unknown:
            raise InputError(
                f"{', '.join(map(repr, unknown))} is not a column of this model; its columns are "
                + ", ".join(self.schema.names)
            )
        wanted_label = None
        if self.label_model is not None and self.label_model.column in conditions:
            assert self.encoder is not None
            wanted_label = self.label_model.code_of(conditions.pop(self.label_model.column), self.encoder)
        if conditions and self.condition is None:
            raise InputError("this model is not conditional: fit with a condition column to use conditions")
        entropy = seed if seed is not None else secrets.randbits(64)
        rng = np.random.default_rng(entropy)
        torch_gen = torch.Generator().manual_seed(int(rng.integers(0, 2**63 - 1)))
        self.generator.eval()  # type: ignore[union-attr]
        if wanted_label is None:
            frames = [
                self._generate(min(SAMPLE_CHUNK, n - start), conditions, rng, torch_gen)[0]
                for start in range(0, n, SAMPLE_CHUNK)
            ]
            return pd.concat(frames, ignore_index=True)
        return self._sample_label(n, wanted_label, conditions, rng, torch_gen)

    def _generate(
        self, size: int, conditions: dict[str, Any], rng: np.random.Generator, torch_gen: torch.Generator
    ) -> tuple[pd.DataFrame, np.ndarray | None]:
        """`size` decoded rows, their target redrawn by the label model if there is one (with its codes)."""
        assert self.generator is not None and self.encoder is not None
        z = torch.randn(size, self.config.noise_dim, generator=torch_gen)
        onehot = None
        if self.condition is not None:
            onehot = self.condition.one_hot(condition_codes(self.condition, conditions or None, size, torch_gen))
        frame = self.encoder.decode(self.generator.sample_encoded(z, onehot).numpy(), rng)
        if self.label_model is None:
            return frame, None
        return self.label_model.redraw(frame, self.encoder, rng)

    def _sample_label(
        self,
        n: int,
        wanted: int,
        conditions: dict[str, Any],
        rng: np.random.Generator,
        torch_gen: torch.Generator,
    ) -> pd.DataFrame:
        """n rows whose redrawn target is `wanted`: rejection sampling from the released model,
        so the rows follow P(other columns | target) of the joint the model samples."""
        kept: list[pd.DataFrame] = []
        have = drawn = 0
        while have < n:
            frame, codes = self._generate(SAMPLE_CHUNK, conditions, rng, torch_gen)
            drawn += SAMPLE_CHUNK
            match = frame[codes == wanted].head(n - have)
            kept.append(match)
            have += len(match)
            if have < n and have < MIN_ACCEPTANCE * drawn:
                assert self.label_model is not None
                raise InputError(
                    f"the model gives {self.label_model.column!r} that value in {have} of {drawn} rows: "
                    "too rare to sample it on its own"
                )
        return pd.concat(kept, ignore_index=True)

    # -------------------------------------------------------------- privacy
    def _report_details(self) -> dict[str, Any]:
        """The recipe and whether the guarantee covers the schema (api.Synthesizer.privacy_report)."""
        covers = self.training.get("schema_source") != SOURCE_NOT_PRIVATE
        details: dict[str, Any] = {
            "recipe": self.recipe.name,
            "schema_source": self.training.get("schema_source"),
            "guarantee_covers_schema": covers,
        }
        if not covers:
            details["warning"] = UNSAFE_SCHEMA_NOTE
        return details

    # ------------------------------------------------------------ save/load
    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the released model (generator, label model, metadata with its content hash).
        An existing model directory is replaced only with `overwrite`."""
        self._require_fitted()
        assert self.generator is not None and self.encoder is not None and self.schema is not None
        metadata = {
            "dpgan_version": __version__,
            "torch_version": torch.__version__,
            "recipe": self.recipe.name,
            "condition": None if self.condition is None else self.condition.to_dict(),
            "epsilon_target": self.epsilon,
            "delta": self.delta,
            "accountant": self.accountant,
            "epsilon": self.ledger.epsilon(self.delta, self.accountant),
            "schema": self.schema.to_dict(),
            "dtypes": self.encoder.dtypes,
            "config": self.config.to_dict(),
            "ledger": self.ledger.to_dict(),
            "training": self.training,
            "label_model": None if self.label_model is None else self.label_model.to_dict(),
        }
        tensors = dict(self.generator.state_dict())
        if self.label_model is not None:
            tensors.update(self.label_model.tensors())
        return write_model_dir(path, tensors, metadata, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path) -> "TabularSynthesizer":
        tensors, meta = read_model_dir(path)
        try:
            synth = cls(
                recipe=meta.get("recipe", "dp-gan"),
                epsilon=meta["epsilon_target"],
                delta=meta["delta"],
                accountant=meta["accountant"],
            )
            synth.config = TrainingConfig.from_dict(meta["config"])
            condition = meta.get("condition")
            synth.condition = None if condition is None else Condition.from_dict(condition)
            synth.schema = Schema.from_dict(meta["schema"])
            synth.encoder = TableEncoder(synth.schema, meta.get("dtypes"))
            synth.ledger = PrivacyLedger.from_dict(meta["ledger"])
            synth.training = dict(meta["training"])
            generator = build_generator(
                synth.config, synth.encoder.spans, synth.condition.slice if synth.condition else None
            )
            generator_tensors, label_tensors = split_tensors(tensors)
            generator.load_state_dict(generator_tensors, strict=True)
            label_meta = meta.get("label_model")
            if label_meta is None and label_tensors:
                raise ValueError("label-model weights without a label-model entry")
            if label_meta is not None:
                synth.label_model = LabelModel.from_saved(label_meta, label_tensors, synth.encoder)
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise ModelFileError(f"{path} holds an inconsistent model: {exc}") from None
        generator.eval()
        synth.generator = generator
        return synth


def _coerce_schema(schema: Schema | str | Path | dict | None) -> Schema | None:
    if schema is None or isinstance(schema, Schema):
        return schema
    if isinstance(schema, dict):
        return Schema.from_dict(schema)
    if isinstance(schema, (str, Path)):
        return Schema.from_json(schema)
    raise InputError("schema must be a Schema, a dict, or a path to a JSON file")
