"""The fit's per-kind flags are generated from the settings dataclasses (dpgan.cli.settings_flags):
every declared setting is a flag whose help states the library's default (and the recipes' own),
a flag given reaches its kind's facade, one of another kind is refused in one line, and a kind's
settings module loads neither PyTorch nor pandas (the command line checks flags before them)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from dpgan import kinds
from dpgan.cli import build_parser, main
from dpgan.cli.settings_flags import given_settings, recipe_defaults, settings_classes, shown
from dpgan.cli.tables import synth_kwargs
from dpgan.images.settings import PROJECTIONS, ImageSettings
from dpgan.sequences.settings import CRITICS, SequenceSettings
from dpgan.setting import flag_fields
from dpgan.tables.settings import TableSettings
from dpgan.training.config import TrainingConfig

CLASSES = (TrainingConfig, TableSettings, SequenceSettings, ImageSettings)
BASE = ["fit", "d.csv", "--epsilon", "1", "--out", "m"]


def fit_help(capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["fit", "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_every_declared_setting_is_a_flag_with_its_default(capsys):
    text = fit_help(capsys)
    count = 0
    for cls in CLASSES:
        for field in flag_fields(cls):
            flag = "--" + field.name.replace("_", "-")
            assert flag in text, flag
            assert f"(default: {shown(field.default)}{recipe_defaults(field.name)})" in text, flag
            count += 1
    assert count >= 18  # the loop's clipping, the tables' plug-ins, the series' and the images' switches


def test_a_recipe_s_own_default_is_in_the_help(capsys):
    text = fit_help(capsys)
    assert "(default: off; dtgan-g: on)" in text  # --marginal-anchor
    assert "(default: off; dcgan: 0.3)" in text  # --mode-seeking
    assert "(default: on)" in text  # --pair-anchor


def test_given_flags_reach_the_kind_s_keywords_and_others_stay_out():
    parser = build_parser()
    args = parser.parse_args([*BASE, "--no-pair-anchor", "--label-model-kind", "dp-sgd", "--select-checkpoints", "4"])
    given = given_settings(args, settings_classes(kinds.kind("table")))
    assert given == {"pair_anchor": False, "label_model_kind": "dp-sgd", "select_checkpoints": 4}
    kwargs = synth_kwargs(args)
    assert kwargs["pair_anchor"] is False and "critic" not in kwargs and "model" not in kwargs
    args = parser.parse_args([*BASE, "--kind", "sequence", "--critic", "lstm", "--model", "gaussian+gan"])
    assert given_settings(args, settings_classes(kinds.kind("sequence"))) == {"critic": "lstm"}
    assert args.model == "gaussian+gan"  # --model is every kind's word, not a settings flag of the series'
    args = parser.parse_args([*BASE, "--kind", "image", "--no-label-guide", "--mode-seeking", "0.5"])
    assert given_settings(args, settings_classes(kinds.kind("image"))) == {"label_guide": False, "mode_seeking": 0.5}
    table = settings_classes(kinds.kind("table"))
    assert given_settings(parser.parse_args(BASE), table) == {}  # nothing given: the library's


@pytest.mark.parametrize(
    ("flags", "word"),
    [
        (["--model", "gaussian"], "--kind sequence"),
        (["--kind", "sequence", "--pair-budget-fraction", "0.2"], "--kind table"),
        (["--kind", "image", "--critic", "lstm"], "--kind sequence"),
        (["--kind", "sequence", "--width", "8"], "--kind image"),
    ],
)
def test_a_flag_of_another_kind_is_one_line_before_the_data_is_read(flags, word, tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("a,b\n1,2\n")
    assert main(["fit", str(data), "--epsilon", "1", "--out", str(tmp_path / "m"), *flags]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err and "Traceback" not in err
    assert not (tmp_path / "m").exists()


def test_a_bad_value_is_refused_by_argparse_or_the_settings_check(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("a,b\n1,2\n")
    out = str(tmp_path / "m")
    assert main(["fit", str(data), "--epsilon", "1", "--out", out, "--label-model-kind", "forest"]) == 2
    assert main(["fit", str(data), "--epsilon", "1", "--out", out, "--pair-budget-fraction", "0.95"]) != 0
    assert "pair_budget_fraction" in capsys.readouterr().err


def test_the_settings_modules_load_neither_torch_nor_pandas():
    probe = (
        "import sys; import dpgan.cli.settings_flags; "
        "from dpgan import kinds; from dpgan.cli.settings_flags import settings_classes; "
        "[settings_classes(k) for k in kinds.kinds()]; "
        "assert 'torch' not in sys.modules and 'pandas' not in sys.modules, sorted(sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def test_the_settings_choices_are_the_networks():
    """The settings modules keep their own copies of the networks' names (no PyTorch import)."""
    from dpgan.models.conv import PROJECTION_GRIDS
    from dpgan.models.sequence_units import CRITICS as BUILT_CRITICS

    assert tuple(CRITICS) == tuple(BUILT_CRITICS) and tuple(PROJECTIONS) == tuple(PROJECTION_GRIDS)


def test_two_classes_declaring_one_flag_is_an_internal_error():
    from dataclasses import dataclass

    from dpgan.cli.settings_flags import add_settings_flags
    from dpgan.setting import setting

    @dataclass
    class Clash:
        pair_anchor: bool = setting(True, "again")

    parser = argparse.ArgumentParser()
    seen: set[str] = set()
    add_settings_flags(parser.add_argument_group("a"), TableSettings, seen)
    with pytest.raises(RuntimeError, match="--pair-anchor"):
        add_settings_flags(parser.add_argument_group("b"), Clash, seen)
