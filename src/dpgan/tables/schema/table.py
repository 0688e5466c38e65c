"""A table's schema: its ordered columns (dpgan.tables.schema.columns), the target, geo pairs, key
columns (dpgan.tables.schema.keys) and the DP events that bought it; read from and written to JSON,
and the public rewrites of it (geo pairs, binary codes). Public metadata: nothing in it is read off
the private rows for free.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dpgan.errors import InputError
from dpgan.tables.schema.columns import MAX_BINARY_VALUES, ColumnSpec
from dpgan.tables.schema.keys import KeySpec, is_key_entry
from dpgan.tables.schema.rule_checks import check_rules
from dpgan.tables.schema.rules import Rule, rules_from_list

SCHEMA_TOP_KEYS = frozenset(("name", "columns", "target", "source", "ledger", "geo", "rules"))
GEO_KEYS = {"latitude", "longitude"}  # a schema's "geo" entry: one object per pair
MAX_GEO_CELLS = 1024  # a latitude/longitude pair's grid: its columns' bins multiplied


def read_schema_file(path: str | Path) -> Any:
    """The JSON in a schema file (any data kind's), or one line saying why it cannot be read."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InputError(f"schema file not found: {path}") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"schema file {path} is not valid JSON: {exc}") from None


@dataclass(frozen=True)
class Schema:
    """The ordered columns of a table, plus an optional target column (used by evaluation)."""

    columns: tuple[ColumnSpec, ...]
    target: str | None = None
    source: str = "user"
    # the DP events that bought this schema (`dpgan schema`), as ledger-entry dicts: a fit that
    # uses it starts its ledger with them, so the model's ε covers the schema too
    ledger: tuple[dict[str, Any], ...] = ()
    # latitude/longitude column pairs modelled as one 2-D column (dpgan.tables.codec.geo.GeoTransform)
    geo: tuple[tuple[str, str], ...] = ()
    # key columns: never read nor learned, generated afresh on sampling (not among `columns`/`names`)
    keys: tuple[KeySpec, ...] = ()
    # public rules between columns (dpgan.tables.schema.rules): kept on every sampled row, free
    rules: tuple[Rule, ...] = ()

    def __post_init__(self) -> None:
        if not self.columns:
            raise InputError("a schema needs at least one column besides its keys")
        names = [c.name for c in self.columns]
        if len(set(names + self.key_names)) != len(names) + len(self.key_names):
            raise InputError("schema column names must be unique")
        if self.target is not None and self.target in self.key_names:
            raise InputError(f"schema target {self.target!r} is a key column: a key is never learned")
        if self.target is not None and self.target not in names:
            raise InputError(f"schema target {self.target!r} is not one of its columns")
        object.__setattr__(self, "geo", tuple(tuple(pair) for pair in self.geo))
        _check_geo(self)
        geo_columns = [c for pair in self.geo for c in pair]
        object.__setattr__(self, "rules", check_rules(tuple(self.rules), self.columns, self.target, geo_columns))

    @property
    def names(self) -> list[str]:
        """The learned columns, in order (key columns are not among them)."""
        return [c.name for c in self.columns]

    @property
    def key_names(self) -> list[str]:
        return [k.name for k in self.keys]

    def __getitem__(self, name: str) -> ColumnSpec:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        columns: list[dict[str, Any]] = [c.to_dict() for c in self.columns]
        for key in sorted(self.keys, key=lambda k: (k.position < 0, k.position)):  # each at its place
            columns.insert(len(columns) if key.position < 0 else min(key.position, len(columns)), key.to_dict())
        out: dict[str, Any] = {"columns": columns, "source": self.source}
        if self.target is not None:
            out["target"] = self.target
        if self.ledger:
            out["ledger"] = [dict(e) for e in self.ledger]
        if self.geo:
            out["geo"] = [{"latitude": lat, "longitude": lon} for lat, lon in self.geo]
        if self.rules:
            out["rules"] = [rule.to_dict() for rule in self.rules]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Schema":
        if not isinstance(data, dict) or not isinstance(data.get("columns"), list):
            raise InputError("a schema must be a JSON object with a 'columns' list")
        unknown = set(data) - SCHEMA_TOP_KEYS
        if unknown:
            raise InputError(f"unknown schema keys {sorted(unknown)}")
        entries = data["columns"]
        columns = tuple(ColumnSpec.from_dict(c) for c in entries if not is_key_entry(c))
        keys = tuple(KeySpec.from_dict(c, position) for position, c in enumerate(entries) if is_key_entry(c))
        ledger = data.get("ledger", [])
        if not isinstance(ledger, list) or not all(isinstance(e, dict) for e in ledger):
            raise InputError("a schema's 'ledger' must be a list of ledger events")
        geo = data.get("geo", [])
        if not isinstance(geo, list) or not all(isinstance(g, dict) and set(g) == GEO_KEYS for g in geo):
            raise InputError('a schema\'s \'geo\' must be a list of {"latitude": COLUMN, "longitude": COLUMN} objects')
        return cls(
            columns=columns,
            target=data.get("target"),
            source=str(data.get("source", "user")),
            ledger=tuple(ledger),
            geo=tuple((g["latitude"], g["longitude"]) for g in geo),
            keys=keys,
            rules=rules_from_list(data.get("rules", [])),
        )

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def from_json(cls, path: str | Path) -> "Schema":
        return cls.from_dict(read_schema_file(path))


def _check_geo(schema: Schema) -> None:
    """A geo pair: two different linear numeric columns inside [-90, 90] and [-180, 180] degrees,
    missing together or never, not the target, each in one pair, a grid of at most MAX_GEO_CELLS."""
    seen: set[str] = set()
    names = set(schema.names)
    for pair in schema.geo:
        if len(pair) != 2 or not all(isinstance(c, str) and c in names for c in pair) or pair[0] == pair[1]:
            raise InputError("each geo pair names two different columns of the schema (latitude, longitude)")
        if seen & set(pair) or schema.target in pair:
            raise InputError(f"geo pair {pair[0]!r}, {pair[1]!r}: a column is in two pairs or is the target")
        seen |= set(pair)
        lat, lon = schema[pair[0]], schema[pair[1]]
        for spec, limit in ((lat, 90.0), (lon, 180.0)):
            if spec.kind != "continuous" or spec.scale != "linear" or spec.point_masses or spec.bin_edges:
                raise InputError(
                    f"geo column {spec.name!r} must be continuous, linear, without point masses or bin edges"
                )
            if not -limit <= spec.min <= spec.max <= limit:  # type: ignore[operator]
                raise InputError(f"geo column {spec.name!r}: bounds must lie within ±{limit:g} degrees")
        if lat.nullable != lon.nullable:
            raise InputError(f"geo pair {lat.name!r}, {lon.name!r}: both columns are nullable or neither")
        if lat.bins * lon.bins > MAX_GEO_CELLS:
            raise InputError(f"geo pair {lat.name!r}, {lon.name!r}: bins multiply to more than {MAX_GEO_CELLS} cells")


def with_geo(schema: Schema, pairs: tuple[tuple[str, str], ...]) -> Schema:
    """The schema with these latitude/longitude pairs added (checked): public metadata, free."""
    if not pairs:
        return schema
    missing = [c for pair in pairs for c in pair if c not in schema.names]
    if missing:
        raise InputError(f"geo column {missing[0]!r} is not a column of the table")
    named = {c for pair in pairs for c in pair}
    # a coordinate is placed linearly inside its cell: a learned log scale or point mass does not apply
    columns = tuple(
        replace(c, scale="linear", point_masses=(), bin_edges=()) if c.name in named and c.kind == "continuous" else c
        for c in schema.columns
    )
    geo = tuple(dict.fromkeys(tuple(schema.geo) + tuple(tuple(p) for p in pairs)))
    return replace(schema, columns=columns, geo=geo)  # type: ignore[arg-type]


def binary_coded(schema: Schema, keep: tuple[str, ...] = ()) -> Schema:
    """The schema with every integer column of 2 to MAX_BINARY_VALUES public levels binary-coded
    (Boob et al.), except the columns in `keep` (the target and the condition, whose softmax the
    label model and the conditioning read). A function of the public schema alone: free."""
    columns = tuple(
        replace(spec, encoding="binary", bins=1, bin_edges=(), point_masses=(), scale="linear")
        if spec.kind == "integer" and spec.name not in keep and 2 <= spec.integer_levels <= MAX_BINARY_VALUES
        else spec
        for spec in schema.columns
    )
    return replace(schema, columns=columns)


def with_keys(schema: Schema, keys: tuple[KeySpec, ...]) -> Schema:
    """The schema with these key columns (public hints) added to its own, a hint replacing a key
    of the same name: free, nothing is read."""
    if not keys:
        return schema
    named = {k.name for k in keys}
    return replace(schema, keys=tuple(k for k in schema.keys if k.name not in named) + tuple(keys))
