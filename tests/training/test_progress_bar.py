"""The library shows the fit's bar where a person watches (issue 49): a terminal or a notebook by
default, nothing in a log or a pipe, nothing with `progress=False`, nothing for the attacks'
many fits; a callable still gets every report."""

from __future__ import annotations

import io

import pytest

from dpgan import TabularSynthesizer
from dpgan.errors import InputError
from dpgan.training.progress_bar import ProgressBar, fit_progress, quiet_fits, watching


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_or_a_notebook_is_watched_a_pipe_is_not():
    assert watching(Terminal(), notebook=False)
    assert not watching(io.StringIO(), notebook=False)
    assert watching(io.StringIO(), notebook=True)


@pytest.mark.parametrize(
    "given, stream, notebook, shown",
    [
        (None, Terminal(), False, True),
        (None, io.StringIO(), False, False),
        (None, io.StringIO(), True, True),
        (False, Terminal(), True, False),
        (True, io.StringIO(), False, True),
    ],
)
def test_the_default_bar_follows_who_watches_and_false_turns_it_off(given, stream, notebook, shown):
    chosen = fit_progress(given, "pld", stream=stream, notebook=notebook)
    assert isinstance(chosen, ProgressBar) if shown else chosen is None


def test_a_callable_is_kept_and_anything_else_refused():
    def report(step: int, total: int, epsilon: float) -> None: ...

    assert fit_progress(report, "pld", stream=io.StringIO(), notebook=False) is report
    with quiet_fits():
        assert fit_progress(report, "pld", stream=Terminal(), notebook=True) is report  # explicit: kept
        assert fit_progress(None, "pld", stream=Terminal(), notebook=True) is None
    with pytest.raises(InputError, match="progress must be"):
        fit_progress("yes", "pld")


def _fit_on_a_terminal(adult_small, adult_schema, monkeypatch, **progress) -> str:
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    synth = TabularSynthesizer(epsilon=3.0, seed=0, max_steps=3, batch_size=64, accountant="rdp")
    synth.fit(adult_small, schema=adult_schema, **progress)
    return terminal.getvalue()


def test_a_fit_watched_from_a_terminal_shows_the_bar_with_epsilon(adult_small, adult_schema, monkeypatch):
    shown = _fit_on_a_terminal(adult_small, adult_schema, monkeypatch)
    assert "DP training" in shown and "ε spent" in shown and "3/3" in shown


def test_progress_false_prints_nothing(adult_small, adult_schema, monkeypatch):
    assert _fit_on_a_terminal(adult_small, adult_schema, monkeypatch, progress=False) == ""
