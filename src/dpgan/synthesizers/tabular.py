"""The public tabular synthesizer: fit a DP generator on a private table, sample, report, save, load.

A facade over modules with one job each: `arguments` checks the public arguments before any read
of the data; `table_runs` puts a fit in place (seed, device, threads, resume, torchrun's ranks);
`fit_plan` (in memory) and `streamed_fit` (Parquet in record batches) run the fit, every private
read a ledger event (their docstrings state the flow and where each read is charged), with the
table's plug-ins of dpgan.tables.plugins; `sampling` draws rows from the released model
(post-processing, free); `model_file` writes and reads the model directory (no pickle).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import torch

from dpgan.api import Synthesizer
from dpgan.devices import released_on_cpu
from dpgan.errors import InputError, ModelFileError
from dpgan.privacy.accounting import DEFAULT_ACCOUNTANT
from dpgan.recipes import Recipe, get_recipe
from dpgan.serialization import read_model_dir, write_model_dir
from dpgan.synthesizers.arguments import fit_arguments, training_config
from dpgan.synthesizers.fit_plan import FitSettings, FittedTable
from dpgan.synthesizers.model_file import fitted_from_model, model_metadata, model_tensors
from dpgan.synthesizers.public_data import DEFAULT_WARM_START_STEPS, PublicTable, encode_public, load_public_table
from dpgan.synthesizers.resume import DEFAULT_CHECKPOINT_EVERY
from dpgan.synthesizers.sampling import TableSampler, sample_chunks
from dpgan.synthesizers.streamed_fit import stream_arguments
from dpgan.synthesizers.table_runs import RunPlace, TableRun, run_in_memory, run_streamed
from dpgan.tables.conditioning import Condition
from dpgan.tables.conform import INPUT_RULE
from dpgan.tables.encoder import TableEncoder, public_dtypes
from dpgan.tables.label_model import LabelModel
from dpgan.tables.parquet_source import ParquetSource
from dpgan.tables.preparation import repair_noise_std, repairs_summary
from dpgan.tables.schema import Schema
from dpgan.tables.schema_inference import SOURCE_NOT_PRIVATE
from dpgan.training.config import TrainingConfig
from dpgan.training.progress import FitProgressFn

UNSAFE_SCHEMA_NOTE = (
    "The schema (bounds and category lists) was read from the data WITHOUT differential privacy: "
    "the guarantee below covers training only, not the schema."
)

T = TypeVar("T")


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
    schema, a DP label model (dpgan.tables.label_model) redraws the target of sampled rows;
    `label_model=False` keeps the generator's own. `device` ("cpu", "cuda", "cuda:N", "auto") is
    where fit trains (dpgan.devices); the fitted model is on the CPU either way. `threads`: the CPU
    threads the fit uses (dpgan.threads; default $DPGAN_THREADS, else auto: the free cores).
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
        device: str | torch.device = "cpu",
        threads: int | None = None,
        **config_overrides: Any,
    ) -> None:
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            accountant=accountant,
            seed=seed,
            noise_multiplier=noise_multiplier,
            device=device,
            threads=threads,
        )
        self.recipe: Recipe = get_recipe(recipe)
        if condition is not None and not isinstance(condition, str):
            raise InputError("condition must be a column name")
        self.config = training_config(self.recipe, config, config_overrides, batch_size=batch_size, epochs=epochs)
        self.epochs_given = epochs is not None
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
        progress: FitProgressFn | None = None,
        checkpoint: str | Path | None = None,
        checkpoint_every: int = DEFAULT_CHECKPOINT_EVERY,
        public_data: pd.DataFrame | str | Path | None = None,
        public_warm_start_steps: int = DEFAULT_WARM_START_STEPS,
    ) -> "TabularSynthesizer":
        """Train on `data`; every read of it is charged to the ledger, which never exceeds ε.

        Without a schema the domain is bought with DP (dpgan.tables.schema_inference); public hints make
        parts of it free: `target` (the column a label model and conditional recipes use),
        `categorical` (columns whose every value is a category), a column's public list of
        `categories` ({column: [values]}, e.g. a target's labels) and numeric `bounds`
        ({column: (low, high)}). With a schema, `target` may name or replace its target.
        Cells that do not fit the schema are mapped into it and counted with DP (dpgan.tables.conform);
        `strict=True` refuses them instead. `keep_identifiers` keeps nearly-unique text columns
        on the non-private `schema_from_data_without_dp` path (they are dropped by default).
        With a `checkpoint` directory the fit writes its state there every `checkpoint_every`
        private steps and, called again with the same table and settings, resumes from it without
        spending anything twice (dpgan.synthesizers.resume: its seed is kept there before the fit
        prints any noisy value, so even a kill before the first checkpoint replays what it printed);
        the checkpoint is as secret as the table and is deleted when the fit succeeds. Rerunning a
        killed fit with another directory, or none, is a new fit with new noise: what both runs
        printed are two releases, and their ε adds up (a warning says so when the fit starts).
        `public_data` (a DataFrame or a CSV/Parquet path) is a PUBLIC table of the same schema: G
        and the critic are pre-trained on it without noise for `public_warm_start_steps` rounds
        before the private steps (dpgan.training.public_warm_start). It costs no ε and changes no
        ledger entry; the model records its name, SHA-256, row count and the steps. It must not be
        part of, or derived from, the private table.
        `data` may also be a Parquet file or a directory of Parquet files (a path, or a
        `dpgan.ParquetSource` with its memory budget): it is then read in record batches and
        never held whole (dpgan.synthesizers.streamed_fit says what that path supports).

        Under torchrun (or with a torch.distributed process group already initialized) the fit runs
        data-parallel on every rank (dpgan.privacy.distributed): each rank passes the same table (or files),
        rank 0's seed is used by all, the release and the ledger are the single-process ones, and
        only rank 0 writes the checkpoint and, in `save`, the model.
        """
        if isinstance(data, (str, Path, ParquetSource)):
            if checkpoint is not None:
                raise InputError("checkpoint/resume is not available when fitting from Parquet in batches")
            return self._fit_stream(
                data,
                schema,
                target,
                categorical,
                bounds,
                categories,
                strict,
                progress,
                public_data,
                public_warm_start_steps,
            )
        schema, options = fit_arguments(
            data,
            schema,
            target=target,
            categorical=categorical,
            bounds=bounds,
            categories=categories,
            strict=strict,
            keep_identifiers=keep_identifiers,
        )
        public = _public_table(public_data, public_warm_start_steps, schema)
        place = RunPlace(self.seed, self.device, self.threads)
        run = run_in_memory(
            data, schema, options, self._settings(), place, progress, checkpoint, checkpoint_every, public
        )
        return self._adopt_run(run)

    def _settings(self) -> FitSettings:
        return FitSettings(
            recipe=self.recipe,
            config=self.config,
            epsilon=self.epsilon,
            delta=self.delta,
            accountant=self.accountant,
            noise_multiplier=self.noise_multiplier,
            epochs_given=self.epochs_given,
            preprocessing_fraction=self.preprocessing_fraction,
            schema_from_data_without_dp=self.schema_from_data_without_dp,
            condition_column=self.condition_column,
            seeded=self.seed is not None,
        )

    def _fit_stream(
        self, data, schema, target, categorical, bounds, categories, strict, progress, public_data, warm_steps
    ) -> "TabularSynthesizer":
        """`fit` on a Parquet file or directory, read in record batches (dpgan.synthesizers.streamed_fit);
        under torchrun every rank streams the same files in lockstep (rank 0's seed)."""
        settings = self._settings()
        opened, schema, options = stream_arguments(
            data,
            schema,
            settings,
            target=target,
            categorical=categorical,
            bounds=bounds,
            categories=categories,
            strict=strict,
            checkpoint=None,
        )
        public = _public_table(public_data, warm_steps, schema)
        place = RunPlace(self.seed, self.device, self.threads)
        return self._adopt_run(run_streamed(opened, schema, options, settings, place, progress, public))

    def _adopt_run(self, run: TableRun) -> TabularSynthesizer:
        self._adopt(run.fitted)
        self._writes_files = run.writes_files  # False on ranks other than 0 of a data-parallel fit
        return self

    def _adopt(self, fitted: FittedTable) -> None:
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
        from dpgan.tables.table_io import check_writable, write_chunks

        check_writable(path)  # before anything is generated
        return write_chunks(self._chunks(n, seed, conditions, region_points), path)[0]

    def _chunks(
        self, n: int, seed: int | None, conditions: dict[str, Any] | None, region_points: Sequence[str]
    ) -> Iterator[pd.DataFrame]:
        fitted = self._fitted()
        sampler = TableSampler(
            fitted.generator, fitted.encoder, fitted.condition, self.config.noise_dim, fitted.post_processors
        )
        return sample_chunks(sampler, fitted.schema, n, seed, conditions, region_points)

    # -------------------------------------------------------------- privacy
    def _repr_details(self) -> dict[str, Any]:
        return {"recipe": self.recipe.name}

    def _report_details(self) -> dict[str, Any]:
        """The recipe and whether the guarantee covers the schema (api.Synthesizer.privacy_report)."""
        covers = self.training.get("schema_source") != SOURCE_NOT_PRIVATE
        details: dict[str, Any] = {
            "recipe": self.recipe.name,
            "schema_source": self.training.get("schema_source"),
            "guarantee_covers_schema": covers,
            "input_rule": INPUT_RULE,
        }
        if not covers:
            details["warning"] = UNSAFE_SCHEMA_NOTE
        # the noisy counts of cells mapped into the schema, as a person reads them (rounded, above the noise)
        repairs, sigma = self.training.get("preprocessing_repairs"), self.training.get("preprocessing_noise_multiplier")
        if isinstance(repairs, dict) and isinstance(sigma, (int, float)):
            details["repairs_summary"] = repairs_summary(repairs, repair_noise_std(sigma))
        for key in ("public_data", "selection"):  # public: what warm-started G, what the selection chose
            if self.training.get(key) is not None:
                details[key] = self.training[key]
        return details

    # ------------------------------------------------------------ save/load
    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the released model (generator, label model, metadata with its content hash).
        An existing model directory is replaced only with `overwrite`. After a data-parallel fit
        only rank 0 writes (the other ranks hold the same model and return the path)."""
        fitted = self._fitted()
        if not self._writes_files:
            return Path(path)
        metadata = model_metadata(
            fitted,
            recipe=self.recipe.name,
            epsilon_target=self.epsilon,
            delta=self.delta,
            accountant=self.accountant,
            config=self.config,
        )
        return write_model_dir(path, model_tensors(fitted), metadata, overwrite=overwrite)

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
            synth._adopt(fitted_from_model(meta, tensors, synth.config))
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise ModelFileError(f"{path} holds an inconsistent model: {exc}") from None
        return synth


def _public_table(
    public_data: pd.DataFrame | str | Path | None, steps: int, schema: Schema | None
) -> PublicTable | None:
    """The public warm-start table, checked against a public schema before any private read."""
    public = None if public_data is None else load_public_table(public_data, steps)
    if public is not None and schema is not None:
        encode_public(public, schema, TableEncoder(schema, public_dtypes(schema)))
    return public
