"""A table model's privacy report details in words: the recipe, whether the guarantee covers the
schema, the input rule, the repairs' noisy counts as a person reads them, and the public facts of
the fit (its warm start's table, its selection's choice)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpgan.tables.fit.preparation import repair_noise_std, repairs_summary
from dpgan.tables.inference.infer import SOURCE_NOT_PRIVATE
from dpgan.tables.reading.conform import INPUT_RULE

UNSAFE_SCHEMA_NOTE = (
    "The schema (bounds and category lists) was read from the data WITHOUT differential privacy: "
    "the guarantee below covers training only, not the schema."
)


def table_report_details(recipe: str, training: Mapping[str, Any]) -> dict[str, Any]:
    """The table kind's part of api.Synthesizer.privacy_report, from the training record."""
    covers = training.get("schema_source") != SOURCE_NOT_PRIVATE
    details: dict[str, Any] = {
        "recipe": recipe,
        "schema_source": training.get("schema_source"),
        "guarantee_covers_schema": covers,
        "input_rule": INPUT_RULE,
    }
    if not covers:
        details["warning"] = UNSAFE_SCHEMA_NOTE
    # the noisy counts of cells mapped into the schema, as a person reads them (rounded, above the noise)
    repairs, sigma = training.get("preprocessing_repairs"), training.get("preprocessing_noise_multiplier")
    if isinstance(repairs, dict) and isinstance(sigma, (int, float)):
        details["repairs_summary"] = repairs_summary(repairs, repair_noise_std(sigma))
    for key in ("public_data", "selection"):  # public: what warm-started G, what the selection chose
        if training.get(key) is not None:
            details[key] = training[key]
    return details


__all__ = ["UNSAFE_SCHEMA_NOTE", "table_report_details"]
