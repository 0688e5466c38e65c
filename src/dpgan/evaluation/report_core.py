"""What every kind's HTML report shares: the style, the HTML pieces, and the sections that are the
same for tables, series and images (the headline, the privacy ledger worded for the kind's unit of
privacy, the attacks, the audit). The kind's own sections are in tables/report.py,
sequences/report.py and images/report.py.

Every piece of text from the data or the metrics (column names, categories, ledger notes) goes
through `html.escape`; noisy counts are shown as a person reads them: rounded, never negative,
"about N".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from dpgan import kinds
from dpgan.evaluation import plots
from dpgan.evaluation.attack_summary import attack_rows
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


def write_html(path: str | Path, text: str) -> Path:
    """Write a rendered report to `path` (UTF-8), creating its folder: every kind's report writer."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def privacy_note(kind: str | None = None, unit_of_privacy: str | None = None) -> str:
    """What ε means, in the words of the kind's unit of privacy (its registration's, dpgan.kinds;
    a model's privacy report may say more, e.g. an entity with all its series: then its words are
    used); `kind` None is the default kind."""
    registered = kinds.kind(kind) if kind is not None else kinds.default_kind()
    unit = unit_of_privacy or registered.unit_of_privacy
    protected = unit.split(" (", 1)[0]  # "one series", "one 'owner' entity with all its series"
    return (
        f"ε (epsilon) bounds how much adding or removing {protected} can change what the model releases: "
        "smaller is more private. δ is the small probability with which that bound may fail. These numbers "
        "come from the model's privacy ledger, i.e. from how it was trained, not from the synthetic "
        f"{registered.units} below."
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


def fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.{digits}g}" if abs(value) < 1e-3 or abs(value) >= 1e4 else f"{float(value):.{digits}f}"
    return escape(str(value))


def fixed(value: Any, decimals: int = 4) -> str:
    """A measure in one format down a column: fixed decimals (0.8162, -0.0005, 0.0001; never
    5.539e-05 beside 0.8162), whole numbers with separators from 10,000; other values as `fmt`."""
    if isinstance(value, bool) or not isinstance(value, (float, np.floating)) or not np.isfinite(value):
        return fmt(value)
    if abs(value) >= 1e4:
        return f"{float(value):,.0f}"
    shown = f"{float(value):.{decimals}f}"
    return shown[1:] if shown.startswith("-") and float(shown) == 0 else shown  # no "-0.0000"


