"""The layout of a generator's output row: which slice gets which activation.

Networks only need this much of a data kind: a list of spans, each `tanh` (one value) or
`softmax` (a one-hot). The tabular codec (dpgan.tables.codec.encoder) builds the list from the
public schema; the generator reads it to pick its activations. Nothing here reads data.
"""

from __future__ import annotations

from dataclasses import dataclass

TANH = "tanh"
SOFTMAX = "softmax"


@dataclass(frozen=True)
class OutputSpan:
    """A slice of the encoded row with one activation: `tanh` (one value) or `softmax` (one-hot)."""

    activation: str
    start: int
    width: int
    column: str
    # a numeric column's mode softmax: how many leading slots are bins that carry a value
    value_modes: int = 0

    @property
    def stop(self) -> int:
        return self.start + self.width


def position_bin_pairs(spans: list[OutputSpan]) -> list[tuple[int, int]]:
    """Indices (position span, bin span) of every numeric column cut into bins: the encoder writes
    a column's bin softmax right after its position, and G gates the one by the other."""
    return [
        (index, index + 1)
        for index, (value, mode) in enumerate(zip(spans[:-1], spans[1:]))
        if value.activation == TANH and mode.value_modes and mode.column == value.column
    ]


__all__ = ["SOFTMAX", "TANH", "OutputSpan", "position_bin_pairs"]
