"""Figures for the evaluation report, each returned as a base64 PNG so the HTML needs no other file.

matplotlib is driven through its object API on the Agg canvas (no pyplot state, no display), so
report rendering works on headless servers and does not disturb a user's own pyplot figures.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from dpgan.evaluation.tables.fidelity import as_labels, is_numeric_kind

REAL_COLOUR, SYNTH_COLOUR = "#1f77b4", "#ff7f0e"
MAX_BARS = 12  # categorical marginals show the most frequent real categories, the rest pooled


def to_png_base64(fig: Figure, dpi: int = 80) -> str:
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def marginal_plot(name: str, kind: str, real: pd.Series, synthetic: pd.Series) -> str:
    """Real vs synthetic distribution of one column: shared-bin histograms or category shares."""
    fig = Figure(figsize=(3.2, 2.3))
    ax = fig.add_subplot()
    if is_numeric_kind(kind):
        r = pd.to_numeric(real, errors="coerce").dropna().to_numpy(dtype=float)
        s = pd.to_numeric(synthetic, errors="coerce").dropna().to_numpy(dtype=float)
        both = np.concatenate([r, s]) if len(r) + len(s) else np.zeros(1)
        lo, hi = float(both.min()), float(both.max())
        bins = np.linspace(lo, hi if hi > lo else lo + 1.0, 31)
        ax.hist(r, bins=bins, density=True, alpha=0.55, color=REAL_COLOUR, label="real")
        ax.hist(s, bins=bins, density=True, alpha=0.55, color=SYNTH_COLOUR, label="synthetic")
        ax.set_ylabel("density", fontsize=7)
    else:
        p = as_labels(real).value_counts(normalize=True)
        q = as_labels(synthetic).value_counts(normalize=True)
        top = list(p.index[:MAX_BARS]) + [c for c in q.index if c not in p.index][: max(0, MAX_BARS - len(p))]
        rest = "(other)"
        pv = [float(p.get(c, 0.0)) for c in top]
        qv = [float(q.get(c, 0.0)) for c in top]
        if len(p.index.union(q.index)) > len(top):
            top, pv, qv = top + [rest], pv + [1.0 - sum(pv)], qv + [1.0 - sum(qv)]
        x = np.arange(len(top))
        ax.bar(x - 0.2, pv, width=0.4, color=REAL_COLOUR, label="real")
        ax.bar(x + 0.2, qv, width=0.4, color=SYNTH_COLOUR, label="synthetic")
        ax.set_xticks(x, [str(c)[:14] for c in top], rotation=60, ha="right", fontsize=6)
        ax.set_ylabel("share of rows", fontsize=7)
    ax.set_title(name, fontsize=9)
    ax.tick_params(labelsize=6)
    ax.legend(fontsize=6, frameon=False)
    return to_png_base64(fig)


def association_heatmaps(columns: Sequence[str], real: np.ndarray, synthetic: np.ndarray) -> str:
    """Real, synthetic and |real − synthetic| association matrices side by side, one colour scale."""
    n = len(columns)
    size = max(3.0, 0.28 * n + 1.5)
    fig = Figure(figsize=(3 * size, size))
    panels = (("real", real, "RdBu_r", -1.0), ("synthetic", synthetic, "RdBu_r", -1.0))
    panels += (("|real − synthetic|", np.abs(real - synthetic), "Reds", 0.0),)
    labels = [str(c)[:16] for c in columns]
    for k, (title, matrix, cmap, vmin) in enumerate(panels):
        ax = fig.add_subplot(1, 3, k + 1)
        image = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=1.0)
        ax.set_title(title, fontsize=10)
        ax.set_xticks(range(n), labels, rotation=90, fontsize=6)
        ax.set_yticks(range(n), labels if k == 0 else [""] * n, fontsize=6)
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04).ax.tick_params(labelsize=6)
    fig.tight_layout()
    return to_png_base64(fig)


def roc_plot(title: str, fpr: Sequence[float], tpr: Sequence[float], auc: float | None) -> str:
    """One attack's ROC curve against the diagonal of an attacker who guesses."""
    fig = Figure(figsize=(3.4, 3.2))
    ax = fig.add_subplot()
    label = "attack" if auc is None else f"attack (AUC {auc:.3f})"
    ax.plot(list(fpr), list(tpr), color=SYNTH_COLOUR, lw=1.8, label=label)
    ax.plot([0, 1], [0, 1], color="grey", ls="--", lw=1, label="random guess (AUC 0.5)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("false positive rate", fontsize=8)
    ax.set_ylabel("true positive rate", fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, loc="lower right", frameon=False)
    return to_png_base64(fig)
