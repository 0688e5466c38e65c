"""The HTML report (self-contained, escaped, every plot present and decodable in a real browser)
and `dpgan evaluate` end to end on small Adult slices."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from html import escape
from pathlib import Path

import pandas as pd
import pytest

from dpgan import datasets
from dpgan.cli import main
from dpgan.evaluation import evaluate
from dpgan.evaluation.report_core import find_rocs
from dpgan.evaluation.tables.report import render_report, write_report
from headless_browser import chromium

IMG = re.compile(r'<img class="plot" alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)">')
FAKE_ATTACKS = {
    "membership": {"auc": 0.93, "privacy_gain": 0.21, "roc": {"fpr": [0.0, 0.1, 1.0], "tpr": [0.0, 0.8, 1.0]}},
    "logan": {"white_box": {"auc": 0.61, "roc": {"fpr": [0.0, 0.5, 1.0], "tpr": [0.0, 0.7, 1.0]}}},
    "dcr": {"auc": 0.5, "holdout_baseline": 0.5},
    "attribute": {"skipped": True, "reason": "<b>not bold</b>"},
}


@pytest.fixture(scope="module")
def tables(adult) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    train, test = adult
    real = train.sample(300, random_state=11)
    other = train.drop(real.index).sample(300, random_state=12)
    return real.reset_index(drop=True), other.reset_index(drop=True), test.sample(300, random_state=13)


def saved_model_and_csvs(root: Path, tables, fitted, seed: int) -> dict[str, Path]:
    """Save the model under root/model and write real, synthetic and test tables as CSV files."""
    real, _, test = tables
    fitted.save(root / "model")
    paths = {}
    for name, frame in (("real", real), ("synthetic", fitted.sample(300, seed=seed)), ("test", test)):
        paths[name] = root / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory, tables, fitted) -> Path:
    """`dpgan evaluate` in a real process, with a saved model and the public schema, on CSV files."""
    root = tmp_path_factory.mktemp("evaluate")
    paths = saved_model_and_csvs(root, tables, fitted, seed=5)
    out = subprocess.run(
        [sys.executable, "-m", "dpgan.cli", "evaluate", "--real", str(paths["real"]), "--synthetic",
         str(paths["synthetic"]), "--test", str(paths["test"]), "--target", "income", "--model", str(root / "model"),
         "--schema", str(datasets.adult_schema_path()),
         "--out", str(root / "report")],
        capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "utility" in out.stderr  # progress bars go to stderr
    assert "wrote" in out.stdout
    return root / "report"


def test_cli_writes_metrics_and_report_with_the_models_ledger(cli_run, fitted):
    metrics = json.loads((cli_run / "metrics.json").read_text())
    assert set(metrics) >= {"utility", "balanced_rf_accuracy", "fidelity", "privacy", "attacks"}
    assert metrics["privacy"]["epsilon"] == pytest.approx(fitted.privacy_report()["epsilon"])
    assert [e["name"] for e in metrics["privacy"]["events"]] == [e["name"] for e in fitted.privacy_report()["events"]]
    assert metrics["attacks"] is None
    assert metrics["columns"]["age"] == "integer" and metrics["columns"]["income"] == "categorical"  # from the schema
    assert set(metrics["utility"]) == {"decision_tree", "random_forest", "logistic_regression", "mlp"}
    html = (cli_run / "report.html").read_text()
    assert f"{metrics['privacy']['epsilon']:.4f}" in html
    assert "No model was given" not in html
    assert len(IMG.findall(html)) == 15 + 1  # one marginal per Adult column, one heatmap figure
    source = metrics["privacy"]["schema_source"]
    assert len(source) > 200 and html.count(escape(source)) == 1  # the schema's source paragraph, once
    assert "No audit was run" in html


def test_cli_errors_are_one_line(tmp_path, tables, capsys):
    real, synthetic, test = tables
    for name, frame in (("r", real), ("s", synthetic), ("t", test)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    args = ["evaluate", "--real", str(tmp_path / "r.csv"), "--synthetic", str(tmp_path / "s.csv")]
    args += ["--test", str(tmp_path / "t.csv"), "--out", str(tmp_path / "out"), "--quiet"]
    assert main([*args, "--target", "salary"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpgan: error: target 'salary' is not a column") and "\n" not in err
    assert main([*args, "--target", "income", "--model", str(tmp_path / "nope")]) == 2
    assert "model directory not found" in capsys.readouterr().err
    assert main([*args, "--target", "income", "--audit"]) == 2
    assert "--audit audits the model that made the synthetic table: give --model" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def report_with_attacks(tmp_path_factory, tables) -> tuple[Path, dict]:
    real, synthetic, test = tables
    metrics = evaluate(real, synthetic, test, "income", models=["decision_tree", "logistic_regression"])
    metrics["attacks"] = FAKE_ATTACKS
    path = write_report(metrics, tmp_path_factory.mktemp("report") / "report.html", real=real, synthetic=synthetic)
    return path, metrics


def test_report_is_self_contained_and_has_every_plot(report_with_attacks):
    path, _ = report_with_attacks
    html = path.read_text()
    images = IMG.findall(html)
    assert len(images) == 15 + 1 + 2  # marginals, heatmaps, two ROC curves
    assert len(images) == html.count("<img")
    for data in images:
        assert base64.b64decode(data, validate=True).startswith(b"\x89PNG\r\n\x1a\n")
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)  # nothing fetched from elsewhere
    assert "<script" not in html
    assert "No model was given" in html  # the privacy section says it cannot state ε
    assert "&lt;b&gt;not bold&lt;/b&gt;" in html  # attack text is escaped (a skipped attack's reason)
    headings = ("Privacy guarantee", "Privacy audit", "Utility", "Fidelity", "Marginals", "Pairwise associations")
    headings += ("Privacy attacks",)
    assert all(f"<h2>{h}" in html or f"<h3>{h}" in html for h in headings)


def test_roc_curves_are_found_at_any_depth():
    titles = [title for title, _ in find_rocs(FAKE_ATTACKS)]
    assert titles == ["membership", "logan / white_box"]


def test_column_names_and_categories_are_escaped():
    frame = pd.DataFrame({"<script>alert(1)</script>": ["a&b", "<i>"] * 20, "y": ["0", "1"] * 20, "n": range(40)})
    metrics = evaluate(frame, frame, frame, "y", models=["decision_tree"])
    html = render_report(metrics, real=frame, synthetic=frame)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<i>" not in html


CHECK_SCRIPT = """<script>
window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  document.body.setAttribute('data-img-total', imgs.length);
  document.body.setAttribute('data-img-decoded', imgs.filter(i => i.complete && i.naturalWidth > 0).length);
});
</script></body>"""


@pytest.mark.parametrize("which", ["library report with attacks", "CLI report with a model"])
def test_every_plot_decodes_in_a_headless_browser(which, report_with_attacks, cli_run, tmp_path):
    browser = chromium()
    if browser is None:
        pytest.skip("chromium is not installed and could not be (make install-test installs it with apt-get as root)")
    source = report_with_attacks[0] if which.startswith("library") else cli_run / "report.html"
    expected = len(IMG.findall(source.read_text()))
    page = tmp_path / "check.html"  # the report plus a probe script; the report itself has no scripts
    page.write_text(source.read_text().replace("</body>", CHECK_SCRIPT))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]
    flags += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
    flags += [f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000", "--window-size=1280,2000"]
    dom = subprocess.run([browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=60)
    assert dom.returncode == 0, dom.stderr[-2000:]
    total = re.search(r'data-img-total="(\d+)"', dom.stdout)
    decoded = re.search(r'data-img-decoded="(\d+)"', dom.stdout)
    assert total and decoded, "the probe script did not run: " + dom.stdout[:500]
    assert int(total.group(1)) == expected > 0
    assert int(decoded.group(1)) == expected, f"{expected - int(decoded.group(1))} plots did not decode"
    shot = tmp_path / "shot.png"
    subprocess.run([browser, *flags, f"--screenshot={shot}", source.as_uri()], capture_output=True, timeout=60)
    assert shot.is_file() and shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 10_000


def test_cli_attacks_run_end_to_end_with_cost_knobs(tmp_path, tables, fitted):
    """`--attacks` with a saved model: all four attacks run (retraining the model's recipe) and plot."""
    paths = saved_model_and_csvs(tmp_path, tables, fitted, seed=6)
    code = main(
        ["evaluate", "--real", str(paths["real"]), "--synthetic", str(paths["synthetic"]), "--test",
         str(paths["test"]), "--target", "income", "--model", str(tmp_path / "model"), "--schema",
         str(datasets.adult_schema_path()), "--attacks", "--attack-shadows", "1", "--attack-test-runs", "1",
         "--attack-epochs", "0.5", "--quiet", "--out", str(tmp_path / "report")]
    )  # fmt: skip
    assert code == 0
    attacks = json.loads((tmp_path / "report" / "metrics.json").read_text())["attacks"]
    assert set(attacks) == {"dcr", "attribute", "membership", "logan"}
    assert all(not result["skipped"] for result in attacks.values())
    assert all(0.0 <= result["auc"] <= 1.0 for result in attacks.values())
    html = (tmp_path / "report" / "report.html").read_text()
    assert len(IMG.findall(html)) > 15 + 1  # marginals and heatmaps plus the attack ROC curves


REAL_ATTACKS = {  # the shape run_attacks returns (abridged): counts the intervals are computed from
    "membership": {
        "skipped": False, "tpr": 0.75, "fpr": 0.25, "advantage": 0.5, "auc": 0.8,
        "roc": {"fpr": [0.0, 0.25, 1.0], "tpr": [0.0, 0.75, 1.0]},
        "per_target": [{"target": "crafted outlier", "accuracy": 0.75}], "settings": {"targets": 2, "test_runs": 2},
    },
    "dcr": {
        "skipped": False, "share_closer_to_train": 0.51, "share_if_copied": 1.0, "auc": 0.49, "members": 1000,
        "non_members": 1000, "rows": {"synthetic": 1000}, "dcr_train": {"p5": 0.1, "median": 0.3, "mean": 0.4},
    },
    "logan": {"skipped": True, "reason": "needs model_dir"},
}  # fmt: skip


def test_attacks_are_a_short_table_with_intervals():
    """Headline numbers with 95% intervals, not a dump: the membership attack's 4 test fits give a wide one."""
    html = render_report({"target": "income", "attacks": REAL_ATTACKS})
    section = html[html.index("<h2>Privacy attacks") :]
    assert "95% interval" in section and "4 test fits per class" in section
    assert "per_target" not in section and "dcr_train" not in section and "median" not in section
    assert section.count("<tr>") <= 8  # header + 2 membership + 2 DCR + 1 skipped LOGAN rows
    low, high = re.search(r"advantage TPR − FPR</td><td>0.5000</td><td>\[(-?[\d.]+), (-?[\d.]+)\]", section).groups()
    assert float(low) < 0.0 < 0.5 < float(high) <= 1.0  # four fits per class cannot rule out "no leak"
    assert "needs model_dir" in section


def test_audit_section_shows_the_lower_bound_next_to_the_claim():
    from dpgan.evaluation.audit import audit_config

    audit = audit_config(epsilon=3.0, accountant="rdp", trials=100).to_dict()
    html = render_report({"target": "income", "audit": audit})
    section = html[html.index("<h2>Privacy audit") : html.index("<h2>Utility")]
    assert f"{audit['epsilon_claimed']:.4f}" in section and f"{audit['epsilon_lower_bound']:.4f}" in section
    assert "confidence 95%" in section and "consistent" in section


def test_cli_evaluate_with_audit(tmp_path, tables, fitted, monkeypatch):
    """`evaluate --model M --audit`: the default audit (fewer trials here) lands in metrics.json and the report."""
    from dpgan.evaluation import audit

    monkeypatch.setitem(audit.DEFAULT_TRIALS, "step", 100)  # cost knob only: the default is 10,000
    paths = saved_model_and_csvs(tmp_path, tables, fitted, seed=7)
    code = main(
        ["evaluate", "--real", str(paths["real"]), "--synthetic", str(paths["synthetic"]), "--test",
         str(paths["test"]), "--target", "income", "--model", str(tmp_path / "model"), "--audit", "--quiet",
         "--out", str(tmp_path / "report")]
    )  # fmt: skip
    assert code == 0
    record = json.loads((tmp_path / "report" / "metrics.json").read_text())["audit"]
    assert record["trials"] == 100 and record["epsilon_lower_bound"] <= record["epsilon_claimed"]
    html = (tmp_path / "report" / "report.html").read_text()
    assert f"{record['epsilon_lower_bound']:.4f}" in html and "No audit was run" not in html
