"""The marginals model's row budget (dpgan.tables.fit.row_sample): past it, the reads after N̂ take
one Poisson sample of the rows; the ledger charges what it charged for all of them (no amplification
claimed), streamed and in-memory fits read the same sample, neighbouring tables give the same
public facts, and the GAN reads every row."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import InputError, ParquetSource, Schema, TabularSynthesizer
from dpgan.tables.fit.row_sample import RowSample, draw_row_sample, sampled_batches, sampled_rows
from parquet_parts import split_to_parquet
from test_marginals_model import SCHEMA, table

torch.set_num_threads(1)
ROWS = 3000
BUDGET = 800  # rows: a rate of about 0.27 on ROWS


def fit(data, *, schema: dict | None = SCHEMA, seed: int = 3, **settings) -> TabularSynthesizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(model="marginals", epsilon=1.0, seed=seed, **settings)
        return synth.fit(data, None if schema is None else Schema.from_dict(schema), target="label")


def released(synth: TabularSynthesizer) -> dict[str, torch.Tensor]:
    return {key: value.clone() for key, value in synth.generator.state_dict().items()}


def test_coins_are_the_same_drawn_at_once_or_in_pieces():
    sample = RowSample(0.3, 11)
    whole = sample.coins().keep(1000)
    coins = sample.coins()
    pieces = np.concatenate([coins.keep(n) for n in (1, 255, 256, 488)])
    assert np.array_equal(whole, pieces)
    assert 0.25 < whole.mean() < 0.35  # the rate, not every row
    frame = pd.DataFrame({"x": range(1000)})
    batches = [frame.iloc[i : i + 256] for i in range(0, 1000, 256)]
    cut = pd.concat(list(sampled_batches(iter(batches), sample)), ignore_index=True)
    assert cut["x"].tolist() == np.flatnonzero(whole).tolist()


def test_a_table_under_its_budget_draws_nothing():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert draw_row_sample(500, 800, rng) is None and draw_row_sample(5000, 0, rng) is None
    assert rng.bit_generator.state == state  # a fit under the budget draws what it drew before
    sample = draw_row_sample(4000, 800, rng)
    assert sample is not None and sample.rate == pytest.approx(0.2)
    assert sampled_rows(4000, sample) == 800 and sampled_rows(4000, None) == 4000


@pytest.mark.parametrize("schema", [SCHEMA, None], ids=["hand-schema", "csv-only"])
def test_past_the_budget_the_model_reads_a_sample_and_is_charged_as_for_all_rows(schema):
    data = table(ROWS)
    everything = fit(data, schema=schema, max_examples=0)
    sampled = fit(data, schema=schema, max_examples=BUDGET)
    rate = sampled.training["marginals"]["rows_read_rate"]
    assert rate == pytest.approx(BUDGET / sampled.training["estimated_rows"], rel=1e-4)
    assert 0.2 < rate < 0.35
    assert "rows_read_rate" not in everything.training["marginals"]
    # the same releases at the same σ: the sample buys nothing back (no amplification claimed)
    assert sampled.ledger.to_dict() == everything.ledger.to_dict()
    # ... but it reads other rows, so it releases other tables
    assert any(not torch.equal(v, released(everything)[k]) for k, v in released(sampled).items())


def test_a_streamed_fit_reads_the_in_memory_fits_sample(tmp_path):
    data = table(ROWS)
    directory = split_to_parquet(data, tmp_path / "t", (700, 1900))
    for schema in (SCHEMA, None):
        memory = fit(data, schema=schema, max_examples=BUDGET)
        streamed = fit(ParquetSource(directory, batch_rows=256), schema=schema, max_examples=BUDGET)
        assert streamed.training["marginals"] == memory.training["marginals"]
        assert streamed.ledger.to_dict() == memory.ledger.to_dict()
        if schema is None:
            assert streamed.schema.to_dict() == memory.schema.to_dict()
        for key, value in released(streamed).items():
            assert torch.equal(value, released(memory)[key]), key


def test_neighbouring_tables_give_the_same_public_facts():
    """One odd row more changes no public fact of a sampled fit (its N̂ may move the rate: that is
    the noisy count's release, already in the ledger)."""
    frame = table(ROWS)
    odd = pd.DataFrame({"group": ["zz"], "amount": [1e9], "age": [200.0], "label": ["yes"]})
    facts = []
    for data in (frame, pd.concat([frame, odd], ignore_index=True)):
        synth = fit(data, max_examples=BUDGET)
        record = synth.training["marginals"]
        entries = [(e["name"], e["count"]) for e in synth.privacy_report()["events"]]
        facts.append((record["levels"], len(record["edges"]), entries, "rows_read_rate" in record))
    assert facts[0] == facts[1]


def test_the_default_model_samples_a_class_target_and_keeps_a_users_budget():
    data = table(ROWS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(epsilon=1.0, seed=3, max_examples=BUDGET).fit(data, target="label")
    assert synth.training["recipe"] == "marginals"
    assert synth.training["marginals"]["rows_read_rate"] < 0.35
    assert synth.config.max_examples == BUDGET


def test_only_the_marginals_model_samples():
    """The rule each read asks (FitSettings.row_budget): the marginals model's budget (the user's
    max_examples or its default), the default model's before the schema says which it is, and
    none for the GAN, whose max_examples is a budget of per-example gradients, never of rows."""
    from dpgan.tables.fit.plan import FitSettings
    from dpgan.tables.registration import MARGINALS_MAX_ROWS

    gan = FitSettings.of(TabularSynthesizer(model="dp-gan", max_examples=300))
    assert gan.row_budget(None) == 0 and gan.row_budget(Schema.from_dict(SCHEMA)) == 0
    marginals = FitSettings.of(TabularSynthesizer(model="marginals", max_examples=BUDGET))
    assert marginals.row_budget(None) == BUDGET == marginals.row_budget(Schema.from_dict(SCHEMA))
    assert FitSettings.of(TabularSynthesizer(model="marginals")).row_budget(None) == MARGINALS_MAX_ROWS
    default = TabularSynthesizer()
    default.default_on_release = True  # what fit sets for a target whose kind the DP schema decides
    on_release = FitSettings.of(default)
    assert on_release.row_budget(None) == MARGINALS_MAX_ROWS
    numeric = Schema.from_dict({**SCHEMA, "target": "amount"})
    assert on_release.row_budget(numeric) == 0  # the released schema chose the GAN: it reads every row
    assert on_release.row_budget(Schema.from_dict(SCHEMA)) == MARGINALS_MAX_ROWS


def test_a_bad_row_budget_is_one_line():
    with pytest.raises(InputError):
        TabularSynthesizer(model="marginals", max_examples=-5)


def test_a_numeric_target_learns_its_schema_from_the_sample_then_fits_the_gan():
    """The default model before the schema is released may still become the marginals model, so the
    DP schema reads the sample; the released schema's numeric target then chooses the GAN, whose
    schedule reads N̂ (the whole table's count; its rows: FitSettings.row_budget, tested above)."""
    data = table(ROWS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(epsilon=1.0, seed=3, max_examples=BUDGET, max_steps=2)
        synth.fit(data, target="amount")
    assert synth.training["recipe"] != "marginals" and "marginals" not in synth.training
    rows = synth.training["estimated_rows"]
    assert abs(rows - ROWS) < 200  # N̂ counts the whole table
    assert synth.training["expected_batch_size"] == pytest.approx(0.05 * rows)  # L = 5 % of N̂, not of the sample
