"""The public description of a set of fixed-length series: what the curator knows without the data.

A series (one district-day, one household-week) is `length` readings of one or more value columns,
optionally with a label that is constant along it, and optionally owned by an entity (a household,
a district) that may own many series. Every number here is public: value bounds come from the
meter's documented range or the utility's records, never from the private series' own min and max
(a pitfall: an exact extreme is a private value), and the label set from documentation. The scale
maps each value column's public [min, max] to [-1, 1] for the generator's tanh output.

A bound or the label set may be left unknown (None, or no categories): the fit then estimates it
with DP (dpgan.sequences.dp_schema, a release in the ledger) before anything is scaled, and the
item's `source` says "dp" from then on, so reports tell public facts from DP estimates.

The unit of privacy follows from `entity`: without it one series is protected (add or remove one
series); with it all series of one entity are, whatever their number (the fit samples entities,
keeps at most `max_series_per_entity` series of each, chosen at random, and clips them as one unit).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpgan.errors import InputError
from dpgan.tables.schema.table import read_schema_file

MAX_LENGTH = 10_000
MAX_VALUES = 64
MAX_SERIES_PER_ENTITY = 256
SCHEMA_KEYS = frozenset(("kind", "id", "time", "length", "values", "label", "entity", "source"))


SCALES = ("linear", "log")
# where a bound or the label set came from: the user's public schema, or a DP release in the ledger
PUBLIC, DP = "public", "dp"
SOURCES = (PUBLIC, DP)


@dataclass(frozen=True)
class ValueColumn:
    """One measured quantity, its range, and how the range is mapped to [-1, 1]: linearly, or on
    log1p(x − min) for long-tailed flows (most hours far below the range's top). A bound left None
    is estimated with DP at fit time; `source` is "dp" once a bound was (the other may be public)."""

    name: str
    min: float | None = None
    max: float | None = None
    scale: str = "linear"
    source: str = PUBLIC

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InputError("every value column needs a non-empty string name")
        for bound in (self.min, self.max):
            if bound is None:
                continue
            if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not math.isfinite(bound):
                raise InputError(f"value column {self.name!r} needs finite 'min' and 'max' (or none, for DP)")
        if self.known and not self.min < self.max:  # type: ignore[operator]
            raise InputError(f"value column {self.name!r}: 'min' must be smaller than 'max'")
        if self.scale not in SCALES:
            raise InputError(f"value column {self.name!r}: 'scale' must be one of {', '.join(SCALES)}")
        if self.source not in SOURCES:
            raise InputError(f"value column {self.name!r}: 'source' must be one of {', '.join(SOURCES)}")

    @property
    def known(self) -> bool:
        """Both bounds are set (public, or already released with DP)."""
        return self.min is not None and self.max is not None


@dataclass(frozen=True)
class SequenceSchema:
    """Column names of the long table, the series length, the value columns, the label and the entity.
    `id` is one column or several that name a series together (a district and a day); the label or
    the entity may be one of them."""

    id: str | tuple[str, ...]
    time: str
    length: int
    values: tuple[ValueColumn, ...]
    label: str | None = None
    categories: tuple[Any, ...] = ()
    entity: str | None = None
    max_series_per_entity: int = 1
    source: str = "user"
    categories_source: str = PUBLIC

    def __post_init__(self) -> None:
        if isinstance(self.id, (list, tuple)):
            if not self.id:
                raise InputError("the id needs at least one column")
            object.__setattr__(self, "id", self.id[0] if len(self.id) == 1 else tuple(self.id))
        if isinstance(self.length, bool) or not isinstance(self.length, int) or not 2 <= self.length <= MAX_LENGTH:
            raise InputError(f"the series length must be a whole number from 2 to {MAX_LENGTH}")
        if not self.values or len(self.values) > MAX_VALUES:
            raise InputError(f"a sequence schema needs 1 to {MAX_VALUES} value columns")
        names = [*self.id_columns, self.time, *(v.name for v in self.values)]
        roles = [c for c in (self.label, self.entity) if c is not None]
        if not all(isinstance(n, str) and n for n in [*names, *roles]):
            raise InputError("the id, time, label and entity columns need non-empty string names")
        # the label may name the owner (a district's days labelled by district), and either may be
        # one of the id columns (a series named by its district and day)
        names += [c for c in dict.fromkeys(roles) if c not in self.id_columns]
        if len(set(names)) != len(names):
            raise InputError("the id, time, value, label and entity columns must be different columns")
        if self.label is None and self.categories:
            raise InputError("'categories' needs a label column")
        if self.label is not None and self.categories:  # none: the label set is released with DP
            if len(self.categories) < 2 or len(set(map(str, self.categories))) != len(self.categories):
                raise InputError(f"label {self.label!r} needs at least two distinct categories")
        if self.categories_source not in SOURCES:
            raise InputError(f"the label set's 'source' must be one of {', '.join(SOURCES)}")
        per_entity = self.max_series_per_entity
        if (
            isinstance(per_entity, bool)
            or not isinstance(per_entity, int)
            or not 1 <= per_entity <= MAX_SERIES_PER_ENTITY
        ):
            raise InputError(f"max_series_per_entity must be a whole number from 1 to {MAX_SERIES_PER_ENTITY}")

    @property
    def id_columns(self) -> tuple[str, ...]:
        """The column(s) that name a series together."""
        return self.id if isinstance(self.id, tuple) else (self.id,)

    @property
    def value_names(self) -> list[str]:
        return [v.name for v in self.values]

    @property
    def n_labels(self) -> int:
        """The label codes a model draws: the categories' count, 0 without a label column."""
        return len(self.categories) if self.label is not None else 0

    @property
    def columns(self) -> list[str]:
        """The long table's columns, in the order sampling writes them."""
        out = [*self.id_columns, self.time, *self.value_names]
        return out + [c for c in dict.fromkeys((self.label, self.entity)) if c is not None and c not in out]

    @property
    def complete(self) -> bool:
        """Every bound and (with a label) the label set is known: the schema can scale series."""
        return all(v.known for v in self.values) and (self.label is None or bool(self.categories))

    def require_complete(self) -> None:
        if not self.complete:
            raise InputError(
                "the sequence schema lacks value bounds or the label set: fit estimates them with DP, "
                "anything else needs them public (--bounds NAME=LOW:HIGH, --categories L=A,B)"
            )

    @property
    def unit(self) -> str:
        """What the guarantee protects: one series, or every series of one entity."""
        return "series" if self.entity is None else "entity"

    @property
    def units(self) -> str:
        """The unit's plural, for messages."""
        return "series" if self.entity is None else "entities"

    def to_dict(self) -> dict[str, Any]:
        identity = list(self.id) if isinstance(self.id, tuple) else self.id
        out: dict[str, Any] = {"kind": "sequence", "id": identity, "time": self.time, "length": self.length}
        out["values"] = [
            {"name": v.name, "min": v.min, "max": v.max}
            | ({"scale": v.scale} if v.scale != "linear" else {})
            | ({"source": v.source} if v.source != PUBLIC else {})
            for v in self.values
        ]
        if self.label is not None:
            out["label"] = {"name": self.label, "categories": list(self.categories)}
            if self.categories_source != PUBLIC:
                out["label"]["source"] = self.categories_source
        if self.entity is not None:
            out["entity"] = {"name": self.entity, "max_series": self.max_series_per_entity}
        out["source"] = self.source
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SequenceSchema:
        if not isinstance(data, dict) or data.get("kind") != "sequence":
            raise InputError('a sequence schema is a JSON object with "kind": "sequence"')
        unknown = set(data) - SCHEMA_KEYS
        if unknown:
            raise InputError(f"unknown sequence schema keys {sorted(unknown)}")
        values = data.get("values")
        if not isinstance(values, list) or not all(isinstance(v, dict) for v in values):
            raise InputError('\'values\' must be a list of {"name", "min", "max"} objects')
        label = data.get("label") or {}
        entity = data.get("entity") or {}
        if not isinstance(label, dict) or not isinstance(entity, dict):
            raise InputError("'label' and 'entity' must be JSON objects")
        identity = data.get("id")
        return cls(
            id=tuple(identity) if isinstance(identity, list) else identity,  # type: ignore[arg-type]
            time=data.get("time"),  # type: ignore[arg-type]
            length=data.get("length"),  # type: ignore[arg-type]
            values=tuple(
                ValueColumn(
                    v.get("name"),  # type: ignore[arg-type]
                    v.get("min"),
                    v.get("max"),
                    v.get("scale", "linear"),
                    v.get("source", PUBLIC),
                )
                for v in values
            ),
            label=label.get("name"),
            categories=tuple(label.get("categories") or []),
            categories_source=label.get("source", PUBLIC),
            entity=entity.get("name"),
            max_series_per_entity=entity.get("max_series", 1),
            source=str(data.get("source", "user")),
        )

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def from_json(cls, path: str | Path) -> SequenceSchema:
        return cls.from_dict(read_schema_file(path))


def schema_from_options(
    columns: list[str],
    *,
    id: str | list[str] | tuple[str, ...] | None,
    time: str | None,
    length: int | None,
    bounds: dict[str, tuple[float, float]],
    label: str | None = None,
    categories: dict[str, list[str]] | None = None,
    entity: str | None = None,
    max_series_per_entity: int = 1,
    value_columns: list[str] | None = None,
) -> SequenceSchema:
    """A schema from the CLI's public options and the table's header (names only, no value): the
    value columns are `value_columns`, or every column other than the id, time, label and entity;
    those without --bounds, and a label without --categories, are left unknown for the fit to
    estimate with DP. Columns named by no role are not read."""
    if not id or not time or length is None:
        raise InputError("--kind sequence needs --id-column, --time-column and --length (or --schema)")
    ids = [id] if isinstance(id, str) else list(id)
    named = [c for c in (*ids, time, label, entity) if c is not None]
    unknown = [c for c in [*named, *(value_columns or [])] if c not in columns]
    if unknown:
        raise InputError(f"{', '.join(map(repr, unknown))} is not a column of the table")
    if value_columns is not None:
        taken = [c for c in value_columns if c in named]
        if taken:
            raise InputError(f"--value-columns names {taken[0]!r}, which has another role")
    value_names = list(value_columns) if value_columns is not None else [c for c in columns if c not in named]
    extra = [c for c in bounds if c not in value_names]
    if extra:
        raise InputError(f"--bounds names {extra[0]!r}, which is not a value column")
    extra_labels = [c for c in (categories or {}) if c != label]
    if extra_labels:
        raise InputError(f"--categories names {extra_labels[0]!r}, which is not the --label-column")
    labels = tuple((categories or {}).get(label, ())) if label is not None else ()
    return SequenceSchema(
        id=tuple(ids),
        time=time,
        length=length,
        values=tuple(ValueColumn(c, *bounds.get(c, (None, None))) for c in value_names),
        label=label,
        categories=labels,
        entity=entity,
        max_series_per_entity=max_series_per_entity,
    )


def schema_for_array(shape: tuple[int, ...], labelled: bool) -> SequenceSchema:
    """A schema for an (N, T) or (N, T, F) array given without one: T and F are the array's (the
    caller built it: public), the value columns are named value_0, value_1, ... with no bounds and
    the label (if labels are given) has no label set, so the fit estimates both with DP."""
    if len(shape) not in (2, 3):
        raise InputError("series must be an (N, T) or (N, T, F) array")
    length, features = int(shape[1]), int(shape[2]) if len(shape) == 3 else 1
    if features < 1:
        raise InputError("series need at least one value per reading")
    return SequenceSchema(
        id="series",
        time="step",
        length=length,
        values=tuple(ValueColumn(f"value_{i}") for i in range(features)),
        label="label" if labelled else None,
    )


def coerce_schema(schema: SequenceSchema | dict | str | Path) -> SequenceSchema:
    """A SequenceSchema from itself, its dict or its JSON file."""
    if isinstance(schema, SequenceSchema):
        return schema
    if isinstance(schema, dict):
        return SequenceSchema.from_dict(schema)
    if isinstance(schema, (str, Path)):
        return SequenceSchema.from_json(schema)
    raise InputError("schema must be a SequenceSchema, a dict or a path to a JSON file")


__all__ = ["DP", "PUBLIC", "SequenceSchema", "ValueColumn", "coerce_schema", "schema_for_array", "schema_from_options"]
