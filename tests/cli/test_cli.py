"""The command-line contract: names, flags, JSON keys, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dpgan.cli import main
from dpgan.statistics.tables.pair_marginals import PAIRS_EVENT
from dpgan.tables.fit.preparation import REPAIR_EVENT


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dpgan.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def test_privacy_epsilon_matches_fixture():
    out = run(
        "privacy", "--sample-rate", "0.01", "--noise-multiplier", "4.0", "--steps", "10000", "--delta", "1e-5", "--json"
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["rdp"] == pytest.approx(1.03549, rel=1e-4)
    assert result["pld"] == pytest.approx(0.947, rel=2e-3)


def test_privacy_noise_multiplier_for_target_epsilon(capsys):
    code = main(
        [
            "privacy",
            "--sample-rate",
            str(64 / 32561),
            "--steps",
            "10180",
            "--epsilon",
            "3",
            "--delta",
            "1e-5",
            "--accountant",
            "rdp",
            "--json",
        ]
    )
    assert code == 0
    assert json.loads(capsys.readouterr().out)["noise_multiplier"] == pytest.approx(0.7052, abs=2e-3)


def test_privacy_rdp_classic_reproduces_the_papers(capsys):
    code = main(
        [
            "privacy",
            "--sample-rate",
            "0.01",
            "--noise-multiplier",
            "1.15",
            "--steps",
            "24900",
            "--delta",
            "1e-5",
            "--accountant",
            "rdp-classic",
            "--json",
        ]
    )
    assert code == 0
    assert json.loads(capsys.readouterr().out)["rdp_classic"] == pytest.approx(9.60864, rel=2e-3)


@pytest.mark.parametrize(
    "args",
    [
        ["privacy", "--sample-rate", "2", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5"],
        ["privacy", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5"],
        ["privacy", "--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "0"],
        ["inspect", "/nonexistent/model"],
        ["sample", "/nonexistent/model", "-n", "5", "--out", "x.csv"],
        ["fit", "/nonexistent.csv", "--epsilon", "1", "--out", "m"],
        ["fit", "/nonexistent.csv", "--epsilon", "0", "--out", "m"],
    ],
)
def test_errors_are_one_line_without_traceback(args, capsys):
    assert main(args) != 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().count("\n") == 0 and err.startswith("dpgan: error:")


def test_error_from_a_real_process_is_one_line():
    """The installed entry point, not just main(): exit code and stderr as a user sees them."""
    out = run("inspect", "/nonexistent/model", "--json")
    assert out.returncode == 2
    assert out.stderr.strip() == "dpgan: error: model directory not found: /nonexistent/model"


def test_fit_sample_inspect_round_trip(tmp_path, adult_small, adult_schema):
    data = tmp_path / "small.csv"
    adult_small.to_csv(data, index=False)
    schema = tmp_path / "schema.json"
    adult_schema.to_json(schema)
    model = tmp_path / "model"
    out = run(
        "fit",
        str(data),
        "--epsilon",
        "2",
        "--delta",
        "1e-5",
        "--schema",
        str(schema),
        "--epochs",
        "1",
        "--batch-size",
        "64",
        "--seed",
        "1",
        "--accountant",
        "rdp",
        "--out",
        str(model),
    )
    assert out.returncode == 0, out.stderr
    assert "step" in out.stderr  # the progress bar
    synthetic = tmp_path / "synthetic.parquet"
    out = run("sample", str(model), "-n", "25", "--out", str(synthetic), "--seed", "2")
    assert out.returncode == 0, out.stderr
    import pandas as pd

    frame = pd.read_parquet(synthetic)
    assert len(frame) == 25 and list(frame.columns) == list(adult_small.columns)
    # a dp-gan model is not conditional, but its label model lets it sample a target value
    out = run("sample", str(model), "-n", "30", "--out", str(synthetic), "--condition", "income=>50K", "--overwrite")
    assert out.returncode == 0, out.stderr
    assert (pd.read_parquet(synthetic)["income"] == ">50K").all()
    out = run("inspect", str(model), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert {"epsilon", "delta", "events"} <= set(report)
    assert report["epsilon"] <= 2.0 and report["delta"] == 1e-5
    assert [e["name"] for e in report["events"]] == [
        "row count",
        REPAIR_EVENT,
        PAIRS_EVENT,
        "DP-SGD on the critic",
    ]


def test_fit_with_unknown_column_leaves_no_model(tmp_path, adult_small, adult_schema):
    data = tmp_path / "small.csv"
    adult_small.assign(extra=1).to_csv(data, index=False)
    schema = tmp_path / "schema.json"
    adult_schema.to_json(schema)
    out = run("fit", str(data), "--epsilon", "1", "--schema", str(schema), "--out", str(tmp_path / "model"))
    assert out.returncode != 0 and "not in the schema" in out.stderr
    assert not (tmp_path / "model").exists()


def test_demo_runs_end_to_end_on_a_short_budget(tmp_path):
    out = run(
        "demo",
        "--epochs",
        "0.05",
        "--batch-size",
        "256",
        "--accountant",
        "rdp",
        "--seed",
        "0",
        "--quiet",
        "--no-label-model",
        "--out-dir",
        str(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    assert "privacy spent: ε=" in out.stdout and "balanced random forest" in out.stdout
    assert (tmp_path / "adult-synthetic.csv").is_file() and (tmp_path / "model" / "model.json").is_file()
    assert json.loads((tmp_path / "model" / "model.json").read_text())["label_model"] is None


def test_fit_clipping_flags_reach_the_training_config():
    """--clipping-groups and --adaptive-clip-quantile pass through the facade like other overrides
    (the saved model's config records them); both are off without the flags."""
    from dpgan.cli import build_parser
    from dpgan.cli.tables import synth_kwargs
    from dpgan.synthesizers import TabularSynthesizer

    parser = build_parser()
    args = parser.parse_args(["fit", "t.csv", "--epsilon", "1", "--out", "m"])
    off = TabularSynthesizer(**synth_kwargs(args)).config
    assert (off.clipping_groups, off.adaptive_clip_quantile) == ("none", 0.0)
    flags = ["--clipping-groups", "per-layer", "--adaptive-clip-quantile", "0.7"]
    args = parser.parse_args(["fit", "t.csv", "--epsilon", "1", "--out", "m", *flags])
    on = TabularSynthesizer(**synth_kwargs(args)).config
    assert (on.clipping_groups, on.adaptive_clip_quantile) == ("per-layer", 0.7)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--adaptive-clip-quantile", "1.5"], "adaptive_clip_quantile must be in"),
        (["--recipe", "dtgan-g", "--clipping-groups", "per-layer"], "apply to critic recipes"),
    ],
)
def test_bad_clipping_flags_are_one_line_before_the_data_is_read(flags, message, tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n")
    assert main(["fit", str(table), "--epsilon", "1", "--out", str(tmp_path / "m"), *flags]) != 0
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and message in err and not (tmp_path / "m").exists()
