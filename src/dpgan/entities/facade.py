"""EntitySynthesizer: DP synthetic entities, each a parent row with its events (issue 52).

    synth = EntitySynthesizer(epsilon=3.0)
    synth.fit(planes, flights, key="tailnum", time_column="time_hour",
              time_bounds=("2013-01-01T00:00:00Z", "2014-01-01T00:00:00Z"), time_format="%Y-%m-%dT%H:%M:%SZ",
              parent_schema=..., event_schema=..., max_events=32)
    parents, events = synth.sample(1000)

The unit of privacy is the entity (its parent row and all its events); both tables' columns are
public metadata (a schema per table, or hints: categories and bounds). The fit is the one pipeline
(dpgan.fit) with the entity kind (fit_kind.py); the model is a statistics model (statistics.py),
saved as its released arrays and JSON, or the gan model (gan/), saved as its generator's weights
(safetensors) and JSON: no pickle either way.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan.api import Synthesizer, check_sample_count
from dpgan.devices import on_device
from dpgan.entities.columns import ColumnCells
from dpgan.entities.fit_kind import EntityKind, EntityTables
from dpgan.entities.gan.model import EntityGAN
from dpgan.entities.inference import SchemaPurchase, purchase_note
from dpgan.entities.parquet import EntityParquet
from dpgan.entities.reader import UNIT_REASONS, check_tables, check_time_dtype
from dpgan.entities.schema import EntitySchema, TimeSpec, format_times, table_schema, time_format_of
from dpgan.entities.settings import ENTITY_MODELS, GAN_DEFAULTS, EntitySettings
from dpgan.entities.statistics import EntityStatistics, link_index
from dpgan.errors import InputError, ModelFileError
from dpgan.fit import FittedModel, run_fit
from dpgan.model_catalog import model_entry, refuse_unread_settings
from dpgan.privacy.distributed import process_group_context
from dpgan.privacy.ledger import PrivacyLedger
from dpgan.privacy.unit_rule import ReleasedTally, none_usable_note
from dpgan.serialization import REPORT_KEY, check_model_destination, read_model_dir, write_model_dir
from dpgan.tables.schema.datetimes import TYPED
from dpgan.tables.settings import loop_config
from dpgan.threads import fit_threads
from dpgan.training.context import FitContext
from dpgan.training.strategies import critic_config

KIND = "entity"
MAX_SAMPLE = 1_000_000  # entities per call
SAMPLE_CHUNK = 20_000  # entities drawn at once when streamed to files (sample_to)


class EntitySynthesizer(Synthesizer):
    """Fit on a parent table and an events table linked by a key; sample new linked pairs."""

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 1e-5,
        accountant: str = "pld",
        seed: int | None = None,
        noise_multiplier: float | None = None,
        device: str | torch.device = "cpu",
        threads: int | str | None = None,
        **settings: Any,
    ) -> None:
        if noise_multiplier is not None:
            raise InputError("the entity kind's models calibrate σ to ε: noise_multiplier does not apply")
        super().__init__(epsilon=epsilon, delta=delta, accountant=accountant, seed=seed, device=device,
                         threads=threads)  # fmt: skip
        entry = model_entry(ENTITY_MODELS, settings.get("model"), KIND)
        given = {k: v for k, v in settings.items() if v is not None and k != "model"}
        refuse_unread_settings(entry, set(given), ENTITY_MODELS)
        own = {f.name for f in fields(EntitySettings)}
        self.settings = EntitySettings(**{k: v for k, v in given.items() if k in own} | {"model": entry.name})
        self.settings.check()
        # the gan model's training loop (its defaults under the user's settings); None for statistics
        loop = {k: v for k, v in given.items() if k not in own}
        self.config = critic_config(GAN_DEFAULTS, loop) if entry.trains else None
        self.schema: EntitySchema | None = None

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        parents: pd.DataFrame | str | Path | EntityParquet,
        events: pd.DataFrame | str | Path | None = None,
        *,
        key: str | None = None,
        time_column: str | None = None,
        time_bounds: tuple[Any, Any] | None = None,
        time_format: str | None = None,
        max_events: int = 32,
        schema: EntitySchema | dict | str | Path | None = None,
        parent_schema: Any = None,
        event_schema: Any = None,
        categories: dict[str, list[Any]] | None = None,
        bounds: dict[str, tuple[float, float]] | None = None,
    ) -> EntitySynthesizer:
        """Train on `parents` (one row per entity) and `events` (rows naming their entity in the
        `key` column), spending at most (ε, δ), all of it in `self.ledger`. The public facts: a whole
        entity schema (`schema`: EntitySchema, its dict or JSON file), or the key, the time column
        with its public window `time_bounds` and `time_format` ("number", "integer", "order", a strftime format
        or a datetime64 dtype; without one, the column's dtype says: a datetime64 column its dtype, an
        integer column "integer", else "number"), k = `max_events`, and each table's schema or hints
        (`categories`, `bounds`). What is not given (a table with neither a schema nor a hint for any
        of its columns, a time column without its window) is bought with DP (inference.py).

        `parents` and `events` may be DataFrames, or each a Parquet file or folder of parts (or one
        `EntityParquet` holding both, `events` None): read in buckets of entities with memory flat in
        their number (parquet.py), statistics models only, the public facts given (no purchase); the
        same releases and ledger as the tables in memory, and under torchrun each rank reads its
        buckets: one release, the single-process ledger (the caller saves on rank 0 alone)."""
        public = (key, time_column, time_bounds, time_format, max_events, schema, parent_schema, event_schema,
                  categories or {}, bounds or {})  # fmt: skip
        source = _parquet_source(parents, events)
        if source is not None:
            return self._fit_blocks(source, public)
        if int(os.environ.get("WORLD_SIZE") or 1) > 1:
            raise InputError("an entity fit under torchrun reads Parquet tables in buckets: pass their paths")
        self.schema, purchase = self._schema(parents, events, *public)
        self._check_link(parents, purchase)  # a link that is no parent column: one line, before any read
        with on_device(self.device), fit_threads(self.threads):
            kind = EntityKind(self.schema, self.settings, self.config, purchase=purchase)
            self._fitted(run_fit(kind, EntityTables(parents, events), self.budget))
        return self

    def _fit_blocks(self, source: EntityParquet, public: tuple) -> EntitySynthesizer:
        """Parquet tables in buckets (parquet.py): every refusal on the public facts (the settings,
        the schema, the headers) before any value is read; under torchrun rank 0's seed on every
        rank, after checking that every rank reads the same files."""
        if self.config is not None:
            statistics = ", ".join(m.name for m in ENTITY_MODELS if not m.trains)
            raise InputError(f"the gan model holds its entities in memory: fit Parquet tables with {statistics}, "
                             "or load them and pass DataFrames")  # fmt: skip
        parents, events = source.headers
        self.schema, purchase = self._schema(parents, events, *public)
        if purchase is not None:
            parts = "; ".join(purchase.parts())
            raise InputError(f"Parquet tables are read in buckets with their schema given: {parts} would be bought "
                             "with DP; give each table's schema or hints (and the time window), or fit the tables in "
                             "memory")  # fmt: skip
        self._check_link(parents, None)
        check_tables(parents, events, self.schema)
        context, ctx = process_group_context(), None
        if context.distributed:  # rank 0's seed on every rank; the record's "seeded" stays the user's
            seed = context.lockstep_seed(source.digest(), "entity tables", self.budget.seed)
            source, ctx = source.on(context), FitContext.open(replace(self.budget, seed=seed))
        try:
            with on_device(self.device), fit_threads(self.threads):
                self._fitted(
                    run_fit(EntityKind(self.schema, self.settings, self.config), source, self.budget, None, ctx)
                )
        finally:
            source.cache.clear()  # the bucket files, removed
        return self

    def _fitted(self, fitted: FittedModel) -> None:
        self.ledger, self.generator, self.training = fitted.ledger, fitted.model, fitted.record
        self.schema = fitted.data.details["schema"]
        note = none_usable_note(fitted.data.details["tally"], "check the key column and the parents' keys")
        if note is not None:
            self.training["note"] = note

    def _check_link(self, parents: pd.DataFrame, purchase: SchemaPurchase | None) -> None:
        """The link setting names a modelled parent column (with the parents' schema bought: a column
        of their header besides the key): one line, before any read."""
        if self.schema is not None:
            link_index(self.schema, self.settings)
            return
        link, given = self.settings.link, None if purchase is None else purchase.parents
        if link is None or purchase is None:
            return
        names = given.names if given is not None else [str(c) for c in parents.columns if str(c) != purchase.key]
        if link not in names:
            raise InputError(f"link {link!r} is not one of the parents' modelled columns")
        if given is not None and given[link].is_numeric:
            raise InputError(f"link {link!r} must be a categorical or boolean parent column")

    @staticmethod
    def _schema(parents, events, key, time_column, time_bounds, time_format, max_events, schema, parent_schema,
                event_schema, categories, bounds) -> tuple[EntitySchema | None, SchemaPurchase | None]:  # type: ignore[no-untyped-def]  # fmt: skip
        """The entity schema: the one given whole, or built from the public arguments (each table's
        header is public: its column names); or, where those leave parts out, what to buy with DP."""
        if schema is not None:
            if any(v is not None for v in (key, time_column, time_bounds, parent_schema, event_schema)):
                raise InputError("give the whole entity schema, or key, time and table schemas: not both")
            if isinstance(schema, EntitySchema):
                return schema, None
            whole = EntitySchema.from_dict(schema) if isinstance(schema, dict) else EntitySchema.from_json(schema)
            return whole, None
        if key is None:
            raise InputError("name the key column (key=...) that links each event to its parent")
        for words, frame in (("parents", parents), ("events", events)):
            if not isinstance(frame, pd.DataFrame):
                raise InputError(f"the {words} must be a pandas DataFrame")
            if key not in frame.columns:  # before the columns' hints: the first thing to say
                raise InputError(f"the {words} table has no key column {key!r}")
        time = None
        if time_bounds is not None and time_column is None:
            raise InputError("time_bounds is the time column's window: name the time column too")
        if time_column is not None and time_bounds is not None:
            if len(time_bounds) != 2:
                raise InputError("a time column's public window is time_bounds=(first, last)")
            time = TimeSpec(
                time_column, time_bounds[0], time_bounds[1], time_format or time_format_of(events, time_column)
            )
        elif time_column is not None and time_format is None and time_format_of(events, time_column).startswith(TYPED):
            time_format = time_format_of(events, time_column)  # typed date-times: the window alone is bought
        if time_column is not None and time_column in events.columns and (time is not None or time_format):
            check_time_dtype(time_column, time.format if time is not None else time_format, events[time_column].dtype)
        skip = [key, *([time_column] if time_column else [])]
        tables = []
        for words, frame, given in (("parents", parents, parent_schema), ("events", events, event_schema)):
            names = [str(c) for c in frame.columns]
            hinted = any(n in categories or n in bounds for n in names if n not in skip)
            tables.append(table_schema(words, names, given, categories, bounds, skip) if given is not None or hinted
                          else None)  # fmt: skip
        purchase = SchemaPurchase(key, max_events, tables[0], tables[1], time,
                                  time_column if time is None else None, time_format)  # fmt: skip
        if purchase.needed:
            return None, purchase
        assert tables[0] is not None and tables[1] is not None
        return EntitySchema(key=key, parents=tables[0], events=tables[1], max_events=max_events, time=time), None

    # --------------------------------------------------------------- sample
    def sample(self, n: int, *, seed: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """n new entities: (parents, events), linked by fresh keys 1..n; every event's key is a
        parent's, events in time order, times in the input's format."""
        self._require_fitted()
        n = check_sample_count(n, MAX_SAMPLE)
        return self._drawn(n, np.random.default_rng(seed), 0)

    def sample_to(
        self, parents_path: str | Path, events_path: str | Path, n: int, *, seed: int | None = None
    ) -> tuple[int, int]:
        """n new entities streamed to two tables (.csv or .parquet each), SAMPLE_CHUNK entities at a
        time (memory flat in n), each file renamed into place when complete; the rows written to each.
        The parents are written in one pass and the events in a second that draws the same chunks
        again from the same seed (OS entropy drawn once when none is given): the two files agree, and
        up to SAMPLE_CHUNK entities they are `sample`'s with the same seed."""
        from dpgan.tables.reading.table_io import write_chunks

        self._require_fitted()
        n = check_sample_count(n, MAX_SAMPLE)
        sequence = np.random.SeedSequence(seed)

        def chunks(which: int) -> Iterator[pd.DataFrame]:
            rng = np.random.default_rng(sequence)  # the same stream on both passes
            for start in range(0, n, SAMPLE_CHUNK):
                yield self._drawn(min(SAMPLE_CHUNK, n - start), rng, start)[which]

        _, parents = write_chunks(chunks(0), parents_path)
        _, events = write_chunks(chunks(1), events_path)
        return parents, events

    def _drawn(self, n: int, rng: np.random.Generator, first: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        """n entities drawn with `rng`, keyed first + 1, ..., first + n."""
        assert self.schema is not None
        drawn = self.generator.sample(n, rng)
        schema, bins = self.schema, self.settings.bins
        parents = pd.DataFrame({schema.key: np.arange(first + 1, first + n + 1)})
        for j, spec in enumerate(schema.parents.columns):
            parents[spec.name] = ColumnCells.of(spec, bins).values(drawn.parent_codes[:, j], rng).to_numpy()
        events = pd.DataFrame({schema.key: drawn.owner + first + 1})
        if schema.time is not None:
            events[schema.time.column] = format_times(drawn.times, schema.time, drawn.owner).to_numpy()
        for j, spec in enumerate(schema.events.columns):
            events[spec.name] = ColumnCells.of(spec, bins).values(drawn.event_codes[:, j], rng).to_numpy()
        return parents, events

    # ------------------------------------------------------------ report, save, load
    def _repr_details(self) -> dict[str, Any]:
        return {"model": self.settings.model}

    def _report_details(self) -> dict[str, Any]:
        assert self.schema is not None
        k = self.schema.max_events
        return {
            "kind": KIND,
            "model": self.settings.model,
            "unit_of_privacy": f"one entity: its {self.schema.key!r} parent row and all its events (at most "
            f"k = {k} of them read for the event columns, each weighing 1/k)",
            "max_events": k,
            "input_rule": "rows without a key are ignored; keys with events but no parent row, or with several "
            f"parent rows, are dropped ({', '.join(UNIT_REASONS)}); events with an unreadable time are dropped; "
            "each kept, dropped and flagged count is released with DP",
            "schema_source": purchase_note(self.training.get("dp_schema", [])),
            "dp_schema": list(self.training.get("dp_schema", [])),
        }

    def unit_summary(self) -> str:
        self._require_fitted()
        return ReleasedTally.from_dict(self.training["units"]).describe()

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        self._require_fitted()
        assert self.schema is not None
        check_model_destination(path, overwrite)
        metadata = {
            "kind": KIND,
            "epsilon_target": self.epsilon,
            "epsilon": self.ledger.epsilon(self.delta, self.accountant),
            "delta": self.delta,
            "accountant": self.accountant,
            "schema": self.schema.to_dict(),
            "settings": asdict(self.settings),
            "statistics": self.generator.form(),
            "ledger": self.ledger.to_dict(),
            "training": self.training,
            REPORT_KEY: self.privacy_report(),
        }
        if self.config is not None:  # the gan model: its generator's weights, and the loop's settings
            metadata["config"] = self.config.to_dict()
            return write_model_dir(path, self.generator.tensors(), metadata, overwrite=overwrite)
        tensors = {key: torch.from_numpy(np.ascontiguousarray(v)) for key, v in self.generator.arrays().items()}
        return write_model_dir(path, tensors, metadata, overwrite=overwrite, statistics=True)

    @classmethod
    def load(cls, path: str | Path) -> EntitySynthesizer:
        tensors, meta = read_model_dir(path)
        if meta.get("kind") != KIND:
            raise ModelFileError(f"{path} is not an entity model")
        try:
            saved = dict(meta["settings"])  # as the fit resolved them (fields its model does not read too)
            synth = cls(epsilon=meta["epsilon_target"], delta=meta["delta"], accountant=meta["accountant"],
                        model=saved.get("model"))  # fmt: skip
            synth.settings = EntitySettings(**saved)
            synth.settings.check()
            synth.schema = EntitySchema.from_dict(meta["schema"])
            synth.ledger = PrivacyLedger.from_dict(meta["ledger"])
            synth.training = dict(meta["training"])
            if synth.settings.model == "gan":
                synth.config = loop_config(meta["config"])
                synth.generator = EntityGAN.from_tensors(synth.schema, synth.settings, synth.config, tensors)
                if synth.generator.form() != meta["statistics"]:
                    raise ValueError("the generator's form does not match the schema and settings")
                return synth
            arrays = {key: value.cpu().numpy() for key, value in tensors.items()}
            link = meta["statistics"]["link"]  # chosen with DP at fit time, or by the settings' rule
            synth.generator = EntityStatistics.from_arrays(synth.schema, synth.settings, arrays, link=link)
            if synth.generator.form() != meta["statistics"]:
                raise ValueError("the statistics' form does not match the schema and settings")
        except (KeyError, TypeError, ValueError, RuntimeError, InputError) as exc:
            raise ModelFileError(f"{path} holds an inconsistent entity model: {exc}") from None
        return synth


def _parquet_source(parents: Any, events: Any) -> EntityParquet | None:
    """The Parquet tables to read in buckets: an EntityParquet, or two paths (a .parquet file or a
    folder each); None for DataFrames. A mix, or a file that is not Parquet, is one line."""
    if isinstance(parents, EntityParquet):
        if events is not None:
            raise InputError("an EntityParquet holds both tables: pass it alone")
        return parents
    paths = [isinstance(t, (str, Path)) for t in (parents, events)]
    if not any(paths):
        if events is None:
            raise InputError("pass the events table too: fit(parents, events, key=...)")
        return None
    if not all(paths):
        raise InputError("give both tables as DataFrames, or both as Parquet files or folders")
    for words, path in (("parents", Path(parents)), ("events", Path(events))):
        if not path.is_dir() and path.suffix.lower() != ".parquet":
            raise InputError(f"the {words} table {path.name!r} is not a Parquet file or folder: read it "
                             "(pandas) and pass the DataFrame")  # fmt: skip
    return EntityParquet.open(parents, events)


__all__ = ["EntitySynthesizer"]
