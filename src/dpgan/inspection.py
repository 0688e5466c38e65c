"""What a saved model says about itself: its privacy report, read without sampling anything.

`dpgan inspect` should answer in about a second, so the report is read from model.json alone
(serialization.REPORT_KEY: written by the facade's `privacy_report()` when the model was saved),
without PyTorch, pandas or dp-accounting. The stored report is used only where it agrees with the
ledger, ε and training record beside it in the same hash-checked file; a model saved before the
report was stored (or one whose report disagrees) is loaded and its report computed afresh.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpgan.serialization import REPORT_KEY, read_model_metadata

# what ledger.report adds to each saved entry (dpgan.privacy.accounting.PrivacyLedger.report)
_REPORT_ONLY = ("mechanism_text", "epsilon_alone")


def inspect_model(model_dir: str | Path) -> dict[str, Any]:
    """The saved model's privacy report (ε by every accountant, the ledger, the schema's source)."""
    metadata = read_model_metadata(model_dir)  # refuses a foreign, incomplete or changed directory
    stored = metadata.get(REPORT_KEY)
    if stored_report_agrees(stored, metadata):
        return dict(stored)
    from dpgan.synthesizers import load_model

    return load_model(model_dir).privacy_report()


def stored_report_agrees(report: Any, metadata: dict[str, Any]) -> bool:
    """Whether a stored report states the ledger, ε, δ and training record of its model file."""
    if not isinstance(report, dict):
        return False
    if report.get("training") != metadata.get("training") or report.get("epsilon") != metadata.get("epsilon"):
        return False
    if report.get("certified") is False:  # a recipe that claims no ε: the ledger as saved
        return report.get("ledger") == metadata.get("ledger")
    events = report.get("events")
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        return False
    entries = [{k: v for k, v in e.items() if k not in _REPORT_ONLY} for e in events]
    same_budget = all(report.get(key) == metadata.get(key) for key in ("delta", "accountant"))
    return entries == metadata.get("ledger") and same_budget
