"""Distance to closest record (black box): are synthetic rows closer to training rows than to unseen ones?

Each synthetic row's Euclidean distance (one-hot categoricals, min-max numerics) to its nearest
real training row is compared with its distance to the nearest row of an equal-size holdout. A
generator that learned the distribution and not the rows is as close to one as to the other
(share ≈ 0.5); one that copies training rows is closer to them (share → 1). Read as a membership
attack (GAN-Leaks' full black box), every real record is scored by its distance to the nearest
synthetic row: training records that were memorised are nearer. A heuristic alarm: passing it says
nothing about DP, and an AUC near 0.5 certifies no ε.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpgan.evaluation.attacks.config import AttackConfig
from dpgan.evaluation.attacks.progress import Progress
from dpgan.evaluation.attacks.scoring import membership_scores
from dpgan.evaluation.tables.attacks.encoding import AttackEncoder

CHUNK_ROWS = 1024  # query rows per distance block: bounded memory (rows × reference rows floats)


def nearest_distances(queries: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Euclidean distance from every query row to its nearest reference row.

    The nearest row is found with one matrix product per block (|x|² − 2x·y + |y|², fast), then its
    distance is recomputed from the difference, so a copied row is at exactly 0, not 1e-8: exact
    zeros and ties decide the DCR share.
    """
    queries = np.asarray(queries, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    ref_norms = np.einsum("ij,ij->i", reference, reference)
    out = np.empty(len(queries))
    for start in range(0, len(queries), CHUNK_ROWS):
        block = queries[start : start + CHUNK_ROWS]
        squared = ref_norms[None, :] - 2.0 * block @ reference.T
        nearest = np.argmin(squared, axis=1)
        out[start : start + len(block)] = np.sqrt(np.sum((block - reference[nearest]) ** 2, axis=1))
    return out


def sample_rows(frame: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    if len(frame) <= n:
        return frame
    return frame.iloc[np.sort(rng.choice(len(frame), n, replace=False))]


def dcr_attack(
    real_train: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    encoder: AttackEncoder,
    config: AttackConfig,
    rng: np.random.Generator,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """DCR share against an equal-size holdout, DCR percentiles, and the DCR membership ROC.

    When the holdout is smaller than the training table, only a share `train_coverage` of the
    training rows can be compared, so even a perfect copy scores 0.5 + coverage/2 (reported as
    `share_if_copied`); the membership ROC has no such dilution (it searches the whole synthetic table).
    """
    n = min(len(real_train), len(holdout), config.dcr_max_rows)
    train = encoder.transform(sample_rows(real_train, n, rng))
    hold = encoder.transform(sample_rows(holdout, n, rng))
    syn_all = encoder.transform(sample_rows(synthetic, config.dcr_max_rows, rng))
    syn = syn_all[rng.permutation(len(syn_all))[: config.dcr_max_queries]]
    queries = min(n, config.dcr_max_queries)
    members, non_members = train[rng.permutation(n)[:queries]], hold[rng.permutation(n)[:queries]]
    stage = "attacks: distance to closest record"
    steps = [(syn, train), (syn, hold), (members, syn_all), (non_members, syn_all)]
    distances = []
    for done, (a, b) in enumerate(steps):
        if progress:
            progress(stage, done, len(steps))
        distances.append(nearest_distances(a, b))
    if progress:
        progress(stage, len(steps), len(steps))
    to_train, to_hold, member_to_syn, non_member_to_syn = distances
    coverage = n / len(real_train)
    closer = float(np.mean(to_train < to_hold))
    ties = float(np.mean(to_train == to_hold))
    out: dict[str, Any] = {
        "skipped": False,
        "share_closer_to_train": closer + ties / 2,  # ties count half: 0.5 is "no preference"
        "share_ties": ties,
        # Copies are searched in the whole tables (rows as bytes), so they are not diluted by sampling.
        "exact_copies_of_train": _share_found(syn, encoder.transform(real_train)),
        "exact_copies_of_holdout": _share_found(syn, encoder.transform(holdout)),
        "dcr_train": _percentiles(to_train),
        "dcr_holdout": _percentiles(to_hold),
        "train_coverage": coverage,
        "share_if_copied": 0.5 + coverage / 2,
        "rows": {"train": n, "holdout": n, "synthetic": len(syn), "synthetic_searched": len(syn_all)},
    }
    # Membership: nearer to a synthetic row means "member", so the score is minus the distance.
    out.update(membership_scores(-member_to_syn, -non_member_to_syn))
    out["note"] = (
        "share_closer_to_train ≈ 0.5 means synthetic rows are no closer to the training rows than to "
        "unseen real rows; near share_if_copied (1 when the holdout is as large as the training table) "
        "means training rows were copied. AUC ≈ 0.5: distance to the synthetic "
        "data does not tell members from non-members. A heuristic alarm, not a DP test."
    )
    return out


def _share_found(queries: np.ndarray, table: np.ndarray) -> float:
    """Share of query rows identical to some row of `table` (same encoding, so equal floats)."""
    rows = {row.tobytes() for row in np.ascontiguousarray(table)}
    return float(np.mean([row.tobytes() in rows for row in np.ascontiguousarray(queries)]))


def _percentiles(distances: np.ndarray) -> dict[str, float]:
    return {
        "p5": float(np.percentile(distances, 5)),
        "median": float(np.median(distances)),
        "mean": float(np.mean(distances)),
    }
