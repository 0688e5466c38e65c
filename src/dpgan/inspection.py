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

from dpgan import kinds
from dpgan.serialization import REPORT_KEY, read_model_metadata

# what ledger.report adds to each saved entry (dpgan.privacy.accounting.PrivacyLedger.report)
_REPORT_ONLY = ("mechanism_text", "epsilon_alone")


def inspect_model(model_dir: str | Path, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """The saved model's privacy report (ε by every accountant, the ledger, the schema's source);
    `metadata`: its model.json as `read_model_metadata` checked it, when the caller holds it already."""
    if metadata is None:
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


def inspect_learned(model_dir: str | Path, metadata: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """What the saved model learned, per column ({"source", "columns": [{"name", "text", ...}],
    "rules"}): its kind's answer (dpgan.kinds.Kind.learned) from model.json alone, or None for a kind
    without one. Public: it reads the released schema, never the data. `metadata` as `inspect_model`."""
    if metadata is None:
        metadata = read_model_metadata(model_dir)
    kind = kinds.kind_of_metadata(metadata, model_dir)
    return None if kind.learned is None else kind.load("learned")(metadata)


def learned_lines(learned: dict[str, Any]) -> list[str]:
    """`inspect_learned`'s block as `dpgan inspect` prints it: a heading, one line per column (names
    aligned), the rules."""
    entries = learned["columns"]
    width = max([len(str(e["name"])) for e in entries], default=0)
    lines = [f"what the model learned, per column (its public schema: {learned['source']}):"]
    lines += [f"  {str(e['name']).ljust(width)}  {e['text']}" for e in entries]
    if learned.get("rules"):
        lines.append("rules kept on every sampled row: " + "; ".join(learned["rules"]))
    return lines
