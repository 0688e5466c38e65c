"""Geo columns (Boob et al.): a latitude/longitude pair as one 2-D column, and points for regions.

A pair of coordinate columns coded one at a time loses what matters about a location: the two
coordinates go together (a point is in a city, not on a line of latitude and, separately, a line of
longitude). `GeoTransform` codes the pair as one column: the public box [lat min, lat max] ×
[lon min, lon max] is cut into a grid (each column's `bins` cuts its axis), a softmax picks the
cell and two positions in [-1, 1] place the point inside it. The 2-way anchor then measures the
cell against every other column, and the one-way anchor the cells' shares and positions, so the
joint spread of locations is learned as one variable. Everything here is a function of the public
schema: it reads no private value outside the encoding of the rows the fit was given.

`region_points` is for region columns (a county, a district): the generator models the region as a
category, and sampling can add, per row, a point inside the region's public bounding box, drawn
uniformly or at the box's centre. That is post-processing of the released rows with public boxes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.models.output_spans import SOFTMAX, TANH
from dpgan.tables.codec.column_transforms import ColumnTransform, restore_dtype, sample_categories
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.table import Schema


def geo_span_name(latitude: str, longitude: str) -> str:
    """The name the pair's spans carry (one variable for the anchors)."""
    return f"{latitude}+{longitude}"


class GeoTransform(ColumnTransform):
    """Two coordinate columns as one: [position lat, position lon] (tanh) and a softmax over the
    grid cells (latitude bin major), plus a null slot when the pair is nullable (both missing)."""

    def __init__(self, latitude: ColumnSpec, longitude: ColumnSpec, dtypes: tuple[str | None, str | None]) -> None:
        super().__init__(latitude, dtypes[0])
        self.latitude, self.longitude = latitude, longitude
        self.dtypes = dtypes

    @property
    def names(self) -> list[str]:
        return [self.latitude.name, self.longitude.name]

    @property
    def span_name(self) -> str:
        return geo_span_name(self.latitude.name, self.longitude.name)

    @property
    def cells(self) -> int:
        return self.latitude.bins * self.longitude.bins

    @property
    def value_modes(self) -> int:  # type: ignore[override]
        return self.cells

    @property
    def modes(self) -> int:
        return self.cells + int(self.latitude.nullable)

    @property
    def activations(self) -> list[tuple[str, int]]:
        return [(TANH, 2), (SOFTMAX, self.modes)]

    @staticmethod
    def _axis(spec: ColumnSpec, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each value's bin on its axis and its position inside the bin in [-1, 1]."""
        low, high = float(spec.min), float(spec.max)  # type: ignore[arg-type]
        unit = (np.clip(values, low, high) - low) / (high - low) * spec.bins
        index = np.minimum(np.floor(unit), spec.bins - 1).astype(np.int64)
        return index, 2.0 * (unit - index) - 1.0

    def encode_frame(self, frame: pd.DataFrame) -> np.ndarray:
        lat, lon = (
            pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            for name in self.names
        )
        missing = np.isnan(lat) | np.isnan(lon)  # a location is missing when either coordinate is
        lat_bin, lat_pos = self._axis(self.latitude, np.nan_to_num(lat))
        lon_bin, lon_pos = self._axis(self.longitude, np.nan_to_num(lon))
        cell = lat_bin * self.longitude.bins + lon_bin
        cell[missing] = self.modes - 1
        positions = np.stack([lat_pos, lon_pos], axis=1)
        positions[missing] = 0.0
        one_hot = np.zeros((len(cell), self.modes))
        one_hot[np.arange(len(cell)), cell] = 1.0
        return np.concatenate([positions, one_hot], axis=1).astype(np.float32)

    def decode_frame(self, block: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
        cells = sample_categories(block[:, 2 : 2 + self.modes], rng)
        missing = cells >= self.cells
        inside = np.minimum(cells, self.cells - 1)
        position = (np.clip(block[:, :2].astype(np.float64), -1.0, 1.0) + 1.0) / 2.0
        columns = {}
        for axis, (spec, index) in enumerate(
            ((self.latitude, inside // self.longitude.bins), (self.longitude, inside % self.longitude.bins))
        ):
            low, high = float(spec.min), float(spec.max)  # type: ignore[arg-type]
            values = low + (index + position[:, axis]) / spec.bins * (high - low)
            values[missing] = np.nan
            columns[spec.name] = restore_dtype(pd.Series(values, name=spec.name), self.dtypes[axis])
        return pd.DataFrame(columns)


def region_points(
    frame: pd.DataFrame, schema: Schema, column: str, rng: np.random.Generator, placement: str | None = None
) -> pd.DataFrame:
    """`frame` with `<column>_latitude` and `<column>_longitude` added after `column`: a point per
    row inside its region's public box, uniform in the box or at its centre (`placement`, else the
    schema's). Rows whose region is missing get no point."""
    if column not in schema.names or not schema[column].boxes:
        raise InputError(f"{column!r} is not a region column: its schema entry has no 'boxes'")
    spec = schema[column]
    placement = placement or spec.placement
    if placement not in ("uniform", "centre"):
        raise InputError("placement must be 'uniform' or 'centre'")
    boxes = {str(box[0]): np.array(box[1:], dtype=np.float64) for box in spec.boxes}
    limits = np.full((len(frame), 4), np.nan)
    for row, value in enumerate(frame[column].to_numpy(dtype=object)):
        if not pd.isna(value) and str(value) in boxes:
            limits[row] = boxes[str(value)]
    share = np.full((len(frame), 2), 0.5) if placement == "centre" else rng.random((len(frame), 2))
    latitude = limits[:, 0] + share[:, 0] * (limits[:, 1] - limits[:, 0])
    longitude = limits[:, 2] + share[:, 1] * (limits[:, 3] - limits[:, 2])
    out = frame.copy()
    at = list(out.columns).index(column) + 1
    out.insert(at, f"{column}_latitude", latitude)
    out.insert(at + 1, f"{column}_longitude", longitude)
    return out
