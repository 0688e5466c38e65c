"""A table's encoded rows as discrete codes and back: the variables of the "marginals" model,
from the public codec alone (dpgan.tables.codec.encoder's transforms; nothing read from the data).

Each softmax span of the codec is one variable: a category (null slot included), a numeric or
date column's modes (its bins, point masses, null slot), a date's weekday or hour, a geo pair's
cells. The codec leaves two things as positions (tanh), which become:
- a numeric or date column with one bin (a hand schema's default): its position is cut into
  POSITION_CELLS equal cells of the scale, and with its point masses and null slot (if any) it is
  one variable; the value is drawn uniformly inside its cell;
- a binary-coded integer: each bit (and the null bit) is a variable of two levels;
- any other position (inside one of several bins, inside a geo cell) is drawn uniformly in
  [−1, 1] when rows are decoded: uniform within the bin, as the GAN's sampler's decoder reads it.
Codes back to encoded rows are one-hot spans and positions, which the codec decodes as it decodes
a generator's rows (dpgan.tables.codec.encoder.TableEncoder.decode).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpgan.models.output_spans import SOFTMAX
from dpgan.tables.codec.column_transforms import BinaryCodeTransform, NumericTransform
from dpgan.tables.codec.datetime_transform import DatetimeTransform
from dpgan.tables.codec.encoder import TableEncoder

POSITION_CELLS = 16  # a one-bin numeric column's equal cells (public: no data read)
SPAN, CELLS, BIT = "span", "cells", "bit"


@dataclass(frozen=True)
class Variable:
    """One discrete variable: a softmax span (`start`, `width`), a one-bin numeric column's cells
    (position at `start`, its modes' softmax at `modes_start` of `width` slots, or none), or a bit."""

    kind: str
    column: str
    start: int
    width: int = 0
    modes_start: int | None = None

    @property
    def levels(self) -> int:
        if self.kind == SPAN:
            return self.width
        if self.kind == BIT:
            return 2
        return POSITION_CELLS + max(self.width - 1, 0)  # the bin's cells, then the other modes


def _numeric_part(transform: object) -> NumericTransform | None:
    if isinstance(transform, DatetimeTransform):
        return transform.numeric
    return transform if isinstance(transform, NumericTransform) else None


class DiscreteCodec:
    """The variables of an encoder's row, encoded rows → codes (n × d) and codes → encoded rows."""

    def __init__(self, encoder: TableEncoder) -> None:
        self.width = encoder.width
        self.variables: list[Variable] = []
        start = 0
        for transform in encoder.transforms:
            spans = []
            for activation, width in transform.activations:
                spans.append((activation, start, width))
                start += width
            name = transform.span_name
            numeric = _numeric_part(transform)
            if numeric is not None and numeric.spec.bins == 1:  # position and modes: one variable
                modes = spans[1] if len(spans) > 1 and numeric.modes > 1 else None
                self.variables.append(
                    Variable(CELLS, name, spans[0][1], 0 if modes is None else modes[2], modes and modes[1])
                )
                spans = spans[1 + (modes is not None) :]
            elif isinstance(transform, BinaryCodeTransform):
                _, first, width = spans[0]
                self.variables.extend(Variable(BIT, name, first + k) for k in range(width))
                spans = []
            self.variables.extend(Variable(SPAN, name, s, w) for a, s, w in spans if a == SOFTMAX)
        self.levels = tuple(v.levels for v in self.variables)
        coded = [v.start for v in self.variables if v.kind != SPAN]
        positions = np.ones(self.width, dtype=bool)
        for v in self.variables:
            if v.kind == SPAN:
                positions[v.start : v.start + v.width] = False
            if v.modes_start is not None:
                positions[v.modes_start : v.modes_start + v.width] = False
        positions[coded] = False
        self.free_positions = np.flatnonzero(positions)  # drawn uniformly in [−1, 1]

    def encode(self, encoded: np.ndarray) -> np.ndarray:
        """Each row's code of every variable (n × d, int64)."""
        codes = np.zeros((len(encoded), len(self.variables)), dtype=np.int64)
        for index, v in enumerate(self.variables):
            if v.kind == SPAN:
                codes[:, index] = encoded[:, v.start : v.start + v.width].argmax(axis=1)
            elif v.kind == BIT:
                codes[:, index] = encoded[:, v.start] > 0.0
            else:
                unit = (np.clip(encoded[:, v.start], -1.0, 1.0) + 1.0) / 2.0
                cells = np.minimum(np.floor(unit * POSITION_CELLS), POSITION_CELLS - 1).astype(np.int64)
                if v.modes_start is not None:
                    mode = encoded[:, v.modes_start : v.modes_start + v.width].argmax(axis=1)
                    cells = np.where(mode == 0, cells, POSITION_CELLS + mode - 1)
                codes[:, index] = cells
        return codes

    def decode(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Encoded rows (n × width, float32) for the codec to decode: one-hot spans, ±1 bits, a
        one-bin column's position uniform in its cell, the other positions uniform in [−1, 1]."""
        n = len(codes)
        encoded = np.zeros((n, self.width), dtype=np.float32)
        encoded[:, self.free_positions] = rng.uniform(-1.0, 1.0, (n, len(self.free_positions)))
        rows = np.arange(n)
        for index, v in enumerate(self.variables):
            code = codes[:, index]
            if v.kind == SPAN:
                encoded[rows, v.start + code] = 1.0
            elif v.kind == BIT:
                encoded[:, v.start] = np.where(code > 0, 1.0, -1.0)
            else:
                in_bin = code < POSITION_CELLS
                unit = (np.minimum(code, POSITION_CELLS - 1) + rng.random(n)) / POSITION_CELLS
                encoded[:, v.start] = np.where(in_bin, 2.0 * unit - 1.0, 0.0)
                if v.modes_start is not None:
                    encoded[rows, v.modes_start + np.where(in_bin, 0, code - POSITION_CELLS + 1)] = 1.0
        return encoded


__all__ = ["POSITION_CELLS", "DiscreteCodec", "Variable"]
