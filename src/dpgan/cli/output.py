"""What the command line prints besides results: progress bars (tqdm, on stderr) with a fit's steps
and the ε spent so far (dpgan.training.progress_bar, shared with the library), `evaluate`'s and
`audit`'s stages (`--quiet` turns them off), the ledger's warning, and numbers as the commands
show them."""

from __future__ import annotations

import sys
from typing import Any

from dpgan.training.progress_bar import ProgressBar  # the library's bar (its facades show it too)


class StageProgress:
    """tqdm bars for `evaluate`: one bar per stage ("utility", "fidelity", ...), on stderr."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.bar: Any = None
        self.stage: str | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        group = stage.split(":")[0]
        if self.bar is None or group != self.stage:
            self.close()
            self.bar, self.stage = tqdm(total=total, desc=group, file=sys.stderr, leave=True), group
        self.bar.total = max(total, 1)
        self.bar.set_postfix_str(stage[len(group) + 1 :].strip(), refresh=False)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


__all__ = ["ProgressBar", "StageProgress"]


def print_report_warning(report: dict[str, Any]) -> None:
    if report.get("warning"):
        print("WARNING: " + report["warning"])


def short(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"
