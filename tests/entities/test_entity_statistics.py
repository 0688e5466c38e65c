"""The entity statistics model's DP link choice (dpgan.entities.link_choice) and its 2-way tables
inside an event (the chain): the utility's stated range on neighbours with far more than k events, the
ledger's entry (and none for a named link), the choice finding the informative column, saving the
chosen link, and the chain's sensitivity and the association it keeps."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpgan.entities.columns import ColumnCells
from dpgan.entities.facade import EntitySynthesizer
from dpgan.entities.link_choice import (
    LINK_CHOICE,
    LINK_SHARE,
    link_candidates,
    link_score_range,
    link_tables,
    utilities_of,
)
from dpgan.entities.reader import read_entities
from dpgan.entities.settings import EntitySettings
from dpgan.entities.statistics import COUNT_BUCKETS, EVENTS, EntityStatistics, count_bucket
from dpgan.synthesizers import load_model

FORMAT = "%Y-%m-%d %H:%M"
WINDOW = ("2020-01-01 00:00", "2020-03-01 00:00")
CATEGORIES = {"noise": ["p", "q", "r", "s"], "kind": ["a", "b", "c"], "tag": ["x", "y"]}
PUBLIC = dict(key="id", time_column="when", time_bounds=WINDOW, time_format=FORMAT, categories=CATEGORIES,
              bounds={"age": (0.0, 100.0), "amount": (-5.0, 20.0)}, max_events=4)  # fmt: skip


def tables(n: int = 200, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Parents with an uninformative categorical column first ("noise") and the one that decides the
    events second ("kind"); each event's tag is decided by its amount (an association inside events)."""
    rng = np.random.default_rng(seed)
    kinds = rng.choice(["a", "b", "c"], n)
    parents = pd.DataFrame({"id": [f"P{i}" for i in range(n)], "noise": rng.choice(CATEGORIES["noise"], n),
                            "kind": kinds, "age": rng.integers(20, 80, n)})  # fmt: skip
    rows = []
    for i, kind in enumerate(kinds):
        for _ in range(rng.poisson({"a": 1, "b": 3, "c": 8}[kind])):
            day, hour = int(rng.integers(1, 28)), int(rng.integers(0, 24))
            amount = float(rng.choice([-3.0, 15.0]) + rng.normal(0, 1))
            rows.append((f"P{i}", f"2020-01-{day:02d} {hour:02d}:00", amount, "x" if amount < 5 else "y"))
    return parents, pd.DataFrame(rows, columns=["id", "when", "amount", "tag"])


def with_heavy_entity(parents: pd.DataFrame, events: pd.DataFrame, count: int = 500) -> tuple:
    heavy = pd.DataFrame({"id": ["HEAVY"], "noise": ["s"], "kind": ["c"], "age": [50]})
    its = pd.DataFrame({"id": ["HEAVY"] * count, "when": ["2020-02-01 10:00"] * count, "amount": [19.0] * count,
                        "tag": ["y"] * count})  # fmt: skip
    return pd.concat([parents, heavy], ignore_index=True), pd.concat([events, its], ignore_index=True)


def fit(parents, events, epsilon=3.0, seed=0, **settings) -> EntitySynthesizer:
    return EntitySynthesizer(epsilon=epsilon, seed=seed, **settings).fit(parents, events, **PUBLIC)


def utilities(parents, events, schema, bins: int = 16) -> np.ndarray:
    read = read_entities(parents, events, schema, bins, np.random.default_rng(0))
    candidates = link_candidates([c.is_numeric for c in schema.parents.columns])
    sizes = [ColumnCells.of(c, bins).size for c in schema.parents.columns]
    event_sizes = [ColumnCells.of(c, bins).size for c in schema.events.columns]
    tables = link_tables(read.parent_codes, sizes, candidates, count_bucket(read.counts), COUNT_BUCKETS,
                         read.owner, read.event_codes, event_sizes)  # fmt: skip
    return utilities_of(tables, len(candidates), len(event_sizes), schema.max_events)


# ------------------------------------------------------------------ the link's choice


def test_the_link_utility_moves_within_its_stated_range_when_an_entity_with_far_more_than_k_events_comes():
    parents, events = tables()
    schema = fit(parents, events).schema
    alone = parents["noise"] != "s"  # the heavy entity is the only one with noise = s
    parents, events = parents[alone], events[events["id"].isin(parents.loc[alone, "id"])]
    before = utilities(parents, events, schema)
    after = utilities(*with_heavy_entity(parents, events), schema)
    score_range = link_score_range(len(schema.events.columns))
    assert score_range == 3.0
    moved = after - before
    assert (moved >= -1e-9).all() and (moved <= score_range + 1e-9).all()
    # alone in its row of every "noise" table, it moves that candidate's utility by exactly R
    assert moved[0] == pytest.approx(score_range)


