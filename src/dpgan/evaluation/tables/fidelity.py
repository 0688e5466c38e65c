"""Statistical fidelity of synthetic data: per-column marginals and pairwise associations.

The protocol is DTGAN's (and CTAB-GAN's, whose evaluation code DTGAN reuses): Jensen–Shannon
divergence for categorical columns, Wasserstein distance for numeric columns after min-max
scaling by the REAL column's range (so a WD of 0.1 means "a tenth of the real range"), and the
Frobenius norm of the difference between the real and synthetic association matrices.

Associations mix three statistics so that every pair has one, as dython's `associations` does:
Pearson's r for numeric pairs (in [−1, 1]), Theil's U for categorical pairs (in [0, 1],
asymmetric: entry (i, j) is U(i | j), the share of column i's entropy that column j explains),
and the correlation ratio η for categorical–numeric pairs (in [0, 1], symmetric).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import wasserstein_distance

from dpgan.tables.schema.encoding_hints import kind_from_dtype
from dpgan.tables.schema.table import Schema

MISSING = "(missing)"  # missing values form their own category: a synthesizer that drops them is wrong too


def column_kinds(frame: pd.DataFrame, schema: Schema | None = None) -> dict[str, str]:
    """Each column's kind, from the public schema when given, else from the dtype."""
    kinds = {}
    for name in frame.columns:
        if schema is not None and name in schema.names:
            kinds[name] = schema[name].kind
        else:
            kinds[name] = kind_from_dtype(frame[name])
    return kinds


def is_numeric_kind(kind: str) -> bool:
    return kind in ("continuous", "integer")


def as_labels(series: pd.Series) -> pd.Series:
    """Categorical values as strings, so 1 and "1" (CSV round trips) are the same category."""
    return series.astype(object).where(series.notna(), MISSING).astype(str)


def _as_float(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)


def js_divergence(real: pd.Series, synthetic: pd.Series) -> float:
    """Jensen–Shannon divergence in bits (base 2, so in [0, 1]) over the union of categories."""
    p = as_labels(real).value_counts(normalize=True)
    q = as_labels(synthetic).value_counts(normalize=True)
    union = p.index.union(q.index)
    p = p.reindex(union, fill_value=0.0).to_numpy()
    q = q.reindex(union, fill_value=0.0).to_numpy()
    m = 0.5 * (p + q)

    def kl(a: np.ndarray, b: np.ndarray) -> float:
        nz = a > 0
        return float(np.sum(a[nz] * np.log2(a[nz] / b[nz])))

    return max(0.0, 0.5 * kl(p, m) + 0.5 * kl(q, m))


def scaled_wasserstein(real: pd.Series, synthetic: pd.Series) -> float | None:
    """1-Wasserstein distance after scaling both columns by the real column's min-max range.

    Missing values are dropped (their share is compared by `missing_rate_diff`); a constant real
    column is scaled by 1. None when either side has no values.
    """
    r, s = _as_float(real), _as_float(synthetic)
    r, s = r[np.isfinite(r)], s[np.isfinite(s)]
    if len(r) == 0 or len(s) == 0:
        return None
    lo, hi = float(r.min()), float(r.max())
    span = hi - lo if hi > lo else 1.0
    return float(wasserstein_distance((r - lo) / span, (s - lo) / span))


def theils_u(x: pd.Series, y: pd.Series) -> float:
    """U(x | y) = (H(x) − H(x | y)) / H(x): how much knowing y tells about x. 1 when x is constant."""
    xc, _ = pd.factorize(as_labels(x))
    yc, _ = pd.factorize(as_labels(y))
    n = len(xc)
    joint = np.bincount(xc * (yc.max() + 1) + yc, minlength=(xc.max() + 1) * (yc.max() + 1))
    joint = joint.reshape(xc.max() + 1, yc.max() + 1) / n
    px, py = joint.sum(axis=1), joint.sum(axis=0)
    h_x = -float(np.sum(px[px > 0] * np.log(px[px > 0])))
    if h_x == 0.0:
        return 1.0
    nz = joint > 0
    h_x_given_y = -float(np.sum(joint[nz] * np.log(joint[nz] / np.broadcast_to(py, joint.shape)[nz])))
    return float(np.clip((h_x - h_x_given_y) / h_x, 0.0, 1.0))


def correlation_ratio(categories: pd.Series, values: pd.Series) -> float:
    """η: the share of the numeric column's standard deviation explained by the categories."""
    v = _as_float(values)
    keep = np.isfinite(v)
    codes, _ = pd.factorize(as_labels(categories)[keep])
    v = v[keep]
    if len(v) == 0:
        return 0.0
    counts = np.bincount(codes)
    means = np.bincount(codes, weights=v) / np.maximum(counts, 1)
    total = float(np.sum((v - v.mean()) ** 2))
    if total == 0.0:
        return 0.0
    between = float(np.sum(counts * (means - v.mean()) ** 2))
    return float(np.sqrt(np.clip(between / total, 0.0, 1.0)))


def pearson(x: pd.Series, y: pd.Series) -> float:
    """Pearson's r on rows where both are present; 0 when either column is constant."""
    a, b = _as_float(x), _as_float(y)
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    if len(a) < 2 or a.std() == 0.0 or b.std() == 0.0:
        return 0.0
    return float(np.clip(np.corrcoef(a, b)[0, 1], -1.0, 1.0))


