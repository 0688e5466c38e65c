"""A schema to fill in by hand, written from a table's header alone: no value is read.

Like SDV's metadata detection but free of private reads: the column names, and for Parquet the
types its writer declared, are table structure. Kinds that the header cannot tell are left as a
choice for the user; bounds and categories are left empty, to be taken from documentation (a
code book, a form, a standard), never from the data's own extremes. Loading the template before
it is filled in fails with a message naming the first column to complete.
"""

from __future__ import annotations

from typing import Any

KIND_CHOICE = "FILL IN: continuous | integer | categorical | boolean | date | timestamp | time"


def declared_kind(declared: str | None) -> str:
    """A kind from a Parquet type name, or the choice to fill in."""
    if declared is None:
        return KIND_CHOICE
    name = declared.lower()
    if name.startswith(("int", "uint")):
        return "integer"
    if name.startswith(("float", "double", "halffloat", "decimal")):
        return "continuous"
    if name.startswith("bool"):
        return "boolean"
    if name.startswith("timestamp"):
        return "timestamp"
    if name.startswith("date"):
        return "date"
    if name.startswith(("string", "large_string", "dictionary")):
        return "categorical"
    return KIND_CHOICE


def schema_template(names: list[str], declared: dict[str, str], target: str | None = None) -> dict[str, Any]:
    """A schema dict for `names`, kinds from the declared types where there are any."""
    columns = []
    for name in names:
        kind = declared_kind(declared.get(name))
        column: dict[str, Any] = {"name": name, "kind": kind, "nullable": False}
        if kind in ("continuous", "integer", KIND_CHOICE):
            column["min"], column["max"] = None, None
        if kind in ("categorical", KIND_CHOICE):
            column["categories"] = []
        if kind in ("date", "timestamp"):  # typed Parquet values: sampled back as datetime64
            column["min"], column["max"], column["format"] = None, None, "datetime64"
        columns.append(column)
    template: dict[str, Any] = {
        "source": "template from the table's header (no values read): fill in kinds, bounds, categories and "
        "nullable from public documentation, not from the data; then replace this text with where they came from",
        "columns": columns,
    }
    if target is not None:
        template["target"] = target
    return template
