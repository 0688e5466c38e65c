"""Events per entity and each table's marginals, synthetic against real.

Events per entity: the two-sample Kolmogorov–Smirnov distance between the synthetic entities' counts
and the real ones' (0: the same distribution; 1: disjoint), against the real training entities and
against the held-out ones, with the floor (held-out against training: what sampling alone gives), and
each side's histogram in a few numbers (mean, quartiles, the share with no event and with more than k).

Marginals: the tables' fidelity measures (dpgan.evaluation.tables.fidelity: JSD for a categorical
column, WD scaled by the real range for a numeric one, the association matrices), for the parents and
for the events, the time column among the events' as a number.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

from dpgan.entities.schema import EntitySchema
from dpgan.evaluation.entities.frames import EntityFrames, column_kinds
from dpgan.evaluation.tables.fidelity import fidelity


def ks_distance(a: np.ndarray, b: np.ndarray) -> float | None:
    """The KS statistic of two samples; None when either is empty."""
    if len(a) == 0 or len(b) == 0:
        return None
    return float(ks_2samp(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)).statistic)


def count_summary(counts: np.ndarray, k: int) -> dict[str, Any]:
    """A histogram of events per entity in a few numbers; `k` is the schema's max_events."""
    counts = np.asarray(counts, dtype=np.float64)
    if len(counts) == 0:
        return {"entities": 0, "mean": None, "q25": None, "median": None, "q75": None, "share_zero": None,
                "share_over_k": None}  # fmt: skip
    q25, median, q75 = np.percentile(counts, [25, 50, 75])
    return {
        "entities": len(counts), "mean": float(counts.mean()), "q25": float(q25), "median": float(median),
        "q75": float(q75), "share_zero": float(np.mean(counts == 0)), "share_over_k": float(np.mean(counts > k)),
    }  # fmt: skip


def histogram(counts: dict[str, np.ndarray], bins: int = 30) -> dict[str, Any]:
    """Real training and synthetic counts on shared bins (each side's share per bin), for the report."""
    both = np.concatenate([counts["real"], counts["synthetic"]]).astype(np.float64)
    if len(both) == 0:
        return {"edges": [], "real": [], "synthetic": []}
    edges = np.histogram_bin_edges(both, bins=int(min(bins, both.max() + 1)))
    shares = {
        side: np.histogram(counts[side], bins=edges)[0] / max(len(counts[side]), 1) for side in ("real", "synthetic")
    }
    return {"edges": edges.tolist(), **{side: v.tolist() for side, v in shares.items()}}


def events_per_entity_scores(counts: dict[str, np.ndarray], k: int) -> dict[str, Any]:
    """`counts`: each side's events per entity ("real", "synthetic", "test")."""
    return {
        "histogram": histogram(counts),
        "ks_train": ks_distance(counts["synthetic"], counts["real"]),
        "ks_test": ks_distance(counts["synthetic"], counts["test"]),
        "ks_floor": ks_distance(counts["test"], counts["real"]),
        "k": k,
        "summary": {side: count_summary(values, k) for side, values in counts.items()},
    }


def event_table(frames: EntityFrames, schema: EntitySchema) -> tuple[pd.DataFrame, dict[str, str]]:
    """The events' modelled columns with the time (as a number) among them, and their kinds."""
    kinds = column_kinds(schema.events)
    table = frames.events
    if schema.time is not None and frames.times is not None:
        table = table.assign(**{schema.time.column: frames.times})
        kinds = kinds | {schema.time.column: "continuous"}
    return table, kinds


def marginals(real: EntityFrames, synthetic: EntityFrames, schema: EntitySchema) -> dict[str, Any]:
    """The tables' fidelity measures for the parents and for the events."""
    real_events, kinds = event_table(real, schema)
    synthetic_events, _ = event_table(synthetic, schema)
    return {
        "parents": fidelity(real.parents, synthetic.parents, column_kinds(schema.parents)),
        "events": fidelity(real_events, synthetic_events, kinds),
    }


__all__ = ["count_summary", "events_per_entity_scores", "ks_distance", "marginals"]
