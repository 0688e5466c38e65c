"""Progress of long attacks: the caller's `progress(stage, done, total)` or tqdm bars on stderr.

Same convention as the rest of `dpgan.evaluation`: one stage name per bar, `done` out of `total`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

Progress = Callable[[str, int, int], None]


class TqdmProgress:
    """One tqdm bar per stage on stderr (hidden when stderr is not a terminal)."""

    def __init__(self) -> None:
        self.bars: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        from tqdm import tqdm

        bar = self.bars.get(stage)
        if bar is None:
            bar = self.bars[stage] = tqdm(total=max(total, 1), desc=stage, file=sys.stderr, disable=None)
        bar.total = max(total, 1)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()
            del self.bars[stage]

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        self.bars.clear()


def reporter(progress: Progress | None) -> Progress:
    """The callback to use: the caller's, or tqdm bars."""
    return progress if progress is not None else TqdmProgress()
