"""The entity evaluation as one self-contained HTML page, in the entity's words: the headline quality
score (headline.py), the privacy ledger (worded for the entity as the unit), referential integrity,
events per entity, each table's marginals, the two-sample test on entity summaries, the parent-level
TSTR, and membership inference on whole entities. Each number comes with a line saying what it
means; every text from the data or the metrics goes through `html.escape` (report_core's pieces); the
one figure (events per entity) is an embedded PNG.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from dpgan.evaluation import plots
from dpgan.evaluation.entities.integrity import CHECKS
from dpgan.evaluation.report_core import (
    CSS,
    NOTES,
    fixed,
    headline_section,
    html_table,
    img,
    note,
    privacy_section,
    write_html,
)
from dpgan.evaluation.tables.report import METRIC_LABELS

KIND = "entity"


def _integrity_section(metrics: dict[str, Any]) -> str:
    found = metrics["integrity"]
    synthetic, real = found["synthetic"], found["real"]
    rows = [[words, synthetic[name], real[name]] for name, words in CHECKS]
    verdict = "hold" if synthetic["holds"] else "do NOT hold"
    return "\n".join([
        "<h2>Referential integrity</h2>",
        f"<p>The synthetic tables' promises <b>{verdict}</b>: every event's key names a parent, keys are "
        "unique, each entity's events are in time order, times are in the window and in the input's format.</p>",
        html_table(["broken promise", "synthetic", "real training (for reference)"], rows),
        note("Counts of rows or entities; 0 everywhere on the synthetic side is what the model promises. Real "
             "data may break them: the model's reader drops those units (its noisy tally is in the privacy section)."),
    ])  # fmt: skip


def _counts_figure(found: dict[str, Any]) -> str:
    """The two histograms of events per entity on shared bins (shares, so sizes may differ)."""
    edges = np.asarray(found["edges"], dtype=np.float64)
    fig = Figure(figsize=(4.2, 2.6))
    ax = fig.add_subplot()
    for side, colour in (("real", plots.REAL_COLOUR), ("synthetic", plots.SYNTH_COLOUR)):
        ax.stairs(found[side], edges, label=f"{side} training" if side == "real" else side, color=colour)
    ax.set_xlabel("events per entity", fontsize=8)
    ax.set_ylabel("share of entities", fontsize=8)
    ax.legend(fontsize=7)
    return plots.to_png_base64(fig)


def _counts_section(metrics: dict[str, Any]) -> str:
    scores = metrics["events_per_entity"]
    summary = scores["summary"]
    sides = (("synthetic", "synthetic"), ("real", "real training"), ("test", "real held-out"))
    rows = [
        [words, s["entities"], s["mean"], s["q25"], s["median"], s["q75"], s["share_zero"], s["share_over_k"]]
        for side, words in sides
        for s in [summary[side]]
    ]
    parts = [
        "<h2>Events per entity</h2>",
        html_table(
            ["measure", "value"],
            [["KS distance, synthetic vs real training", scores["ks_train"]],
             ["KS distance, synthetic vs real held-out", scores["ks_test"]],
             ["KS floor: real held-out vs real training", scores["ks_floor"]]],  # fmt: skip
            number=fixed,
        ),
        html_table(["entities", "count", "mean", "25 %", "median", "75 %", "share with 0",
                    f"share with > k = {scores['k']}"], rows, number=fixed),  # fmt: skip
        note("The Kolmogorov–Smirnov distance is the largest gap between the two cumulative distributions of "
             "events per entity: 0 means the same distribution, 1 disjoint ones. The floor is what two real "
             "samples differ by; a synthetic KS near it is as good as the data allow. k is the public number of "
             "events the model reads per entity; the model draws counts beyond k, so a share above k is expected."),
    ]  # fmt: skip
    if scores.get("histogram", {}).get("edges"):
        parts.append('<div class="grid">' + img(_counts_figure(scores["histogram"]), "events per entity") + "</div>")
    return "\n".join(parts)


def _marginals_section(metrics: dict[str, Any]) -> str:
    parts = ["<h2>Marginals of both tables</h2>"]
    for table in ("parents", "events"):
        fidelity = metrics["marginals"][table]
        per_column = fidelity.get("per_column", {})
        parts.append(f"<h3>{table}</h3>")
        parts.append(html_table(
            ["column", "kind", "JSD", "WD", "missing-rate diff"],
            [[n, e.get("kind"), e.get("jsd"), e.get("wd"), e.get("missing_rate_diff")] for n, e in per_column.items()]
            + [["mean / association difference", "", fidelity.get("jsd_mean"), fidelity.get("wd_mean"),
                fidelity.get("association_diff")]],
            number=fixed,
        ))  # fmt: skip
    parts.append(
        note(
            NOTES["fidelity"] + " The last row's last cell is the association difference. The events' "
            "time column is compared as a number (seconds since 1970 for a date format)."
        )
    )
    return "\n".join(parts)


def _two_sample_section(metrics: dict[str, Any]) -> str:
    found = metrics["two_sample"]
    return "\n".join([
        "<h2>Two-sample test on entity summaries</h2>",
        html_table(["measure", "value"], [["ROC AUC of telling real held-out from synthetic entities", found["auc"]],
                                          ["entities per side", found["entities_per_side"]]], number=fixed),
        note("Each entity is one row: its parent row, its number of events, the mean of each numeric event column, "
             "the top category of each categorical event column and its share, its first time and time span. A "
             "random forest, cross-validated, tries to tell held-out real entities from synthetic ones: AUC 0.5 "
             "means it cannot (the summaries are indistinguishable), 1 that it always can."),
    ])  # fmt: skip


def _tstr_section(metrics: dict[str, Any]) -> str:
    tstr = metrics["tstr"]
    mean = tstr.get("mean") or {}
    rows = []
    for metric, entry in mean.items():
        rows.append([f"{METRIC_LABELS.get(metric, metric)} (mean over models)", entry.get("tstr"), entry.get("trtr"),
                     entry.get("diff")])  # fmt: skip
    for model, per_metric in tstr.get("scores", {}).items():
        first = next(iter(per_metric))
        entry = per_metric[first]
        rows.append([f"{model}: {METRIC_LABELS.get(first, first)}", entry.get("tstr"), entry.get("trtr"),
                     entry.get("diff")])  # fmt: skip
    parts = [
        "<h2>Utility: the parent column from the entity (TSTR)</h2>",
        f"<p>Predicting <b>{escape(str(tstr['target']))}</b> from {escape(', '.join(tstr['features']))}.</p>",
        html_table(["metric", "trained on synthetic (TSTR)", "trained on real (TRTR)", "diff"], rows, number=fixed),
    ]
    parts += [note(text, "warn" if "single class" in text else "note") for text in tstr.get("notes") or []]
    parts.append(note(NOTES["utility"].replace("rows", "entities")))
    return "\n".join(parts)


def _membership_section(metrics: dict[str, Any]) -> str:
    found = metrics["membership"]
    rows = [
        ["ROC AUC (0.5 = no signal)", found.get("auc")],
        ["best TPR − FPR", found.get("max_advantage")],
        ["TPR at FPR ≤ 1 %", found.get("tpr_at_fpr_0.01")],
        ["TPR at FPR ≤ 10 %", found.get("tpr_at_fpr_0.1")],
        ["synthetic entities nearer a training than a held-out entity (0.5 = no preference)",
         found.get("share_closer_to_train")],
        ["members (training entities)", found.get("members")],
        ["non-members (held-out entities)", found.get("non_members")],
    ]  # fmt: skip
    return "\n".join([
        "<h2>Membership inference on whole entities</h2>",
        html_table(["measure", "value"], rows, number=fixed),
        note("Every real entity (its summary, as above) is scored by its distance to the nearest synthetic entity; "
             "nearer means 'was in the training set'. A TPR at 1 % FPR near 0.01 and an AUC near 0.5 mean distance "
             "tells members from non-members no better than chance. " + NOTES["attacks"]),
    ])  # fmt: skip


def render_entity_report(metrics: dict[str, Any]) -> str:
    """The page as a string, from `evaluate_entities`' metrics (metrics.json)."""
    entities, events = metrics["entities"], metrics["events"]
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>dpgan entity evaluation</title>',
        f"<style>{CSS}</style></head><body>",
        "<h1>dpgan evaluation report: entities</h1>",
        f"<p>Key column <b>{escape(str(metrics['key']))}</b>; {entities['real']} real training entities "
        f"({events['real']} events), {entities['synthetic']} synthetic ({events['synthetic']} events), "
        f"{entities['test']} real held-out ({events['test']} events).</p>",
        headline_section(metrics.get("headline")),
        privacy_section(metrics.get("privacy"), KIND),
        _integrity_section(metrics),
        _counts_section(metrics),
        _marginals_section(metrics),
        _two_sample_section(metrics),
        _tstr_section(metrics),
        _membership_section(metrics),
        "</body></html>",
    ])  # fmt: skip


def write_entity_report(path: str | Path, metrics: dict[str, Any]) -> Path:
    """Write `render_entity_report(metrics)` to `path` (UTF-8), creating its folder."""
    return write_html(path, render_entity_report(metrics))


__all__ = ["render_entity_report", "write_entity_report"]
