"""`dpgan demo` (what `make demo` runs) follows the --overwrite rule and ends by naming what it
wrote: the model, the synthetic CSV and the evaluation report (issue 49). The demo's own path runs
here on a small slice of Adult (`run_demo`); tests/cli/test_cli.py runs the command end to end."""

from __future__ import annotations

import pytest

from dpgan.cli import build_parser, main
from dpgan.cli.demo import OUTPUTS, check_demo_destination, run_demo
from dpgan.errors import DPGanError


@pytest.mark.parametrize("earlier", OUTPUTS)
def test_a_second_demo_refuses_in_one_line_before_reading_data(earlier, tmp_path, capsys):
    out = tmp_path / "dpgan-demo"
    (out / earlier).mkdir(parents=True)
    assert main(["demo", "--out-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "dpgan demo --overwrite" in err and "DEMO_FLAGS=--overwrite" in err
    assert check_demo_destination(out, overwrite=True) == out


def test_a_folder_without_a_demo_in_it_is_fine_and_a_foreign_model_folder_is_never_replaced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    assert check_demo_destination(tmp_path, overwrite=False) == tmp_path
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "data.csv").write_text("not a model")
    with pytest.raises(DPGanError, match="not a dpgan model directory"):
        check_demo_destination(tmp_path, overwrite=True)


def test_the_demo_writes_and_names_the_model_the_csv_and_the_report(adult, adult_small, adult_schema, tmp_path, capsys):
    flags = ["--max-steps", "3", "--batch-size", "64", "--seed", "0", "--quiet", "--accountant", "rdp"]
    args = build_parser().parse_args(["demo", "--out-dir", str(tmp_path), *flags, "--no-label-model"])
    test = adult[1].sample(300, random_state=0).reset_index(drop=True)
    assert run_demo(adult_small, test, adult_schema, check_demo_destination(tmp_path, False), args) == 0
    printed = capsys.readouterr().out
    model, csv, report = tmp_path / "model", tmp_path / "adult-synthetic.csv", tmp_path / "report" / "report.html"
    assert (model / "model.json").is_file() and csv.is_file() and report.is_file()
    named = [line.split(" to ")[1].split(" (")[0] for line in printed.strip().splitlines()[-3:]]
    assert [str(model), str(csv), str(report)] == named
    assert "dpgan evaluation report: table" in report.read_text() and "privacy spent: ε=" in printed
