"""Public rules between columns, declared in the schema: inequalities, fixed combinations, sums.

A rule is public metadata like a column's bounds: the curator writes it (SDV's constraints are the
model), nothing here reads a private value, so it costs no ε. What the fit and the sampler do with
each kind is dpgan.tables.codec.rules (a reparametrisation or a repair, both free); what a rule
says and how it is checked is here:

    {"kind": "inequality", "low": "start", "high": "end", "strict": false, "method": "gap"}
    {"kind": "combination", "columns": ["city", "state"], "allowed": [["Boston", "MA"], ...]}
    {"kind": "sum", "column": "total", "of": ["a", "b"]}          total = a + b
    {"kind": "difference", "column": "net", "of": ["gross", "tax"]}   net = gross - tax
    {"kind": "sum", "column": "x", "of": ["a", "b"], "signs": [1, -1]}

An inequality holds where both cells are present; a sum where every cell is; a combination on
every row (an allowed tuple may hold null for a nullable column). A rule *sets* the columns it
computes or repairs (`writes`): a sum's column, an inequality's `high` (`swap`: both), a
combination's columns; each column is set by one rule at most, a set column is never the target or
part of a geo pair, and the rules that read a set column run after the rule that sets it (no cycle).
The checks of one schema's rules against its columns: dpgan.tables.schema.rule_checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from dpgan.errors import InputError

# the kinds a sum reads as numbers, and the kinds an inequality compares: a date, timestamp or time
# of day is compared on its linear scale (dpgan.tables.schema.datetimes), so `end >= start` holds on
# dates; a sum of dates means nothing, so sums stay numeric
SUMMABLE_KINDS = ("continuous", "integer")
ORDERED_KINDS = (*SUMMABLE_KINDS, "date", "timestamp", "time")
COMBINABLE_KINDS = ("categorical", "boolean", "integer")  # an integer column: its whole numbers
RULE_KINDS = ("inequality", "combination", "sum", "difference")
# how an inequality is kept: "gap" learns `low` and the gap `high - low` (a reparametrisation),
# "clip" learns both and raises `high` to `low` where a sampled row breaks the rule, "swap" swaps them
INEQUALITY_METHODS = ("gap", "clip", "swap")
MAX_ALLOWED_TUPLES = 100_000


@dataclass(frozen=True)
class Inequality:
    """`low ≤ high` (`strict`: `low < high`) wherever both are present."""

    low: str
    high: str
    strict: bool = False
    method: str = "gap"
    kind: ClassVar[str] = "inequality"

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.low, self.high)

    @property
    def writes(self) -> tuple[str, ...]:
        return (self.low, self.high) if self.method == "swap" else (self.high,)

    @property
    def reads(self) -> tuple[str, ...]:
        return () if self.method == "swap" else (self.low,)

    @property
    def label(self) -> str:
        return f"{self.low} {'<' if self.strict else '<='} {self.high}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "low": self.low, "high": self.high, "strict": self.strict}
        if self.method != "gap":
            out["method"] = self.method
        return out


@dataclass(frozen=True)
class Combination:
    """The columns' values on a row form one of the `allowed` tuples (a public mapping, e.g. city
    → state), never a tuple read off the data."""

    columns: tuple[str, ...]
    allowed: tuple[tuple[Any, ...], ...]
    kind: ClassVar[str] = "combination"

    @property
    def writes(self) -> tuple[str, ...]:
        return self.columns

    @property
    def reads(self) -> tuple[str, ...]:
        return ()

    @property
    def label(self) -> str:
        return f"({', '.join(self.columns)}) in {len(self.allowed)} allowed combinations"

    def to_dict(self) -> dict[str, Any]:
        allowed = [[v.item() if hasattr(v, "item") else v for v in t] for t in self.allowed]  # numpy scalars
        return {"kind": self.kind, "columns": list(self.columns), "allowed": allowed}


@dataclass(frozen=True)
class Derived:
    """`column = Σ signs[i] · of[i]` wherever every part is present (null where one is not)."""

    column: str
    of: tuple[str, ...]
    signs: tuple[int, ...]
    kind: ClassVar[str] = "sum"

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column, *self.of)

    @property
    def writes(self) -> tuple[str, ...]:
        return (self.column,)

    @property
    def reads(self) -> tuple[str, ...]:
        return self.of

    @property
    def label(self) -> str:
        first = ("-" if self.signs[0] < 0 else "") + self.of[0]
        rest = "".join(f" {'+' if s > 0 else '-'} {c}" for c, s in zip(self.of[1:], self.signs[1:]))
        return f"{self.column} = {first}{rest}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "sum", "column": self.column, "of": list(self.of)}
        if all(s == 1 for s in self.signs):
            return out
        if self.signs[0] == 1 and all(s == -1 for s in self.signs[1:]):
            return {**out, "kind": "difference"}
        return {**out, "signs": list(self.signs)}


Rule = Inequality | Combination | Derived

_KEYS = {
    "inequality": frozenset(("kind", "low", "high", "strict", "method")),
    "combination": frozenset(("kind", "columns", "allowed")),
    "sum": frozenset(("kind", "column", "of", "signs")),
    "difference": frozenset(("kind", "column", "of")),
}


def rules_from_list(data: Any) -> tuple[Rule, ...]:
    """A schema's "rules" entry (a list of objects), parsed; one line naming the rule if not."""
    if not isinstance(data, list):
        raise InputError("a schema's 'rules' must be a list of rule objects")
    return tuple(rule_from_dict(entry, index) for index, entry in enumerate(data, start=1))


