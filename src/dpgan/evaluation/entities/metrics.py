"""`evaluate_entities`: synthetic entities scored against real ones, in the entity's words.

    metrics = evaluate_entities((parents, events), synth.sample(1000), (test_parents, test_events), synth)

Each of `real` (the tables the model was fitted on), `synthetic` and `test` (real held-out entities the
model never saw) is a pair (parents, events); `model` is the EntitySynthesizer that made the synthetic
pair (its schema, and its privacy ledger for the report) or the EntitySchema alone (no privacy section).
The result is the `metrics.json` of `dpgan evaluate --kind entity`; report.py turns it into a page.

Parent-level TSTR (train on synthetic, test on real): the tables' four models
(dpgan.evaluation.tables.ml_efficacy) predict one parent column (`target`; default: the parents' first
categorical column in schema order) from the entity summaries (summaries.py: the other parent columns
and the events' aggregates; `parent_columns=False` keeps the aggregates alone, the task "what is this
plane, from its flights?"), trained on the synthetic entities (TSTR) or on the real training ones
(TRTR), scored on the held-out entities.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from dpgan.entities.schema import EntitySchema
from dpgan.errors import InputError
from dpgan.evaluation.entities.distributions import events_per_entity_scores, marginals
from dpgan.evaluation.entities.frames import SIDES, EntityFrames, entity_frames, events_per_entity
from dpgan.evaluation.entities.headline import entity_headline
from dpgan.evaluation.entities.integrity import integrity
from dpgan.evaluation.entities.membership import entity_membership
from dpgan.evaluation.entities.summaries import aggregate_names, entity_summaries, summary_kinds
from dpgan.evaluation.entities.two_sample import two_sample_auc
from dpgan.evaluation.jsonable import to_jsonable
from dpgan.evaluation.tables.fidelity import as_labels, is_numeric_kind
from dpgan.evaluation.tables.ml_efficacy import Progress, ml_efficacy

WORDS = {"real": "real", "synthetic": "synthetic", "test": "held-out"}
Pair = tuple[pd.DataFrame, pd.DataFrame]


def default_target(schema: EntitySchema) -> str:
    """The parents' first categorical column in schema order (else their first column)."""
    for spec in schema.parents.columns:
        if not is_numeric_kind(spec.kind):
            return spec.name
    return schema.parents.columns[0].name


def schema_of(model: Any) -> tuple[EntitySchema, dict[str, Any] | None]:
    """The schema and the privacy report of `model` (an EntitySynthesizer), or `model` as the schema."""
    if isinstance(model, EntitySchema):
        return model, None
    schema = getattr(model, "schema", None)
    if not isinstance(schema, EntitySchema):
        raise InputError("give the EntitySynthesizer that made the synthetic entities, or their EntitySchema")
    return schema, model.privacy_report()


def entity_tstr(
    summaries: dict[str, pd.DataFrame],
    schema: EntitySchema,
    target: str | None = None,
    *,
    parent_columns: bool = True,
    models: Sequence[str] | None = None,
    seed: int = 0,
    n_jobs: int = 1,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Parent-level TSTR on the summaries of each side ("real", "synthetic", "test"); see the module."""
    target = default_target(schema) if target is None else target
    if target not in schema.parents.names:
        raise InputError(f"target {target!r} is not a parent column ({', '.join(schema.parents.names)})")
    kinds = summary_kinds(schema)
    features = [c for c in (kinds if parent_columns else aggregate_names(schema)) if c != target]
    columns = [*features, target]
    if not is_numeric_kind(kinds[target]) and as_labels(summaries["real"][target]).nunique() < 2:
        raise InputError(f"target {target!r} has a single class in the real training entities: nothing to predict")
    utility = ml_efficacy(
        summaries["real"][columns], summaries["synthetic"][columns], summaries["test"][columns], target,
        {c: kinds[c] for c in columns}, models=models, seed=seed, n_jobs=n_jobs, progress=progress,
    )  # fmt: skip
    return {"target": target, "features": features} | utility


def evaluate_entities(
    real: Pair,
    synthetic: Pair,
    test: Pair,
    model: Any,
    *,
    target: str | None = None,
    parent_columns: bool = True,
    models: Sequence[str] | None = None,
    seed: int = 0,
    n_jobs: int = 1,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Integrity, events per entity, both tables' marginals, the two-sample test on entity summaries,
    the parent-level TSTR and membership inference on whole entities (module docstring), as JSON."""
    if not isinstance(n_jobs, int) or n_jobs < 1:
        raise InputError(f"n_jobs (--jobs) must be a positive number of cores, not {n_jobs!r}")
    schema, privacy = schema_of(model)
    if target is not None and target not in schema.parents.names:  # before any work: one line
        raise InputError(f"target {target!r} is not a parent column ({', '.join(schema.parents.names)})")
    frames: dict[str, EntityFrames] = {}
    for side, pair in zip(SIDES, (real, synthetic, test)):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise InputError(f"the {WORDS[side]} entities are a pair of tables: (parents, events)")
        frames[side] = entity_frames(*pair, schema, WORDS[side])
    for side in SIDES:  # as the tables' evaluate: an empty table is one line (events may be empty)
        if not len(frames[side].parents):
            raise InputError(f"the {WORDS[side]} parents table is empty")
    if progress is not None:
        progress("entities: summaries", 0, 4)
    summaries = {side: entity_summaries(f, schema) for side, f in frames.items()}
    counts = {side: events_per_entity(f) for side, f in frames.items()}
    metrics: dict[str, Any] = {
        "kind": "entity",
        "key": schema.key,
        "entities": {side: len(s) for side, s in summaries.items()},
        "events": {side: len(f.events) for side, f in frames.items()},
        "integrity": {side: integrity(frames[side], schema) for side in ("synthetic", "real")},
        "events_per_entity": events_per_entity_scores(counts, schema.max_events),
        "marginals": marginals(frames["real"], frames["synthetic"], schema),
    }
    if progress is not None:
        progress("entities: two-sample test", 1, 4)
    kinds = summary_kinds(schema)
    metrics["two_sample"] = two_sample_auc(summaries["test"], summaries["synthetic"], kinds, seed=seed, n_jobs=n_jobs)
    if progress is not None:
        progress("entities: membership", 2, 4)
    metrics["membership"] = entity_membership(summaries["real"], summaries["test"], summaries["synthetic"], seed=seed)
    if progress is not None:
        progress("entities: TSTR", 3, 4)
    metrics["tstr"] = entity_tstr(summaries, schema, target, parent_columns=parent_columns, models=models,
                                  seed=seed, n_jobs=n_jobs)  # fmt: skip
    # the real side of the headline: held-out entities against the training ones, by the same measures
    heldout = {
        "marginals": marginals(frames["real"], frames["test"], schema),
        "two_sample_auc": two_sample_auc(summaries["test"], summaries["real"], kinds, seed=seed, n_jobs=n_jobs)["auc"],
    }
    metrics["headline"] = entity_headline(metrics, heldout)
    metrics["privacy"] = privacy
    if progress is not None:
        progress("entities: done", 4, 4)
    return to_jsonable(metrics)


__all__ = ["default_target", "entity_tstr", "evaluate_entities"]
