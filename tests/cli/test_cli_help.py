"""`--help` as a new user reads it: `fit`'s options grouped by data kind, every default a value
(never "the recipe's"), stated once; the numbers pinned to the code that uses them; `demo`'s time
as the README gives it; `python -m dpgan` as the `dpgan` script."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dpgan import cli
from dpgan.cli import options
from dpgan.cli.tables import synth_kwargs

README = Path(__file__).resolve().parents[2] / "README.md"
FIT_SECTIONS = (
    "data",
    "budget",
    "output",
    "compute",
    "tables (--kind table, the default)",
    "series (--kind sequence)",
    "images (--kind image)",
    "training loop",
    "advanced",
)
COMMANDS = ("demo", "fit", "schema", "sample", "inspect", "privacy", "evaluate", "audit")


def help_text(command: str, monkeypatch, capsys) -> str:
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps to the terminal: a fixed width
    assert cli.main([command, "--help"]) == 0
    return capsys.readouterr().out


def option_entries(text: str) -> dict[str, str]:
    """Each option's help as one string (its wrapped lines joined), by its first flag (options only)."""
    entries: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        match = re.match(r"^  (-{1,2}[\w-]+)", line)
        if match:
            current = match.group(1)
            entries[current] = line.strip()
        elif current is not None and line.startswith("      "):
            entries[current] += " " + line.strip()
        else:
            current = None
    return entries


def test_fit_help_has_a_section_per_kind_in_order(monkeypatch, capsys):
    text = help_text("fit", monkeypatch, capsys)
    titles = [line[:-1] for line in text.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
    assert [t for t in titles if t in FIT_SECTIONS] == list(FIT_SECTIONS)
    sections = re.split(r"^(\S.*):$", text, flags=re.MULTILINE)
    by_title = dict(zip(sections[1::2], sections[2::2]))
    tables = by_title["tables (--kind table, the default)"]
    assert "--id-column" in by_title["series (--kind sequence)"] and "--id-column" not in tables
    assert "--image-shape" in by_title["images (--kind image)"] and "--pair-anchor" in tables
    assert "--epochs" in by_title["training loop"] and "--epsilon" in by_title["budget"]
    assert "--select-checkpoints" in by_title["advanced"] and "--threads" in by_title["compute"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_default_is_a_value_stated_once(command, monkeypatch, capsys):
    text = help_text(command, monkeypatch, capsys)
    assert "the recipe's" not in text and "(default: None)" not in text
    for flag, entry in option_entries(text).items():
        assert entry.count("default") <= 1, f"{command} {flag}: {entry}"


def test_the_loop_defaults_are_given_as_numbers_per_kind(monkeypatch, capsys):
    entries = option_entries(help_text("fit", monkeypatch, capsys))
    assert "(default: 60 for tables (dtgan-g: 10), 60 for series, 200 for image GANs)" in entries["--epochs"]
    assert "1,024 for tables (dtgan-g: 64), 256 for series, 1,024 for image GANs" in entries["--batch-size"]
    assert "never above 5% of the rows" in entries["--batch-size"]
    assert "1,024,000 for image GANs" in entries["--max-examples"] and "(default: 0, no cap" in entries["--max-steps"]
    assert "0, no cap, for series; 2,000,000 for tables (dtgan-g: 0) (marginals: 100,000);" in entries["--max-examples"]
    assert "(default: 1)" in entries["--max-series-per-entity"]  # argparse's, once
    assert "(default: 500)" in entries["--public-warm-start-steps"]


def test_the_numbers_in_help_are_the_code_s():
    """The kinds' registrations state the loop's defaults without importing PyTorch (dpgan.kinds):
    pinned here to where they live."""
    from dpgan import kinds
    from dpgan.images.settings import IMAGE_DEFAULTS
    from dpgan.recipes import MARGINALS, RECIPES
    from dpgan.sequences.settings import SEQUENCE_DEFAULTS
    from dpgan.tables.fit.options import training_config
    from dpgan.training.config import TrainingConfig

    base = TrainingConfig()
    table = kinds.kind("table")
    for key, value in table.loop_defaults.items():
        for name, recipe in RECIPES.items():
            if name == MARGINALS.name:  # no GAN loop: its row budget alone (dpgan.tables.fit.row_sample)
                assert table.recipe_loops[name] == {
                    "max_examples": training_config(recipe, None, None, {})[0].max_examples
                }
                continue
            # what a table fit runs with when the user gives none of the loop's settings
            config, _ = training_config(recipe, None, None, {}, batch_size=None, epochs=None)
            expected = table.recipe_loops.get(name, {}).get(key, value)
            assert getattr(config, key) == expected, (name, key)
    for kind, defaults in (("sequence", SEQUENCE_DEFAULTS), ("image", IMAGE_DEFAULTS)):
        for key, value in kinds.kind(kind).loop_defaults.items():
            assert defaults.get(key, getattr(base, key)) == value, (kind, key)
    assert base.max_sample_rate == options.MAX_SAMPLE_RATE  # the settings flags' defaults are generated


def test_label_model_kind_auto_is_accepted():
    """The README documents `--label-model-kind auto|pair-tables|dp-sgd`; the CLI takes all three."""
    parser = cli.build_parser()
    for kind in ("auto", "pair-tables", "dp-sgd"):
        args = parser.parse_args(["fit", "d.csv", "--epsilon", "1", "--out", "m", "--label-model-kind", kind])
        assert synth_kwargs(args)["label_model_kind"] == kind


def test_demo_help_and_readme_give_the_same_time(monkeypatch, capsys):
    text = " ".join(help_text("demo", monkeypatch, capsys).split())
    found = re.search(r"about (a|[\d.]+) minutes? on 2 cores", text)
    assert found and found.group(1) == "a"  # the marginals model's fit: seconds; the report most of the minute
    readme = " ".join(README.read_text(encoding="utf-8").split())
    demo_part = readme[readme.find("make demo") :][:1500]
    stated = re.search(r"about (a|[\d.]+) minutes?", demo_part)
    assert stated is not None and stated.group(1) == found.group(1)  # the README states the same time


def test_python_dash_m_dpgan_is_the_command_line():
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    version = subprocess.run([sys.executable, "-m", "dpgan", "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and version.stdout.startswith("dpgan ")
    refused = subprocess.run(
        [sys.executable, "-m", "dpgan", "privacy", "--sample-rate", "2", "--steps", "1", "--delta", "1e-5",
         "--epsilon", "1"],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert refused.returncode == 2 and refused.stderr.startswith("dpgan: error: --sample-rate")
