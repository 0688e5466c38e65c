"""`counts_above_k` off (dpgan.entities.statistics.count_edges): the public fact that no entity has more
than k events, as a series set's documented longest length. The count table then stops at k: no
synthetic entity has more than k events however the noise falls, an entity with more is counted as k
(one cell, Δ = 1 still), neighbours give the same public facts, and the gan refuses the setting."""

from __future__ import annotations

import numpy as np
import pytest

from dpgan.entities.facade import EntitySynthesizer
from dpgan.entities.settings import EntitySettings
from dpgan.entities.statistics import COUNTS, count_edges
from dpgan.errors import InputError
from test_entity_kind import PUBLIC, exact_histograms, public_facts, tables, with_heavy_entity

K = PUBLIC["max_events"]


def test_the_count_table_stops_at_k_only_when_asked():
    assert list(count_edges(K, above_k=False)) == list(range(K + 2))
    assert count_edges(K)[-1] == max(64 * K, 1024)  # the default is unchanged


@pytest.mark.parametrize("model", ["linked", "independent"])
def test_no_sampled_entity_has_more_than_k_events_even_at_a_small_epsilon(model):
    parents, events = tables(n=80)
    for epsilon in (0.3, 3.0):
        synth = EntitySynthesizer(epsilon=epsilon, seed=0, model=model, counts_above_k=False)
        synth.fit(parents, events, **PUBLIC)
        sampled_parents, sampled_events = synth.sample(2000, seed=1)
        counts = sampled_events.groupby("id").size()
        assert counts.max() <= K and len(sampled_parents) == 2000


@pytest.mark.parametrize("model", ["linked", "independent"])
def test_an_entity_with_far_more_than_k_events_is_one_count_of_k_and_changes_no_public_fact(model):
    parents, events = tables()
    settings = EntitySettings(model=model, counts_above_k=False)
    schema = EntitySynthesizer(epsilon=3.0, seed=0).fit(parents, events, **PUBLIC).schema
    before = exact_histograms(parents, events, schema, settings)[COUNTS]
    after = exact_histograms(*with_heavy_entity(parents, events), schema, settings)[COUNTS]
    assert before[0].shape == after[0].shape and before[1] == 1.0
    moved = after[0] - before[0]
    assert moved.sum() == 1 and np.abs(moved).sum() == 1  # one more entity, in one cell...
    assert moved.reshape(-1, K + 1)[:, K].sum() == 1  # ...the count k's

    def fitted(p, e):
        synth = EntitySynthesizer(epsilon=3.0, seed=0, model=model, counts_above_k=False)
        return public_facts(synth.fit(p, e, **PUBLIC))

    assert fitted(parents, events) == fitted(*with_heavy_entity(parents, events))


def test_the_setting_round_trips_and_the_gan_refuses_it(tmp_path):
    parents, events = tables()
    synth = EntitySynthesizer(epsilon=3.0, seed=0, counts_above_k=False).fit(parents, events, **PUBLIC)
    synth.save(tmp_path / "model")
    loaded = EntitySynthesizer.load(tmp_path / "model")
    assert loaded.settings.counts_above_k is False
    assert loaded.sample(50, seed=2)[1].equals(synth.sample(50, seed=2)[1])
    with pytest.raises(InputError):
        EntitySynthesizer(epsilon=3.0, model="gan", counts_above_k=False).fit(parents, events, **PUBLIC)
