"""dpgan: differentially private synthetic data with GANs (DP-SGD, one privacy ledger).

Names are imported lazily so that light commands (`dpgan privacy`) do not load PyTorch. `__all__`
is the public API, and `dir(dpgan)` lists it and nothing else (no helper of this file, no
submodule a caller happened to import).
"""

from __future__ import annotations

import importlib as _importlib

__version__ = "0.1.0"

_EXPORTS = {
    "TabularSynthesizer": "dpgan.synthesizers",
    "SequenceSynthesizer": "dpgan.synthesizers",
    "ImageSynthesizer": "dpgan.synthesizers",
    "EntitySynthesizer": "dpgan.entities.facade",
    "load_model": "dpgan.synthesizers",
    "Schema": "dpgan.tables.schema.table",
    "ColumnSpec": "dpgan.tables.schema.columns",
    "ParquetSource": "dpgan.tables.reading.parquet_source",
    "DPGanError": "dpgan.errors",
    "InputError": "dpgan.errors",
    "ModelFileError": "dpgan.errors",
    "BudgetError": "dpgan.errors",
}
__all__ = [*_EXPORTS, "datasets", "__version__"]


def __getattr__(name: str) -> object:
    if name == "datasets":
        return _importlib.import_module("dpgan.datasets")
    if name in _EXPORTS:
        return getattr(_importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'dpgan' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
