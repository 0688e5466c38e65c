"""SequenceSynthesizer: DP synthetic fixed-length series (Frigerio et al.'s dp-GAN for time series).

The series are read with the schema's column roles by the unit rule (dpgan.sequences.reader): each
series is kept or dropped (with a reason) by its own cells, its readings ordered by its own times;
nothing about one series is refused or decides how another is read. The fit is the one pipeline
(dpgan.fit) with the sequence kind (dpgan.sequences.fit_kind: the DP schema and unit counts, units
of one series or one entity, the plug-ins of dpgan.sequences.plugins), then WGAN-GP with DP-SGD on
the critic through the engine: an LSTM generator, an MLP (default) or LSTM critic. The generator
(its average) is released; sampling from it is post-processing.

`model` says what generates the series: a statistics model (dpgan.sequences.statistics_models: the
default "gaussian-copula", "gaussian", "independent"; DP statistics on all of ε, no network, saved
as their released arrays alone), "gan" (the LSTM GAN) or "gaussian+gan" (G's series are draws of the
DP Gaussian, released first at `gaussian_base_fraction` of ε, plus a gated LSTM residual trained as
a GAN on the rest).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan.api import (
    Synthesizer,
    check_sample_count,
    imposed_labels,
    network_settings,
    sampling_generator,
)
from dpgan.devices import on_device, released_on_cpu
from dpgan.errors import InputError, ModelFileError
from dpgan.fit import run_fit
from dpgan.model_catalog import model_entry, refuse_unread_settings
from dpgan.privacy.distributed import process_group_context
from dpgan.privacy.ledger import PrivacyLedger
from dpgan.privacy.unit_rule import ReleasedTally
from dpgan.sequences.codec import (
    label_names,
    read_array_raw,
    read_long_raw,
    unscale,
    write_long,
)
from dpgan.sequences.describe import dp_items, dropped_policy, schema_source
from dpgan.sequences.fit_kind import SequenceKind, series_generator
from dpgan.sequences.schema import SequenceSchema, coerce_schema, schema_for_array
from dpgan.sequences.series_file import SeriesBlocks, SeriesFile
from dpgan.sequences.settings import (
    NETWORK_SAVED_MODELS,
    SEQUENCE_DEFAULTS,
    SEQUENCE_MODELS,
    STATISTICS_MODELS,
    SequenceSettings,
)
from dpgan.sequences.statistics_models import series_model_class
from dpgan.serialization import (
    REPORT_KEY,
    check_model_destination,
    read_model_dir,
    statistics_file,
    write_model_dir,
)
from dpgan.tables.reading.table_io import write_chunks
from dpgan.tables.settings import loop_config
from dpgan.threads import fit_threads
from dpgan.training.context import FitContext
from dpgan.training.progress import FitProgressFn
from dpgan.training.progress_bar import fit_progress
from dpgan.training.strategies import critic_config

KIND = "sequence"
MAX_SAMPLE = 1_000_000
SAMPLE_CHUNK = 8192  # series generated and written at once by `sample_to` (a GAN's LSTM states included)
MODEL_WORDS = {m.name: f"{m.name} ({m.description})" for m in SEQUENCE_MODELS}  # the report's words


class SequenceSynthesizer(Synthesizer):
    """Fit on fixed-length series (a long table or an (N, T[, F]) array), sample new ones."""

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 1e-5,
        accountant: str = "pld",
        seed: int | None = None,
        noise_multiplier: float | None = None,
        critic: str | None = None,
        device: str | torch.device = "cpu",
        threads: int | None = None,
        **settings: Any,
    ) -> None:
        budget = {"epsilon": epsilon, "delta": delta, "accountant": accountant, "seed": seed}
        super().__init__(**budget, noise_multiplier=noise_multiplier, device=device, threads=threads)
        given = {key for key, value in settings.items() if value is not None and key != "model"}
        if critic is not None:
            given.add("critic")
        self.networks = network_settings(SequenceSettings, settings, **({} if critic is None else {"critic": critic}))
        self.config = critic_config(SEQUENCE_DEFAULTS, settings)  # an unknown setting: its own line first
        # a setting the model does not read would do nothing: one line (dpgan.model_catalog)
        entry = model_entry(SEQUENCE_MODELS, self.networks.model, KIND)
        refuse_unread_settings(entry, given, SEQUENCE_MODELS)
        self.schema: SequenceSchema | None = None
        self.input_form = "long"

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        data: pd.DataFrame | np.ndarray | str | Path | SeriesFile,
        schema: SequenceSchema | dict | str | Path | None = None,
        *,
        labels: np.ndarray | str | Path | None = None,
        progress: FitProgressFn | bool | None = None,
    ) -> SequenceSynthesizer:
        """Train on `data` (a long table with the schema's columns, or an (N, T[, F]) array with
        optional `labels`; an array needs no schema: its T and F are public, its value columns are
        named value_0, ... and their bounds and the label set are estimated with DP; or the path of
        an .npy of such an array, or a `SeriesFile`, with `labels` an array or an .npy path: read by
        memory map a block at a time, memory flat in N, statistics models only, and under torchrun
        each rank reads its share of the blocks: the same release and ledger, rank 0 saves); spends at most
        (ε, δ), all of it recorded in `self.ledger`. Trains on
        `self.device`; the fitted generator is on the CPU (dpgan.devices). `progress`, as for
        tables: a bar where a person watches (False: none), or a callable given (step, total, ε spent
        so far); the statistics models take no steps and show none."""
        with on_device(self.device), fit_threads(self.threads):
            self._fit(data, schema, labels, fit_progress(progress, self.accountant))
        released_on_cpu(self.generator)
        return self

    def _fit(
        self,
        data: pd.DataFrame | np.ndarray | str | Path | SeriesFile,
        schema: SequenceSchema | dict | str | Path | None,
        labels: np.ndarray | str | Path | None,
        progress: FitProgressFn | None,
    ) -> None:
        if isinstance(data, (str, Path)):  # an .npy file: read by memory map, in blocks
            data, labels = SeriesFile.open(data, labels), None
        if isinstance(data, SeriesBlocks):  # an .npy, or a long Parquet table (dpgan.sequences.long_parquet)
            return self._fit_file(data, schema, progress)
        if int(os.environ.get("WORLD_SIZE") or 1) > 1:
            raise InputError("a series fit under torchrun reads an .npy file in blocks: pass the file's path")
        if schema is None:  # an array's T and F are public; bounds and labels are bought with DP
            if not isinstance(data, np.ndarray):
                raise InputError("a long table needs its schema (the id, time and value columns, the length)")
            schema = schema_for_array(data.shape, labels is not None)
        schema = coerce_schema(schema)
        if isinstance(data, pd.DataFrame):
            raw, form = read_long_raw(data, schema), "long"
        elif isinstance(data, np.ndarray):
            raw, form = read_array_raw(data, labels, schema), "array"
        else:
            raise InputError("data must be a pandas DataFrame (long table) or a numpy array of series")
        fitted = run_fit(SequenceKind(self.networks, self.config, schema), raw, self.budget, progress)
        self.schema, self.ledger, self.generator = fitted.data.details.schema, fitted.ledger, fitted.model
        self.input_form, self.training = form, fitted.record

    def _fit_file(
        self, source: SeriesBlocks, schema: SequenceSchema | dict | str | Path | None, progress: FitProgressFn | None
    ) -> None:
        """Series of an .npy file, every data step and the statistics model summed block by block
        (dpgan.sequences.series_file); under torchrun each rank reads its share of the blocks, the
        sums are added over the ranks before each noise, and every rank draws that noise from rank
        0's seed: one release, the single-process ledger (the caller saves on rank 0 alone)."""
        model = self.networks.model
        if not self.networks.released_only:  # public settings: refused before anything is read
            statistics = ", ".join(STATISTICS_MODELS)
            raise InputError(
                f"the {model} model holds its series in memory: fit a file with a statistics model ({statistics}), "
                "or load the array and pass it (one process)"
            )
        if schema is None:  # an array's T and F are public; a long table needs its schema
            if not isinstance(source, SeriesFile):
                raise InputError("a long table needs its schema (the id, time and value columns, the length)")
            schema = schema_for_array(source.shape, source.labels is not None)
        schema = coerce_schema(schema)
        source.check(schema)
        context, ctx = process_group_context(), None
        if context.distributed:  # rank 0's seed on every rank; the record's "seeded" stays the user's
            seed = context.lockstep_seed(source.digest(), "series files", self.budget.seed)
            source, ctx = source.on(context), FitContext.open(replace(self.budget, seed=seed))
        fitted = run_fit(SequenceKind(self.networks, self.config, schema), source, self.budget, progress, ctx)
        self.schema, self.ledger, self.generator = fitted.data.details.schema, fitted.ledger, fitted.model
        self.input_form, self.training = ("array" if isinstance(source, SeriesFile) else "long"), fitted.record

    # --------------------------------------------------------------- sample
    def sample(
        self, n: int, *, seed: int | None = None, label: Any = None
    ) -> pd.DataFrame | tuple[np.ndarray, np.ndarray | None]:
        """n new series, in the form the model was fitted on: a long table with the input's columns,
        or (array (n, T, F), labels or None). `label` fixes every series' label (conditional)."""
        self._require_fitted()
        assert self.schema is not None and self.generator is not None
        n = check_sample_count(n, MAX_SAMPLE)
        names = [str(c) for c in self.schema.categories] if self.schema.label is not None else []
        imposed = imposed_labels(label, names, n, "this model has no label column: it cannot generate by label")
        generator = sampling_generator(seed)
        values, codes = self.generator.sample(n, generator, imposed)
        values_np = values.cpu().numpy()
        codes_np = None if codes is None else codes.cpu().numpy()
        if self.input_form == "array":
            return unscale(values_np, self.schema), label_names(codes_np, self.schema)
        return write_long(values_np, codes_np, self.schema)

    def sample_to(self, path: str | Path, n: int, *, seed: int | None = None, label: Any = None) -> tuple[Path, int]:
        """n new series streamed to `path` (.csv or .parquet) as a long table, SAMPLE_CHUNK series at
        a time (memory flat in n), renamed into place when complete; the path and the rows written.
        Up to SAMPLE_CHUNK series, the rows are `sample`'s with the same seed; beyond, the chunks
        draw from one generator in turn (other draws, the same model)."""
        self._require_fitted()
        assert self.schema is not None and self.generator is not None
        schema, model = self.schema, self.generator
        n = check_sample_count(n, MAX_SAMPLE)
        names = [str(c) for c in schema.categories] if schema.label is not None else []
        imposed = imposed_labels(label, names, n, "this model has no label column: it cannot generate by label")
        generator = sampling_generator(seed)

        def frames() -> Iterator[pd.DataFrame]:
            for start in range(0, n, SAMPLE_CHUNK):
                size = min(SAMPLE_CHUNK, n - start)
                part = None if imposed is None else imposed[start : start + size]
                values, codes = model.sample(size, generator, part)
                codes_np = None if codes is None else codes.cpu().numpy()
                yield write_long(values.cpu().numpy(), codes_np, schema, first=start)

        return write_chunks(frames(), path)

    # ------------------------------------------------------------ report, save, load
    def unit_summary(self) -> str:
        """One line: the DP counts of the units kept and dropped (per reason), as a person reads them."""
        self._require_fitted()
        assert self.schema is not None
        if "units" not in self.training:  # a model saved before the per-reason counts
            return f"about {self.training['estimated_dropped_units']:.0f} {self.schema.units} dropped"
        return ReleasedTally.from_dict(self.training["units"]).describe()

    def _repr_details(self) -> dict[str, Any]:
        """The critic (series have one recipe) and, once fitted, the unit of privacy."""
        details: dict[str, Any] = {"critic": self.networks.critic}
        if self.schema is not None:
            details["unit"] = self.schema.unit
        return details

    def _report_details(self) -> dict[str, Any]:
        assert self.schema is not None
        unit = self.schema.unit
        protected = (
            "one series (add or remove one series)"
            if unit == "series"
            else f"one {self.schema.entity!r} entity with all its series (at most "
            f"{self.schema.max_series_per_entity} of them used, clipped as one unit)"
        )
        return {
            "kind": KIND,
            "model": MODEL_WORDS[self.networks.model],
            "unit_of_privacy": protected,
            "input_rule": dropped_policy(self.schema),
            "schema_source": schema_source(self.schema),
            "dp_schema": dp_items(self.schema),
        }

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        self._require_fitted()
        assert self.schema is not None and self.generator is not None
        check_model_destination(path, overwrite)
        metadata = {
            "kind": KIND,
            "epsilon_target": self.epsilon,
            "epsilon": self.ledger.epsilon(self.delta, self.accountant),
            "delta": self.delta,
            "accountant": self.accountant,
            "schema": self.schema.to_dict(),
            "config": self.config.to_dict(),
            "networks": asdict(self.networks),
            "input_form": self.input_form,
            "ledger": self.ledger.to_dict(),
            "training": self.training,
            REPORT_KEY: self.privacy_report(),  # what `dpgan inspect` reads (dpgan.inspection)
        }
        if self.networks.released_only:  # a statistics model: its public form and released arrays alone
            metadata["statistics"] = {"model": self.networks.model, **self.generator.form()}
            return write_model_dir(path, self.generator.state_dict(), metadata, overwrite=overwrite, statistics=True)
        return write_model_dir(path, self.generator.state_dict(), metadata, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path) -> SequenceSynthesizer:
        tensors, meta = read_model_dir(path)
        if meta.get("kind") != KIND:
            raise ModelFileError(f"{path} is not a sequence model")
        try:
            networks = dict(meta["networks"])
            networks["critic_hidden"] = tuple(networks["critic_hidden"])
            if "gaussian_base" in networks:  # a model saved before `model` named the composition
                networks["model"] = "gaussian+gan" if networks.pop("gaussian_base") else "gan"
            synth = cls(epsilon=meta["epsilon_target"], delta=meta["delta"], accountant=meta["accountant"])
            # the saved networks whole, as the fit resolved them (the fields its model does not read too)
            synth.networks = network_settings(SequenceSettings, networks)
            if networks:
                raise ValueError(f"unknown networks settings {sorted(networks)}")
            synth.config = loop_config(meta["config"])
            synth.schema = SequenceSchema.from_dict(meta["schema"])
            synth.ledger = PrivacyLedger.from_dict(meta["ledger"])
            synth.training = dict(meta["training"])
            synth.input_form = str(meta["input_form"])
            synth.generator = released_model(path, synth.networks, synth.schema, meta, tensors)
        except (KeyError, TypeError, ValueError, RuntimeError, InputError) as exc:
            raise ModelFileError(f"{path} holds an inconsistent model: {exc}") from None
        return synth


def released_model(
    path: str | Path, networks: SequenceSettings, schema: SequenceSchema, meta: dict[str, Any], tensors: dict
) -> Any:
    """The saved model, strictly: a statistics model from its form and arrays, or the GAN's generator
    with every weight fitting the network the settings describe. A statistics model saved before
    format 3 (inside a network's weights) is refused in one line: it must be fitted again."""
    model = networks.model
    old = model in NETWORK_SAVED_MODELS  # the series' rule: "independent" came with format 3
    if statistics_file(path, meta, model, statistics=networks.released_only, saved_in_network=old):
        form = dict(meta["statistics"])
        if form.pop("model") != networks.model:
            raise ValueError("the statistics file names another model than the settings")
        return series_model_class(networks.model).from_files(networks.model, form, tensors)
    G = series_generator(networks, schema)
    G.load_state_dict(tensors, strict=True)
    return G.eval()


__all__ = ["SequenceSettings", "SequenceSynthesizer"]
