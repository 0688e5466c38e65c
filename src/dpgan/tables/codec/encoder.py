"""Encode table rows into the generator's output space and decode generated rows back: the
column transforms (dpgan.tables.codec.column_transforms; a geo pair: dpgan.tables.codec.geo) side by side.

Every transform is a pure function of the public `ColumnSpec`: no state is fitted on private
rows (pitfall: min/max scaling or category lists read off the data). Out-of-range values are
clamped to the public bounds, never dropped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.models.output_spans import SOFTMAX, TANH, OutputSpan
from dpgan.tables.codec.column_transforms import (
    BinaryCodeTransform,
    CategoricalTransform,
    ColumnTransform,
    NumericTransform,
    make_transform,
    public_dtypes,
    sample_categories,
)
from dpgan.tables.codec.datetime_transform import DatetimeTransform
from dpgan.tables.codec.geo import GeoTransform
from dpgan.tables.codec.rules import RuleCodec
from dpgan.tables.schema.table import Schema


class TableEncoder:
    """All column transforms of a schema side by side, and the layout of the encoded row."""

    def __init__(self, schema: Schema, dtypes: dict[str, str] | None = None) -> None:
        dtypes = dtypes or {}
        self.schema = schema
        self.dtypes = {c.name: dtypes.get(c.name) for c in schema.columns}
        # with rules, the generator learns other columns (dpgan.tables.codec.rules: free rewrites)
        self.rules = RuleCodec.of(schema, self.dtypes) if schema.rules else None
        learned = schema if self.rules is None else self.rules.learned
        pair_of = {lat: (lat, lon) for lat, lon in schema.geo} | {lon: (lat, lon) for lat, lon in schema.geo}
        self.transforms: list[ColumnTransform] = []
        coded: set[str] = set()
        for c in learned.columns:
            if c.name not in pair_of:
                maker = DatetimeTransform if c.is_temporal else make_transform  # dates build on the numeric transform
                self.transforms.append(maker(c, self.dtypes.get(c.name)))
            elif c.name not in coded:  # a geo pair is coded where its first column stands
                lat, lon = pair_of[c.name]
                self.transforms.append(GeoTransform(schema[lat], schema[lon], (self.dtypes[lat], self.dtypes[lon])))
                coded |= {lat, lon}
        self.spans: list[OutputSpan] = []
        start = 0
        for t in self.transforms:
            for (activation, width), value_modes in zip(t.activations, t.span_value_modes()):
                self.spans.append(OutputSpan(activation, start, width, t.span_name, value_modes))
                start += width
        self.width = start

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        if self.rules is not None:
            frame = self.rules.to_learned(frame)
        blocks = [t.encode_frame(frame) for t in self.transforms]
        return np.concatenate(blocks, axis=1).astype(np.float32)

    def decode(self, encoded: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
        parts = []
        start = 0
        for t in self.transforms:
            parts.append(t.decode_frame(encoded[:, start : start + t.width], rng))
            start += t.width
        frame = pd.concat(parts, axis=1)
        return frame[self.schema.names] if self.rules is None else self.rules.from_learned(frame)


__all__ = [
    "SOFTMAX",
    "TANH",
    "BinaryCodeTransform",
    "CategoricalTransform",
    "ColumnTransform",
    "NumericTransform",
    "TableEncoder",
    "make_transform",
    "public_dtypes",
    "sample_categories",
]
