"""The bar a person sees while a GAN fits: steps and the ε spent so far (tqdm, on stderr).

The command line shows it unless `--quiet`; the library's facades show it by default where a
person is watching (stderr is a terminal, or the code runs in a Jupyter notebook) and not where
output goes to a log or a pipe. `fit(progress=False)` turns it off, `progress=True` forces it, a
callable receives (step, total, ε) instead. Fits that a library routine runs many times (the
attacks' shadow models) run under `quiet_fits()`: their own bar would drown the caller's.

Light on purpose (tqdm loads on the first step): the command line imports it before any command
runs. Showing progress reads nothing private: the ε shown is the ledger's (training/progress.py).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TextIO

from dpgan.errors import InputError

if TYPE_CHECKING:
    from dpgan.training.progress import FitProgressFn

_QUIET: ContextVar[bool] = ContextVar("dpgan_quiet_fits", default=False)


class ProgressBar:
    """tqdm bar with steps and the ε spent so far (by the accountant in use)."""

    def __init__(self, enabled: bool = True, accountant: str = "pld") -> None:
        self.enabled = enabled
        self.accountant = accountant
        self.bar: Any = None

    def __call__(self, step: int, total: int, epsilon: float) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="step", desc="DP training", file=sys.stderr)
        self.bar.update(step - self.bar.n)
        spent = "no ε (not DP)" if math.isnan(epsilon) else f"ε spent {epsilon:.3f} ({self.accountant})"
        self.bar.set_postfix_str(spent)
        if step >= total:
            self.bar.close()


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (its stderr is no terminal, yet a person reads it)."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    return type(shell).__name__ == "ZMQInteractiveShell"


def watching(stream: TextIO | None = None, notebook: bool | None = None) -> bool:
    """Whether a person watches `stream` (default stderr): a terminal, or a notebook's output."""
    if notebook if notebook is not None else in_notebook():
        return True
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


@contextmanager
def quiet_fits() -> Iterator[None]:
    """Fits inside show no bar by default (an explicit `progress=` still reports)."""
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


def fit_progress(
    progress: FitProgressFn | bool | None,
    accountant: str,
    *,
    stream: TextIO | None = None,
    notebook: bool | None = None,
) -> FitProgressFn | None:
    """What a facade's fit reports to: None (the default) is a bar where a person watches
    (`watching`) outside `quiet_fits()`; True a bar, False nothing; a callable itself."""
    if progress is None:
        progress = not _QUIET.get() and watching(stream, notebook)
    if progress is True:
        return ProgressBar(True, accountant)
    if progress is False:
        return None
    if callable(progress):
        return progress
    raise InputError("progress must be True, False, None (a bar where a person watches) or a callable")


__all__ = ["ProgressBar", "fit_progress", "in_notebook", "quiet_fits", "watching"]
