"""Target records for the shadow-model attack: the records most likely to leak.

Stadler et al. found that outliers carry most of the risk, and evaluated a crafted outlier
(`craft_outlier`: every numeric column at its maximum, every categorical at its rarest value)
next to real records. Here the crafted record is built from the attacker's reference data, and
the real targets are the training records farthest from their nearest neighbours.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.spatial.distance import cdist

from dpgan.evaluation.attacks.dcr import sample_rows
from dpgan.evaluation.attacks.encoding import AttackEncoder, NumericColumn, numeric_values

ISOLATION_NEIGHBOURS = 5
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


def most_isolated(X: np.ndarray, k: int) -> list[int]:
    """Rows of X (n, d) with the largest mean Euclidean distance to their ISOLATION_NEIGHBOURS nearest
    other rows, most isolated first (ties by position): the outlier rule of every data kind."""
    if k <= 0 or len(X) == 0:
        return []
    neighbours = min(ISOLATION_NEIGHBOURS, len(X) - 1)
    if neighbours <= 0:
        return [0]
    scores = np.empty(len(X))
    for start in range(0, len(X), 512):
        d = cdist(X[start : start + 512], X)
        d.sort(axis=1)
        scores[start : start + 512] = d[:, 1 : neighbours + 1].mean(axis=1)  # column 0 is the record itself
    return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]
