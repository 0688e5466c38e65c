"""dpgan: differentially private synthetic data with GANs (DP-SGD, one privacy ledger).

Names are imported lazily so that light commands (`dpgan privacy`) do not load PyTorch.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "ColumnSpec": "dpgan.schema",
    "Schema": "dpgan.schema",
    "DPGanError": "dpgan.errors",
    "InputError": "dpgan.errors",
    "ModelFileError": "dpgan.errors",
    "BudgetError": "dpgan.errors",
    "TabularSynthesizer": "dpgan.synthesizers",
    "ParquetSource": "dpgan.parquet_source",
    "SequenceSynthesizer": "dpgan.synthesizers",
    "ImageSynthesizer": "dpgan.synthesizers",
}
__all__ = [*_EXPORTS, "__version__", "datasets"]


def __getattr__(name: str) -> Any:
    if name == "datasets":
        return importlib.import_module("dpgan.datasets")
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'dpgan' has no attribute {name!r}")
