"""Key columns: a table's identifiers, declared public, never read and generated afresh.

A column of unique ids (a patient number, an order UUID, `P-000123`) carries no statistics worth
learning, and each of its values names one row: learned as a category it would either be copied
into the model (the non-private path drops such columns for that reason) or, bought with DP, fall
entirely into `(other)`. So a key is a *role* the user declares (public metadata, free): in a
schema, `{"name": "id", "role": "key", "format": "integer"}`; in a fit, `keys=["id"]` or
`--key id`. Its cells are never read, not even their types: the fit drops the column before any
release (no ledger entry reads it), the model holds only its name, position and format, and
sampling writes fresh unique values in that format:
- "integer": 1, 2, 3, ... (int64);
- "uuid": random version-4 UUIDs as text (from the sampling seed's own stream);
- a pattern, a prefix then a run of `#` (`"P-######"`): the prefix and a zero-padded sequence
  number, `P-000001`, ... (text; past the padding the number simply grows wider).
Two tables that differ only in their keys therefore give the same model, byte for byte.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError

KEY_ROLE = "key"
INTEGER, UUID = "integer", "uuid"
KEY_ENTRY_KEYS = frozenset(("name", "role", "format"))
_PATTERN = re.compile(r"(?P<prefix>[^#]*)(?P<digits>#+)")
FORMAT_HELP = "'integer', 'uuid', or a prefix and a run of '#' (e.g. 'P-######')"


@dataclass(frozen=True)
class KeySpec:
    """A key column: its name, the format its fresh values take, and its place among the table's
    columns (public: the header's order; -1 puts it last)."""

    name: str
    format: str = INTEGER
    position: int = -1

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InputError("every key column needs a non-empty string name")
        if not isinstance(self.format, str) or (
            self.format not in (INTEGER, UUID) and not _PATTERN.fullmatch(self.format)
        ):
            raise InputError(f"key column {self.name!r}: 'format' must be {FORMAT_HELP}")

    @property
    def dtype(self) -> str:
        """The dtype sampled keys have: int64 for "integer", text otherwise."""
        return "int64" if self.format == INTEGER else "object"

    def values(self, start: int, n: int, rng: np.random.Generator) -> pd.Series:
        """Keys number `start` + 1 to `start` + n of a sample (unique across a sample's chunks);
        "uuid" draws its 122 random bits from `rng` (a collision has probability about n²/2¹²³)."""
        numbers = np.arange(start + 1, start + n + 1, dtype=np.int64)
        if self.format == INTEGER:
            return pd.Series(numbers, name=self.name)
        if self.format == UUID:
            raw = rng.bytes(16 * n)
            texts = [str(uuid.UUID(bytes=raw[16 * i : 16 * i + 16], version=4)) for i in range(n)]
            return pd.Series(texts, name=self.name, dtype=object)
        match = _PATTERN.fullmatch(self.format)
        assert match is not None  # checked in __post_init__
        prefix, width = match["prefix"], len(match["digits"])
        return pd.Series([f"{prefix}{k:0{width}d}" for k in numbers], name=self.name, dtype=object)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "role": KEY_ROLE, "format": self.format}

    @classmethod
    def from_dict(cls, data: dict[str, Any], position: int = -1) -> KeySpec:
        unknown = set(data) - KEY_ENTRY_KEYS
        if unknown:
            raise InputError(f"key column {data.get('name')!r} takes only a name and a format, not {sorted(unknown)}")
        return cls(data.get("name"), data.get("format", INTEGER), position)  # type: ignore[arg-type]


def is_key_entry(data: Any) -> bool:
    """Whether a schema's column entry declares a key (`"role": "key"`); any other role is refused."""
    if not isinstance(data, dict) or "role" not in data:
        return False
    if data["role"] != KEY_ROLE:
        raise InputError(f"column {data.get('name')!r}: 'role' can only be {KEY_ROLE!r}")
    return True


def key_specs(keys: Sequence[str] | Mapping[str, str] | None, columns: Sequence[Any]) -> tuple[KeySpec, ...]:
    """The user's key hint (`["id"]`, or `{"id": "uuid"}` with formats) as specs placed where the
    columns stand in the table's header; a name that is not a column is refused."""
    if keys is None:
        return ()
    if isinstance(keys, str):
        raise InputError("keys must be a list of column names, or a mapping of column names to formats")
    formats = dict(keys) if isinstance(keys, Mapping) else dict.fromkeys(keys, INTEGER)
    names = [str(c) for c in columns]
    specs = []
    for name, form in formats.items():
        if name not in names:
            raise InputError(f"key column {name!r} is not a column of the table")
        specs.append(KeySpec(name, INTEGER if form is None else form, names.index(name)))
    return tuple(specs)


def sampled_keys(keys: Sequence[KeySpec], frame: pd.DataFrame, start: int, rng: np.random.Generator) -> pd.DataFrame:
    """`frame` with each key column inserted at its place, numbered from `start` + 1."""
    for spec in sorted(keys, key=lambda k: (k.position < 0, k.position)):
        at = len(frame.columns) if spec.position < 0 else min(spec.position, len(frame.columns))
        frame.insert(at, spec.name, spec.values(start, len(frame), rng).set_axis(frame.index))
    return frame
