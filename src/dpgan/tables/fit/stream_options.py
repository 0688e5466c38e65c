"""The public arguments of a fit from Parquet read in record batches, checked before any read.

What a stream cannot do yet is refused here, by public settings only (never by the data, so
whether a fit runs says nothing about the rows): the extras trained with DP-SGD on the whole
encoded table or on a held-out split (the DP-SGD label model, the auxiliary classifier, checkpoint
selection), dtgan-g's shard critics, the non-private schema path, strict mode and resuming. A
target's label model is allowed when it is read off the 2-way tables (`label_model_from_tables`,
decided by the settings and the target's name only). Beyond dpgan.tables.fit.options' checks it
reads only the files' footers and the column names.

Apart from dpgan.tables.fit.streamed (the streamed kind) so the fit goes down without re-entering a
file: the facade checks here, then the run (dpgan.tables.fit.run) starts the pipeline, which calls
the kind.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dpgan.errors import InputError
from dpgan.tables.fit.options import FitOptions, schema_with_hints, table_keys
from dpgan.tables.fit.plan import FitSettings
from dpgan.tables.fit.plugins import label_model_from_tables
from dpgan.tables.reading.conform import check_columns
from dpgan.tables.reading.parquet_source import OpenSource, ParquetSource
from dpgan.tables.schema.table import Schema


def stream_arguments(
    data: ParquetSource | str | Path,
    schema: Schema | str | Path | dict | None,
    settings: FitSettings,
    *,
    target: str | None,
    categorical,
    bounds,
    categories,
    strict: bool,
    checkpoint: object,
    keys=None,
    hierarchies=None,
) -> tuple[OpenSource, Schema | None, FitOptions]:
    """The checks of dpgan.tables.fit.options for a stream, plus the refusals of the module
    docstring: all from public settings, the file footers and the column names."""
    if strict:
        raise InputError("strict mode is not available when fitting from Parquet in batches; fit a DataFrame")
    if checkpoint is not None:
        raise InputError("checkpoint/resume is not available when fitting from Parquet in batches")
    _refuse_unsupported(settings)
    source = data if isinstance(data, ParquetSource) else ParquetSource(data)
    opened = source.open()
    schema, hints = schema_with_hints(schema, target, categorical, bounds, categories, hierarchies)
    specs = table_keys(keys, opened.columns, schema, hints)
    # the key columns are never read: the batches hold the learned columns only
    opened = replace(opened, columns=tuple(c for c in opened.columns if c not in {k.name for k in specs}))
    if schema is not None:
        check_columns(list(opened.columns), schema)
    else:
        hints.check(opened.columns)
    target = schema.target if schema is not None else hints.target
    if settings.table.label_model and target is not None:
        condition = settings.condition_column or (target if settings.recipe.conditional else None)
        if not label_model_from_tables(settings.table, target, condition):
            raise InputError(
                "the DP-SGD label model is not available when fitting from Parquet in batches: "
                "label_model=False, or keep the 2-way anchor on and label_model_kind='pair-tables'"
            )
    return opened, schema, FitOptions(hints, False, False, specs)


def _refuse_unsupported(settings: FitSettings) -> None:
    cfg = settings.table
    reasons = []
    if settings.recipe.dp_on != "critic":
        reasons.append(f"recipe {settings.recipe.name} (its shard critics read the whole table)")
    if settings.schema_from_data_without_dp:
        reasons.append("schema_from_data_without_dp")
    if cfg.select_checkpoints:
        reasons.append("select_checkpoints")
    if cfg.classifier_loss_weight > 0:
        reasons.append("classifier_loss_weight > 0")
    if reasons:
        raise InputError("not available when fitting from Parquet in batches: " + "; ".join(reasons))


__all__ = ["stream_arguments"]
