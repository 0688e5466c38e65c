"""Fixed-length series as a data kind: the public schema and the codec (long table or array ↔ units).

Its names load on first use (PEP 562), so that a module of the kind (its settings, read by the
command line before pandas or PyTorch load) imports only what it needs."""

from __future__ import annotations

import importlib
from typing import Any

_PLACES = {
    "SequenceSchema": "dpgan.sequences.schema",
    "ValueColumn": "dpgan.sequences.schema",
}


def __getattr__(name: str) -> Any:
    if name not in _PLACES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_PLACES[name]), name)


__all__ = sorted(_PLACES)
