"""Tables as a kind of the registry (dpgan.kinds): the words, the facade, the command line's
functions and flags, and the loop's defaults the help states. Loading this module loads nothing
else: every name below is an import path, loaded when a command first uses it."""

from __future__ import annotations

from dpgan.kinds import Kind, register

# the default budget of per-example gradients of a table fit when the user gives neither epochs nor
# max_examples (dpgan.tables.fit.options.default_examples_cap says why; bench/notes/37-scale.md)
TABLE_MAX_EXAMPLES = 2_000_000
# the loop's defaults of a table fit (TrainingConfig's, and the budget above; pinned by
# tests/cli/test_cli_help.py), and the one table recipe with a loop of its own
TABLE_LOOP = {"epochs": 60.0, "batch_size": 1024, "max_steps": 0, "max_examples": TABLE_MAX_EXAMPLES}
DTGAN_G_LOOP = {"epochs": 10.0, "batch_size": 64, "max_examples": 0}
# the marginals model reads rows, each once: its max_examples is a row budget, past which it reads
# a Poisson sample (dpgan.tables.fit.row_sample). 100,000: the smallest of 25k, 50k, 100k and 200k
# rows whose TSTR AUC matched reading all 202,066 of flights' training rows at ε = 1 and 3
# (validation split, 2 seeds: 0.924 vs 0.924 and 0.924 vs 0.923; bench/notes/37-scale.md, "The
# marginals model's row budget"). Every other bench table is under it, so reads all its rows.
MARGINALS_MAX_ROWS = 100_000
MARGINALS_LOOP = {"max_examples": MARGINALS_MAX_ROWS}

TABLE = register(
    Kind(
        name="table",
        order=10,
        facade="dpgan.synthesizers.tabular:TabularSynthesizer",
        description="a table of rows",
        noun="tables",
        units="rows",
        unit_of_privacy="one row (add or remove one row)",
        section=("tables", "tables (--kind table, the default)", None),
        fit="dpgan.cli.tables:fit_command",
        sample="dpgan.cli.tables:sample_command",
        evaluate="dpgan.cli.tables:evaluate_command",
        settings=("dpgan.tables.settings:TableSettings",),
        models="dpgan.recipes:TABLE_MODELS",
        flags=(
            "schema",
            "bounds",
            "categories",
            "target",
            "categorical",
            "strict",
            "stream",
            "memory_budget_mb",
            "schema_from_data_without_dp",
            "keep_identifier_columns",
            "key",
            "hierarchy",
            "public_data",
            "public_warm_start_steps",
            "checkpoint",
            "checkpoint_every",
            "condition_column",
            "geo",
            "recipe",
        ),  # fmt: skip
        add_flags="dpgan.cli.tables:add_fit_flags",
        loop_defaults=TABLE_LOOP,
        loop_words="tables",
        recipe_loops={"dtgan-g": DTGAN_G_LOOP, "marginals": MARGINALS_LOOP},
        audit="dpgan.evaluation.audit.target:table_model_target",
        learned="dpgan.tables.schema.learned:model_learned",
        commands=("dpgan.cli.demo:add_demo_command", "dpgan.cli.schema:add_schema_command"),
        default=True,
        unmarked_files=True,
        distributed=True,
    )
)
