"""The evaluation of synthetic series as one self-contained HTML page (the report's sequence section).

First the headline quality score beside real held-out series' (dpgan.evaluation.headline) and the
privacy guarantee, worded for the unit of privacy (a series, or an entity with its series).
Figures: per value column the real and synthetic mean with their 10-90 % bands; generated series
next to their nearest real series by DTW (dp-GAN's Fig. 3); the distribution of DTW distances to
the nearest real training series, synthetic against held-out real (the floor); autocorrelations.
Every text from the data goes through `html.escape`; images are embedded PNGs, no scripts.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from dpgan.evaluation.plots import to_png_base64
from dpgan.evaluation.report_core import (
    CSS,
    fmt,
    headline_section,
    html_table,
    img,
    note,
    privacy_section,
    write_html,
)
from dpgan.evaluation.sequences.metrics import dtw_matrix, nearest_dtw

EXAMPLES = 4


def _bands_plot(name: str, index: int, metrics: dict[str, Any]) -> str:
    fig, ax = plt.subplots(figsize=(4.2, 2.8))
    for side, colour in (("real", "#4a7bd0"), ("synthetic", "#d0574a")):
        bands = metrics["bands"][side]
        steps = np.arange(len(bands["mean"][index]))
        ax.fill_between(steps, bands["q10"][index], bands["q90"][index], color=colour, alpha=0.2)
        ax.plot(steps, bands["mean"][index], color=colour, label=side)
    ax.set_title(f"{name}: mean and 10-90 % band", fontsize=9)
    ax.set_xlabel("time step", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return to_png_base64(fig)


def _nearest_plot(real: np.ndarray, synthetic: np.ndarray, name: str, index: int) -> str:
    """Generated series (solid) and the real training series nearest to each by DTW (dashed)."""
    fig, axes = plt.subplots(1, EXAMPLES, figsize=(2.4 * EXAMPLES, 2.4), sharey=True)
    for k, ax in enumerate(np.atleast_1d(axes)):
        if k >= len(synthetic):
            break
        distances = dtw_matrix(synthetic[k : k + 1], real)[0]
        nearest = real[int(np.argmin(distances))]
        ax.plot(synthetic[k, :, index], color="#d0574a", label="generated")
        ax.plot(nearest[:, index], color="#4a7bd0", linestyle="--", label="nearest real")
        ax.set_title(f"DTW {min(distances):.2f}", fontsize=8)
    np.atleast_1d(axes)[0].legend(fontsize=6)
    fig.suptitle(f"{name}: generated series and their nearest real series", fontsize=9)
    fig.tight_layout()
    return to_png_base64(fig)


def _distance_plot(synthetic: np.ndarray, heldout: np.ndarray) -> str:
    fig, ax = plt.subplots(figsize=(4.2, 2.8))
    bins = np.histogram_bin_edges(np.concatenate([synthetic, heldout]), bins=30)
    ax.hist(heldout, bins=bins, alpha=0.5, color="#4a7bd0", label="held-out real (floor)", density=True)
    ax.hist(synthetic, bins=bins, alpha=0.5, color="#d0574a", label="synthetic", density=True)
    ax.set_xlabel("DTW distance to the nearest real training series", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return to_png_base64(fig)


def _acf_plot(name: str, index: int, metrics: dict[str, Any]) -> str:
    fig, ax = plt.subplots(figsize=(4.2, 2.8))
    for side, colour in (("real", "#4a7bd0"), ("synthetic", "#d0574a")):
        values = metrics["autocorrelation"][side][index]
        ax.plot(np.arange(1, len(values) + 1), values, marker="o", markersize=3, color=colour, label=side)
    ax.set_title(f"{name}: autocorrelation", fontsize=9)
    ax.set_xlabel("lag", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return to_png_base64(fig)


def render_sequence_report(
    metrics: dict[str, Any],
    real: np.ndarray,
    synthetic: np.ndarray,
    test: np.ndarray,
    value_names: list[str],
) -> str:
    """The page as a string, from `evaluate_sequences`' metrics (plus the arrays, for the figures)."""
    dtw = metrics["dtw_nearest"]
    rows = [
        ["mean DTW to nearest real: synthetic", fmt(dtw["synthetic_mean"])],
        ["mean DTW to nearest real: held-out real (floor)", fmt(dtw["heldout_mean"])],
        ["ratio to the floor", fmt(dtw["ratio_to_floor"])],
        ["mean profile error (MAE)", fmt(metrics["mean_profile_mae"])],
        ["autocorrelation error (MAE)", fmt(metrics["autocorrelation_mae"])],
        ["membership attack by distance (AUC; 0.5 = no signal)", fmt(metrics.get("membership_auc"))],
    ]
    rows += [[f"Wasserstein distance of series totals ({label})", fmt(v)] for label, v in metrics["total_wd"].items()]
    if "discriminative" in metrics:
        score = metrics["discriminative"]["score"]
        rows.append(["real or synthetic? a classifier's |accuracy − 0.5| (0 = indistinguishable)", fmt(score)])
    if "predictive" in metrics:
        predictive = metrics["predictive"]
        rows.append(["next-step error, trained on synthetic (MAE)", fmt(predictive["mae_tstr"])])
        rows.append(["next-step error, trained on real (floor)", fmt(predictive["mae_trtr"])])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>dpgan sequence evaluation</title>',
        f"<style>{CSS}</style></head><body>",
        "<h1>dpgan evaluation report: series</h1>",
        f"<p>{len(real)} real training series, {len(synthetic)} synthetic, {len(test)} held-out real; "
        f"value columns: {escape(', '.join(value_names))}.</p>",
        headline_section(metrics.get("headline")),
        privacy_section(metrics.get("privacy"), "sequence"),
        "<h2>Fidelity</h2>",
        html_table(["measure", "value"], rows),
        note(
            "A synthetic series far from every real one (ratio above 1) misses the real shapes; one much "
            "closer than held-out real series are (ratio well below 1) may copy training series."
        ),
        '<div class="grid">',
    ]
    rng = np.random.default_rng(0)
    examples = synthetic[rng.choice(len(synthetic), min(EXAMPLES, len(synthetic)), replace=False)]
    reference = real[rng.choice(len(real), min(len(real), 500), replace=False)]
    for index, name in enumerate(value_names):
        parts.append(img(_bands_plot(name, index, metrics), f"{name} bands"))
        parts.append(img(_acf_plot(name, index, metrics), f"{name} autocorrelation"))
    parts.append(
        img(_distance_plot(nearest_dtw(synthetic[:500], reference), nearest_dtw(test[:500], reference)), "DTW")
    )
    parts.append("</div>")
    for index, name in enumerate(value_names):
        parts.append(img(_nearest_plot(reference, examples, name, index), f"{name} nearest", cls="wide"))
    if "label_tstr" in metrics:
        tstr = metrics["label_tstr"]
        parts.append("<h2>Utility: the label from the series</h2>")
        parts.append(
            html_table(
                ["metric", "trained on synthetic", "trained on real"],
                [[m, fmt(tstr[m]["tstr"]), fmt(tstr[m]["trtr"])] for m in ("accuracy", "roc_auc")],
            )
        )
    parts.append("</body></html>")
    return "\n".join(parts)


def write_sequence_report(path: str | Path, *args: Any, **kwargs: Any) -> Path:
    """Write `render_sequence_report(*args, **kwargs)` to path (UTF-8), creating its folder."""
    return write_html(path, render_sequence_report(*args, **kwargs))


__all__ = ["render_sequence_report", "write_sequence_report"]
