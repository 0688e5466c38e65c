"""A column's kind and public domain (`ColumnSpec`), with the checks that keep it well formed.

A schema is public metadata: the curator writes it (or buys it with DP, see
dpgan.tables.inference), so nothing in it may be read off the private rows for free. The table's
schema (the columns in order, the target, geo pairs): dpgan.tables.schema.table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgan.errors import InputError
from dpgan.tables.schema.datetimes import TEMPORAL_KINDS, check_temporal, to_iso, to_units
from dpgan.tables.schema.hierarchy import Hierarchy

# "date", "timestamp", "time" (of day): a number on a linear scale inside (dpgan.tables.schema.datetimes)
KINDS = ("continuous", "integer", "categorical", "boolean", *TEMPORAL_KINDS)
# "log": log1p(x - min), for long-tailed amounts from 0; "ratio": log(x / min), bins equal in ratio
# for a positive range that spans a decade or more (min > 0)
SCALES = ("linear", "log", "ratio")
# how an integer column is coded for the generator: "bins" (a softmax over bins or levels plus a
# position, see dpgan.tables.codec.encoder) or "binary" (Boob et al.: the value's offset from 'min' as
# a short string of ±1 bits, for ranges of at most MAX_BINARY_VALUES integers)
ENCODINGS = ("bins", "binary")
MAX_BINARY_VALUES = 16  # 0..15 above the minimum: four bits
MAX_BINS = 256
PLACEMENTS = ("uniform", "centre")  # where a region's released point lies inside its public box
SCHEMA_KEYS = frozenset(
    ("name", "kind", "min", "max", "categories", "nullable", "other_category", "frequencies")
    + ("point_masses", "scale", "bins", "bin_edges", "encoding", "boxes", "placement", "hierarchy")
    + ("format", "timezone", "resolution")
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
    # date/timestamp/time only (dpgan.tables.schema.datetimes): how values are written ("iso", a
    # strftime pattern, or "datetime64" for typed values), the zone sampled values are given (their
    # input had one), and the unit sampled values are rounded to; 'min'/'max' are ISO text in JSON
    format: str = ""
    timezone: str | None = None
    resolution: str = ""
    # categorical only: a public code hierarchy (prefix lengths or parent mappings); a value not among
    # the categories maps to its first ancestor that is (dpgan.tables.schema.hierarchy)
    hierarchy: Hierarchy | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InputError("every schema column needs a non-empty string name")
        if self.kind not in KINDS:
            raise InputError(f"column {self.name!r}: kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        self._check_temporal()
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
        if self.hierarchy is not None and self.kind != "categorical":
            raise InputError(f"column {self.name!r}: a 'hierarchy' applies to categorical columns only")
        if self.kind == "boolean":
            object.__setattr__(self, "categories", (False, True))

    def _check_temporal(self) -> None:
        """A temporal column's bounds on its linear scale (ISO text accepted) and its format fields."""
        if not self.is_temporal:
            if self.format or self.timezone is not None or self.resolution:
                kinds = ", ".join(TEMPORAL_KINDS)
                raise InputError(
                    f"column {self.name!r}: 'format', 'timezone' and 'resolution' apply to {kinds} columns"
                )
            return
        if self.min is None or self.max is None:
            raise InputError(f"column {self.name!r}: {self.kind} columns need 'min' and 'max'")
        low, high = to_units(self.name, self.kind, self.min), to_units(self.name, self.kind, self.max)
        if not low < high:
            raise InputError(f"column {self.name!r}: 'min' must be earlier than 'max'")
        if self.point_masses or self.scale != "linear" or self.bin_edges or self.encoding != "bins":
            raise InputError(
                f"column {self.name!r}: a {self.kind} takes 'bins' but no point masses, scale, bin edges or encoding"
            )
        fmt, resolution = check_temporal(self.name, self.kind, self.format, self.timezone, self.resolution)
        for key, value in (("min", low), ("max", high), ("format", fmt), ("resolution", resolution)):
            object.__setattr__(self, key, value)

    def _check_numeric_shape(self) -> None:
        if self.scale not in SCALES:
            raise InputError(f"column {self.name!r}: 'scale' must be one of {', '.join(SCALES)}, not {self.scale!r}")
        if self.is_temporal:
            self._check_bins()
            return
        if not self.is_numeric and (self.point_masses or self.scale != "linear" or self.bins != 1):
            raise InputError(f"column {self.name!r}: 'point_masses', 'scale' and 'bins' apply to numeric columns only")
        self._check_bins()
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

    def _check_bins(self) -> None:
        if isinstance(self.bins, bool) or not isinstance(self.bins, int) or not 1 <= self.bins <= MAX_BINS:
            raise InputError(f"column {self.name!r}: 'bins' must be a whole number from 1 to {MAX_BINS}")

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

    @property
    def is_temporal(self) -> bool:
        """A date, timestamp or time of day: 'min'/'max' on its linear scale (dpgan.tables.schema.datetimes)."""
        return self.kind in TEMPORAL_KINDS

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "nullable": self.nullable}
        if self.is_numeric:
            out["min"], out["max"] = self.min, self.max
        if self.is_temporal:
            out["min"], out["max"] = to_iso(self.kind, self.min), to_iso(self.kind, self.max)  # type: ignore[arg-type]
            out["format"], out["resolution"] = self.format, self.resolution
            if self.timezone is not None:
                out["timezone"] = self.timezone
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
        if self.hierarchy is not None:
            out["hierarchy"] = self.hierarchy.to_dict()
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
            format=data.get("format", ""),
            timezone=data.get("timezone"),
            resolution=data.get("resolution", ""),
            hierarchy=None
            if data.get("hierarchy") is None
            else Hierarchy.from_dict(data["hierarchy"], data.get("name")),
        )


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
