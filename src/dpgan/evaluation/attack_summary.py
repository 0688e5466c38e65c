"""The attacks' results as a few rows with 95% confidence intervals, for the report.

metrics.json keeps every number the attacks produce; a reader needs the handful that answer
"did this attack learn anything?", with an interval that shows how much the answer could move
with another draw. Intervals:
- rates (TPR, FPR, accuracies, shares): two-sided Clopper–Pearson; a difference of two rates gets
  the conservative interval [low₁ − high₂, high₁ − low₂];
- ROC AUC: Hanley and McNeil (1982), AUC ± 1.96·SE from the numbers of members and non-members.
The membership attack's unit is a training run: its synthetic sets from one fit are not
independent, so its intervals count test fits, not synthetic sets. With the default handful of
fits the interval is wide: one shadow set or test fit per class gives a noisy advantage.
"""

from __future__ import annotations

import math
from typing import Any

from dpgan.evaluation.audit.statistics import clopper_pearson_interval

Z95 = 1.959964


def auc_interval(auc: float | None, positives: int | None, negatives: int | None) -> tuple[float, float] | None:
    """Hanley–McNeil 95% interval of an ROC AUC, clipped to [0, 1]."""
    if auc is None or not positives or not negatives:
        return None
    q1, q2 = auc / (2.0 - auc), 2.0 * auc * auc / (1.0 + auc)
    variance = (auc * (1.0 - auc) + (positives - 1) * (q1 - auc * auc) + (negatives - 1) * (q2 - auc * auc)) / (
        positives * negatives
    )
    half = Z95 * math.sqrt(max(variance, 0.0))
    return max(0.0, auc - half), min(1.0, auc + half)


def rate_interval(rate: float | None, trials: int | None) -> tuple[float, float] | None:
    if rate is None or not trials:
        return None
    return clopper_pearson_interval(int(round(rate * trials)), int(trials))


def difference_interval(
    first: tuple[float, float] | None, second: tuple[float, float] | None
) -> tuple[float, float] | None:
    """A conservative interval for rate₁ − rate₂ from the two rates' intervals."""
    if first is None or second is None:
        return None
    return first[0] - second[1], first[1] - second[0]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _row(
    attack: str, metric: str, value: Any, interval: tuple[float, float] | None, no_leak: str, basis: str
) -> dict[str, Any]:
    return {
        "attack": attack,
        "metric": metric,
        "value": _number(value),
        "ci_low": None if interval is None else interval[0],
        "ci_high": None if interval is None else interval[1],
        "no_leak": no_leak,
        "basis": basis,
    }


def _membership(result: dict[str, Any]) -> list[dict[str, Any]]:
    settings = result.get("settings") or {}
    runs = (settings.get("targets") or 0) * (settings.get("test_runs") or 0) or None
    basis = f"{runs} test fits per class" if runs else "test fits (count unknown)"
    tpr, fpr = rate_interval(_number(result.get("tpr")), runs), rate_interval(_number(result.get("fpr")), runs)
    name = "membership (shadow models)"
    return [
        _row(name, "advantage TPR − FPR", result.get("advantage"), difference_interval(tpr, fpr), "0", basis),
        _row(name, "ROC AUC", result.get("auc"), auc_interval(_number(result.get("auc")), runs, runs), "0.5", basis),
    ]


def _record_attack(name: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    members, non_members = result.get("members"), result.get("non_members")
    basis = f"{members} members, {non_members} non-members" if members and non_members else ""
    auc = _number(result.get("auc"))
    return [_row(name, "ROC AUC", auc, auc_interval(auc, members, non_members), "0.5", basis)]


def _logan(result: dict[str, Any]) -> list[dict[str, Any]]:
    rows = _record_attack("LOGAN (white-box critic)", result)
    members = result.get("members")
    precision = _number(result.get("top_n_precision"))
    rows.append(
        _row(
            "LOGAN (white-box critic)",
            "top-n precision",
            precision,
            rate_interval(precision, members),
            "0.5",
            rows[0]["basis"],
        )
    )
    return rows


def _dcr(result: dict[str, Any]) -> list[dict[str, Any]]:
    rows_info = result.get("rows") or {}
    searched = rows_info.get("synthetic")
    share = _number(result.get("share_closer_to_train"))
    no_leak = f"{0.5:g} (a copy: {_number(result.get('share_if_copied')) or 1.0:.2f})"
    rows = [
        _row(
            "distance to closest record",
            "share of synthetic rows closer to train",
            share,
            rate_interval(share, searched),
            no_leak,
            f"{searched} synthetic rows" if searched else "",
        )
    ]
    return rows + _record_attack("distance to closest record", result)


def _attribute(result: dict[str, Any]) -> list[dict[str, Any]]:
    synthetic = result.get("synthetic") or {}
    counts = result.get("rows") or {}
    members, non_members = synthetic.get("members") or {}, synthetic.get("non_members") or {}
    first = rate_interval(_number(members.get("accuracy")), counts.get("members"))
    second = rate_interval(_number(non_members.get("accuracy")), counts.get("non_members"))
    gap = None
    if _number(members.get("accuracy")) is not None and _number(non_members.get("accuracy")) is not None:
        gap = members["accuracy"] - non_members["accuracy"]
    name = f"attribute inference ({result['sensitive']})" if result.get("sensitive") else "attribute inference"
    basis = f"{counts.get('members')} members, {counts.get('non_members')} non-members" if counts else ""
    rows = [_row(name, "accuracy gap, members − non-members", gap, difference_interval(first, second), "0", basis)]
    return rows + _record_attack(name, result)


SUMMARIES = {"membership": _membership, "logan": _logan, "dcr": _dcr, "attribute": _attribute}


def attack_rows(attacks: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per headline number of every attack that ran; skipped attacks get one row with
    the reason (in `basis`)."""
    rows: list[dict[str, Any]] = []
    for name, result in attacks.items():
        if not isinstance(result, dict):
            continue
        if result.get("skipped"):
            rows.append(_row(name, "skipped", None, None, "", str(result.get("reason", ""))))
            continue
        summary = SUMMARIES.get(name)
        found = summary(result) if summary is not None else _record_attack(name, result)
        rows += [row for row in found if row["value"] is not None]
    return rows