def association_matrix(frame: pd.DataFrame, kinds: Mapping[str, str]) -> np.ndarray:
    """Square matrix over `frame`'s columns: Pearson, Theil's U (row | column) or η by pair kinds."""
    names = list(frame.columns)
    out = np.eye(len(names))
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                continue
            num_a, num_b = is_numeric_kind(kinds[a]), is_numeric_kind(kinds[b])
            if num_a and num_b:
                out[i, j] = pearson(frame[a], frame[b]) if i < j else out[j, i]
            elif not num_a and not num_b:
                out[i, j] = theils_u(frame[a], frame[b])
            elif i < j:
                out[i, j] = correlation_ratio(frame[b], frame[a]) if num_a else correlation_ratio(frame[a], frame[b])
            else:
                out[i, j] = out[j, i]
    return out


def fidelity(real: pd.DataFrame, synthetic: pd.DataFrame, kinds: Mapping[str, str]) -> dict[str, Any]:
    """Per-column divergences, their means, and the association matrices and their difference.

    `jsd` is the divergence (the issue's metric); `js_distance` = √jsd is what scipy's
    `jensenshannon` returns and what CTAB-GAN/DTGAN's evaluation code averages, kept so that
    benchmark numbers can be compared with theirs.
    """
    per_column: dict[str, dict[str, Any]] = {}
    for name in real.columns:
        kind = kinds[name]
        entry: dict[str, Any] = {"kind": kind}
        if is_numeric_kind(kind):
            entry["wd"] = scaled_wasserstein(real[name], synthetic[name])
        else:
            jsd = js_divergence(real[name], synthetic[name])
            entry["jsd"], entry["js_distance"] = jsd, float(np.sqrt(jsd))
        entry["missing_rate_diff"] = float(real[name].isna().mean() - synthetic[name].isna().mean())
        per_column[name] = entry

    def mean_of(key: str) -> float | None:
        values = [e[key] for e in per_column.values() if e.get(key) is not None]
        return float(np.mean(values)) if values else None

    real_assoc = association_matrix(real, kinds)
    synth_assoc = association_matrix(synthetic[list(real.columns)], kinds)
    return {
        "jsd_mean": mean_of("jsd"),
        "js_distance_mean": mean_of("js_distance"),
        "wd_mean": mean_of("wd"),
        "association_diff": float(np.linalg.norm(real_assoc - synth_assoc)),
        "per_column": per_column,
        "association_real": {"columns": list(real.columns), "matrix": real_assoc.tolist()},
        "association_synthetic": {"columns": list(real.columns), "matrix": synth_assoc.tolist()},
        "association_kinds": "Pearson r (numeric pairs), Theil's U(row | column) (categorical pairs), η (mixed)",
    }


def discretised(frame: pd.DataFrame, schema: Schema, bins: int = 10) -> pd.DataFrame:
    """Each column as cell labels: a numeric column cut into `bins` equal-width bins of its PUBLIC
    bounds (values outside fall into the end bins), a categorical one as its labels; a missing
    value is its own cell. The domain comes from the schema, never from the rows."""
    out = {}
    for name in frame.columns:
        spec = schema[name]
        if spec.is_numeric:
            values = _as_float(frame[name])
            low, high = float(spec.min), float(spec.max)
            width = (high - low) / bins if high > low else 1.0
            codes = np.clip(np.floor((values - low) / width), 0, bins - 1)
            out[name] = pd.Series(np.where(np.isnan(values), -1, codes).astype(int).astype(str), index=frame.index)
        else:
            out[name] = as_labels(frame[name])
    return pd.DataFrame(out, index=frame.index)


def two_way_marginal_error(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema, bins: int = 10) -> float:
    """Mean over all pairs of columns of the total variation distance between the real and the
    synthetic 2-way tables (numerics in `bins` public bins, `discretised`): 0 for the same joint
    of every pair, 1 for disjoint supports. The workload MST and AIM fit, so peers are compared on
    their own ground."""
    return marginal_error(real, synthetic, schema, way=2, bins=bins)


def marginal_error(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    schema: Schema,
    *,
    way: int,
    bins: int = 10,
    max_sets: int | None = None,
    seed: int = 0,
) -> float:
    """Mean over sets of `way` columns of the total variation distance between the real and the
    synthetic `way`-way tables (numerics in `bins` public bins, `discretised`). Every set when
    `max_sets` is None or at least their number; else `max_sets` sets drawn without replacement by
    `seed` (the same sets for every synthesizer scored on the same columns, so scores compare).
    3-way is AIM's workload: a model of 2-way tables alone can be right on every pair and wrong on
    the triples."""
    columns = [c for c in real.columns if c in synthetic.columns]
    sets = list(combinations(columns, way))
    if max_sets is not None and len(sets) > max_sets:
        picked = np.random.default_rng(seed).choice(len(sets), size=max_sets, replace=False)
        sets = [sets[i] for i in sorted(picked)]
    a, b = discretised(real[columns], schema, bins), discretised(synthetic[columns], schema, bins)
    errors = []
    for chosen in sets:
        p = _joined(a, chosen).value_counts(normalize=True)
        q = _joined(b, chosen).value_counts(normalize=True)
        union = p.index.union(q.index)
        gap = p.reindex(union, fill_value=0.0).to_numpy() - q.reindex(union, fill_value=0.0).to_numpy()
        errors.append(0.5 * float(np.abs(gap).sum()))
    return float(np.mean(errors)) if errors else 0.0


def _joined(cells: pd.DataFrame, columns: tuple[str, ...]) -> pd.Series:
    """One cell key per row for the chosen columns (unit separator between the parts)."""
    joined = cells[columns[0]]
    for name in columns[1:]:
        joined = joined + "\x1f" + cells[name]
    return joined
