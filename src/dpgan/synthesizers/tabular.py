"""The public tabular synthesizer: fit a DP generator on a private table, sample, report, save, load.

A facade over modules with one job each, most in the table kind's folder: dpgan.tables.fit.options
checks the public arguments before any read of the data, dpgan.tables.settings holds the plug-ins'
settings beside the loop's TrainingConfig; `table_runs` puts a fit in place (seed, device, threads,
resume, torchrun's ranks); dpgan.tables.fit.run starts the one fit pipeline (dpgan.fit) with
a table kind (dpgan.tables.fit.kind in memory, dpgan.tables.fit.streamed for Parquet in record
batches), every private read a ledger event
(dpgan.tables.fit.plan's docstring states the flow), with the plug-ins of dpgan.tables.fit.plugins;
dpgan.tables.sampling.rows draws rows from the released model (post-processing, free); `model_file`
writes and reads the model directory (no pickle).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import torch

from dpgan.api import Synthesizer
from dpgan.devices import released_on_cpu
from dpgan.errors import InputError
from dpgan.model_catalog import model_entry, one_name, refuse_unread_settings
from dpgan.privacy.ledger_entry import DEFAULT_ACCOUNTANT
from dpgan.recipes import (
    DEFAULT_RECIPE,
    MARGINALS,
    MARGINALS_READS,
    TABLE_MODELS,
    Recipe,
    default_table_recipe,
    get_recipe,
)
from dpgan.serialization import REPORT_KEY, write_model_dir
from dpgan.synthesizers.model_file import load_table_synthesizer, model_metadata, model_tensors
from dpgan.synthesizers.table_runs import RunPlace, TableRun, run_in_memory, run_streamed
from dpgan.tables.codec.conditioning import Condition
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.fit.describe import table_report_details
from dpgan.tables.fit.options import RELEASED, coerce_schema, fit_arguments, target_kind, training_config
from dpgan.tables.fit.plan import FitSettings, FittedTable
from dpgan.tables.fit.public_data import DEFAULT_WARM_START_STEPS, checked_public_table
from dpgan.tables.fit.resume import DEFAULT_CHECKPOINT_EVERY
from dpgan.tables.fit.stream_options import stream_arguments
from dpgan.tables.reading.parquet_source import ParquetSource
from dpgan.tables.sampling.label_model import LabelModel
from dpgan.tables.sampling.rows import sample_chunks
from dpgan.tables.schema.table import Schema
from dpgan.tables.settings import TableSettings
from dpgan.training.config import TrainingConfig
from dpgan.training.progress import FitProgressFn
from dpgan.training.progress_bar import fit_progress

T = TypeVar("T")


def gan_only_arguments(
    given: set[str],
    config: TrainingConfig | None,
    table_settings: TableSettings | None,
    condition: str | None,
    noise_multiplier: float | None,
) -> tuple[str, ...]:
    """The constructor's arguments that only the GAN reads (a fit that names no model and gives
    one of them gets the GAN, never a model that would leave it unread): a setting the marginals
    model does not read, a whole loop config, plug-in settings other than its own, a condition
    column, a fixed σ."""
    asked = sorted(given - set(MARGINALS_READS))
    if config is not None:
        asked.append("config")
    if table_settings is not None and replace(table_settings, geo_pairs=()) != TableSettings():
        asked.append("table_settings")
    asked += [name for name, value in (("condition", condition), ("noise_multiplier", noise_multiplier)) if value]
    return tuple(asked)


class TabularSynthesizer(Synthesizer):
    """DP GAN synthesizer for mixed-type tables; `model` (or `recipe`, its other word) picks the
    paper (dpgan.recipes; `dpgan models --kind table`): dp-gan (default; Frigerio et al. 2019),
    dp-wgan, dp-cgan, dtgan-d, dtgan-g.

    `condition`: a categorical column to condition on (conditional recipes: the schema's target).
    `config=` replaces the recipe's loop settings and `table_settings=` its plug-in settings
    (dpgan.tables.settings; keyword overrides apply on top, each to its own record). `epochs` fixes the
    passes and σ is calibrated to land on ε; `noise_multiplier` instead trains until the next step
    would pass ε (`epochs` then caps it). `seed`: reproducible, for experiments only. With a
    categorical target a DP label model redraws it in sampled rows (`label_model=False`: G's own).
    `device` ("cpu", "cuda", "cuda:N", "auto") and `threads` (default $DPGAN_THREADS, else auto)
    say where fit trains; the fitted model is on the CPU either way.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        recipe: str | None = None,
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
        table_settings: TableSettings | None = None,
        device: str | torch.device = "cpu",
        threads: int | None = None,
        **config_overrides: Any,
    ) -> None:
        budget = {"epsilon": epsilon, "delta": delta, "accountant": accountant, "seed": seed}
        super().__init__(**budget, noise_multiplier=noise_multiplier, device=device, threads=threads)
        named = one_name(model, recipe)
        self.model_named = named is not None  # else fit takes the default for its target (default_table_recipe)
        self.recipe: Recipe = get_recipe(named or DEFAULT_RECIPE)
        if condition is not None and not isinstance(condition, str):
            raise InputError("condition must be a column name")
        if condition is not None and self.recipe.name == MARGINALS.name:
            raise InputError("the marginals model is not conditional: fit it without a condition column")
        self._settings_arguments = (config, table_settings, dict(config_overrides), batch_size, epochs)
        self.config, self.settings = self._settings_for(self.recipe)
        given = {key for key, value in config_overrides.items() if value is not None}
        given |= {key for key, value in (("batch_size", batch_size), ("epochs", epochs)) if value is not None}
        refuse_unread_settings(model_entry(TABLE_MODELS, self.recipe.name, "table"), given, TABLE_MODELS)
        self.default_on_release = False  # set by fit when the released schema chooses the model
        self.gan_asked = gan_only_arguments(given, config, table_settings, condition, noise_multiplier)
        self.epochs_given = epochs is not None
        self.examples_given = "max_examples" in given  # the marginals model's row budget too
        self.preprocessing_fraction = preprocessing_fraction
        self.schema_from_data_without_dp = schema_from_data_without_dp
        self.condition_column = condition
        self.condition: Condition | None = None
        self.label_model: LabelModel | None = None
        self.schema: Schema | None = None
        self.encoder: TableEncoder | None = None
        self.critic_for_evaluation: torch.nn.Module | None = None
        self._writes_files = True  # False on ranks other than 0 of a data-parallel fit

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        data: pd.DataFrame | str | Path | ParquetSource,
        schema: Schema | str | Path | dict | None = None,
        *,
        target: str | None = None,
        categorical: Sequence[str] = (),
        bounds: Mapping[str, tuple[float, float]] | None = None,
        categories: Mapping[str, Sequence[str]] | None = None,
        strict: bool = False,
        keep_identifiers: bool = False,
        keys: Sequence[str] | Mapping[str, str] | None = None,
        hierarchies: Mapping[str, Any] | None = None,
        progress: FitProgressFn | bool | None = None,
        checkpoint: str | Path | None = None,
        checkpoint_every: int = DEFAULT_CHECKPOINT_EVERY,
        public_data: pd.DataFrame | str | Path | None = None,
        public_warm_start_steps: int = DEFAULT_WARM_START_STEPS,
    ) -> "TabularSynthesizer":
        """Train on `data` (a DataFrame; or a Parquet file or folder, or a `dpgan.ParquetSource`, read
        in record batches and never held whole); every read is charged to the ledger, which never
        exceeds ε (docs/tables.md, docs/scale.md).

        Without a schema the domain is bought with DP (dpgan.tables.inference.infer); public hints
        make parts of it free: `target`, `categorical` columns, a column's public `categories`
        ({column: [values]}) and numeric `bounds` ({column: (low, high)}). Cells that do not fit the
        schema are mapped into it and counted with DP (dpgan.tables.reading.conform), or refused (`strict`).
        `keep_identifiers`: keep nearly-unique text columns on the non-private schema path.
        `keys`: key columns (`["id"]`, or `{"id": "uuid"}` with a format: "integer", "uuid" or a
        pattern like "P-######"), beside a schema's own `"role": "key"` columns: never read, never
        learned, free; sampling writes fresh unique values (dpgan.tables.schema.keys).
        `hierarchies`: a code column's public hierarchy without a schema (`{"zip": {"prefix": [3, 1]}}`,
        or `{"parents": [{child: parent}, ...]}`): a value too rare to release falls back to its released
        parent (`021*`) instead of `(other)`; one more DP histogram per level (dpgan.tables.schema.hierarchy).
        `checkpoint`: a directory (as secret as the table, deleted on success) from which a killed
        fit, run again with the same table and settings, resumes without spending anything twice
        (dpgan.tables.fit.resume); another directory, or none, is a new fit whose ε adds up.
        `public_data`: a PUBLIC table of the same schema that G and the critic are pre-trained on
        without noise for `public_warm_start_steps` rounds (no ε; never part of the private table).
        Under torchrun every rank passes the same table (or files) and runs in lockstep on rank 0's
        seed: the single-process release and ledger; only rank 0 writes.
        `progress`: None shows a bar with the steps and the ε spent so far where a person watches
        (stderr is a terminal, or a notebook), False shows none, True always; a callable is given
        (step, total, ε spent so far) instead (dpgan.training.progress_bar).
        """
        if not self.model_named:  # the default model for this fit's target (public: the schema or the hints)
            schema = coerce_schema(schema)  # a schema file read once: the fit's arguments below take the object
            kind = target_kind(schema, target, categorical, bounds, categories)
            self._take_default_model(kind, public_data, hand_schema=schema is not None)
        if public_data is not None and self.recipe.name == MARGINALS.name:
            raise InputError("public_data warm-starts a GAN; the marginals model trains none: name a GAN model")
        progress = fit_progress(progress, self.accountant)
        place = RunPlace(self.device, self.threads)
        settings = FitSettings.of(self)
        if isinstance(data, (str, Path, ParquetSource)):  # read in record batches (dpgan.tables.fit.streamed)
            opened, schema, options = stream_arguments(
                data, schema, settings, target=target, categorical=categorical, bounds=bounds,
                categories=categories, strict=strict, checkpoint=checkpoint, keys=keys, hierarchies=hierarchies,
            )  # fmt: skip
            public = checked_public_table(public_data, public_warm_start_steps, schema)
            return self._adopt_run(run_streamed(opened, schema, options, settings, place, progress, public))
        schema, options = fit_arguments(
            data,
            schema,
            target=target,
            categorical=categorical,
            bounds=bounds,
            categories=categories,
            strict=strict,
            keep_identifiers=keep_identifiers,
            keys=keys,
            hierarchies=hierarchies,
        )
        data = options.learned(data)  # the key columns go before any read
        public = checked_public_table(public_data, public_warm_start_steps, schema)
        run = run_in_memory(data, schema, options, settings, place, progress, checkpoint, checkpoint_every, public)
        return self._adopt_run(run)

    def _settings_for(self, recipe: Recipe) -> tuple[TrainingConfig, TableSettings]:
        config, table_settings, overrides, batch_size, epochs = self._settings_arguments
        return training_config(recipe, config, table_settings, overrides, batch_size=batch_size, epochs=epochs)

    def _take_default_model(self, target: str | None, public_data: object, hand_schema: bool) -> None:
        """The model of a fit that named none (dpgan.recipes.default_table_recipe): the marginals
        model for a target that is a class, with a hand schema or on the DP schema's path, the GAN
        otherwise (no class target, the non-private schema path, or something only the GAN does
        asked for). `target` is what the public arguments say of it (options.target_kind); when
        they leave its kind to the DP schema, the fit chooses once that is released
        (FitSettings.resolved), and the run's record says which."""
        asked = (*self.gan_asked, *(("public_data",) if public_data is not None else ()))
        dp_schema = not (hand_schema or self.schema_from_data_without_dp)
        chosen = default_table_recipe(target == "class", hand_schema or dp_schema, asked)
        self.default_on_release = target == RELEASED and dp_schema and not asked
        if chosen is not self.recipe:
            self.recipe = chosen
            self.config, self.settings = self._settings_for(chosen)

    def _adopt_run(self, run: TableRun) -> TabularSynthesizer:
        self.adopt(run.fitted)
        if self.default_on_release and run.fitted.training["recipe"] != self.recipe.name:  # chosen on release
            self.recipe = get_recipe(run.fitted.training["recipe"])
            self.config, self.settings = self._settings_for(self.recipe)
        self._writes_files = run.writes_files  # False on ranks other than 0 of a data-parallel fit
        return self

    def adopt(self, fitted: FittedTable) -> None:
        """Take the state of a fit or a model file (the attributes users and the CLI read); the
        models on the CPU, wherever they were trained (dpgan.devices)."""
        label_classifier = None if fitted.label_model is None else fitted.label_model.classifier
        released_on_cpu(fitted.generator, label_classifier, fitted.critic_for_evaluation)
        self.ledger, self.schema, self.encoder = fitted.ledger, fitted.schema, fitted.encoder
        self.generator, self.condition, self.label_model = fitted.generator, fitted.condition, fitted.label_model
        self.training, self.critic_for_evaluation = fitted.training, fitted.critic_for_evaluation

    def _fitted(self) -> FittedTable:
        """The released state, for sampling and saving (the in-memory critic left out: never saved)."""
        self._require_fitted()
        assert self.generator is not None and self.encoder is not None and self.schema is not None
        return FittedTable(
            self.ledger, self.schema, self.encoder, self.generator, self.condition, self.label_model, self.training
        )

    # --------------------------------------------------------------- sample
    def sample(
        self,
        n: int,
        *,
        seed: int | None = None,
        conditions: dict[str, Any] | None = None,
        region_points: Sequence[str] = (),
    ) -> pd.DataFrame:
        """n synthetic rows: post-processing of the released generator, no privacy cost.

        `conditions={"income": ">50K"}` fixes the condition column's value (conditional models);
        without it the values follow the model's public or DP prior. A model with a label model
        also takes a condition on its target: rows are drawn and kept where the redrawn target
        has that value. `region_points=["county"]` adds county_latitude and county_longitude: a
        point inside each row's county box from the schema (uniform, or the centre: its 'placement').
        """
        return pd.concat(list(self._chunks(n, seed, conditions, region_points)), ignore_index=True)

    def sample_to(
        self,
        path: str | Path,
        n: int,
        *,
        seed: int | None = None,
        conditions: dict[str, Any] | None = None,
        region_points: Sequence[str] = (),
    ) -> Path:
        """Stream n synthetic rows into a .csv or .parquet file, one chunk in memory at a time;
        the same rows, in the same order, as `sample(n, seed=seed, ...)`. The file appears only
        once complete (written beside it, then renamed): an error part-way leaves none."""
        from dpgan.tables.reading.table_io import check_writable, write_chunks

        check_writable(path)  # before anything is generated
        return write_chunks(self._chunks(n, seed, conditions, region_points), path)[0]

    def _chunks(
        self, n: int, seed: int | None, conditions: dict[str, Any] | None, region_points: Sequence[str]
    ) -> Iterator[pd.DataFrame]:
        fitted = self._fitted()
        return sample_chunks(fitted.sampler(self.config.noise_dim), fitted.schema, n, seed, conditions, region_points)

    # -------------------------------------------------------------- privacy
    def _repr_details(self) -> dict[str, Any]:
        return {"recipe": self.recipe.name}

    def _report_details(self) -> dict[str, Any]:
        """The recipe and whether the guarantee covers the schema (api.Synthesizer.privacy_report)."""
        return table_report_details(self.recipe.name, self.training)

    # ------------------------------------------------------------ save/load
    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the released model (generator, label model, metadata with its content hash).
        An existing model directory is replaced only with `overwrite`. After a data-parallel fit
        only rank 0 writes (the other ranks hold the same model and return the path)."""
        fitted = self._fitted()
        if not self._writes_files:
            return Path(path)
        target = {"recipe": self.recipe.name, "epsilon_target": self.epsilon, "delta": self.delta}
        metadata = model_metadata(
            fitted, **target, accountant=self.accountant, config=self.config, settings=self.settings
        )
        metadata[REPORT_KEY] = self.privacy_report()  # what `dpgan inspect` reads (dpgan.inspection)
        return write_model_dir(path, model_tensors(fitted), metadata, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path) -> TabularSynthesizer:
        return load_table_synthesizer(cls, path)
