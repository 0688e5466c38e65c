"""Entities as a kind of the registry (dpgan.kinds): a parent table and its events, the entity as
the unit of privacy. Loading this module loads nothing else: every name below is an import path."""

from __future__ import annotations

from dpgan.kinds import Kind, register

ENTITY = register(
    Kind(
        name="entity",
        order=40,
        facade="dpgan.entities.facade:EntitySynthesizer",
        description="a parent table with --events",
        noun="entities",
        units="entities",
        unit_of_privacy="one entity (its parent row and all its events)",
        section=("entities", "entities (--kind entity)", "DATA is the parent table; --events the events table"),
        fit="dpgan.cli.entities:fit_command",
        sample="dpgan.cli.entities:sample_command",
        evaluate="dpgan.cli.entities:evaluate_command",
        settings=("dpgan.entities.settings:EntitySettings",),
        models="dpgan.entities.settings:ENTITY_MODELS",
        flags=(
            "schema",
            "bounds",
            "categories",
            "time_column",
            "events",
            "key",
            "max_events",
            "time_min",
            "time_max",
            "time_format",
        ),  # fmt: skip
        add_flags="dpgan.cli.entities:add_fit_flags",
        distributed=True,  # a statistics model on Parquet tables read in buckets (dpgan.entities.parquet)
        distributed_words="entities (a statistics model on Parquet tables)",
        inspect_line="model: {model}; unit of privacy: {unit_of_privacy}",
    )
)
