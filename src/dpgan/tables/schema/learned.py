"""What a released table model learned, column by column, in words: read off its public schema.

Why: a column the model cannot hold (a date learned as `(other)`, a zip code read as a number,
nulls below the noise learned as "never null", a zero-heavy amount learned as [0, 1]) used to be
lost silently: the sampled table simply lacked it. This lists, for every column of the released
schema (its keys too), the kind it was learned as, its range or categories, its null slot, its
point masses, a code's hierarchy, a date's format, zone and resolution, and the rules it is in,
so `dpgan inspect` and the evaluation report can say what the model holds.

Privacy: it reads the schema model.json stores, which is public (the curator's, or bought with DP
and in the ledger); no private value is read. It works on the schema's JSON form with the
standard library alone, so `dpgan inspect` loads neither pandas nor PyTorch.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from dpgan.errors import InputError
from dpgan.tables.schema.hierarchy import PREFIX_MARK
from dpgan.tables.schema.rules import rules_from_list

KEY, CODE = "key", "code"
TEMPORAL = ("date", "timestamp", "time")
_LEADING_ZERO = re.compile(r"0[0-9]+")  # dpgan.tables.schema.codes' rule (that module loads numpy)
_ISO_READ = {"date": dt.date.fromisoformat, "timestamp": dt.datetime.fromisoformat, "time": dt.time.fromisoformat}


def learned_columns(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per column of a schema's JSON form (model.json's "schema"), in the table's order:
    "name", "kind" (the schema's kind, or "code" for a categorical of codes, or "key"), what was
    learned (the keys below, each only where it applies) and "text", the entry in words."""
    columns = schema.get("columns") if isinstance(schema, dict) else None
    if not isinstance(columns, list) or not all(isinstance(c, dict) for c in columns):
        raise InputError("the model's schema has no list of columns")
    rules = rules_from_list(schema.get("rules", []))
    geo = {c: pair for pair in schema.get("geo", []) for c in pair.values()}
    out = []
    for column in columns:
        entry = _key(column) if column.get("role") == KEY else _learned(column)
        entry["rules"] = [r.label for r in rules if column.get("name") in r.columns]
        if column.get("name") == schema.get("target"):
            entry["target"] = True
        if column.get("name") in geo:
            entry["geo"] = f"{geo[column['name']]['latitude']}, {geo[column['name']]['longitude']}"
        entry["text"] = words(entry)
        out.append(entry)
    return out


def _key(column: dict[str, Any]) -> dict[str, Any]:
    return {"name": column.get("name"), "kind": KEY, "format": column.get("format", "integer")}


def _learned(column: dict[str, Any]) -> dict[str, Any]:
    kind = column.get("kind")
    entry: dict[str, Any] = {"name": column.get("name"), "kind": kind, "nullable": bool(column.get("nullable"))}
    if kind in ("continuous", "integer"):
        entry["range"] = [column.get("min"), column.get("max")]
        entry |= {k: column[k] for k in ("scale", "bins", "point_masses", "encoding") if k in column}
    elif kind in TEMPORAL:
        fmt = column.get("format", "")
        entry["range"] = [_in_format(kind, column.get(k), fmt) for k in ("min", "max")]
        entry |= {"format": fmt, "resolution": column.get("resolution", "")}
        entry |= {k: column[k] for k in ("timezone", "bins") if k in column}
    elif kind == "categorical":
        other = column.get("other_category")
        kept = [c for c in column.get("categories", []) if other is None or c != other]
        entry["other"] = other is not None
        hierarchy = column.get("hierarchy")
        if isinstance(hierarchy, dict):  # its kept cells: codes, and parents a rare code falls back to
            parents = _parent_cells(hierarchy, kept)
            entry |= {"hierarchy": _hierarchy_words(hierarchy), "parent_cells": len(parents)}
            kept = [c for c in kept if c not in parents]
        entry["categories"] = len(kept)
        if hierarchy is not None or any(isinstance(c, str) and _LEADING_ZERO.fullmatch(c) for c in kept):
            entry["kind"] = CODE
    return entry


