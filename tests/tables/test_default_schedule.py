"""The table GAN's default schedule: 60 epochs, at most TABLE_MAX_EXAMPLES per-example gradients.

The cap is a function of the public settings and the noisy row count N̂ only, a user's `epochs` or
`max_examples` replaces it, and the ledger charges the steps that ran (bench/notes/37-scale.md)."""

from __future__ import annotations

import math

import pytest

from dpgan import TabularSynthesizer
from dpgan.tables.fit import options
from dpgan.tables.registration import TABLE_MAX_EXAMPLES
from dpgan.training.critic_step import CRITIC_EVENT
from dpgan.training.schedule import gan_schedule_for


def steps(synth: TabularSynthesizer, rows: float) -> int:
    return gan_schedule_for(synth.config, rows, synth.recipe.dp_on).steps


def test_a_large_table_runs_a_fixed_number_of_steps_and_a_small_one_its_60_epochs():
    synth = TabularSynthesizer(epsilon=3.0)
    assert synth.config.epochs == 60.0 and synth.config.max_examples == TABLE_MAX_EXAMPLES
    capped = math.ceil(TABLE_MAX_EXAMPLES / 1024)
    # flights ×1, ×3, ×10: the same steps, whatever the rows (the batch is 1,024 above 20,480 rows)
    assert steps(synth, 336_776.0) == steps(synth, 1_010_328.0) == steps(synth, 3_367_760.0) == capped
    # below 2M / 60 ≈ 33,333 noisy rows the cap does not bind: the same steps as 60 epochs uncapped
    uncapped = TabularSynthesizer(epsilon=3.0, max_examples=0)
    for rows in (600.0, 19_536.0, 32_561.0, 33_000.0):
        assert steps(synth, rows) == steps(uncapped, rows) == math.ceil(60 * rows / min(1024, 0.05 * rows))
    assert steps(uncapped, 336_776.0) == math.ceil(60 * 336_776 / 1024) > 10 * capped


def test_a_user_s_epochs_or_budget_replace_the_default_cap():
    assert TabularSynthesizer(epochs=60).config.max_examples == 0  # the user's passes run in full
    assert steps(TabularSynthesizer(epochs=60), 336_776.0) == math.ceil(60 * 336_776 / 1024)
    assert TabularSynthesizer(max_examples=500_000).config.max_examples == 500_000
    assert TabularSynthesizer(epochs=5, max_examples=500_000).config.max_examples == 500_000  # both: both
    # a recipe with a schedule of its own keeps it (dtgan-g: 10 passes at batch 64)
    assert TabularSynthesizer(recipe="dtgan-g").config.max_examples == 0


def test_cli_epochs_replace_the_default_cap():
    """The command line passes only the loop flags given: --epochs alone turns the cap off."""
    from argparse import Namespace

    from dpgan.cli.arguments import loop_settings

    given = loop_settings(Namespace(epochs=60.0, max_steps=None, max_examples=None, batch_size=None))
    assert given == {"epochs": 60.0} and TabularSynthesizer(**given).config.max_examples == 0


def test_neighbouring_tables_run_the_same_capped_steps_and_the_ledger_charges_them(monkeypatch, adult, adult_schema):
    """A smaller budget (so that it binds on a test-sized table): two tables one row apart run the
    same steps, those the cap allows, and the critic's event is charged for exactly those."""
    monkeypatch.setattr(options, "TABLE_MAX_EXAMPLES", 1_000)
    table = adult[0].head(2_000)
    settings = {"epsilon": 3.0, "batch_size": 20, "seed": 0, "accountant": "rdp"}
    runs = []
    for rows in (table, table.iloc[1:]):  # neighbours: one row removed
        synth = TabularSynthesizer(**settings).fit(rows, schema=adult_schema)
        events = {entry.name: entry for entry in synth.ledger.entries}
        runs.append((synth.training["steps"], events[CRITIC_EVENT].count))
    assert runs[0] == runs[1] == (50, 50)  # ⌈1,000 / 20⌉, not 60 epochs' ⌈60 · N̂ / 20⌉ ≈ 6,000
    given = TabularSynthesizer(**settings, epochs=1.0).fit(table, schema=adult_schema)
    assert given.training["steps"] == pytest.approx(2_000 / 20, rel=0.05)  # the user's epoch runs in full
    assert {e.name: e for e in given.ledger.entries}[CRITIC_EVENT].count == given.training["steps"]


def test_the_audit_of_a_configuration_rebuilds_the_steps_a_fit_runs():
    """`dpgan audit --rows N` calibrates σ for the default fit's steps: capped on a large table."""
    from dpgan.evaluation.audit.target import from_settings

    large = from_settings(epsilon=3.0, rows=336_776)
    assert large.steps == math.ceil(TABLE_MAX_EXAMPLES / 1024)
    assert from_settings(epsilon=3.0, rows=336_776, epochs=60).steps == math.ceil(60 * 336_776 / 1024)
    assert from_settings(epsilon=3.0).steps == math.ceil(60 * 32_561 / 1024)  # Adult: as before
