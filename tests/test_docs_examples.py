"""The documentation's examples work: every ```python block of README.md and docs/*.md runs as
written (each file's blocks in order, in one namespace, in a fresh working directory), every
`dpgan ...` line of a ```bash block parses with the real command-line parser, and every `--flag`
the pages name is an option of some command.

A block preceded by the HTML comment `<!-- no-run -->` is illustrative only and is skipped. The
examples keep themselves fast (`max_steps=`, small slices), so that this test stays well under a
minute; it checks that they run and spend what they claim, not what they reach.
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from dpgan.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# a fenced block at the start of a line, with the no-run marker (if any) on the line before it
FENCE = re.compile(r"^(?P<skip><!--\s*no-run\s*-->\s*\n)?```(?P<lang>[\w-]*)\n(?P<body>.*?)^```\s*$", re.M | re.S)


def blocks(path: Path, lang: str) -> list[tuple[int, str]]:
    """(line number, code) of each block of `lang` in `path` that is not marked no-run."""
    text = path.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start("body")) + 1, m.group("body"))
        for m in FENCE.finditer(text)
        if m.group("lang") == lang and not m.group("skip")
    ]


def command_lines(code: str) -> list[str]:
    """The shell lines of a bash block, continuations joined and comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", code)
    return [line.split(" #", 1)[0].strip() for line in joined.splitlines() if line.strip()]


def dpgan_arguments(line: str) -> list[str] | None:
    """The arguments after `dpgan` on a command line (also under torchrun), or None for another program."""
    words = shlex.split(line.replace("$(which dpgan)", "dpgan"))
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):  # VAR=value prefixes
        words.pop(0)
    if not words or words[0] not in ("dpgan", "torchrun"):
        return None
    return words[words.index("dpgan") + 1 :] if "dpgan" in words else None


def python_documents() -> list[Path]:
    return [path for path in DOCUMENTS if blocks(path, "python")]


@pytest.mark.parametrize("path", python_documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_python_examples_run_as_written(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the examples write models and files where they stand
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for line, code in blocks(path, "python"):
        exec(compile(code, f"{path.relative_to(ROOT)}:{line}", "exec"), namespace)


def test_every_dpgan_command_line_parses() -> None:
    parser = build_parser()
    checked = 0
    for path in DOCUMENTS:
        for line_number, code in blocks(path, "bash"):
            for line in command_lines(code):
                arguments = dpgan_arguments(line)
                if arguments is None:  # make, python -c, ...
                    continue
                where = f"{path.relative_to(ROOT)}:{line_number}: {line}"
                try:
                    parser.parse_args(arguments)
                except SystemExit as exit_:  # a usage error (code 2); --help and --version exit 0
                    assert exit_.code == 0, f"does not parse: {where}"
                checked += 1
    assert checked >= 30, f"only {checked} dpgan command lines found: is the block syntax still ```bash?"


def test_every_flag_the_docs_name_is_a_dpgan_option() -> None:
    """The synopses (```text blocks) and the prose name only flags that some command has; the
    results page is left out: it quotes the bench scripts' own flags."""
    parser = build_parser()
    options = set(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                options |= set(command._option_string_actions)
    flag = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*(?!\w)")
    unknown = [
        f"{path.relative_to(ROOT)}: {m.group()}"
        for path in DOCUMENTS
        if path.name != "results.md"
        for m in flag.finditer(path.read_text(encoding="utf-8"))
        if m.group() not in options
    ]
    assert not unknown, unknown


def test_readme_keeps_its_two_commands_and_stays_short() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shell = [line for _, code in blocks(ROOT / "README.md", "bash") for line in command_lines(code)]
    assert "make demo" in shell and "make test" in shell
    assert len(readme.splitlines()) <= 200
    for kind in ("TabularSynthesizer", "SequenceSynthesizer", "ImageSynthesizer"):
        assert any(kind in code for _, code in blocks(ROOT / "README.md", "python")), kind


def test_readme_links_to_docs_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?:docs|bench)/[^)#]+)", readme)
    assert targets
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, missing
