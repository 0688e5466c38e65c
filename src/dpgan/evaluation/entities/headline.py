"""The entity kind's headline quality score (dpgan.evaluation.headline: the mean of a few components
in [0, 1], each computed for the synthetic entities and for real held-out ones, the ceiling).

Components: events per entity (1 − the KS distance to the real training entities; real: the held-out
entities'), marginals (1 − the mean per-column distance over both tables, JSD or range-scaled WD,
capped at 1; real: the held-out tables against the training ones), realism (1 − 2·|AUC − 0.5| of the
two-sample test on entity summaries, so 1 when a classifier cannot tell them from real held-out
entities; real: held-out against training entities), and utility (the parent-level TSTR's mean ROC
AUC, (AUC − 0.5) / 0.5; real: TRTR; R² for a numeric target).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpgan.evaluation.headline import _clipped, _marginals, auc_score, component, distance_score, headline


def realism_score(auc: float | None) -> float | None:
    """1 − 2·|AUC − 0.5|: 1 when the classifier is at chance, 0 when it always tells them apart."""
    return None if auc is None else distance_score(2.0 * abs(float(auc) - 0.5))


def _both_tables(fidelity: Mapping[str, Any]) -> float | None:
    """The marginals score over the parents' and the events' columns together."""
    columns = {f"{table}.{name}": entry for table in ("parents", "events")
               for name, entry in (fidelity[table].get("per_column") or {}).items()}  # fmt: skip
    return _marginals({"per_column": columns})


def entity_headline(metrics: Mapping[str, Any], heldout: Mapping[str, Any]) -> dict[str, Any] | None:
    """From `evaluate_entities`' metrics and `heldout`: {"marginals": the held-out tables' fidelity
    against the training ones, "two_sample_auc": held-out against training entities}."""
    counts = metrics["events_per_entity"]
    mean = metrics["tstr"].get("mean") or {}
    if "roc_auc" in mean:
        utility = (auc_score(mean["roc_auc"].get("tstr")), auc_score(mean["roc_auc"].get("trtr")))
        how = "the parent-level TSTR's mean ROC AUC over the models (real: TRTR); (AUC − 0.5) / 0.5"
    else:
        utility = (_clipped(mean.get("r2", {}).get("tstr")), _clipped(mean.get("r2", {}).get("trtr")))
        how = "the parent-level TSTR's mean R² over the models (real: TRTR), clipped to [0, 1]"
    return headline([
        component("events per entity", distance_score(counts["ks_train"]), distance_score(counts["ks_floor"]),
                  "1 − KS distance of events per entity to the real training entities'"),
        component("marginals", _both_tables(metrics["marginals"]), _both_tables(heldout["marginals"]),
                  "1 − mean per-column JSD or WD (real range) over both tables, each capped at 1"),
        component("realism", realism_score(metrics["two_sample"]["auc"]), realism_score(heldout["two_sample_auc"]),
                  "1 − 2·|AUC − 0.5| of the two-sample test on entity summaries"),
        component("utility (TSTR)", *utility, how),
    ])  # fmt: skip


__all__ = ["entity_headline", "realism_score"]
