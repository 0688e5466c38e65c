"""Run a call on a thread of its own: its Python frames start at the bottom of a fresh frame stack.

Why: CPython 3.11 keeps frames in 16 KiB chunks and frees a chunk as soon as the frame at its base
returns. Importing dp-accounting and scipy (dpgan.privacy.composition, loaded on the first ε asked)
runs loops of small calls (scipy.stats formats its distributions' docstrings: about 200,000 string
calls); when their calls reach just past a chunk's end, each call maps a chunk and each return
unmaps it (55,000 pairs in a default image fit under `python -m dpgan`). Whether they do depends on
how deep the stack already is where the import happens (`python -m dpgan` and the `dpgan` script
differ by a few frames), so a refactor that moves a frame anywhere above the first ε added 0.3 s of
system time to the default image fit (bench/notes/31). On a fresh thread the import runs at its own
depth, the same for every entry point. The call shares nothing but its arguments and its result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def on_fresh_stack(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a new thread, waited for; its exception, if any, raised here."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = fn(*args)
        except BaseException as exc:  # re-raised in the caller's thread below
            outcome["error"] = exc

    # a daemon, so that an interrupt (Ctrl-C during a long composition) ends the process at once
    thread = threading.Thread(target=run, name="dpgan-accounting", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


__all__ = ["on_fresh_stack"]
