"""The evaluation as one self-contained HTML page: tables, embedded PNG plots, plain-language notes.
Its measures are shown in one format (4 fixed decimals: report_core.fixed).

Everything a reader needs is inside the file (no scripts, no external CSS or images), so it can be
mailed or archived next to the data it describes. Every piece of text from the data or the
metrics (column names, categories, ledger notes) goes through `html.escape`.

The page opens with the headline quality score (dpgan.evaluation.headline); the sections every kind
shares (the privacy ledger, worded for the kind's unit of privacy, the attacks, the audit) are in
dpgan.evaluation.report_core; this module adds the table's utility and fidelity sections.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgan.evaluation import plots
from dpgan.evaluation.report_core import (
    CSS,
    NOTES,
    attacks_section,
    audit_section,
    fixed,
    headline_section,
    html_table,
    img,
    note,
    privacy_section,
    write_html,
)
from dpgan.evaluation.tables.learned_columns import learned_section
from dpgan.evaluation.tables.ml_efficacy import Progress
from dpgan.evaluation.tables.rules import rules_section

METRIC_LABELS = {
    "accuracy": "accuracy",
    "f1": "F1",
    "roc_auc": "ROC AUC",
    "average_precision": "average precision",
    "balanced_accuracy": "balanced accuracy",
    "r2": "R² (higher is better)",
    "mae": "mean absolute error (lower is better)",
}


def write_report(
    metrics: dict[str, Any],
    path: str | Path,
    *,
    real: pd.DataFrame | None = None,
    synthetic: pd.DataFrame | None = None,
    progress: Progress | None = None,
) -> Path:
    """Write `render_report(...)` to `path` (usually REPORT_DIR/report.html)."""
    return write_html(path, render_report(metrics, real=real, synthetic=synthetic, progress=progress))


def render_report(
    metrics: dict[str, Any],
    *,
    real: pd.DataFrame | None = None,
    synthetic: pd.DataFrame | None = None,
    progress: Progress | None = None,
) -> str:
    """The page as a string. Marginal plots need the `real` and `synthetic` frames."""
    rows = metrics.get("rows", {})
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>dpgan table evaluation</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>dpgan evaluation report: table</h1>",
        "<p>Target column <b>{}</b>; {} real training rows, {} synthetic rows, {} real test rows.</p>".format(
            escape(str(metrics.get("target"))), *(escape(str(rows.get(k, "?"))) for k in ("real", "synthetic", "test"))
        ),
        headline_section(metrics.get("headline")),
        privacy_section(metrics.get("privacy"), "table"),
        audit_section(metrics.get("audit")),
        _utility_section(metrics),
        _fidelity_section(metrics.get("fidelity", {}), metrics.get("columns", {}), real, synthetic, progress),
        learned_section(metrics.get("learned")),
        rules_section(metrics.get("rules")),
        attacks_section(metrics.get("attacks")),
        "</body></html>",
    ]
    return "\n".join(parts)


def _utility_section(metrics: dict[str, Any]) -> str:
    summary = metrics.get("utility_summary", {})
    scores = metrics.get("utility", {})
    out = ["<h2>Utility: train on synthetic, test on real</h2>"]
    task = summary.get("task")
    positive = summary.get("positive_label")
    line = f"Task: {task}."
    if positive is not None:
        line += f" Positive class for F1, ROC AUC and average precision: {positive} (the real minority class)."
    out.append(f"<p>{escape(line)}</p>")
    metric_names = list(next(iter(scores.values()), {}).keys())
    mean = summary.get("mean") or {}
    tables = []
    for metric in metric_names:  # one small table per metric: model × (TSTR, TRTR, diff)
        body = [
            [model, *(per_metric[metric].get(k) for k in ("tstr", "trtr", "diff"))]
            for model, per_metric in scores.items()
        ]
        if metric in mean:
            body.append(["mean over models", *(mean[metric].get(k) for k in ("tstr", "trtr", "diff"))])
        tables.append(
            f"<div><h4>{escape(METRIC_LABELS.get(metric, metric))}</h4>"
            + html_table(["model", "TSTR", "TRTR", "diff"], body, number=fixed)
            + "</div>"
        )
    out.append('<div class="tables">' + "".join(tables) + "</div>")
    balanced = metrics.get("balanced_rf_accuracy") or {}
    if balanced.get("real") is not None or balanced.get("synthetic") is not None:
        out.append("<h3>Balanced random-forest accuracy (dp-GAN protocol)</h3>")
        out.append(
            html_table(
                ["trained on", "accuracy"],
                [["real", balanced.get("real")], ["synthetic", balanced.get("synthetic")]],
                number=fixed,
            )
        )
        out.append(note("Both classes are balanced, so 0.5 is what guessing scores."))
    for text in list(summary.get("notes") or []) + ([balanced["note"]] if balanced.get("note") else []):
        out.append(note(text, "warn" if "single class" in text else "note"))
    if summary.get("protocol"):
        out.append(f"<p><small>Protocol: {escape(summary['protocol'])}</small></p>")
    out.append(note(NOTES["utility"]))
    return "\n".join(out)


def _fidelity_section(
    fidelity: dict[str, Any],
    kinds: dict[str, str],
    real: pd.DataFrame | None,
    synthetic: pd.DataFrame | None,
    progress: Progress | None,
) -> str:
    out = ["<h2>Fidelity: how alike the tables are</h2>"]
    out.append(
        html_table(
            ["summary", "value"],
            [
                ["mean Jensen–Shannon divergence (categorical columns)", fidelity.get("jsd_mean")],
                [
                    "mean Jensen–Shannon distance = √divergence (as in CTAB-GAN/DTGAN code)",
                    fidelity.get("js_distance_mean"),
                ],
                ["mean Wasserstein distance (numeric columns, real range = 1)", fidelity.get("wd_mean")],
                ["association difference (Frobenius norm)", fidelity.get("association_diff")],
            ],
            number=fixed,
        )
    )
    per_column = fidelity.get("per_column", {})
    out.append(
        html_table(
            ["column", "kind", "JSD", "WD", "missing-rate diff"],
            [[n, e.get("kind"), e.get("jsd"), e.get("wd"), e.get("missing_rate_diff")] for n, e in per_column.items()],
            number=fixed,
        )
    )
    for name, entry in per_column.items():  # code columns with a hierarchy: the JSD at each level
        if entry.get("jsd_by_level"):
            levels = ", ".join(f"level {i + 1}: {fixed(v)}" for i, v in enumerate(entry["jsd_by_level"]))
            out.append(
                note(f"{name}: JSD cut to its hierarchy's levels ({levels}); the codes' own: {fixed(entry.get('jsd'))}")
            )
    out.append(note(NOTES["fidelity"]))
    out.append("<h3>Marginals, real vs synthetic</h3>")
    if real is None or synthetic is None:
        out.append(note("The tables were not given to the report writer, so the marginal plots are omitted."))
    else:
        figures = []
        names = [n for n in real.columns if n in synthetic.columns]
        for i, name in enumerate(names):
            if progress is not None:
                progress("report plots", i, len(names))
            kind = kinds.get(name) or per_column.get(name, {}).get("kind", "categorical")
            figures.append(
                img(plots.marginal_plot(str(name), kind, real[name], synthetic[name]), f"marginal of {name}")
            )
        if progress is not None:
            progress("report plots", len(names), len(names))
        out.append('<div class="grid">' + "".join(figures) + "</div>")
    assoc_real, assoc_synth = fidelity.get("association_real"), fidelity.get("association_synthetic")
    if assoc_real and assoc_synth:
        out.append("<h3>Pairwise associations</h3>")
        image = plots.association_heatmaps(
            assoc_real["columns"], np.asarray(assoc_real["matrix"], float), np.asarray(assoc_synth["matrix"], float)
        )
        out.append('<div class="wide">' + img(image, "association heatmaps: real, synthetic, difference") + "</div>")
        out.append(note("Entry (row, column): Pearson r for numeric pairs, Theil's U(row | column) for categorical "
                         "pairs, correlation ratio η for mixed pairs; 1 on the diagonal."))  # fmt: skip
    return "\n".join(out)
