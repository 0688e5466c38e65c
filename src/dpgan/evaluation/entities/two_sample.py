"""Could a classifier tell real entities from synthetic ones? A two-sample test on entity summaries
(summaries.py: the parent row beside its events' aggregates), after the series' discriminative score
(dpgan.evaluation.sequences.two_sample).

Held-out real entities and synthetic ones, as many of each, are told apart by a random forest, 5-fold
cross-validated so every entity is scored by a model that did not train on it; the result is the ROC
AUC of those scores: 0.5 when the classifier cannot tell them apart, 1 when it always can. Held-out
real entities, not training ones: a synthesizer that copied its training entities would otherwise look
perfect. The features are the tables' TSTR encoding (dpgan.evaluation.tables.ml_efficacy.FeatureEncoder:
one-hot categories, min-max numbers, a missing number as 0) with a missing-value flag per numeric
column, so that an entity without events (its means missing) reads as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from dpgan.evaluation.tables.fidelity import is_numeric_kind
from dpgan.evaluation.tables.ml_efficacy import FeatureEncoder
from dpgan.evaluation.two_sample_forest import FOLDS, cross_validated_forest

MAX_ENTITIES_PER_SIDE = 5000  # the forest's cost grows with the entities; the AUC's noise shrinks slowly


def summary_features(frames: list[pd.DataFrame], kinds: Mapping[str, str], reference: pd.DataFrame) -> list[np.ndarray]:
    """Each frame's summaries as one matrix, one encoding for all (ranges and categories from
    `reference` and the frames), with a 0/1 column per numeric summary saying it is missing."""
    names = list(kinds)
    encoder = FeatureEncoder(kinds, names).fit(reference, pd.concat(frames, ignore_index=True))
    numeric = [n for n in names if is_numeric_kind(kinds[n])]
    return [np.hstack([encoder.transform(f), f[numeric].isna().to_numpy(dtype=np.float64)]) for f in frames]


def two_sample_auc(
    real: pd.DataFrame, synthetic: pd.DataFrame, kinds: Mapping[str, str], *, seed: int = 0, n_jobs: int = 1
) -> dict[str, Any]:
    """The cross-validated ROC AUC of telling `real` summaries (held-out) from `synthetic` ones, the
    entities per side, and None where either side has fewer than FOLDS entities."""
    rng = np.random.default_rng(seed)
    size = min(len(real), len(synthetic), MAX_ENTITIES_PER_SIDE)
    if size < FOLDS:
        return {"auc": None, "entities_per_side": size}
    pick = lambda f: f.iloc[np.sort(rng.choice(len(f), size, replace=False))].reset_index(drop=True)  # noqa: E731
    sides = [pick(real), pick(synthetic)]
    features = np.vstack(summary_features(sides, kinds, sides[0]))
    truth = np.r_[np.ones(size), np.zeros(size)]
    scores = cross_validated_forest(features, truth, seed=seed, n_jobs=n_jobs, probabilities=True)
    return {"auc": float(roc_auc_score(truth, scores)), "entities_per_side": size}


__all__ = ["summary_features", "two_sample_auc"]
