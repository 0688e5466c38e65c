"""Images as a data kind: checks, ``.npz``/PNG-folder I/O and contact sheets (the facade lives in synthesizers).

Its names load on first use (PEP 562), so that a module of the kind (its settings, read by the
command line before pandas or PyTorch load) imports only what it needs."""

from __future__ import annotations

import importlib
from typing import Any

_PLACES = {
    "ImageSet": "dpgan.images.checks",
    "check_images": "dpgan.images.checks",
    "to_uint8": "dpgan.images.checks",
    "to_unit_range": "dpgan.images.checks",
    "read_images": "dpgan.images.io",
    "write_images": "dpgan.images.io",
    "write_contact_sheet": "dpgan.images.sheet",
}


def __getattr__(name: str) -> Any:
    if name not in _PLACES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_PLACES[name]), name)


__all__ = sorted(_PLACES)
