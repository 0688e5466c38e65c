"""Target records for the shadow-model attack: the records most likely to leak.

Stadler et al. found that outliers carry most of the risk, and evaluated a crafted outlier
(`craft_outlier`: every numeric column at its maximum, every categorical at its rarest value)
next to real records. Here the crafted record is built from the attacker's reference data, and
the real targets are the training records farthest from their nearest neighbours (the shared
rule, dpgan.evaluation.attacks.targets.most_isolated).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.evaluation.attacks.targets import most_isolated
from dpgan.evaluation.tables.attacks.dcr import sample_rows
from dpgan.evaluation.tables.attacks.encoding import AttackEncoder, NumericColumn, numeric_values

ISOLATION_MAX_ROWS = 3000  # candidates examined for isolation (O(n²) distances)


def craft_outlier(reference: pd.DataFrame, encoder: AttackEncoder) -> pd.DataFrame:
    """One row: numeric columns at the reference maximum, categoricals at their rarest reference value."""
    row: dict[str, list] = {}
    for column in encoder.columns:
        series = reference[column.name]
        if isinstance(column, NumericColumn):
            values = numeric_values(series)
            value = np.nanmax(values) if np.isfinite(values).any() else column.hi
            if pd.api.types.is_integer_dtype(series):
                value = int(round(value))
            row[column.name] = [value]
        else:
            counts = series.dropna().value_counts(sort=False)
            rarest = counts.index[int(np.argmin(counts.to_numpy()))] if len(counts) else column.categories[0]
            row[column.name] = [rarest]
    crafted = pd.DataFrame(row, columns=list(reference.columns))
    return crafted.astype(reference.dtypes.to_dict(), errors="ignore")


def isolated_records(frame: pd.DataFrame, encoder: AttackEncoder, k: int, rng: np.random.Generator) -> list[int]:
    """Positions (iloc) of the k records with the largest mean distance to their nearest neighbours."""
    if k <= 0 or len(frame) == 0:
        return []
    candidates = sample_rows(frame.reset_index(drop=True), ISOLATION_MAX_ROWS, rng)
    positions = candidates.index.to_numpy()
    return [int(positions[i]) for i in most_isolated(encoder.transform(candidates), k)]