def test_the_choice_is_its_own_ledger_entry_and_a_named_link_or_no_choice_spends_nothing_on_it():
    parents, events = tables()
    chosen = fit(parents, events)
    entries = {e.name: e for e in chosen.ledger.entries}
    assert LINK_CHOICE in entries
    assert chosen.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)
    for named in (fit(parents, events, link="kind"), fit(parents, events, choose_link=False)):
        assert LINK_CHOICE not in {e.name for e in named.ledger.entries}
        # what the choice would have cost goes to the histograms: a smaller σ than with the choice
        sigma = {e.noise_multiplier for e in named.ledger.entries if e.name == EVENTS}
        assert sigma.pop() < entries[EVENTS].noise_multiplier
    assert fit(parents, events, choose_link=False).generator.link == 0  # the rule: the first categorical
    assert LINK_SHARE < 0.1


def test_neighbours_give_the_same_ledger_with_the_choice_on():
    parents, events = tables()
    entries = [[(e.name, getattr(e, "noise_multiplier", None), e.note) for e in fit(*data).ledger.entries]
               for data in ((parents, events), with_heavy_entity(parents, events))]  # fmt: skip
    assert entries[0] == entries[1]


def test_the_choice_finds_the_column_that_decides_the_events_at_a_large_epsilon():
    parents, events = tables()
    picks = [fit(parents, events, epsilon=50.0, seed=s).generator.link for s in range(5)]
    kind = list(fit(parents, events).schema.parents.names).index("kind")
    assert picks == [kind] * 5  # "noise" comes first in schema order: the old rule picked it


def test_a_chosen_link_is_saved_and_loaded(tmp_path):
    parents, events = tables()
    synth = fit(parents, events, epsilon=50.0)
    assert synth.generator.link != 0  # not the rule's column
    synth.save(tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert loaded.generator.link == synth.generator.link
    for a, b in zip(synth.sample(40, seed=3), loaded.sample(40, seed=3)):
        pd.testing.assert_frame_equal(a, b)


# ------------------------------------------------------------------ 2-way tables inside an event


@pytest.mark.parametrize(("pairs", "count_groups"), [("chain", 1), ("none", 1), ("chain", 3), ("pooled", 3)])
def test_the_event_tables_move_by_at_most_root_d_e_and_the_chain_meets_it(pairs, count_groups):
    parents, events = tables()
    schema = fit(parents, events).schema
    settings = EntitySettings(link="kind", event_pairs=pairs, position_buckets=1, count_groups=count_groups)
    model = EntityStatistics(schema, settings, {})
    exact = []
    for data in ((parents, events), with_heavy_entity(parents, events)):
        read = read_entities(*data, schema, settings.bins, np.random.default_rng(0))
        parts, delta, _ = model.histograms(read)[EVENTS]
        exact.append(np.concatenate([p.ravel() for p in parts.values()]))
    assert delta == math.sqrt(2)
    assert math.isclose(float(np.linalg.norm(exact[1] - exact[0])), math.sqrt(2))  # k identical events: one cell


def test_the_chain_keeps_an_association_between_event_columns_that_drawing_them_alone_loses():
    parents, events = tables(n=400, seed=1)
    agreement = {}
    for pairs in ("chain", "pooled", "none"):
        # own values off: they tie an entity's columns by themselves (test_entity_own_values.py)
        _, e = fit(parents, events, epsilon=50.0, link="kind", event_pairs=pairs, own_values=False).sample(2000, seed=0)
        agreement[pairs] = float(((e["amount"] < 5) == (e["tag"] == "x")).mean())
    assert agreement["chain"] > 0.9 and agreement["pooled"] > 0.9  # real: 1.0
    assert agreement["none"] < 0.65  # independent draws: about 0.5


def test_count_groups_keep_what_busy_entities_events_hold_and_save_and_load(tmp_path):
    parents, events = tables(n=400, seed=2)
    busy = events.groupby("id")["id"].transform("size") >= 4
    events["tag"] = np.where(busy, "y", "x")  # busy entities' events are all y, the others' all x
    share = {}
    for groups in (1, 3):
        synth = fit(
            parents, events, epsilon=50.0, link="noise", event_pairs="none", count_groups=groups, own_values=False
        )  # the own values are given the link alone, not the count group
        _, e = synth.sample(3000, seed=0)
        size = e.groupby("id")["id"].transform("size")
        share[groups] = float((e.loc[size < 4, "tag"] == "x").mean())
    assert share[3] > 0.9  # real: 1.0
    assert share[1] < 0.5  # one group: the events' tags are drawn whatever the entity's count
    synth.save(tmp_path / "m")
    for a, b in zip(synth.sample(30, seed=1), load_model(tmp_path / "m").sample(30, seed=1)):
        pd.testing.assert_frame_equal(a, b)
