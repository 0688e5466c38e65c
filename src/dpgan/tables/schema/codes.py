"""The cell rule for codes: a digit string with a leading zero (`02139`, `007`, `00`).

Why a rule of its own: `pd.to_numeric("02139")` is 2139, so a zip or ICD column read as numbers
loses its leading zeros and comes back as a different value. A quantity is never written with a
leading zero, so such a cell says its column holds codes whose text is the value. The rule reads
one cell's text alone (dpgan.tables.schema.cells applies it to every text cell), so counting these
cells is a histogram cell like any other: one row changes one cell's class.
"""

from __future__ import annotations

import re

import numpy as np

_CODE = re.compile(r"0[0-9]+")


def is_leading_zero_code(value: object) -> bool:
    """Whether `value` is text of two or more digits, the first a zero (surrounding space stripped)."""
    return isinstance(value, str) and _CODE.fullmatch(value.strip()) is not None


def leading_zero_codes(values: np.ndarray) -> np.ndarray:
    """`is_leading_zero_code` of every cell of an object array."""
    return np.fromiter((is_leading_zero_code(v) for v in values), dtype=bool, count=len(values))
