"""The report's per-column block: what the released model learned (dpgan.tables.schema.learned)
and, next to it, what that learned schema misses on the real rows, so no column is lost silently.

Why: a DP-learned schema can fall short of the data in ways the sampled table does not show: a
column with 8.5 % nulls learned as never null (its null rows repaired), a range that clamps the
tail of a zero-heavy amount, rare categories folded into `(other)`, date cells in a format the
model did not learn. Each such gap becomes one note in the issue's words, e.g. "learned as never
null (8.5 % null in the real data)", "range 0 to 1: 3.1 % of real values outside", "(other) holds
12 % of synthetic rows / 4 % of real", "categories folded into (other): 7 (covering 9 % of real
rows)". A note appears only where the real rows show the gap (a share above 0).

The learned side is the model's public schema (model.json), else the schema given to `evaluate`.
The real side reads the real training rows exactly: like the rest of the evaluation it is for the
data owner and is not a release.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.evaluation.report_core import html_table, note
from dpgan.tables.schema.cells import boolean_value, canonical_text
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.learned import KEY, model_learned, number
from dpgan.tables.schema.rule_breaks import match_keys, rule_numbers
from dpgan.tables.schema.table import Schema

LEARNED_NOTE = (
    "Each column as the released model holds it (its public schema: no private read) and, beside it, what that "
    "schema misses on the real training rows: nulls it has no slot for (those rows were repaired), values "
    "outside its range (clamped to the bound), values it does not keep (folded into (other), or dropped), cells "
    "it cannot read. A column with nothing in the last column is held whole. Key columns are never learned: "
    "sampling writes fresh ones."
)


def released_schema(model_dir: str | Path | None) -> Schema | None:
    """The table schema a saved model holds (model.json's "schema"), or None (no model, another kind)."""
    if model_dir is None:
        return None
    try:
        saved = json.loads((Path(model_dir) / "model.json").read_text()).get("schema")
        return Schema.from_dict(saved) if isinstance(saved, dict) else None
    except (OSError, ValueError, AttributeError, InputError):  # another kind's model, or none
        return None


def learned_entry(
    schema: Schema | None, model_dir: str | Path | None, real: pd.DataFrame, synthetic: pd.DataFrame
) -> dict[str, Any] | None:
    """metrics.json's "learned": the model's learned columns (`model_learned`; the given schema's
    without a model), each with "real" (the shares measured on the real rows) and "missed" (notes)."""
    released = released_schema(model_dir)
    chosen = released if released is not None else schema
    if chosen is None:
        return None
    learned = model_learned({"schema": chosen.to_dict()})
    assert learned is not None
    learned["from"] = "the model's public schema" if released is not None else "the schema given to evaluate"
    for entry in learned["columns"]:
        name = entry["name"]
        if entry["kind"] == KEY or name not in real.columns:
            continue
        other = synthetic[name] if name in synthetic.columns else None
        entry["real"], entry["missed"] = column_gaps(chosen[name], entry, real[name], other)
    return learned


def share(part: float, whole: int) -> float:
    return float(part) / whole if whole else 0.0


def percent(value: float) -> str:
    """A share as a person reads it: "8.5 %", "< 0.1 %" (never "0.0 %" for a share above 0)."""
    return "< 0.1 %" if 0 < value < 0.001 else f"{100 * value:.1f} %"


def column_gaps(
    spec: ColumnSpec, entry: dict[str, Any], real: pd.Series, synthetic: pd.Series | None
) -> tuple[dict[str, float], list[str]]:
    """The shares a column's learned spec leaves out of the real rows, and a note for each above 0."""
    rows = len(real)
    facts: dict[str, float] = {"null": share(real.isna().sum(), rows)}
    missed = []
    if not spec.nullable and facts["null"] > 0:
        missed.append(f"learned as never null ({percent(facts['null'])} null in the real data)")
    if spec.is_numeric or spec.is_temporal:
        _range_gaps(spec, entry, real, facts, missed)
    elif spec.kind == "boolean":
        unread = sum(boolean_value(v) is None for v in real.dropna())
        facts["unreadable"] = share(unread, rows)
        if unread:
            missed.append(f"{percent(facts['unreadable'])} of real cells do not read as yes/no")
    else:
        _category_gaps(spec, real, synthetic, facts, missed)
    return facts, missed


def _range_gaps(spec: ColumnSpec, entry: dict[str, Any], real: pd.Series, facts: dict, missed: list) -> None:
    """A numeric or temporal column: cells it cannot read, values outside its learned range."""
    values = rule_numbers(real, spec)  # a temporal column read in its own format
    unread = int((real.notna().to_numpy() & np.isnan(values)).sum())
    facts["unreadable"] = share(unread, len(real))
    if unread:
        what = f"a {spec.kind}" if spec.is_temporal else "numbers"  # a date in any public format reads
        missed.append(f"{percent(facts['unreadable'])} of real cells do not read as {what}")
    present = values[~np.isnan(values)]
    outside = int(((present < spec.min) | (present > spec.max)).sum())  # type: ignore[operator]
    facts["outside"] = share(outside, len(present))
    if outside:
        low, high = entry["range"]
        missed.append(f"range {number(low)} to {number(high)}: {percent(facts['outside'])} of real values outside")


def _category_gaps(spec: ColumnSpec, real: pd.Series, synthetic: pd.Series | None, facts: dict, missed: list) -> None:
    """A categorical or code column: values kept, fallen back to a parent code, or folded away."""
    other = None if spec.other_category is None else canonical_text(spec.other_category)
    kept = {canonical_text(c) for c in spec.categories} - {other}
    keys = [k for k in match_keys(real) if k is not None]
    folded: set[str] = set()
    parent = folded_rows = 0
    for key in keys:
        if key in kept:
            continue
        if spec.hierarchy is not None and any(a in kept for a in spec.hierarchy.ancestors(key)):
            parent += 1
            continue
        folded.add(key)
        folded_rows += 1
    rows = len(real)
    facts |= {"parent": share(parent, rows), "folded": share(folded_rows, rows), "folded_values": len(folded)}
    if parent:
        missed.append(f"{percent(facts['parent'])} of real rows fall back to a parent code (the hierarchy)")
    if folded and other is not None:
        missed.append(
            f"categories folded into {spec.other_category}: {len(folded):,} (covering {percent(facts['folded'])} of "
            "real rows)"
        )
    elif folded:
        missed.append(f"{len(folded):,} real values not among the categories ({percent(facts['folded'])} of rows)")
    if other is None:
        return
    # a complete column's null rows go to (other) too (dpgan.tables.reading.conform)
    into_other = folded_rows + (0 if spec.nullable else int(real.isna().sum()))
    facts["other_real"] = share(into_other, rows)
    if synthetic is not None:
        synthetic_keys = match_keys(synthetic)
        facts["other_synthetic"] = share(sum(k == other for k in synthetic_keys), len(synthetic_keys))
    if into_other or facts.get("other_synthetic", 0.0) > 0:
        synthetic_words = f"{percent(facts['other_synthetic'])} of synthetic rows / " if synthetic is not None else ""
        missed.append(f"{spec.other_category} holds {synthetic_words}{percent(facts['other_real'])} of real")


def learned_section(learned: dict[str, Any] | None) -> str:
    """The report's section: one row per column (empty without a schema to read)."""
    if not learned:
        return ""
    body = [[e["name"], e["text"], "; ".join(e.get("missed") or []) or "—"] for e in learned["columns"]]
    header = ["column", f"learned as ({learned['from']})", "missed on the real rows"]
    out = ["<h2>What the model learned, per column</h2>", html_table(header, body)]
    if learned.get("rules"):
        out.append(note("Rules kept on every sampled row: " + "; ".join(learned["rules"])))
    out.append(note(LEARNED_NOTE))
    return "\n".join(out)


def learned_lines(learned: dict[str, Any] | None) -> list[str]:
    """The command line's summary: each column whose learned schema misses something, one line each."""
    if not learned:
        return []
    gaps = [(e["name"], e["missed"]) for e in learned["columns"] if e.get("missed")]
    if not gaps:
        return ["learned columns: every column held whole on the real rows"]
    return [f"learned columns: {len(gaps)} of {len(learned['columns'])} miss something on the real rows"] + [
        f"  {name}: {'; '.join(notes)}" for name, notes in gaps
    ]


__all__ = ["learned_entry", "learned_lines", "learned_section", "released_schema"]
