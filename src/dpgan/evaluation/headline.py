"""One headline quality score per data kind, next to the same score for real held-out data.

A report opens with one number a person can compare across fits: the mean of a few component
scores, each a measure the evaluation already makes, mapped onto [0, 1] with 1 the best. Every
component is computed twice by the same formula: for the synthetic data and for real data the
model never saw (the held-out test set, or the real training data where a model is trained and
scored on held-out data), so the real score is what real data of this size reaches: the ceiling
(the floor, for a distance). The headline is comparable across fits of one data set, not across
data sets or kinds.

- Tables: utility (the mean ROC AUC of the TSTR models, (AUC − 0.5) / 0.5; R² for a numeric
  target), marginals (1 − the mean per-column distance: Jensen–Shannon divergence, or Wasserstein
  distance on the real range, capped at 1) and associations (1 − half the RMS difference of the
  association matrices' off-diagonal entries, which lie in [−1, 1]). Real: TRTR, and the held-out
  rows against the training rows.
- Series (assembled in dpgan.evaluation.sequences.metrics): shape (the held-out real series' mean DTW
  distance to the nearest training series over the synthetic ones', capped at 1), the mean profile
  (1 − its MAE over the real values' standard deviation, capped), autocorrelation (1 − its MAE,
  capped) and, with labels, the label's TSTR AUC as for tables. Real: held-out series against the
  training series.
- Images: students (the mean macro AuROC of the students, (AuROC − 0.5) / 0.5) and, when it was
  measured, realism (the Fréchet distance's real floor over the synthetic distance, capped at 1).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

METHOD = (
    "The headline is the mean of the component scores in the table; each maps a measure of this report onto [0, 1] "
    "(1 is best) and is computed the same way for real data the model never saw, so the real column is what "
    "real data reaches. Compare headlines of fits of the same data, not across data sets."
)


def auc_score(auc: float | None) -> float | None:
    """(AUC − 0.5) / 0.5 in [0, 1]: 0 is chance (or worse), 1 a perfect ranking."""
    return None if not _finite(auc) else _unit(2.0 * (float(auc) - 0.5))  # type: ignore[arg-type]


def distance_score(distance: float | None, scale: float = 1.0) -> float | None:
    """1 − distance / scale in [0, 1]: 1 for identical, 0 for a distance of `scale` or more."""
    if not _finite(distance) or not scale > 0:
        return None
    return _unit(1.0 - float(distance) / scale)  # type: ignore[arg-type]


def ratio_score(floor: float | None, distance: float | None) -> float | None:
    """floor / distance in [0, 1]: 1 when the synthetic distance is at the real floor (or below)."""
    if not (_finite(floor) and _finite(distance)):
        return None
    if float(distance) <= 0.0:  # type: ignore[arg-type]
        return 1.0
    return _unit(float(floor) / float(distance))  # type: ignore[arg-type]


def component(name: str, synthetic: float | None, real: float | None, how: str) -> dict[str, Any]:
    return {"name": name, "synthetic": synthetic, "real": real, "how": how}


def headline(components: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """{"score", "real", "components", "method"}: the means over the components both sides have;
    None when no component could be computed."""
    usable = [c for c in components if c["synthetic"] is not None and c["real"] is not None]
    if not usable:
        return None
    return {
        "score": float(np.mean([c["synthetic"] for c in usable])),
        "real": float(np.mean([c["real"] for c in usable])),
        "components": usable,
        "method": METHOD,
    }


def headline_line(metrics: Mapping[str, Any]) -> str:
    """The headline as the command line prints it after an evaluation."""
    found = metrics.get("headline")
    if not found:
        return "headline quality: n/a (no component could be computed)"
    return f"headline quality {found['score']:.2f} (real held-out data {found['real']:.2f}; 0 to 1, higher is better)"


# ------------------------------------------------------------------------------------ per kind


def table_headline(metrics: Mapping[str, Any], heldout_fidelity: Mapping[str, Any]) -> dict[str, Any] | None:
    """Tables: from `evaluate`'s metrics and the fidelity of the held-out rows to the training rows."""
    mean = (metrics.get("utility_summary") or {}).get("mean") or {}
    if "roc_auc" in mean:
        utility = component(
            "utility (TSTR)",
            auc_score(mean["roc_auc"].get("tstr")),
            auc_score(mean["roc_auc"].get("trtr")),
            "mean ROC AUC over the models trained on synthetic (real: on real) rows, tested on real test rows; "
            "(AUC − 0.5) / 0.5",
        )
    else:
        r2 = mean.get("r2") or {}
        utility = component(
            "utility (TSTR)",
            _clipped(r2.get("tstr")),
            _clipped(r2.get("trtr")),
            "mean R² over the models trained on synthetic (real: on real) rows, tested on real test rows; below 0 is 0",
        )
    fidelity = metrics.get("fidelity") or {}
    return headline(
        [
            utility,
            component(
                "marginals",
                _marginals(fidelity),
                _marginals(heldout_fidelity),
                "1 − mean per-column distance to the training rows (Jensen–Shannon divergence; Wasserstein "
                "distance on the real range, capped at 1); real: the test rows",
            ),
            component(
                "associations",
                _associations(fidelity),
                _associations(heldout_fidelity),
                "1 − RMS difference of the pairwise association matrices / 2 (entries in [−1, 1]); real: the test rows",
            ),
        ]
    )


def image_headline(metrics: Mapping[str, Any]) -> dict[str, Any] | None:
    """Images: from `evaluate_images`' metrics."""
    students = metrics.get("students") or {}
    synthetic, real = students.get("synthetic") or {}, students.get("real") or {}
    names = [n for n in synthetic if n in real]
    parts = [
        component(
            "students",
            _mean(auc_score(synthetic[n].get("auroc")) for n in names),
            _mean(auc_score(real[n].get("auroc")) for n in names),
            "mean macro AuROC of the students trained on synthetic (real: on real) images, tested on held-out "
            "images; (AuROC − 0.5) / 0.5",
        )
    ]
    frechet = metrics.get("frechet")
    if frechet:
        parts.append(
            component(
                "realism (feature distance)",
                ratio_score(frechet.get("heldout"), frechet.get("synthetic")),
                1.0,
                "the feature distance's real floor over the synthetic distance (capped at 1; see Realism); real: 1",
            )
        )
    return headline(parts)


# ------------------------------------------------------------------------------------ helpers


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(float(value))


def _unit(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


def _clipped(value: float | None) -> float | None:
    return _unit(float(value)) if _finite(value) else None  # type: ignore[arg-type]


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def _marginals(fidelity: Mapping[str, Any]) -> float | None:
    distances = []
    for entry in (fidelity.get("per_column") or {}).values():
        value = entry.get("jsd") if entry.get("jsd") is not None else entry.get("wd")
        if _finite(value):
            distances.append(min(float(value), 1.0))
    return distance_score(float(np.mean(distances))) if distances else None


def _associations(fidelity: Mapping[str, Any]) -> float | None:
    real, other = fidelity.get("association_real"), fidelity.get("association_synthetic")
    if not real or not other:
        return None
    a, b = np.asarray(real["matrix"], dtype=float), np.asarray(other["matrix"], dtype=float)
    k = a.shape[0]
    if k < 2 or a.shape != b.shape:
        return None
    off = ~np.eye(k, dtype=bool)
    rms = float(np.sqrt(np.mean((a - b)[off] ** 2)))
    return distance_score(rms, 2.0)


__all__ = [
    "METHOD",
    "auc_score",
    "component",
    "distance_score",
    "headline",
    "image_headline",
    "ratio_score",
    "table_headline",
]
