"""A code column with a public hierarchy, scored at each of its levels; key columns left out.

Why: a synthetic zip column whose rare codes came back as their prefix (`021*`, see
dpgan.tables.schema.hierarchy) cannot match the real codes one for one, so its code-level JSD
says little; compared after both sides are cut to a level (`02139` and `021*` both read `021*` at
the 3-character level) it says how well the model keeps the code's structure where it was
released. Key columns (dpgan.tables.schema.keys) are generated afresh, never learned: they carry no
signal to score and would only be an identifier feature, so fidelity and TSTR never see them.
Like the rest of the evaluation this reads the real rows exactly (not DP; for the data owner).
"""

from __future__ import annotations

import pandas as pd

from dpgan.evaluation.tables.fidelity import MISSING, js_divergence
from dpgan.tables.schema.hierarchy import PREFIX_MARK, Hierarchy
from dpgan.tables.schema.table import Schema


def without_keys(frame: pd.DataFrame, schema: Schema | None) -> pd.DataFrame:
    """`frame` without the schema's key columns (those it has)."""
    keys = [] if schema is None else [k for k in schema.key_names if k in frame.columns]
    return frame.drop(columns=keys) if keys else frame


def at_level(value: str, hierarchy: Hierarchy, level: int) -> str:
    """The label of `value` (a code, or a cell a row fell back to) at `level`: its cell there, or
    itself when it is coarser than the level (a `0*` row at the 3-character level)."""
    if value == MISSING:
        return value
    if hierarchy.prefix:
        raw = value[: -len(PREFIX_MARK)] if value.endswith(PREFIX_MARK) else value
        coarser = value.endswith(PREFIX_MARK) and len(raw) < hierarchy.prefix[level]
        return value if coarser else hierarchy.name(raw[: hierarchy.prefix[level]])
    start = next((m + 1 for m in range(hierarchy.levels) if value in (hierarchy.public_cells(m) or ())), 0)
    if start > level:
        return value
    cell = hierarchy.chain(value, start)[level - start]
    return value if cell is None else hierarchy.name(cell)


def level_divergences(real: pd.Series, synthetic: pd.Series, hierarchy: Hierarchy) -> list[float]:
    """The JSD (bits) of the two columns (labels as `fidelity` compares them) cut to each level."""
    out = []
    for level in range(hierarchy.levels):
        cut = [s.map(lambda v, level=level: at_level(str(v), hierarchy, level)) for s in (real, synthetic)]
        out.append(js_divergence(*cut))
    return out


def add_level_scores(
    per_column: dict[str, dict], real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema | None
) -> None:
    """`jsd_by_level` (one JSD per hierarchy level) on each code column's fidelity entry."""
    if schema is None:
        return
    for spec in schema.columns:
        if spec.hierarchy is not None and spec.name in per_column:
            per_column[spec.name]["jsd_by_level"] = level_divergences(
                real[spec.name], synthetic[spec.name], spec.hierarchy
            )
