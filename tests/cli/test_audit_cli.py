"""`dpgan audit`: JSON keys, the terminal view, the negative control, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpgan.cli import main

QUICK = ["--trials", "100", "--quiet"]
CONFIGURATION = ["--epsilon", "3", "--accountant", "rdp"]  # dp-gan on Adult's N and schema; σ ≈ 2.2


@pytest.fixture(scope="module")
def model_dir(fitted, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("audit") / "model"
    fitted.save(path)
    return path


def run_json(capsys, *argv: str) -> dict:
    assert main(["audit", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_output_of_a_saved_model(model_dir, fitted, capsys):
    record = run_json(capsys, str(model_dir), *QUICK)
    assert {"epsilon_claimed", "epsilon_lower_bound", "confidence"} <= set(record)
    assert record["confidence"] == 0.95 and record["mode"] == "step" and record["trials"] == 100
    assert 0.0 <= record["epsilon_lower_bound"] <= record["epsilon_claimed"]
    assert record["model_epsilon"] == pytest.approx(fitted.privacy_report()["epsilon"])
    assert record["noise_multiplier"] == fitted.training["noise_multiplier"]


def test_configuration_audit_and_its_negative_control(capsys):
    """Noise off in the audited step, claim unchanged: the bound must exceed the claim."""
    plain = run_json(capsys, *CONFIGURATION, "--trials", "150", "--quiet")
    ablated = run_json(capsys, *CONFIGURATION, "--trials", "150", "--quiet", "--ablate", "noise")
    assert plain["consistent"] and plain["model_epsilon"] == 3.0
    assert not ablated["consistent"] and ablated["epsilon_lower_bound"] > ablated["epsilon_claimed"]
    assert ablated["epsilon_claimed"] == plain["epsilon_claimed"]  # the claim keeps the configured σ


def test_model_names_the_configuration_s_model_as_recipe_does(capsys):
    """One vocabulary: --model is the configuration's model, --recipe its other word; a saved model
    stays the positional MODEL_DIR."""
    by_model = run_json(capsys, *CONFIGURATION, "--model", "dp-wgan", "--trials", "20", "--quiet")
    by_recipe = run_json(capsys, *CONFIGURATION, "--recipe", "dp-wgan", "--trials", "20", "--quiet")
    default = run_json(capsys, *CONFIGURATION, "--trials", "20", "--quiet")
    for record in (by_model, by_recipe, default):
        del record["seconds"]
    assert by_model == by_recipe and by_model["recipe"] == "dp-wgan" != default["recipe"]


def test_terminal_view_shows_both_epsilons(model_dir, capsys):
    assert main(["audit", str(model_dir), *QUICK]) == 0
    out = capsys.readouterr().out
    assert "claimed ε" in out and "ε lower bound" in out and "confidence 95%" in out


def test_one_run_mode(model_dir, capsys):
    record = run_json(capsys, str(model_dir), "--mode", "one-run", "--steps", "5", "--quiet")
    assert record["mode"] == "one-run" and record["steps"] == 5 and record["trials"] == 1
    assert record["epsilon_lower_bound"] <= record["epsilon_claimed"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--epsilon", "0"], "epsilon must be a positive"),
        (["--epsilon", "-1"], "epsilon must be a positive"),
        ([], "give a MODEL_DIR or --epsilon"),
        (["{missing}"], "model directory not found"),
        (["{empty}"], "is not a complete dpgan model"),
        (["{model}", "--epsilon", "3"], "give a MODEL_DIR or --epsilon"),
        (["{model}", "--recipe", "dp-wgan"], "--recipe describe a configuration"),
        (["{model}", "--model", "dp-wgan"], "--model describe a configuration"),
        (["--epsilon", "3", "--model", "dp-wgan", "--recipe", "dp-gan"], "name two models"),
        (["{model}", "--trials", "0"], "--trials must be a positive whole number"),
        (["{model}", "--trials", "100000000"], "trials must be an integer"),
        (["{model}", "--ablate", "gravity"], "argument --ablate: invalid choice"),
        (["{model}", "--mode", "grey-box"], "argument --mode: invalid choice"),
        (["{model}", "--sample-rate", "0"], "sample rate must be in (0, 1]"),
        (["{model}", "--confidence", "1"], "confidence must be"),
        (["--epsilon", "3", "--recipe", "nope"], "argument --recipe: invalid choice"),
        (["--epsilon", "3", "--model", "nope"], "argument --model: invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, model_dir, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    paths = {"{missing}": str(tmp_path / "missing"), "{empty}": str(tmp_path / "empty"), "{model}": str(model_dir)}
    assert main(["audit", *(paths.get(a, a) for a in argv), "--quiet"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("dpgan: error: ") and "\n" not in err and message in err
    assert captured.out == ""
