"""Membership inference on whole entities: is a real entity closer to the synthetic ones when it was
in the training set? The tables' distance-to-closest-record attack (dpgan.evaluation.tables.attacks.dcr)
on entity summaries (summaries.py) instead of rows.

Members are training entities, non-members held-out ones, as many of each; every one is scored by its
Euclidean distance to the nearest synthetic entity (one-hot categories, min-max numbers, the tables'
attack encoding, bounds read off the real summaries: an attack is an evaluation, not a release), and
nearer means "member". Reported: the ROC AUC (0.5: distance tells nothing), the best TPR − FPR, and the
true-positive rate at low false-positive rates (1 % and 10 %), the regime where a membership attack
matters (Carlini et al., "Membership inference attacks from first principles"). Also the tables' DCR
share: of the synthetic entities, the share nearer to a training entity than to a held-out one (0.5:
no preference; towards 1: training entities copied). A heuristic alarm: an AUC near 0.5 certifies no ε.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import roc_curve

from dpgan.evaluation.attacks.scoring import membership_scores
from dpgan.evaluation.tables.attacks.dcr import nearest_distances
from dpgan.evaluation.tables.attacks.encoding import AttackEncoder

MAX_ENTITIES = 5000  # per side: members, non-members, and the synthetic entities searched (20,000)
MAX_SYNTHETIC = 20_000
LOW_FPR = (0.01, 0.1)


def tpr_at_fpr(member_scores: np.ndarray, non_member_scores: np.ndarray, fpr: float) -> float | None:
    """The largest true-positive rate among thresholds whose false-positive rate is at most `fpr`."""
    if len(member_scores) == 0 or len(non_member_scores) == 0:
        return None
    labels = np.r_[np.ones(len(member_scores)), np.zeros(len(non_member_scores))]
    rates, tprs, _ = roc_curve(labels, np.r_[member_scores, non_member_scores])
    return float(tprs[rates <= fpr].max())


def entity_membership(
    train: pd.DataFrame, test: pd.DataFrame, synthetic: pd.DataFrame, *, seed: int = 0
) -> dict[str, Any]:
    """The attack of the module docstring on summaries (the same columns on every side)."""
    rng = np.random.default_rng(seed)
    n = min(len(train), len(test), MAX_ENTITIES)
    if n == 0 or len(synthetic) == 0:
        return {"auc": None, "members": n, "non_members": n, "note": "no entities to compare"}

    def draw(frame: pd.DataFrame, size: int) -> pd.DataFrame:
        return frame.iloc[np.sort(rng.choice(len(frame), min(size, len(frame)), replace=False))]

    members, non_members = draw(train, n), draw(test, n)
    encoder = AttackEncoder.build([members, non_members])
    member, non_member = encoder.transform(members), encoder.transform(non_members)
    synthetic_rows = encoder.transform(draw(synthetic, MAX_SYNTHETIC))
    member_scores = -nearest_distances(member, synthetic_rows)  # nearer: more likely a member
    non_member_scores = -nearest_distances(non_member, synthetic_rows)
    out = membership_scores(member_scores, non_member_scores)
    for rate in LOW_FPR:
        out[f"tpr_at_fpr_{rate:g}"] = tpr_at_fpr(member_scores, non_member_scores, rate)
    queries = synthetic_rows[rng.permutation(len(synthetic_rows))[:MAX_ENTITIES]]
    to_train, to_test = nearest_distances(queries, member), nearest_distances(queries, non_member)
    out["share_closer_to_train"] = float(np.mean(to_train < to_test) + np.mean(to_train == to_test) / 2)
    return out


__all__ = ["entity_membership", "tpr_at_fpr"]
