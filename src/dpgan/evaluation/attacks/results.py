"""Shapes shared by every attack result: the "skipped" form, and strict-JSON values."""

from __future__ import annotations

from typing import Any

from dpgan.evaluation.jsonable import to_jsonable


def skipped(reason: str) -> dict[str, Any]:
    """An attack that did not run, and why (shown as such in the report)."""
    return {"skipped": True, "reason": reason}


jsonable = to_jsonable  # one implementation for metrics.json and attack results
