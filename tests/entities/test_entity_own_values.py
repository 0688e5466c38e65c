"""The entity-level event statistic (dpgan.entities.own_values): its tables move by √d_e when an
entity with far more than k events comes (one cell per column), its ledger entry and the neighbours'
same public facts, the concentration it gives each entity's events, and saving it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpgan.entities.own_values import OWN, SHARE_BINS, own_cells, share_bin
from dpgan.entities.reader import read_entities
from dpgan.entities.settings import EntitySettings
from dpgan.entities.statistics import EntityStatistics
from dpgan.synthesizers import load_model
from test_entity_statistics import fit, tables, with_heavy_entity


def own_tagged(n: int = 400, seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each entity's events all carry one tag of its own (drawn per entity, not per event)."""
    parents, events = tables(n=n, seed=seed)
    rng = np.random.default_rng(seed)
    own = dict(zip(parents["id"], rng.choice(["x", "y"], len(parents))))
    events["tag"] = events["id"].map(own)
    return parents, events


def modal_share(events: pd.DataFrame, column: str, least: int = 3) -> float:
    """The mean share of an entity's events in its most common value (entities with ≥ `least`)."""
    counts = events.groupby(["id", column]).size().unstack(fill_value=0)
    counts = counts[counts.sum(axis=1) >= least]
    return float((counts.max(axis=1) / counts.sum(axis=1)).mean())


def test_own_cells_take_the_most_common_cell_and_bin_its_share():
    owner = np.array([0, 0, 0, 1, 1, 3])
    codes = np.array([2, 1, 2, 0, 1, 1])
    own, bins = own_cells(owner, codes, 4, 3)
    assert own.tolist() == [2, 0, -1, 1]  # ties to the lowest cell; no events: -1
    assert bins[[0, 1, 3]].tolist() == share_bin(np.array([2 / 3, 0.5, 1.0])).tolist()
    assert share_bin(np.array([1e-9, 0.2, 0.21, 1.0])).tolist() == [0, 0, 1, SHARE_BINS - 1]


def test_the_own_tables_move_by_root_d_e_when_an_entity_with_far_more_than_k_events_comes():
    parents, events = tables()
    schema = fit(parents, events).schema
    settings = EntitySettings(link="kind", own_values=True)
    model = EntityStatistics(schema, settings, {})
    exact = []
    for data in ((parents, events), with_heavy_entity(parents, events, count=500)):
        read = read_entities(*data, schema, settings.bins, np.random.default_rng(0))
        parts, delta, _ = model.histograms(read)[OWN]
        exact.append(np.concatenate([p.ravel() for p in parts.values()]))
    d_e = len(schema.events.columns)
    assert delta == math.sqrt(d_e)
    moved = exact[1] - exact[0]
    assert math.isclose(float(np.linalg.norm(moved)), math.sqrt(d_e))  # 500 events: still one cell per column
    assert np.abs(moved).max() == 1.0


def test_the_own_values_are_one_ledger_entry_and_neighbours_get_the_same_ledger():
    parents, events = tables()
    ledgers = [[(e.name, getattr(e, "noise_multiplier", None), e.note)
                for e in fit(*data, own_values=True).ledger.entries]
               for data in ((parents, events), with_heavy_entity(parents, events))]  # fmt: skip
    assert ledgers[0] == ledgers[1]
    assert [name for name, _, _ in ledgers[0]].count(OWN) == 1
    assert OWN in {e.name for e in fit(parents, events).ledger.entries}  # on by default
    assert OWN not in {e.name for e in fit(parents, events, own_values=False).ledger.entries}
    assert fit(parents, events, own_values=True).privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)


def test_own_values_keep_each_entitys_events_on_its_own_value():
    parents, events = own_tagged()
    assert modal_share(events, "tag") == 1.0
    shares = {}
    for on in (False, True):
        _, e = fit(parents, events, epsilon=50.0, link="kind", own_values=on).sample(1500, seed=0)
        shares[on] = modal_share(e, "tag")
    assert shares[True] > 0.9
    assert shares[False] < 0.8  # drawn event by event: the entity's tags spread as the population's


def test_a_model_with_own_values_is_saved_and_loaded(tmp_path):
    parents, events = own_tagged(n=200)
    synth = fit(parents, events, own_values=True)
    synth.save(tmp_path / "m")
    for a, b in zip(synth.sample(40, seed=2), load_model(tmp_path / "m").sample(40, seed=2)):
        pd.testing.assert_frame_equal(a, b)
