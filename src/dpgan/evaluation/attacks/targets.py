"""Target choice shared by every data kind's shadow-model attack: the most isolated records.

Stadler et al. found that outliers carry most of the risk: the real targets are the records
farthest from their nearest neighbours (`most_isolated`, on any data kind's feature rows).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

ISOLATION_NEIGHBOURS = 5


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
