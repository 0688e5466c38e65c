"""Column kinds and their public domains, and the checks that keep private data inside them.

A schema is public metadata: the curator writes it (or buys it with DP, see
`dpgan.privacy.schema_inference`), so nothing in it may be read off the private rows for free.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError

KINDS = ("continuous", "integer", "categorical", "boolean")
# "log": log1p(x - min), for long-tailed amounts from 0; "ratio": log(x / min), bins equal in ratio
# for a positive range that spans a decade or more (min > 0)
SCALES = ("linear", "log", "ratio")
# how an integer column is coded for the generator: "bins" (a softmax over bins or levels plus a
# position, see dpgan.tables.codec.encoder) or "binary" (Boob et al.: the value's offset from 'min' as
# a short string of ±1 bits, for ranges of at most MAX_BINARY_VALUES integers)
ENCODINGS = ("bins", "binary")
MAX_BINARY_VALUES = 16  # 0..15 above the minimum: four bits
MAX_BINS = 256
SCHEMA_TOP_KEYS = frozenset(("name", "columns", "target", "source", "ledger", "geo"))
GEO_KEYS = {"latitude", "longitude"}  # a schema's "geo" entry: one object per pair
MAX_GEO_CELLS = 1024  # a latitude/longitude pair's grid: its columns' bins multiplied
PLACEMENTS = ("uniform", "centre")  # where a region's released point lies inside its public box
SCHEMA_KEYS = frozenset(
    ("name", "kind", "min", "max", "categories", "nullable", "other_category", "frequencies")
    + ("point_masses", "scale", "bins", "bin_edges", "encoding", "boxes", "placement")
)


@dataclass(frozen=True)
class ColumnSpec:
    """One column: its kind and public domain.

    `other_category`, when set, is where values outside `categories` go (used by DP-inferred
    schemas, where rare categories are merged); without it such a value is an error.
    """

    name: str
    kind: str
    min: float | None = None
    max: float | None = None
    categories: tuple[Any, ...] = ()
    nullable: bool = False
    other_category: Any = None
    # public relative frequencies of the categories (optional): a free prior for conditioning
    frequencies: tuple[float, ...] = ()
    # numeric only: public values that many records share exactly (0 capital gain), generated as
    # atoms rather than squeezed out of a tanh, and how values between the bounds are scaled
    point_masses: tuple[float, ...] = ()
    scale: str = "linear"
    # numeric only: equal-width bins of the scaled range; the generator picks a bin like a
    # category and a position inside it (CTGAN's modes, but fixed by the schema, not fitted)
    bins: int = 1
    # numeric only: the bins' inner edges in the column's units (bins - 1 of them, increasing,
    # strictly between min and max), e.g. at DP quantiles so that each bin holds a like share of the
    # rows; empty: the bins are equal on the scale. Inside a bin the position follows the scale.
    bin_edges: tuple[float, ...] = ()
    # integer only: "binary" codes the value as bits instead of bins (ENCODINGS)
    encoding: str = "bins"
    # categorical only, a region column (Boob et al.'s geo columns): each category's public bounding
    # box (category, south, north, west, east); sampling can add a point per row inside the row's
    # box, drawn uniformly or at its centre (dpgan.tables.codec.geo.region_points)
    boxes: tuple[tuple[Any, float, float, float, float], ...] = ()
    placement: str = "uniform"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InputError("every schema column needs a non-empty string name")
        if self.kind not in KINDS:
            raise InputError(f"column {self.name!r}: kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if self.kind in ("continuous", "integer"):
            for bound in (self.min, self.max):
                if bound is None or not isinstance(bound, (int, float)) or not math.isfinite(bound):
                    raise InputError(f"column {self.name!r}: {self.kind} columns need finite 'min' and 'max'")
            if not self.min < self.max:
                raise InputError(f"column {self.name!r}: 'min' must be smaller than 'max'")
        if self.kind == "categorical":
            if len(self.categories) == 0:
                raise InputError(f"column {self.name!r}: categorical columns need a non-empty 'categories' list")
            if len(set(self.categories)) != len(self.categories):
                raise InputError(f"column {self.name!r}: 'categories' has duplicates")
            if self.other_category is not None and self.other_category not in self.categories:
                raise InputError(f"column {self.name!r}: 'other_category' must be one of the categories")
        if self.frequencies:
            freqs = self.frequencies
            if self.kind not in ("categorical", "boolean") or len(freqs) != len(self.categories or (0, 1)):
                raise InputError(f"column {self.name!r}: 'frequencies' needs one number per category")
            if not all(isinstance(f, (int, float)) and math.isfinite(f) and f >= 0 for f in freqs) or sum(freqs) <= 0:
                raise InputError(f"column {self.name!r}: 'frequencies' must be non-negative numbers, not all 0")
        self._check_numeric_shape()
        self._check_encoding()
        self._check_boxes()
        if self.kind == "boolean":
            object.__setattr__(self, "categories", (False, True))

    def _check_numeric_shape(self) -> None:
        if self.scale not in SCALES:
            raise InputError(f"column {self.name!r}: 'scale' must be one of {', '.join(SCALES)}, not {self.scale!r}")
        if not self.is_numeric and (self.point_masses or self.scale != "linear" or self.bins != 1):
            raise InputError(f"column {self.name!r}: 'point_masses', 'scale' and 'bins' apply to numeric columns only")
        if isinstance(self.bins, bool) or not isinstance(self.bins, int) or not 1 <= self.bins <= MAX_BINS:
            raise InputError(f"column {self.name!r}: 'bins' must be a whole number from 1 to {MAX_BINS}")
        masses = self.point_masses
        if not all(isinstance(m, (int, float)) and not isinstance(m, bool) and math.isfinite(m) for m in masses):
            raise InputError(f"column {self.name!r}: 'point_masses' must be finite numbers")
        if len(set(masses)) != len(masses):
            raise InputError(f"column {self.name!r}: 'point_masses' has duplicates")
        if self.scale == "ratio" and not (self.min is not None and self.min > 0):
            raise InputError(f"column {self.name!r}: the 'ratio' scale needs a positive 'min'")
        if any(not self.min <= m <= self.max for m in masses):  # type: ignore[operator]
            raise InputError(f"column {self.name!r}: every point mass must lie within 'min' and 'max'")
        if self.kind == "integer" and any(float(m) != int(m) for m in masses):
            raise InputError(f"column {self.name!r}: point masses of an integer column must be integers")
        self._check_bin_edges()

    def _check_bin_edges(self) -> None:
        edges = self.bin_edges
        if not edges:
            return
        if not self.is_numeric:
            raise InputError(f"column {self.name!r}: 'bin_edges' apply to numeric columns only")
        if not all(isinstance(e, (int, float)) and not isinstance(e, bool) and math.isfinite(e) for e in edges):
            raise InputError(f"column {self.name!r}: 'bin_edges' must be finite numbers")
        if len(edges) != self.bins - 1:
            raise InputError(f"column {self.name!r}: 'bin_edges' needs bins - 1 inner edges ({self.bins - 1})")
        inside = (self.min, *edges, self.max)
        if not all(a < b for a, b in zip(inside, inside[1:])):  # type: ignore[operator]
            raise InputError(f"column {self.name!r}: 'bin_edges' must increase strictly between 'min' and 'max'")

    def _check_encoding(self) -> None:
        if self.encoding not in ENCODINGS:
            raise InputError(f"column {self.name!r}: 'encoding' must be one of {', '.join(ENCODINGS)}")
        if self.encoding == "bins":
            return
        if self.kind != "integer":
            raise InputError(f"column {self.name!r}: 'encoding': 'binary' applies to integer columns only")
        if self.point_masses or self.scale != "linear" or self.bins != 1 or self.bin_edges:
            raise InputError(f"column {self.name!r}: a binary-coded column takes no 'point_masses', 'scale' or 'bins'")
        if not 2 <= self.integer_levels <= MAX_BINARY_VALUES:
            raise InputError(
                f"column {self.name!r}: binary codes need 2 to {MAX_BINARY_VALUES} whole numbers from 'min' to 'max'"
            )

    def _check_boxes(self) -> None:
        if self.placement not in PLACEMENTS:
            raise InputError(f"column {self.name!r}: 'placement' must be one of {', '.join(PLACEMENTS)}")
        if not self.boxes:
            return
        if self.kind != "categorical":
            raise InputError(f"column {self.name!r}: 'boxes' apply to categorical (region) columns only")
        named = [box[0] for box in self.boxes]
        if sorted(map(str, named)) != sorted(map(str, self.categories)):
            raise InputError(f"column {self.name!r}: 'boxes' needs one box for each category, and no other")
        for _, south, north, west, east in self.boxes:
            if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (south, north, west, east)):
                raise InputError(f"column {self.name!r}: each box is [south, north, west, east] in degrees")
            if not (-90.0 <= south <= north <= 90.0 and -180.0 <= west <= east <= 180.0):
                raise InputError(f"column {self.name!r}: each box is [south, north, west, east] in degrees")

    @property
    def integer_levels(self) -> int:
        """How many whole numbers lie between the public bounds (integer columns)."""
        return max(0, int(math.floor(self.max)) - int(math.ceil(self.min)) + 1)  # type: ignore[arg-type]

    @property
    def is_numeric(self) -> bool:
        return self.kind in ("continuous", "integer")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "nullable": self.nullable}
        if self.is_numeric:
            out["min"], out["max"] = self.min, self.max
        if self.kind == "categorical":
            out["categories"] = [_json_scalar(c) for c in self.categories]
            if self.other_category is not None:
                out["other_category"] = _json_scalar(self.other_category)
        if self.frequencies:
            out["frequencies"] = list(self.frequencies)
        if self.point_masses:
            out["point_masses"] = list(self.point_masses)
        if self.scale != "linear":
            out["scale"] = self.scale
        if self.bins != 1:
            out["bins"] = self.bins
        if self.bin_edges:
            out["bin_edges"] = list(self.bin_edges)
        if self.encoding != "bins":
            out["encoding"] = self.encoding
        if self.boxes:
            out["boxes"] = {str(box[0]): list(box[1:]) for box in self.boxes}
        if self.placement != "uniform":
            out["placement"] = self.placement
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ColumnSpec":
        if not isinstance(data, dict):
            raise InputError("each schema column must be a JSON object")
        unknown = set(data) - SCHEMA_KEYS
        if unknown:
            raise InputError(f"column {data.get('name')!r}: unknown schema keys {sorted(unknown)}")
        return cls(
            name=data.get("name"),  # type: ignore[arg-type]
            kind=data.get("kind"),  # type: ignore[arg-type]
            min=data.get("min"),
            max=data.get("max"),
            categories=_list_entry(data, "categories"),
            nullable=bool(data.get("nullable", False)),
            other_category=data.get("other_category"),
            frequencies=_list_entry(data, "frequencies"),
            point_masses=_list_entry(data, "point_masses"),
            scale=data.get("scale", "linear"),
            bins=data.get("bins", 1),
            bin_edges=_list_entry(data, "bin_edges"),
            encoding=data.get("encoding", "bins"),
            boxes=_boxes_entry(data),
            placement=data.get("placement", "uniform"),
        )


def read_schema_file(path: str | Path) -> Any:
    """The JSON in a schema file (any data kind's), or one line saying why it cannot be read."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InputError(f"schema file not found: {path}") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"schema file {path} is not valid JSON: {exc}") from None


def category_index(column: str, categories: tuple[Any, ...], value: Any) -> int:
    """The index of a requested value among a column's categories, also matched as text (the CLI
    passes text); one message for every place that takes a value from the user."""
    for index, category in enumerate(categories):
        if category == value or str(category) == str(value):
            return index
    allowed = ", ".join(repr(c) for c in categories)
    raise InputError(f"{value!r} is not a value of {column!r}; choose one of {allowed}")


def _list_entry(data: dict[str, Any], key: str) -> tuple[Any, ...]:
    """An optional JSON list of a schema column, as a tuple (absent: empty)."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise InputError(f"column {data.get('name')!r}: {key!r} must be a list")
    return tuple(value)


def _boxes_entry(data: dict[str, Any]) -> tuple[tuple[Any, float, float, float, float], ...]:
    """`"boxes": {"north": [south, north, west, east], ...}` keyed by the categories' text."""
    boxes = data.get("boxes", {})
    if not isinstance(boxes, dict) or not all(isinstance(b, list) and len(b) == 4 for b in boxes.values()):
        raise InputError(f"column {data.get('name')!r}: 'boxes' maps each category to [south, north, west, east]")
    by_text = {str(c): c for c in data.get("categories", []) or []}
    return tuple((by_text.get(key, key), *box) for key, box in boxes.items())


def _json_scalar(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


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

    def __post_init__(self) -> None:
        if not self.columns:
            raise InputError("a schema needs at least one column")
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise InputError("schema column names must be unique")
        if self.target is not None and self.target not in names:
            raise InputError(f"schema target {self.target!r} is not one of its columns")
        object.__setattr__(self, "geo", tuple(tuple(pair) for pair in self.geo))
        _check_geo(self)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def __getitem__(self, name: str) -> ColumnSpec:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"columns": [c.to_dict() for c in self.columns], "source": self.source}
        if self.target is not None:
            out["target"] = self.target
        if self.ledger:
            out["ledger"] = [dict(e) for e in self.ledger]
        if self.geo:
            out["geo"] = [{"latitude": lat, "longitude": lon} for lat, lon in self.geo]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Schema":
        if not isinstance(data, dict) or not isinstance(data.get("columns"), list):
            raise InputError("a schema must be a JSON object with a 'columns' list")
        unknown = set(data) - SCHEMA_TOP_KEYS
        if unknown:
            raise InputError(f"unknown schema keys {sorted(unknown)}")
        columns = tuple(ColumnSpec.from_dict(c) for c in data["columns"])
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


LOG_SCALE_DECADES = 2.5  # a non-negative range spanning this many decades is log-scaled
# ... and so is one whose top is this many decades above its positive values' 10 % quantile
LOG_SPREAD_DECADES = 1.5
DEFAULT_BINS = 8


def bin_per_level(kind: str, low: float, high: float) -> bool:
    """A learned integer column with a short range gets one bin per level (DEFAULT_BINS otherwise)."""
    return kind == "integer" and high - low <= 4 * DEFAULT_BINS


def numeric_encoding(
    kind: str,
    low: float,
    high: float,
    point_masses: tuple[float, ...],
    smallest_positive: float,
    typical_positive: float | None = None,
) -> dict[str, Any]:
    """Encoding hints for a learned numeric domain (`point_masses`, `scale`, `bins`), from
    statistics the caller already holds (DP ones on the private path): post-processing, free.
    `point_masses`: the values that hold a large share of the rows (0, sentinel codes), those inside
    [low, high] kept, integers for an integer column. `typical_positive`: the positive values' 10 %
    quantile, where the caller has one."""
    hints: dict[str, Any] = {"bins": DEFAULT_BINS}
    if bin_per_level(kind, low, high):
        hints["bins"] = max(1, int(high - low))
    masses = tuple(m for m in sorted(set(point_masses)) if low <= m <= high)
    if masses:
        hints["point_masses"] = tuple(int(m) for m in masses) if kind == "integer" else tuple(map(float, masses))
    if low >= 0.0 and smallest_positive > 0 and math.log10(high / smallest_positive) >= LOG_SCALE_DECADES:
        hints["scale"] = "log"
    if low >= 0.0 and typical_positive and math.log10(high / typical_positive) >= LOG_SPREAD_DECADES:
        hints["scale"] = "log"  # most of the mass sits decades below the top: a heavy tail
    return hints


def kind_from_dtype(series: pd.Series) -> str:
    """The column's kind from its dtype: dtypes are table structure, treated as public."""
    if pd.api.types.is_bool_dtype(series):
        return "boolean"
    if pd.api.types.is_integer_dtype(series):
        return "integer"
    if pd.api.types.is_float_dtype(series):
        non_null = series.dropna()
        if len(non_null) and bool(np.all(non_null == np.round(non_null))) and str(series.dtype) != "float64":
            return "integer"
        return "continuous"
    return "categorical"