def html_table(header: list[str], body: list[list[Any]], number: Callable[[Any], str] = fmt) -> str:
    """`number` formats each cell (`fmt` by default: δ as 1e-05; `fixed` for columns of measures)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    rows = "".join("<tr>" + "".join(f"<td>{number(c)}</td>" for c in row) + "</tr>" for row in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def note(text: str, cls: str = "note") -> str:
    return f'<div class="{cls}">{escape(text)}</div>'


def img(data: str, alt: str, cls: str = "plot") -> str:
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
            f'<p class="headline"><b>{fmt(headline["score"], 2)}</b> for the synthetic data; '
            f"<b>{fmt(headline['real'], 2)}</b> for real held-out data (scale 0 to 1, higher is better).</p>",
            html_table(["component", "synthetic", "real held-out", "how it is computed"], body),
            note(str(headline.get("method", ""))),
        ]
    )


def privacy_section(privacy: dict[str, Any] | None, kind: str | None = None) -> str:
    """The guarantee, worded for the kind's unit of privacy (a row, a series or an entity, an image;
    `kind` None: the default kind's)."""
    registered = kinds.kind(kind) if kind is not None else kinds.default_kind()
    out = ["<h2>Privacy guarantee</h2>"]
    if not privacy:
        out.append(
            note(
                "No model was given (--model), so this report cannot state any privacy guarantee for the "
                f"synthetic {registered.units}: ε and δ are only known from the ledger of the model that "
                "generated them.",
                "warn",
            )
        )
        out.append(note(privacy_note(kind)))
        return "\n".join(out)
    unit = privacy.get("unit_of_privacy") or registered.unit_of_privacy
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
    out.append(html_table(["quantity", "value"], [row for row in rows if row[1] is not None]))
    if privacy.get("units_summary"):  # the readers' DP tally (dpgan.privacy.unit_rule), as a person reads it
        out.append(f"<p><b>Input read (noisy counts).</b> {escape(str(privacy['units_summary']))}</p>")
    if privacy.get("repairs_summary"):
        out.append(f"<p><b>Cells mapped into the schema (noisy counts).</b> {escape(privacy['repairs_summary'])}</p>")
    if privacy.get("schema_source"):
        out.append(f"<p><b>Schema source.</b> {escape(str(privacy['schema_source']))}</p>")
    for key in ("warning", "seed_note"):
        if privacy.get(key):
            out.append(note(str(privacy[key]), "warn"))
    events = privacy.get("events") or []
    if events:
        total = sum(e.get("epsilon_alone") or 0.0 for e in events) or 1.0
        out.append("<h3>Ledger events and the budget split</h3>")
        out.append(
            html_table(
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
            note(
                "“ε alone” is what each event would cost by itself; the share is of their sum. The total ε "
                "above is smaller than that sum because the accountant composes the events jointly."
            )
        )
    training = privacy.get("training") or {}
    if training:
        out.append("<h3>Training</h3>")
        above = TRAINING_SHOWN_ABOVE + tuple(key for key, line in SUMMARISED.items() if privacy.get(line))
        shown = [[k, readable_setting(k, v)] for k, v in training.items() if k not in above]
        out.append(html_table(["setting", "value"], shown))
    out.append(note(privacy_note(kind, privacy.get("unit_of_privacy"))))
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


def find_rocs(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every sub-dict of the attack results holding an "roc" with "fpr" and "tpr" lists."""
    if isinstance(value, dict):
        roc = value.get("roc")
        if isinstance(roc, dict) and isinstance(roc.get("fpr"), list) and isinstance(roc.get("tpr"), list):
            yield " / ".join(path) or "attack", value
        for key, child in value.items():
            if key != "roc":
                yield from find_rocs(child, (*path, str(key)))


def attacks_section(attacks: dict[str, Any] | None) -> str:
    out = ["<h2>Privacy attacks</h2>"]
    if not attacks:
        out.append(note("No attacks were run (use --attacks)."))
        out.append(note(NOTES["attacks"]))
        return "\n".join(out)
    figures = []
    for title, result in find_rocs(attacks):
        auc = result.get("auc")
        auc = float(auc) if isinstance(auc, (int, float)) else None
        figures.append(img(plots.roc_plot(title, result["roc"]["fpr"], result["roc"]["tpr"], auc), f"ROC of {title}"))
    if figures:
        out.append('<div class="grid">' + "".join(figures) + "</div>")
    rows = attack_rows(attacks)
    if rows:
        body = [
            [r["attack"], r["metric"], r["value"], _interval(r["ci_low"], r["ci_high"]), r["no_leak"], r["basis"]]
            for r in rows
        ]
        out.append(html_table(["attack", "result", "value", "95% interval", "no leak", "based on"], body))
    out.append(note(NOTES["attack_intervals"]))
    out.append(note(NOTES["attacks"]))
    return "\n".join(out)


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "–"
    return f"[{fmt(low, 3)}, {fmt(high, 3)}]"


def _epsilon(value: Any) -> str:
    """ε values of the audit with four decimals, as the terminal prints them (0 shows as 0.0000)."""
    return f"{float(value):.4f}" if isinstance(value, (int, float)) else "–"


def audit_section(audit: dict[str, Any] | None) -> str:
    out = ["<h2>Privacy audit</h2>"]
    if not audit:
        out.append(note("No audit was run (dpgan evaluate --audit, or dpgan audit MODEL_DIR)."))
        out.append(note(NOTES["audit"]))
        return "\n".join(out)
    confidence = audit.get("confidence")
    level = "–" if confidence is None else f"{100 * confidence:g}%"
    mode = str(audit.get("mode")) + (f", ablated: {audit['ablate']}" if audit.get("ablate") else "")
    out.append(
        html_table(
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
        out.append(note(str(text), cls))
    out.append(note(NOTES["audit"]))
    return "\n".join(out)


__all__ = ["CSS", "NOTES", "attacks_section", "audit_section", "find_rocs", "fmt", "headline_section", "html_table",
           "img", "note", "privacy_note", "privacy_section", "readable_setting"]  # fmt: skip
