"""A schema's rules (dpgan.tables.schema.rules) checked against its columns, one clear line each:
an unknown column, a kind the rule cannot read, a column set by two rules, a cycle, a set column
that is the target or part of a geo pair, a rule no value within the public bounds can keep.

Everything here reads the public schema alone. `application_order` is the order the sampler
applies the rules in (a rule after every rule that sets a column it reads).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dpgan.errors import InputError
from dpgan.tables.schema.cells import canonical_text
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.rules import (
    COMBINABLE_KINDS,
    ORDERED_KINDS,
    SUMMABLE_KINDS,
    Combination,
    Derived,
    Inequality,
    Rule,
)


def check_rules(
    rules: Sequence[Rule], columns: Sequence[ColumnSpec], target: str | None, geo: Iterable[str] = ()
) -> tuple[Rule, ...]:
    """The rules, checked, with each combination's allowed values as the columns' own categories
    (the schema's 1 for a JSON "1"); raises InputError naming the rule."""
    specs = {c.name: c for c in columns}
    geo_columns = set(geo)
    checked: list[Rule] = []
    for index, rule in enumerate(rules, start=1):
        where = f"rule {index} ({rule.label})"
        for name in rule.columns:
            if name not in specs:
                raise InputError(f"{where}: {name!r} is not a column of the schema")
        for name in rule.writes:
            if name == target:
                raise InputError(f"{where}: the target {name!r} cannot be set by a rule (it is learned as it is)")
            if name in geo_columns:
                raise InputError(f"{where}: {name!r} is in a geo pair and cannot be set by a rule")
        if isinstance(rule, Inequality):
            _check_inequality(rule, specs, where)
        elif isinstance(rule, Derived):
            _check_derived(rule, specs, where)
        else:
            rule = _resolved(rule, specs, where)
        checked.append(rule)
    _check_writers(checked)
    application_order(checked)
    return tuple(checked)


def check_condition(rules: Sequence[Rule], column: str | None) -> None:
    """Refuse a condition column a rule sets: the generator is conditioned on a learned column."""
    for index, rule in enumerate(rules, start=1):
        if column is not None and column in rule.writes:
            raise InputError(
                f"the condition column {column!r} is set by rule {index} ({rule.label}): condition on a column "
                "the rules leave as it is"
            )


def gap_bounds(low: ColumnSpec, high: ColumnSpec, strict: bool) -> tuple[float, float]:
    """The public range of `high - low` for rows that keep the rule: from the two columns' public
    bounds alone (at least 0, or 1 between integers under a strict rule)."""
    least = 1.0 if strict and low.kind == high.kind == "integer" else 0.0
    return max(least, float(high.min) - float(low.max)), float(high.max) - float(low.min)  # type: ignore[arg-type]


def application_order(rules: Sequence[Rule]) -> list[int]:
    """The rules' indices in an order where each runs after the rule setting a column it reads;
    InputError on a cycle (no order can compute the columns from learned ones)."""
    setter = {name: i for i, rule in enumerate(rules) for name in rule.writes}
    waits = {i: {setter[c] for c in rule.reads if c in setter and setter[c] != i} for i, rule in enumerate(rules)}
    order: list[int] = []
    while len(order) < len(rules):
        ready = [i for i, before in waits.items() if i not in order and before <= set(order)]
        if not ready:
            stuck = sorted(set(waits) - set(order))
            columns = sorted({c for i in stuck for c in rules[i].writes})
            raise InputError(
                f"rules {', '.join(str(i + 1) for i in stuck)} form a cycle through {', '.join(map(repr, columns))}: "
                "each set column must be computable from learned ones"
            )
        order.extend(ready)
    return order


def _check_writers(rules: Sequence[Rule]) -> None:
    setter: dict[str, int] = {}
    for index, rule in enumerate(rules, start=1):
        for name in rule.writes:
            if name in setter:
                hint = " (list all their columns in one combination)" if isinstance(rule, Combination) else ""
                raise InputError(
                    f"rules {setter[name]} and {index} both set column {name!r}: a column is computed or repaired "
                    f"by one rule only{hint}"
                )
            setter[name] = index


def _ordered(spec: ColumnSpec, where: str, what: str, kinds: tuple[str, ...] = ORDERED_KINDS) -> None:
    if spec.kind not in kinds:
        raise InputError(f"{where}: {spec.name!r} is {spec.kind}; {what} reads {' or '.join(kinds)} columns")


def _check_inequality(rule: Inequality, specs: dict[str, ColumnSpec], where: str) -> None:
    low, high = specs[rule.low], specs[rule.high]
    for spec in (low, high):
        _ordered(spec, where, "an inequality")
    if (low.is_temporal or high.is_temporal) and low.kind != high.kind:  # one linear scale for both
        raise InputError(f"{where}: an inequality compares a {low.kind} with a {low.kind} only, not a {high.kind}")
    if float(high.max) < float(low.min) or (rule.strict and float(high.max) == float(low.min)):  # type: ignore[arg-type]
        raise InputError(f"{where}: no {rule.high!r} within its bounds can exceed {rule.low!r} within its own")
    if rule.method == "gap" and low.nullable:
        raise InputError(
            f'{where}: {rule.low!r} is nullable; the gap method needs a complete low column (use "method": "clip")'
        )
    if rule.method == "gap":
        least, most = gap_bounds(low, high, rule.strict)
        if not least < most:
            raise InputError(f"{where}: the gap {rule.high} - {rule.low} can take one value only within the bounds")
    if rule.method == "swap" and low.kind != high.kind:
        raise InputError(f"{where}: the swap method needs both columns of one kind ({low.kind}, {high.kind})")


def _check_derived(rule: Derived, specs: dict[str, ColumnSpec], where: str) -> None:
    column = specs[rule.column]
    for name in rule.columns:
        _ordered(specs[name], where, "a sum", SUMMABLE_KINDS)
    if column.kind == "integer" and any(specs[name].kind != "integer" for name in rule.of):
        raise InputError(f"{where}: {rule.column!r} is integer, so every part must be integer")
    if not column.nullable and any(specs[name].nullable for name in rule.of):
        raise InputError(f"{where}: a part is nullable, so {rule.column!r} must be nullable too")


def _resolved(rule: Combination, specs: dict[str, ColumnSpec], where: str) -> Combination:
    """The allowed tuples with each value as its column's category (exact, else by text)."""
    for name in rule.columns:
        if specs[name].kind not in COMBINABLE_KINDS:
            raise InputError(
                f"{where}: {name!r} is {specs[name].kind}; a combination reads {' or '.join(COMBINABLE_KINDS)} columns"
            )
    allowed = tuple(tuple(_category(specs[c], v, where) for c, v in zip(rule.columns, t)) for t in rule.allowed)
    if len(set(allowed)) != len(allowed):
        raise InputError(f"{where}: 'allowed' names one combination twice")
    return Combination(rule.columns, allowed)


def _category(spec: ColumnSpec, value: Any, where: str) -> Any:
    if value is None:
        if not spec.nullable:
            raise InputError(f"{where}: an allowed combination holds null, but {spec.name!r} is not nullable")
        return None
    if spec.kind == "integer":  # a code such as Adult's education-num: a whole number within the bounds
        whole = isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer()
        if not whole or not float(spec.min) <= float(value) <= float(spec.max):  # type: ignore[arg-type]
            raise InputError(f"{where}: {value!r} is not a whole number within the bounds of {spec.name!r}")
        return int(value)
    for category in spec.categories:
        if type(category) is type(value) and category == value:
            return category
    text = canonical_text(value)
    for category in spec.categories:
        if canonical_text(category) == text:
            return category
    raise InputError(f"{where}: {value!r} is not a category of {spec.name!r}")
