"""The evaluation as one self-contained HTML page: tables, embedded PNG plots, plain-language notes.

Everything a reader needs is inside the file (no scripts, no external CSS or images), so it can be
mailed or archived next to the data it describes. Every piece of text from the data or the
metrics (column names, categories, ledger notes) goes through `html.escape`.

The page opens with the headline quality score (dpgan.evaluation.headline); the privacy section
is worded for the kind's unit of privacy (a row here; the series and image pages reuse it) and
shows noisy counts as a person reads them: rounded, never negative, "about N".
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgan.evaluation import plots
from dpgan.evaluation.attack_summary import attack_rows
from dpgan.evaluation.ml_efficacy import Progress
from dpgan.privacy.unit_rule import ReleasedTally

CSS = """
body{font-family:system-ui,sans-serif;max-width:1180px;margin:2em auto;padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.8em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .55em;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}
.note{background:#f7f9fc;border-left:4px solid #4a7bd0;padding:.5em .8em;margin:.8em 0;font-size:.92em}
.warn{background:#fff5f0;border-left:4px solid #d0574a;padding:.5em .8em;margin:.8em 0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:.6em}
.tables{display:flex;flex-wrap:wrap;gap:0 1.5em}h4{margin:.6em 0 0}
.grid img,.wide img{max-width:100%;height:auto}figure{margin:0}
"""

METRIC_LABELS = {
    "accuracy": "accuracy",
    "f1": "F1",
    "roc_auc": "ROC AUC",
    "average_precision": "average precision",
    "balanced_accuracy": "balanced accuracy",
    "r2": "R² (higher is better)",
    "mae": "mean absolute error (lower is better)",
}

# the unit of privacy per data kind, as the guarantee's wording names it: "one row", "one series", ...
# (a model's privacy report may say more, e.g. an entity with all its series: then its words are used)
SYNTHETIC_UNITS = {"table": "rows", "sequence": "series", "image": "images"}
UNIT_OF_PRIVACY = {
    "table": "one row (add or remove one row)",
    "sequence": "one series (add or remove one series)",
    "image": "one image with its label (add or remove one image)",
}


def privacy_note(kind: str = "table", unit_of_privacy: str | None = None) -> str:
    """What ε means, in the words of the kind's unit of privacy."""
    unit = unit_of_privacy or UNIT_OF_PRIVACY[kind]
    protected = unit.split(" (", 1)[0]  # "one series", "one 'owner' entity with all its series"
    return (
        f"ε (epsilon) bounds how much adding or removing {protected} can change what the model releases: "
        "smaller is more private. δ is the small probability with which that bound may fail. These numbers "
        "come from the model's privacy ledger, i.e. from how it was trained, not from the synthetic "
        f"{SYNTHETIC_UNITS[kind]} below."
    )


NOTES = {
    "utility": (
        "Each model is trained once on the synthetic rows (TSTR) and once on the real training rows (TRTR), "
        "and both are scored on the same real test rows. TSTR close to TRTR means the synthetic data is "
        "about as useful for this prediction task as the real data; diff = real − synthetic, so a large "
        "positive diff (negative for MAE) is utility lost. Accuracy alone can mislead when one class "
        "dominates: read F1, ROC AUC and average precision too (AUC 0.5 = no better than chance)."
    ),
    "fidelity": (
        "Jensen–Shannon divergence (JSD, base 2) compares a categorical column's category shares: 0 means "
        "identical marginals, 1 means no category in common. The Wasserstein distance (WD) compares a "
        "numeric column's distribution after scaling by the real column's range: 0.05 means values are off "
        "by about 5% of the real range on average. The association difference is the Frobenius norm of "
        "real minus synthetic association matrix (Pearson r, Theil's U, correlation ratio η): 0 means the "
        "pairwise relationships are reproduced exactly."
    ),
    "audit": (
        "The audit attacks the training step itself: it puts a canary record through dpgan's real private step "
        "many times, with and without the canary, and measures how well an attacker who sees the released "
        "update can tell the two apart. That yields a lower bound on ε at the stated confidence. A lower bound "
        "below the claimed ε means the attack did not contradict the claim (it does not prove it); a bound above "
        "it would mean the claim is wrong. The audit never reads private data."
    ),
    "attack_intervals": (
        "Intervals are 95%: Clopper–Pearson for rates, Hanley–McNeil for ROC AUC. The membership attack counts "
        "training runs, not synthetic sets (the sets sampled from one fit are not independent): with a few test "
        "fits its advantage is noisy, so read the interval, not the point (--attack-test-runs and "
        "--attack-shadows sharpen it). Every number of every attack is in metrics.json."
    ),
    "attacks": (
        "Each attack tries to tell something private from the synthetic data (was a person in the "
        "training set? what is their sensitive value?). An ROC AUC near 0.5 means this attack found "
        "nothing; it does NOT certify the privacy level — only ε does, because a stronger attack might "
        "still succeed. An AUC well above 0.5 is evidence of leakage."
    ),
}


TRAINING_SHOWN_ABOVE = ("schema_source",)  # printed once, under the privacy table


def write_report(
    metrics: dict[str, Any],
    path: str | Path,
    *,
    real: pd.DataFrame | None = None,
    synthetic: pd.DataFrame | None = None,
    progress: Progress | None = None,
) -> Path:
    """Write `render_report(...)` to `path` (usually REPORT_DIR/report.html)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(metrics, real=real, synthetic=synthetic, progress=progress), encoding="utf-8")
    return path


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
        "<title>dpgan evaluation report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>dpgan evaluation report</h1>",
        "<p>Target column <b>{}</b>; {} real training rows, {} synthetic rows, {} real test rows.</p>".format(
            escape(str(metrics.get("target"))), *(escape(str(rows.get(k, "?"))) for k in ("real", "synthetic", "test"))
        ),
        headline_section(metrics.get("headline")),
        _privacy_section(metrics.get("privacy"), "table"),
        _audit_section(metrics.get("audit")),
        _utility_section(metrics),
        _fidelity_section(metrics.get("fidelity", {}), metrics.get("columns", {}), real, synthetic, progress),
        _attacks_section(metrics.get("attacks")),
        "</body></html>",
    ]
    return "\n".join(parts)


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.{digits}g}" if abs(value) < 1e-3 or abs(value) >= 1e4 else f"{float(value):.{digits}f}"
    return escape(str(value))


def _table(header: list[str], body: list[list[Any]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    rows = "".join("<tr>" + "".join(f"<td>{_fmt(c)}</td>" for c in row) + "</tr>" for row in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _note(text: str, cls: str = "note") -> str:
    return f'<div class="{cls}">{escape(text)}</div>'


def _img(data: str, alt: str, cls: str = "plot") -> str:
    return f'<figure><img class="{cls}" alt="{escape(alt)}" src="data:image/png;base64,{data}"></figure>'


def headline_section(headline: dict[str, Any] | None) -> str:
    """The report's first number: the kind's headline quality score beside real held-out data's
    (dpgan.evaluation.headline), its components, and how it is computed. Empty without one."""
    if not headline:
        return ""
    body = [[c["name"], c["synthetic"], c["real"], c["how"]] for c in headline["components"]]
    return "\n".join(
        [
            "<h2>Headline quality</h2>",
            f'<p class="headline"><b>{_fmt(headline["score"], 2)}</b> for the synthetic data; '
            f"<b>{_fmt(headline['real'], 2)}</b> for real held-out data (scale 0 to 1, higher is better).</p>",
            _table(["component", "synthetic", "real held-out", "how it is computed"], body),
            _note(str(headline.get("method", ""))),
        ]
    )


def _privacy_section(privacy: dict[str, Any] | None, kind: str = "table") -> str:
    """The guarantee, worded for the kind's unit of privacy (a row, a series or an entity, an image)."""
    out = ["<h2>Privacy guarantee</h2>"]
    if not privacy:
        out.append(
            _note(
                "No model was given (--model), so this report cannot state any privacy guarantee for the "
                f"synthetic {SYNTHETIC_UNITS[kind]}: ε and δ are only known from the ledger of the model that "
                "generated them.",
                "warn",
            )
        )
        out.append(_note(privacy_note(kind)))
        return "\n".join(out)
    unit = privacy.get("unit_of_privacy") or UNIT_OF_PRIVACY[kind]
    by = privacy.get("epsilon_by_accountant", {})
    rows = [
        ["ε (reported, " + str(privacy.get("accountant")) + " accountant)", privacy.get("epsilon")],
        ["target ε", privacy.get("target_epsilon")],
        ["δ", privacy.get("delta")],
        ["ε by RDP", by.get("rdp")],
        ["ε by PLD", by.get("pld")],
        ["unit of privacy (neighbouring inputs differ in it)", unit],
        ["guarantee covers the schema", privacy.get("guarantee_covers_schema")],
        ["model directory", privacy.get("model_dir")],
    ]
    out.append(_table(["quantity", "value"], [row for row in rows if row[1] is not None]))
    if privacy.get("units_summary"):  # the readers' DP tally (dpgan.privacy.unit_rule), as a person reads it
        out.append(f"<p><b>Input read (noisy counts).</b> {escape(str(privacy['units_summary']))}</p>")
    if privacy.get("repairs_summary"):
        out.append(f"<p><b>Cells mapped into the schema (noisy counts).</b> {escape(privacy['repairs_summary'])}</p>")
    if privacy.get("schema_source"):
        out.append(f"<p><b>Schema source.</b> {escape(str(privacy['schema_source']))}</p>")
    for key in ("warning", "seed_note"):
        if privacy.get(key):
            out.append(_note(str(privacy[key]), "warn"))
    events = privacy.get("events") or []
    if events:
        total = sum(e.get("epsilon_alone") or 0.0 for e in events) or 1.0
        out.append("<h3>Ledger events and the budget split</h3>")
        out.append(
            _table(
                ["event", "mechanism", "count", "extra δ", "ε alone", "share", "note"],
                [
                    [
                        e.get("name"),
                        e.get("mechanism_text"),
                        e.get("count"),
                        e.get("extra_delta"),
                        e.get("epsilon_alone"),
                        f"{100 * (e.get('epsilon_alone') or 0.0) / total:.1f}%",
                        e.get("note", ""),
                    ]
                    for e in events
                ],
            )
        )
        out.append(
            _note(
                "“ε alone” is what each event would cost by itself; the share is of their sum. The total ε "
                "above is smaller than that sum because the accountant composes the events jointly."
            )
        )
    training = privacy.get("training") or {}
    if training:
        out.append("<h3>Training</h3>")
        above = TRAINING_SHOWN_ABOVE + tuple(key for key, line in SUMMARISED.items() if privacy.get(line))
        shown = [[k, readable_setting(k, v)] for k, v in training.items() if k not in above]
        out.append(_table(["setting", "value"], shown))
    out.append(_note(privacy_note(kind, privacy.get("unit_of_privacy"))))
    return "\n".join(out)


# training-record entries of noisy counts that the privacy report already states as a line for a
# person (ReleasedTally.describe names a dropped count only when it clears the noise; the raw sum would not)
SUMMARISED = {
    "units": "units_summary",
    "estimated_dropped_units": "units_summary",
    "preprocessing_repairs": "repairs_summary",
}


def readable_setting(key: str, value: Any) -> Any:
    """A training-record value as a person reads it: a noisy count rounded, never negative, said to
    be about that many (`estimated_*`, a dict of counts); a noisy tally by its own line; no setting
    as "none", not a bare dash."""
    if value is None:
        return "none"
    if key.startswith("estimated_") and _number(value):
        return f"about {max(round(float(value)), 0):,} (noisy count)"
    if key == "units" and isinstance(value, dict):
        try:
            return ReleasedTally.from_dict(value).describe() + " (noisy counts)"
        except (KeyError, TypeError, ValueError):
            pass
    if isinstance(value, dict) and value and all(_number(v) for v in value.values()):
        counts = ", ".join(f"{k}: about {max(round(float(v)), 0):,}" for k, v in value.items())
        return counts + " (noisy counts)" if key == "preprocessing_repairs" else counts
    if isinstance(value, list) and all(isinstance(v, str) for v in value):  # notes: sentences, not a list repr
        return "; ".join(value) or "none"
    return value


def _number(value: Any) -> bool:
    return (
        isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and np.isfinite(value)
    )


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
            + _table(["model", "TSTR", "TRTR", "diff"], body)
            + "</div>"
        )
    out.append('<div class="tables">' + "".join(tables) + "</div>")
    balanced = metrics.get("balanced_rf_accuracy") or {}
    if balanced.get("real") is not None or balanced.get("synthetic") is not None:
        out.append("<h3>Balanced random-forest accuracy (dp-GAN protocol)</h3>")
        out.append(
            _table(
                ["trained on", "accuracy"], [["real", balanced.get("real")], ["synthetic", balanced.get("synthetic")]]
            )
        )
        out.append(_note("Both classes are balanced, so 0.5 is what guessing scores."))
    for text in list(summary.get("notes") or []) + ([balanced["note"]] if balanced.get("note") else []):
        out.append(_note(text, "warn" if "single class" in text else "note"))
    if summary.get("protocol"):
        out.append(f"<p><small>Protocol: {escape(summary['protocol'])}</small></p>")
    out.append(_note(NOTES["utility"]))
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
        _table(
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
        )
    )
    per_column = fidelity.get("per_column", {})
    out.append(
        _table(
            ["column", "kind", "JSD", "WD", "missing-rate diff"],
            [[n, e.get("kind"), e.get("jsd"), e.get("wd"), e.get("missing_rate_diff")] for n, e in per_column.items()],
        )
    )
    out.append(_note(NOTES["fidelity"]))
    out.append("<h3>Marginals, real vs synthetic</h3>")
    if real is None or synthetic is None:
        out.append(_note("The tables were not given to the report writer, so the marginal plots are omitted."))
    else:
        figures = []
        names = [n for n in real.columns if n in synthetic.columns]
        for i, name in enumerate(names):
            if progress is not None:
                progress("report plots", i, len(names))
            kind = kinds.get(name) or per_column.get(name, {}).get("kind", "categorical")
            figures.append(
                _img(plots.marginal_plot(str(name), kind, real[name], synthetic[name]), f"marginal of {name}")
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
        out.append('<div class="wide">' + _img(image, "association heatmaps: real, synthetic, difference") + "</div>")
        out.append(_note("Entry (row, column): Pearson r for numeric pairs, Theil's U(row | column) for categorical "
                         "pairs, correlation ratio η for mixed pairs; 1 on the diagonal."))  # fmt: skip
    return "\n".join(out)


def find_rocs(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every sub-dict of the attack results holding an "roc" with "fpr" and "tpr" lists."""
    if isinstance(value, dict):
        roc = value.get("roc")
        if isinstance(roc, dict) and isinstance(roc.get("fpr"), list) and isinstance(roc.get("tpr"), list):
            yield " / ".join(path) or "attack", value
        for key, child in value.items():
            if key != "roc":
                yield from find_rocs(child, (*path, str(key)))


def _attacks_section(attacks: dict[str, Any] | None) -> str:
    out = ["<h2>Privacy attacks</h2>"]
    if not attacks:
        out.append(_note("No attacks were run (use --attacks)."))
        out.append(_note(NOTES["attacks"]))
        return "\n".join(out)
    figures = []
    for title, result in find_rocs(attacks):
        auc = result.get("auc")
        auc = float(auc) if isinstance(auc, (int, float)) else None
        figures.append(_img(plots.roc_plot(title, result["roc"]["fpr"], result["roc"]["tpr"], auc), f"ROC of {title}"))
    if figures:
        out.append('<div class="grid">' + "".join(figures) + "</div>")
    rows = attack_rows(attacks)
    if rows:
        body = [
            [r["attack"], r["metric"], r["value"], _interval(r["ci_low"], r["ci_high"]), r["no_leak"], r["basis"]]
            for r in rows
        ]
        out.append(_table(["attack", "result", "value", "95% interval", "no leak", "based on"], body))
    out.append(_note(NOTES["attack_intervals"]))
    out.append(_note(NOTES["attacks"]))
    return "\n".join(out)


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "–"
    return f"[{_fmt(low, 3)}, {_fmt(high, 3)}]"


def _epsilon(value: Any) -> str:
    """ε values of the audit with four decimals, as the terminal prints them (0 shows as 0.0000)."""
    return f"{float(value):.4f}" if isinstance(value, (int, float)) else "–"


def _audit_section(audit: dict[str, Any] | None) -> str:
    out = ["<h2>Privacy audit</h2>"]
    if not audit:
        out.append(_note("No audit was run (dpgan evaluate --audit, or dpgan audit MODEL_DIR)."))
        out.append(_note(NOTES["audit"]))
        return "\n".join(out)
    confidence = audit.get("confidence")
    level = "–" if confidence is None else f"{100 * confidence:g}%"
    mode = str(audit.get("mode")) + (f", ablated: {audit['ablate']}" if audit.get("ablate") else "")
    out.append(
        _table(
            ["claimed ε (audited mechanism)", f"ε lower bound (confidence {level})", "largest certifiable",
             "trials per world", "mode", "claimed ε (whole training)"],
            [[_epsilon(audit.get("epsilon_claimed")), _epsilon(audit.get("epsilon_lower_bound")),
              _epsilon(audit.get("ceiling")), audit.get("trials"), mode, _epsilon(audit.get("model_epsilon"))]],
        )
    )  # fmt: skip
    out.append(f"<p><b>Verdict:</b> {escape(str(audit.get('verdict')))}.</p>")
    out.append(f"<p><b>Audited:</b> {escape(str(audit.get('audited')))}.</p>")
    cls = "note" if audit.get("consistent", True) else "warn"
    for text in audit.get("notes") or []:
        out.append(_note(str(text), cls))
    out.append(_note(NOTES["audit"]))
    return "\n".join(out)
