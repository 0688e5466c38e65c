"""What a saved model says about itself: its privacy report, read without sampling anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def inspect_model(model_dir: str | Path) -> dict[str, Any]:
    """The saved model's privacy report (ε by every accountant, the ledger, the schema's source)."""
    from dpgan.synthesizers import load_model

    return load_model(model_dir).privacy_report()
