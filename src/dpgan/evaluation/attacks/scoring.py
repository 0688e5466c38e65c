"""Scoring membership guesses: ROC curve and AUC, top-n precision, TPR − FPR.

Every attack that ranks records (or synthetic sets) by a membership score reports the same
fields, so the report can draw one kind of plot for all of them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score, roc_curve

MAX_ROC_POINTS = 201  # enough for a smooth plot, small enough for metrics.json


def roc_summary(labels: np.ndarray, scores: np.ndarray) -> dict[str, Any]:
    """AUC and a thinned ROC curve for scores where higher means "member" (label 1).

    With a single class present the curve is undefined: AUC is None and the curve empty.
    """
    labels = np.asarray(labels, dtype=int)
    scores = np.asarray(scores, dtype=np.float64)
    if len(np.unique(labels)) < 2:
        return {"auc": None, "roc": {"fpr": [], "tpr": []}}
    fpr, tpr, _ = roc_curve(labels, scores)
    if len(fpr) > MAX_ROC_POINTS:
        keep = np.unique(np.round(np.linspace(0, len(fpr) - 1, MAX_ROC_POINTS)).astype(int))
        fpr, tpr = fpr[keep], tpr[keep]
    return {
        "auc": float(roc_auc_score(labels, scores)),
        "roc": {"fpr": [round(float(v), 6) for v in fpr], "tpr": [round(float(v), 6) for v in tpr]},
        "max_advantage": float(np.max(tpr - fpr)),  # best TPR − FPR over thresholds (an optimistic attacker)
    }


def top_n_precision(labels: np.ndarray, scores: np.ndarray, n: int | None = None) -> float | None:
    """LOGAN's metric: share of members among the n highest-scored records (n: number of members).

    Ties at the cut are shared out in proportion, so the result does not depend on the sort order.
    """
    labels = np.asarray(labels, dtype=int)
    scores = np.asarray(scores, dtype=np.float64)
    n = int(labels.sum()) if n is None else n
    if n <= 0 or len(labels) == 0:
        return None
    n = min(n, len(labels))
    order = np.argsort(-scores, kind="stable")
    cut = scores[order[n - 1]]
    above = scores > cut
    at = scores == cut
    take_at = n - int(above.sum())
    members = labels[above].sum() + take_at * labels[at].mean()
    return float(members / n)


def membership_scores(member_scores: np.ndarray, non_member_scores: np.ndarray) -> dict[str, Any]:
    """ROC, AUC and top-n precision of a record-level attack (members first, label 1)."""
    member_scores = np.asarray(member_scores, dtype=np.float64)
    non_member_scores = np.asarray(non_member_scores, dtype=np.float64)
    labels = np.concatenate([np.ones(len(member_scores), int), np.zeros(len(non_member_scores), int)])
    scores = np.concatenate([member_scores, non_member_scores])
    out = roc_summary(labels, scores)
    out["top_n_precision"] = top_n_precision(labels, scores)
    out["members"], out["non_members"] = len(member_scores), len(non_member_scores)
    return out


def finite_or_none(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)
