"""Series as a kind of the registry (dpgan.kinds): the words, the facade, the command line's
functions and flags, the loop's defaults the help states, inspect's line and the audit. Loading
this module loads nothing else: every name below is an import path, loaded on first use."""

from __future__ import annotations

from dpgan.kinds import Kind, register

# the loop's defaults of a series GAN (SEQUENCE_DEFAULTS over TrainingConfig's; pinned by tests/cli/test_cli_help.py)
SEQUENCE_LOOP = {"epochs": 60.0, "batch_size": 256, "max_steps": 0, "max_examples": 0}

SEQUENCE = register(
    Kind(
        name="sequence",
        order=20,
        facade="dpgan.synthesizers.sequence:SequenceSynthesizer",
        description="series in a long table",
        noun="series",
        units="series",
        unit_of_privacy="one series (add or remove one series)",
        section=("series", "series (--kind sequence)", "a long table, one row per reading"),
        fit="dpgan.cli.series:fit_command",
        sample="dpgan.cli.series:sample_command",
        evaluate="dpgan.cli.series:evaluate_command",
        settings=("dpgan.sequences.settings:SequenceSettings",),
        models="dpgan.sequences.settings:SEQUENCE_MODELS",
        flags=(
            "schema",
            "bounds",
            "categories",
            "id_column",
            "value_columns",
            "time_column",
            "length",
            "label_column",
            "entity_column",
            "max_series_per_entity",
        ),  # fmt: skip
        add_flags="dpgan.cli.series:add_fit_flags",
        loop_defaults=SEQUENCE_LOOP,
        loop_words="series",
        inspect_line="model: {model}; unit of privacy: {unit_of_privacy}",
        audit="dpgan.evaluation.audit.target:sequence_model_target",
        distributed=True,  # a statistics model on series read in blocks (dpgan.sequences.series_file)
        distributed_words="series (a statistics model on an .npy file or a Parquet long table)",
    )
)
