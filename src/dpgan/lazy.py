"""Names a package offers that load on first use (PEP 562): a data kind's package lists where its
names live, so that a module of the kind (its settings, read by the command line before pandas or
PyTorch load) imports only what it needs."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, places: Mapping[str, str]) -> Callable[[str], Any]:
    """The package's `__getattr__`: each name of `places` from its module, on first use."""

    def __getattr__(name: str) -> Any:
        if name not in places:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(places[name]), name)

    return __getattr__


__all__ = ["lazy_names"]