def rule_from_dict(data: Any, index: int = 1) -> Rule:
    """One rule object (see the module docstring); `index` numbers it in messages (from 1)."""
    where = f"rule {index}"
    if not isinstance(data, dict) or data.get("kind") not in RULE_KINDS:
        raise InputError(f"{where}: a rule is an object whose 'kind' is one of {', '.join(RULE_KINDS)}")
    kind = data["kind"]
    unknown = set(data) - _KEYS[kind]
    if unknown:
        raise InputError(f"{where} ({kind}): unknown keys {sorted(unknown)}")
    if kind == "inequality":
        strict, method = data.get("strict", False), data.get("method", "gap")
        if not isinstance(strict, bool):
            raise InputError(f"{where} (inequality): 'strict' is true or false")
        if method not in INEQUALITY_METHODS:
            raise InputError(f"{where} (inequality): 'method' is one of {', '.join(INEQUALITY_METHODS)}")
        low, high = _name(data, "low", where), _name(data, "high", where)
        if low == high:
            raise InputError(f"{where} (inequality): 'low' and 'high' name two different columns")
        return Inequality(low, high, strict, method)
    if kind == "combination":
        columns = _names(data, "columns", where, at_least=2)
        allowed = data.get("allowed")
        if not isinstance(allowed, list) or not allowed or len(allowed) > MAX_ALLOWED_TUPLES:
            raise InputError(f"{where} (combination): 'allowed' is a list of 1 to {MAX_ALLOWED_TUPLES:,} value lists")
        if not all(isinstance(t, list) and len(t) == len(columns) for t in allowed):
            raise InputError(f"{where} (combination): each allowed entry lists one value per column ({len(columns)})")
        tuples = tuple(tuple(t) for t in allowed)
        if len(set(map(_hashable, tuples))) != len(tuples):
            raise InputError(f"{where} (combination): 'allowed' has duplicates")
        return Combination(columns, tuples)
    column, of = _name(data, "column", where), _names(data, "of", where, at_least=1)
    signs = data.get("signs", [1] + [-1 if kind == "difference" else 1] * (len(of) - 1))
    if not isinstance(signs, list) or len(signs) != len(of) or any(s not in (1, -1) or s is True for s in signs):
        raise InputError(f"{where} ({kind}): 'signs' lists 1 or -1 for each column of 'of'")
    if column in of:
        raise InputError(f"{where} ({kind}): {column!r} cannot be one of its own parts")
    return Derived(column, of, tuple(int(s) for s in signs))


def _name(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise InputError(f"{where} ({data['kind']}): {key!r} names a column")
    return value


def _names(data: dict[str, Any], key: str, where: str, *, at_least: int) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or len(value) < at_least or not all(isinstance(v, str) and v for v in value):
        raise InputError(f"{where} ({data['kind']}): {key!r} is a list of at least {at_least} column names")
    if len(set(value)) != len(value):
        raise InputError(f"{where} ({data['kind']}): {key!r} names a column twice")
    return tuple(value)


def _hashable(values: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(repr(v) for v in values)