def _in_format(kind: str, iso: Any, fmt: str) -> Any:
    """A temporal bound (ISO text in the schema) written in the column's own format, where it has
    one without a zone (ISO otherwise: typed values, or a zone the naive bound does not carry)."""
    if not isinstance(iso, str) or not fmt or fmt in ("iso", "datetime64") or "%z" in fmt:
        return iso
    try:
        return _ISO_READ[kind](iso).strftime(fmt)
    except ValueError:  # "24:00:00", a time of day's end: no strftime form
        return iso


def _levels(hierarchy: dict[str, Any]) -> list[dict[str, str]]:
    levels = hierarchy.get("parents", [])
    return [levels] if isinstance(levels, dict) else list(levels)


def _parent_cells(hierarchy: dict[str, Any], kept: list[Any]) -> set[Any]:
    """The kept categories that are a hierarchy's cells (`021*`, or a mapping's parent), not codes."""
    if "prefix" in hierarchy:
        return {c for c in kept if isinstance(c, str) and c.endswith(PREFIX_MARK)}
    parents = {str(p) for level in _levels(hierarchy) for p in level.values()}
    return {c for c in kept if str(c) in parents}


def _hierarchy_words(hierarchy: dict[str, Any]) -> str:
    if "prefix" in hierarchy:
        lengths = ", then ".join(str(n) for n in hierarchy["prefix"])
        return f"a rare code falls back to its first {lengths} characters"
    levels = len(_levels(hierarchy))
    return f"a rare code falls back to its public parent ({levels} level{'s' if levels > 1 else ''})"


def number(value: Any) -> str:
    """A bound or point mass as a person reads it: whole numbers with separators, others to 6 digits."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.6g}"


def count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def words(entry: dict[str, Any]) -> str:
    """An entry in one line: "date 2022-01-01 to 2022-12-31 (format %Y-%m-%d,
    resolution day); 12 bins; never null"."""
    kind = entry["kind"]
    if kind == KEY:
        return f"key: never learned, generated afresh on sampling ({entry['format']})"
    parts = [kind]
    if "range" in entry:
        low, high = entry["range"]
        parts.append(f"{number(low)} to {number(high)}")
    if kind in TEMPORAL:
        zone = f", zone {entry['timezone']}" if entry.get("timezone") else ""
        parts.append(f"(format {entry['format']}{zone}, resolution {entry['resolution']})")
    if entry.get("scale", "linear") != "linear":
        parts.append(f"{entry['scale']} scale")
    text = " ".join(parts)
    details = []
    if entry.get("point_masses"):
        details.append("point mass at " + ", ".join(number(m) for m in entry["point_masses"]))
    if entry.get("encoding") == "binary":
        details.append("binary-coded")
    elif entry.get("bins", 1) != 1:
        details.append(f"{entry['bins']} bins")
    if "categories" in entry:
        noun = ("code", "codes") if kind == CODE else ("category", "categories")
        parents = entry.get("parent_cells")
        parents = "" if parents is None else f" and {count(parents, 'parent cell', 'parent cells')}"
        other = ", an (other) class" if entry["other"] else ", no (other)"
        details.append(f"{count(entry['categories'], *noun)}{parents} kept{other}")
    if entry.get("hierarchy"):
        details.append(entry["hierarchy"])
    details.append("a null slot" if entry["nullable"] else "never null")
    if entry.get("target"):
        details.append("the target")
    if entry.get("geo"):
        details.append(f"geo pair ({entry['geo']})")
    if entry.get("rules"):
        details.append("rule " + "; rule ".join(entry["rules"]))
    return "; ".join([text, *details])


def model_learned(metadata: dict[str, Any]) -> dict[str, Any] | None:
    """The table kind's answer to `dpgan inspect` (dpgan.kinds.Kind.learned): {"source": where the
    schema came from, "columns": `learned_columns`, "rules": each rule in words}, from model.json."""
    schema = metadata.get("schema")
    if not isinstance(schema, dict):
        return None
    rules = [r.label for r in rules_from_list(schema.get("rules", []))]
    return {"source": str(schema.get("source", "user")), "columns": learned_columns(schema), "rules": rules}


__all__ = ["learned_columns", "model_learned", "number", "words"]
