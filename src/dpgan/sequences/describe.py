"""A sequence model's schema and input rule in words, for its record and its privacy report."""

from __future__ import annotations

from typing import Any

from dpgan.sequences.schema import DP, SequenceSchema


def dropped_policy(schema: SequenceSchema) -> str:
    """The input rule in words: which series are dropped (and counted with DP), for the record."""
    policy = (
        "each series is kept or dropped by its own cells: dropped when its times are missing, unreadable or "
        "of mixed kinds, when it has not exactly `length` readings at distinct times, a missing or "
        "non-numeric value, or not one label"
    )
    if schema.label is not None:
        source = "DP-released" if schema.categories_source == DP else "public"
        policy += f", or a label outside the {source} label set"
    if schema.entity is not None:
        policy += f"; an {schema.entity!r} entity is dropped when none of its series is kept"
    return policy + "; the dropped are counted with DP, per reason"


def dp_bounds(schema: SequenceSchema) -> list[str]:
    return [v.name for v in schema.values if v.source == DP]


def dp_items(schema: SequenceSchema) -> dict[str, Any]:
    """What the fit estimated with DP (in the ledger), as released: bounds by column, the label set."""
    out: dict[str, Any] = {}
    bounds = {v.name: [v.min, v.max] for v in schema.values if v.source == DP}
    if bounds:
        out["bounds"] = bounds
    if schema.categories_source == DP:
        out["labels"] = {str(schema.label): list(schema.categories)}
    return out


def schema_source(schema: SequenceSchema) -> str:
    """One line: which parts of the schema are public and which are DP estimates in the ledger."""
    dp = [f"bounds of {name!r}" for name in dp_bounds(schema)]
    if schema.categories_source == DP:
        dp.append(f"the label set of {schema.label!r}")
    if not dp:
        return schema.source
    public = [f"bounds of {v.name!r}" for v in schema.values if v.source != DP]
    if schema.label is not None and schema.categories_source != DP:
        public.append(f"the label set of {schema.label!r}")
    line = f"{schema.source}; estimated with DP (in the ledger): {', '.join(dp)}"
    return line + (f"; public: {', '.join(public)}" if public else "")


__all__ = ["dp_bounds", "dp_items", "dropped_policy", "schema_source"]
