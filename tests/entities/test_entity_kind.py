"""The entity kind (dpgan.entities): the unit rule on neighbouring inputs that add or remove one
entity with all its events, the ledger and each release's sensitivity, sampling's promises, save and
load without pickle, bad input in one line, and the command line end to end."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpgan.cli import main
from dpgan.entities.facade import EntitySynthesizer
from dpgan.entities.own_values import OWN
from dpgan.entities.reader import read_entities
from dpgan.entities.schema import EntitySchema, TimeSpec, parse_times
from dpgan.entities.settings import EntitySettings
from dpgan.entities.statistics import COUNTS, EVENTS, PARENTS, TIMES, EntityStatistics
from dpgan.errors import InputError
from dpgan.inspection import inspect_model
from dpgan.synthesizers import load_model

CATEGORIES = {"kind": ["a", "b", "c"], "tag": ["x", "y"]}
BOUNDS = {"age": (0.0, 100.0), "amount": (-5.0, 20.0)}
FORMAT = "%Y-%m-%d %H:%M"
WINDOW = ("2020-01-01 00:00", "2020-03-01 00:00")
PUBLIC = dict(key="id", time_column="when", time_bounds=WINDOW, time_format=FORMAT, categories=CATEGORIES,
              bounds=BOUNDS, max_events=4)  # fmt: skip


def tables(n: int = 60, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    kinds = rng.choice(["a", "b", "c"], n)
    parents = pd.DataFrame({"id": [f"P{i}" for i in range(n)], "kind": kinds, "age": rng.integers(20, 80, n)})
    rows = []
    for i, kind in enumerate(kinds):
        for _ in range(rng.poisson({"a": 1, "b": 3, "c": 8}[kind])):
            day, hour = int(rng.integers(1, 28)), int(rng.integers(0, 24))
            rows.append((f"P{i}", f"2020-01-{day:02d} {hour:02d}:00", float(rng.normal(3, 2)), rng.choice(["x", "y"])))
    return parents, pd.DataFrame(rows, columns=["id", "when", "amount", "tag"])


def with_heavy_entity(parents: pd.DataFrame, events: pd.DataFrame, count: int = 500) -> tuple:
    """The neighbour: one more entity with `count` events (far more than k), all alike."""
    heavy = pd.DataFrame({"id": ["HEAVY"], "kind": ["c"], "age": [50]})
    its = pd.DataFrame({"id": ["HEAVY"] * count, "when": ["2020-02-01 10:00"] * count, "amount": [19.0] * count,
                        "tag": ["y"] * count})  # fmt: skip
    return pd.concat([parents, heavy], ignore_index=True), pd.concat([events, its], ignore_index=True)


def fit(parents, events, epsilon=3.0, seed=0, **settings) -> EntitySynthesizer:
    return EntitySynthesizer(epsilon=epsilon, seed=seed, **settings).fit(parents, events, **PUBLIC)


def public_facts(synth: EntitySynthesizer) -> tuple:
    """What a release may show without DP: the schema, the model's form and the ledger's entries."""
    entries = [(e.name, e.noise_multiplier, e.count) for e in synth.ledger.entries]
    shapes = {key: value.shape for key, value in synth.generator.arrays().items()}
    return synth.schema.to_dict(), synth.generator.form(), shapes, entries


# ------------------------------------------------------------------ the unit rule


@pytest.mark.parametrize("model", ["linked", "independent"])
def test_adding_an_entity_with_far_more_than_k_events_changes_no_public_fact(model):
    parents, events = tables()
    assert public_facts(fit(parents, events, model=model)) == public_facts(
        fit(*with_heavy_entity(parents, events), model=model)
    )


def test_removing_the_only_entity_leaves_a_fit_that_runs_with_the_same_public_facts():
    parents, events = tables(n=1)
    empty_parents, empty_events = parents.iloc[:0], events.iloc[:0]
    one, none = fit(parents, events), fit(empty_parents, empty_events)
    assert public_facts(one) == public_facts(none)
    assert none.sample(5, seed=0)[0].shape[0] == 5  # an empty input fits and samples (it is not refused)


def test_orphan_events_and_duplicate_parents_are_dropped_units_and_refuse_nothing():
    parents, events = tables()
    orphans = pd.concat([events, pd.DataFrame({"id": ["NOBODY"] * 3, "when": [WINDOW[0]] * 3, "amount": 1.0,
                                               "tag": "x"})], ignore_index=True)  # fmt: skip
    twice = pd.concat([parents, parents.iloc[:1]], ignore_index=True)
    schema = fit(parents, events).schema
    read = read_entities(twice, orphans, schema, 16, np.random.default_rng(0))
    assert read.tally.dropped == {"events whose key names no parent": 1, "a key with more than one parent row": 1}
    assert read.tally.kept == len(parents) - 1
    assert public_facts(fit(twice, orphans)) == public_facts(fit(parents, events))


def test_an_entity_keeps_at_most_k_events_drawn_uniformly_in_time_order_and_counts_all_of_them():
    parents, events = with_heavy_entity(*tables(), count=500)
    events.loc[events.id == "HEAVY", "when"] = [f"2020-02-{1 + i % 28:02d} {i % 24:02d}:00" for i in range(500)]
    schema = fit(*tables()).schema
    read = read_entities(parents, events, schema, 16, np.random.default_rng(0))
    heavy = 0  # entities are in the text order of their keys: "HEAVY" before "P0"
    assert read.counts[heavy] == 500 and read.read[heavy] == schema.max_events
    rows = np.flatnonzero(read.owner == heavy)
    assert list(read.position[rows]) == list(range(schema.max_events))
    sizes = [read_entities(parents, events, schema, 16, np.random.default_rng(s)).owner.size for s in range(3)]
    assert len(set(sizes)) == 1  # how many events are read depends on the counts, not on the draw


# ------------------------------------------------------------------ sensitivity and the ledger


def exact_histograms(parents, events, schema, settings):
    read = read_entities(parents, events, schema, settings.bins, np.random.default_rng(0))
    model = EntityStatistics(schema, settings, {})
    return {name: (np.concatenate([p.ravel() for p in parts.values()]), delta)
            for name, (parts, delta, _) in model.histograms(read).items()}  # fmt: skip


@pytest.mark.parametrize("model", ["linked", "independent"])
def test_each_release_moves_by_at_most_its_stated_sensitivity_and_the_event_bound_is_tight(model):
    parents, events = tables()
    schema, settings = fit(parents, events).schema, EntitySettings(model=model)
    before = exact_histograms(parents, events, schema, settings)
    after = exact_histograms(*with_heavy_entity(parents, events), schema, settings)
    assert set(before) == {PARENTS, COUNTS, TIMES, EVENTS, OWN}  # the own values: on by default
    for name, (histogram, delta) in before.items():
        moved = float(np.linalg.norm(after[name][0] - histogram))
        assert moved <= delta + 1e-9, name
    # with one position bucket the heavy entity's k events are all in one cell of each event column:
    # the bound is met exactly (1 per column, √d_e for the two)
    one_bucket = EntitySettings(model=model, position_buckets=1)
    before = exact_histograms(parents, events, schema, one_bucket)
    after = exact_histograms(*with_heavy_entity(parents, events), schema, one_bucket)
    assert math.isclose(float(np.linalg.norm(after[EVENTS][0] - before[EVENTS][0])), math.sqrt(2))
    assert math.isclose(float(np.linalg.norm(after[OWN][0] - before[OWN][0])), math.sqrt(2))  # one cell a column
    assert before[EVENTS][1] == math.sqrt(2) and before[PARENTS][1] == math.sqrt(2)


@pytest.mark.parametrize("epsilon", [0.5, 3.0])
def test_the_ledger_stays_within_the_target_and_names_every_release(epsilon):
    synth = fit(*tables(), epsilon=epsilon)
    report = synth.privacy_report()
    assert report["epsilon"] <= epsilon * (1 + 1e-9)
    names = [e.name for e in synth.ledger.entries]
    assert names == ["entities kept and dropped per reason", PARENTS, COUNTS, TIMES, EVENTS, OWN]
    sigmas = {e.noise_multiplier for e in synth.ledger.entries[1:]}
    assert len(sigmas) == 1  # the model's releases share one σ, each at its own Δ
    assert "one entity" in report["unit_of_privacy"] and report["max_events"] == 4


# ------------------------------------------------------------------ sampling


def test_samples_link_fresh_keys_in_time_order_with_times_in_the_input_s_format():
    parents, events = fit(*tables()).sample(80, seed=1)
    assert list(parents["id"]) == list(range(1, 81))
    assert set(events["id"]) <= set(parents["id"])
    spec = TimeSpec("when", *WINDOW, FORMAT)
    times = parse_times(events["when"].astype(object), spec)
    assert np.isfinite(times).all()  # every time written in the input's format
    assert (events.assign(t=times).groupby("id")["t"].apply(lambda t: t.is_monotonic_increasing)).all()
    assert set(parents["kind"].dropna()) <= set(CATEGORIES["kind"]) and parents["age"].between(0, 100).all()


def test_the_count_of_events_is_drawn_by_the_model_beyond_k():
    parents, events = tables(n=300, seed=2)
    drawn = fit(parents, events, epsilon=50.0).sample(2000, seed=0)[1].groupby("id").size()
    assert drawn.max() > 4  # k = 4 bounds the events read per entity, not the events drawn


def test_the_linked_model_keeps_the_link_the_independent_one_cuts():
    parents, events = tables(n=400, seed=3)
    per_kind = {}
    for model in ("linked", "independent"):
        p, e = fit(parents, events, epsilon=50.0, model=model).sample(3000, seed=0)
        counts = e.groupby("id").size().reindex(p["id"], fill_value=0)
        per_kind[model] = counts.groupby(p.set_index("id")["kind"]).mean()
    assert per_kind["linked"]["c"] > 2 * per_kind["linked"]["a"]  # real means: 8 against 1
    assert per_kind["independent"]["c"] < 1.5 * per_kind["independent"]["a"]


# ------------------------------------------------------------------ files


def test_save_and_load_round_trip_without_pickle(tmp_path):
    synth = fit(*tables())
    synth.save(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["model.json", "statistics.safetensors"]
    loaded = load_model(tmp_path / "m")
    for a, b in zip(synth.sample(50, seed=7), loaded.sample(50, seed=7)):
        pd.testing.assert_frame_equal(a, b)
    assert loaded.privacy_report()["epsilon"] == pytest.approx(synth.privacy_report()["epsilon"])
    assert inspect_model(tmp_path / "m")["model"] == "linked"


# ------------------------------------------------------------------ bad input


def test_bad_input_is_one_line_naming_no_value():
    parents, events = tables()
    cases = [
        ((parents, events.drop(columns=["id"])), "the events table has no key column 'id'"),
        ((parents, pd.DataFrame()), "the events table has no key column 'id'"),
        ((parents.assign(id=range(len(parents))), events), "holds numbers in the parents but text in the events"),
        ((parents, events.drop(columns=["when"])), "no time column 'when'"),
    ]
    for (p, e), message in cases:
        with pytest.raises(InputError, match=message) as caught:
            fit(p, e)
        assert "\n" not in str(caught.value) and "P1" not in str(caught.value)
    with pytest.raises(InputError, match="epsilon"):
        EntitySynthesizer(epsilon=0.0)
    bought = EntitySynthesizer(epsilon=1.0, seed=0).fit(parents, events, key="id")  # no schema: bought with DP
    assert bought.schema.parents.source == bought.schema.events.source == "learned with DP (in the ledger)"
    with pytest.raises(InputError, match="link 'age' must be a categorical"):
        EntitySynthesizer(epsilon=1.0, link="age").fit(parents, events, **PUBLIC)


def test_an_events_table_with_its_header_only_fits_on_entities_with_no_events():
    parents, events = tables()
    synth = fit(parents, events.iloc[:0])
    assert synth.sample(10, seed=0)[0].shape[0] == 10


def test_a_whole_schema_round_trips_through_json(tmp_path):
    schema = fit(*tables()).schema
    (tmp_path / "s.json").write_text(json.dumps(schema.to_dict()))
    assert EntitySchema.from_json(tmp_path / "s.json") == schema


# ------------------------------------------------------------------ the command line


def test_the_command_line_fits_samples_and_inspects_two_csvs(tmp_path, capsys):
    parents, events = tables()
    parents.to_csv(tmp_path / "parents.csv", index=False)
    events.to_csv(tmp_path / "events.csv", index=False)
    code = main([
        "fit", str(tmp_path / "parents.csv"), "--kind", "entity", "--events", str(tmp_path / "events.csv"),
        "--key", "id", "--time-column", "when", "--time-min", WINDOW[0], "--time-max", WINDOW[1],
        "--time-format", FORMAT, "--max-events", "4", "--categories", "kind=a,b,c", "--categories", "tag=x,y",
        "--bounds", "age=0:100", "--bounds", "amount=-5:20", "--epsilon", "3", "--seed", "0",
        "--out", str(tmp_path / "m"), "--quiet",
    ])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert "unit of privacy: one entity" in capsys.readouterr().out
    assert main(["sample", str(tmp_path / "m"), "-n", "20", "--out", str(tmp_path / "out"), "--seed", "0"]) == 0
    sampled_parents = pd.read_csv(tmp_path / "out" / "parents.csv")
    sampled_events = pd.read_csv(tmp_path / "out" / "events.csv")
    assert len(sampled_parents) == 20 and set(sampled_events["id"]) <= set(sampled_parents["id"])
    assert main(["sample", str(tmp_path / "m"), "-n", "5", "--out", str(tmp_path / "pq" / "p.parquet")]) == 0
    assert (tmp_path / "pq" / "events.parquet").is_file()
    assert main(["inspect", str(tmp_path / "m")]) == 0
    assert "events per entity" in capsys.readouterr().out


def test_the_command_line_refuses_in_one_line(tmp_path, capsys):
    parents, events = tables()
    parents.to_csv(tmp_path / "parents.csv", index=False)
    base = ["fit", str(tmp_path / "parents.csv"), "--kind", "entity", "--epsilon", "1", "--out", str(tmp_path / "m")]
    assert main(base) == 2
    assert "needs the events table: --events" in capsys.readouterr().err
    events.drop(columns=["id"]).to_csv(tmp_path / "events.csv", index=False)
    assert main([*base, "--events", str(tmp_path / "events.csv"), "--key", "id", "--bounds", "age=0:100",
                 "--bounds", "amount=-5:20"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "no key column 'id'" in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("keys", [["--key", "id", "--key", "tag"], ["--key", "id=uuid"]])
def test_the_key_flag_shared_with_tables_names_one_column_for_entities(tmp_path, capsys, keys):
    """`--key` is one flag of the table and entity kinds (tables: several key columns with formats);
    for entities a second key or a format is one line, before any read."""
    base = ["fit", str(tmp_path / "parents.csv"), "--kind", "entity", "--epsilon", "1", "--out", str(tmp_path / "m")]
    (tmp_path / "parents.csv").write_text("id\n1\n")
    (tmp_path / "events.csv").write_text("id\n1\n")
    assert main([*base, "--events", str(tmp_path / "events.csv"), *keys]) == 2
    err = capsys.readouterr().err
    assert "takes one --key COLUMN" in err and err.count("\n") == 1 and "Traceback" not in err
