"""The schema's rules between columns in the evaluation: how many real rows broke each rule, and
that no synthetic row does (dpgan.tables.codec.rules keeps every rule on every sampled row).

The rules come from the schema given to `evaluate`, else from the model's own model.json (its
public schema). The counts are exact: they read the real training and test rows, like the rest of
the evaluation, which is for the data owner and is not a release.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from dpgan.evaluation.report_core import html_table, note
from dpgan.evaluation.tables.learned_columns import released_schema
from dpgan.tables.schema.rule_breaks import rule_break_counts
from dpgan.tables.schema.table import Schema

RULES_NOTE = (
    "A rule is declared in the schema (public). The sampler keeps every rule on every row: a sum is computed from "
    "its parts, an inequality learned as its low column and the gap (or repaired), a combination learned as one "
    "column of its allowed tuples. Real rows may break a rule: the fit maps them (the gap clamped at 0, a "
    "combination outside the list dropped and counted with DP), so the synthetic column should read 0."
)


def rules_schema(schema: Schema | None, model_dir: str | Path | None) -> Schema | None:
    """The schema whose rules the evaluation counts: the given one, else the model's (if it has rules)."""
    if schema is not None and schema.rules:
        return schema
    model_schema = released_schema(model_dir)  # None: another kind's model, or none: no rules to count
    return model_schema if model_schema is not None and model_schema.rules else None


def rules_entry(frames: dict[str, pd.DataFrame], schema: Schema | None) -> list[dict[str, Any]] | None:
    """metrics.json's "rules": per rule, its words, its JSON and the rows breaking it in each table."""
    if schema is None:
        return None
    counts = {name: rule_break_counts(frame, schema) for name, frame in frames.items()}
    out = []
    for index, rule in enumerate(schema.rules):
        entry: dict[str, Any] = {"rule": rule.label, "spec": rule.to_dict()}
        for name, per_rule in counts.items():
            entry[name] = {"rows": per_rule[index]["rows"], "broken": per_rule[index]["broken"]}
        out.append(entry)
    return out


def rules_section(rules: list[dict[str, Any]] | None) -> str:
    """The report's section (empty without rules)."""
    if not rules:
        return ""
    names = [n for n in ("real", "test", "synthetic") if n in rules[0]]
    body = [[r["rule"], *(f"{r[n]['broken']:,} of {r[n]['rows']:,}" for n in names)] for r in rules]
    header = ["rule", *(f"{n} rows breaking it" for n in names)]
    out = ["<h2>Rules between columns</h2>", html_table(header, body)]
    if any(r.get("synthetic", {}).get("broken") for r in rules):
        out.append(note("Some synthetic rows break a rule: they were not sampled by this schema's model.", "warn"))
    out.append(note(RULES_NOTE))
    return "\n".join(out)


def rules_line(rules: list[dict[str, Any]] | None) -> str | None:
    """One line for the command line's summary."""
    if not rules:
        return None
    broken = sum(r["synthetic"]["broken"] for r in rules)
    real = ", ".join(f"{r['rule']}: {r['real']['broken']:,}" for r in rules)
    return f"rules: {broken:,} breaks in the synthetic rows (real rows breaking each: {real})"
