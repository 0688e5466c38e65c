"""A code column's public hierarchy: where a value too rare to release falls back to.

A code column with many values (zip, ICD, product codes) keeps only the values whose DP count
clears the partition-selection threshold; the others used to become `(other)`. With a hierarchy,
a public rule the user gives (never inferred from the data), such a value falls back to its
nearest released parent instead:
- `{"prefix": [3, 1]}`: the value's first 3 characters, then its first 1 (strictly decreasing
  lengths). A prefix cell is named by the prefix and a `*`: `02139` falls back to `021*`, then
  `0*`, and a sampled row in that cell reads `021*` (the code is known to that precision only;
  a value shorter than a length is its own prefix);
- `{"parents": [{"02139": "Cambridge", ...}, {"Cambridge": "MA", ...}]}`: public child → parent
  mappings, level by level (a single mapping is one level); a cell is named by the parent itself.
  A value or parent a level's mapping lacks has no cell from that level up.
Each level is one more DP histogram (dpgan.tables.inference.hierarchy: every row in at most one
cell of a level, sensitivity 1); a `parents` level's cells are public (noise, no threshold), a
`prefix` level's are released above the threshold like values. A row then maps to its value, else
its first ancestor among the categories, else `(other)` (dpgan.tables.reading.conform: a rule of
the cell and the public spec alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpgan.errors import InputError

PREFIX_MARK = "*"
MAX_LEVELS = 8


@dataclass(frozen=True)
class Hierarchy:
    """Prefix lengths, or parent mappings level by level (exactly one of the two)."""

    prefix: tuple[int, ...] = ()
    parents: tuple[tuple[tuple[str, str], ...], ...] = ()  # each level's (child, parent) pairs

    def __post_init__(self) -> None:
        if bool(self.prefix) == bool(self.parents):
            raise InputError("a hierarchy is either 'prefix' lengths or 'parents' mappings")
        if len(self.prefix) > MAX_LEVELS or len(self.parents) > MAX_LEVELS:
            raise InputError(f"a hierarchy has at most {MAX_LEVELS} levels")
        lengths = self.prefix
        if lengths and (
            not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in lengths)
            or any(a <= b for a, b in zip(lengths, lengths[1:]))
        ):
            raise InputError("a hierarchy's 'prefix' lengths are whole numbers ≥ 1, strictly decreasing (e.g. [3, 1])")

    @property
    def levels(self) -> int:
        return len(self.prefix) or len(self.parents)

    @property
    def thresholded(self) -> bool:
        """Whether the levels' cells come from the data (prefixes: released above a threshold)."""
        return bool(self.prefix)

    def parent(self, key: str, level: int) -> str | None:
        """The level's cell of `key` (a value, or a cell of the level below), as a raw key."""
        if self.prefix:
            return key[: self.prefix[level]]
        return dict(self.parents[level]).get(key)

    def public_cells(self, level: int) -> tuple[str, ...] | None:
        """The level's cells when they are public (mappings), else None (prefixes)."""
        if self.prefix:
            return None
        return tuple(sorted({parent for _, parent in self.parents[level]}))

    def name(self, key: str) -> str:
        """The category a cell's raw key is written as (`021` → `021*` for a prefix)."""
        return key + PREFIX_MARK if self.prefix else key

    def chain(self, key: str, start: int = 0) -> list[str | None]:
        """The raw cells of `key` at levels `start`, `start` + 1, ... (None once one is missing)."""
        out: list[str | None] = []
        current: str | None = key
        for level in range(start, self.levels):
            current = None if current is None else self.parent(current, level)
            out.append(current)
        return out

    def ancestors(self, value: str) -> list[str]:
        """The categories `value` may fall back to, nearest first."""
        return [self.name(k) for k in self.chain(value) if k is not None]

    def to_dict(self) -> dict[str, Any]:
        if self.prefix:
            return {"prefix": list(self.prefix)}
        return {"parents": [dict(level) for level in self.parents]}

    @classmethod
    def from_dict(cls, data: Any, column: str = "") -> Hierarchy:
        where = f"column {column!r}: " if column else ""
        if not isinstance(data, dict) or len(data) != 1 or not set(data) <= {"prefix", "parents"}:
            raise InputError(f'{where}a hierarchy is {{"prefix": [3, 1]}} or {{"parents": [{{child: parent}}, ...]}}')
        if "prefix" in data:
            if not isinstance(data["prefix"], list):
                raise InputError(f"{where}a hierarchy's 'prefix' is a list of lengths")
            return cls(prefix=tuple(data["prefix"]))
        levels = data["parents"]
        levels = [levels] if isinstance(levels, Mapping) else levels
        if not isinstance(levels, list) or not levels or not all(isinstance(m, Mapping) and m for m in levels):
            raise InputError(f"{where}a hierarchy's 'parents' is a mapping, or a list of mappings, child → parent")
        return cls(parents=tuple(tuple((str(c), str(p)) for c, p in m.items()) for m in levels))
