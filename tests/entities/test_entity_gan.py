"""The entity kind's gan model (dpgan.entities.gan): one engine entry in the ledger within ε, the
entity as the one clipped unit (an entity with 5k events is one row and one gradient of norm ≤ C),
sampling's promises, save and load without pickle, and bad settings in one line. Small sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan.entities.facade import EntitySynthesizer
from dpgan.entities.gan.encoding import EntityLayout, decode, encode
from dpgan.entities.gan.model import entity_generator
from dpgan.entities.gan.networks import entity_critic
from dpgan.entities.reader import read_entities
from dpgan.entities.settings import EntitySettings
from dpgan.errors import InputError
from dpgan.inspection import inspect_model
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.synthesizers import load_model
from dpgan.training.config import TrainingConfig
from dpgan.training.dp_critic import train_dp_critic
from test_entity_kind import FORMAT, PUBLIC, tables, with_heavy_entity

SMALL = dict(model="gan", epochs=1.0, batch_size=8, noise_dim=8, generator_hidden=(16,), critic_hidden=(16,),
             event_hidden=8)  # fmt: skip
CLIP = 1.0


def fit(parents, events, epsilon=3.0, seed=0, **settings) -> EntitySynthesizer:
    """A small fit, accounted by RDP (PLD's calibration takes seconds of a test's time; the same engine)."""
    synth = EntitySynthesizer(epsilon=epsilon, seed=seed, accountant="rdp", **(SMALL | settings))
    return synth.fit(parents, events, **PUBLIC)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, record: dict) -> None:
        self.calls.append({**record, "clipped": {k: v.detach().clone() for k, v in record["clipped"].items()}})


class OnlyThese:
    """A sampler that draws the same units every step (the test's injection)."""

    def __init__(self, index: list[int]) -> None:
        self.index = torch.tensor(index, dtype=torch.long)

    def sample(self) -> torch.Tensor:
        return self.index


@pytest.mark.parametrize("epsilon", [1.0, 3.0])
def test_the_fit_is_the_tally_and_one_engine_entry_within_the_target(epsilon):
    synth = fit(*tables(), epsilon=epsilon)
    names = [e.name for e in synth.ledger.entries]
    assert names == ["entities kept and dropped per reason", "DP-SGD on the critic"]
    steps = synth.ledger.entries[1]
    assert steps.count == synth.training["steps"] >= 1 and steps.noise_multiplier > 0
    spent = synth.ledger.epsilon(1e-5, "rdp")
    assert spent <= epsilon * (1 + 1e-9) and spent > 0.9 * epsilon
    assert synth.privacy_report()["epsilon"] == pytest.approx(spent)


def test_an_entity_with_5k_events_is_one_unit_and_one_clipped_gradient():
    parents, events = with_heavy_entity(*tables(n=20), count=5 * PUBLIC["max_events"])
    settings = EntitySettings(model="gan", event_hidden=8)
    synth = EntitySynthesizer(epsilon=1.0, **SMALL)
    schema, _ = synth._schema(parents, events, PUBLIC["key"], PUBLIC["time_column"], PUBLIC["time_bounds"],
                           PUBLIC["time_format"], PUBLIC["max_events"], None, None, None, PUBLIC["categories"],
                           PUBLIC["bounds"])  # fmt: skip
    read = read_entities(parents, events, schema, settings.bins, np.random.default_rng(0))
    layout = EntityLayout.of(schema, settings.bins)
    units = encode(read, layout, schema)
    assert units.shape == (len(read.parent_codes), layout.width)  # one row per entity, whatever its events
    heavy = int(np.argmax(read.counts))
    assert read.counts[heavy] == 5 * PUBLIC["max_events"]
    events_part = units[heavy, layout.attribute_width :].reshape(layout.k, layout.step_width)
    assert bool((events_part[:, -1] == 1).all())  # its k read events fill the window: its flags are all on
    config = TrainingConfig(noise_dim=8, generator_hidden=(16,), critic_hidden=(16,), max_grad_norm=CLIP)
    generator = entity_generator(schema, settings, config)
    critic = entity_critic(layout, config.critic_hidden)
    recorder, ledger = Recorder(), PrivacyLedger()
    config.noise_dim = generator.noise_dim
    units = units * 50.0  # large inputs: the unclipped gradient is far above C
    train_dp_critic(units, [], config, sample_rate=0.1, expected_batch_size=2.0, noise_multiplier=1.0, steps=3,
                    generator=torch.Generator().manual_seed(0), ledger=ledger, recorder=recorder,
                    sampler=OnlyThese([heavy]), critic=critic, generator_net=generator)  # fmt: skip
    assert len(recorder.calls) == 3 and ledger.entries[0].count == 3
    for call in recorder.calls:
        assert call["units"] == 1 and call["norms"].shape == (1,)
        assert float(call["norms"][0]) > CLIP  # the entity's raw gradient is clipped ...
        flat = torch.cat([v.reshape(-1) for v in call["clipped"].values()])
        assert float(flat.norm()) <= CLIP * (1 + 1e-5)  # ... to one vector of norm ≤ C


def test_adding_an_entity_with_far_more_than_k_events_changes_no_public_fact():
    parents, events = tables()
    one, other = fit(parents, events), fit(*with_heavy_entity(parents, events))
    assert one.schema == other.schema and one.generator.form() == other.generator.form()
    assert [e.name for e in one.ledger.entries] == [e.name for e in other.ledger.entries]
    shapes = [{k: v.shape for k, v in s.generator.tensors().items()} for s in (one, other)]
    assert shapes[0] == shapes[1]


def test_samples_link_fresh_keys_with_events_in_time_order_in_the_input_s_format():
    synth = fit(*tables())
    parents, events = synth.sample(40, seed=3)
    assert list(parents["id"]) == list(range(1, 41)) and set(events["id"]) <= set(parents["id"])
    times = pd.to_datetime(events["when"], format=FORMAT)  # every time parses in the input's format
    for _, group in events.assign(t=times).groupby("id", sort=False):
        assert group["t"].is_monotonic_increasing
    assert set(parents["kind"].dropna()) <= {"a", "b", "c"} and set(events["tag"].dropna()) <= {"x", "y"}


def test_the_end_flag_sets_the_count_and_a_full_window_takes_the_count_number():
    parents, events = tables()
    synth = fit(parents, events)
    layout = synth.generator.generator.layout
    k = layout.k
    attributes = np.zeros((2, layout.attribute_width), dtype=np.float32)
    count_at = sum(layout.parent_sizes)
    twelve = int(np.searchsorted(layout.edges, 12))  # the bin [12, 15): k = 4 has one bin per count up to 5, then wider
    low, high = layout.edges[twelve], layout.edges[twelve + 1]
    assert low == 12 > k
    attributes[:, count_at + twelve] = 1.0  # both say 12 to 14 events
    attributes[:, count_at + layout.count_bins + 1] = 0.5  # a span of 3/4 of the window
    steps = np.zeros((2, k, layout.step_width), dtype=np.float32)
    steps[0, :2, -1] = 1.0  # the first ends after two events (its third flag is off)
    steps[1, :, -1] = 1.0  # the second's k flags are all on: its count is its bin's, more than k
    steps[1, :, -2] = 1.0 / k
    sampled = decode(attributes, steps, layout, synth.schema, np.random.default_rng(0))
    assert sampled.counts[0] == 2 and low <= sampled.counts[1] < high
    assert np.bincount(sampled.owner).tolist() == sampled.counts.tolist()
    second = sampled.times[sampled.owner == 1]
    assert (np.diff(second) >= 0).all()


def test_save_and_load_round_trip_without_pickle_gives_the_same_samples(tmp_path):
    synth = fit(*tables())
    synth.save(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["generator.safetensors", "model.json"]
    loaded = load_model(tmp_path / "m")
    for a, b in zip(synth.sample(30, seed=7), loaded.sample(30, seed=7)):
        pd.testing.assert_frame_equal(a, b)
    assert loaded.privacy_report()["epsilon"] == pytest.approx(synth.privacy_report()["epsilon"])
    assert inspect_model(tmp_path / "m")["model"] == "gan"


def test_a_seeded_fit_is_reproducible():
    parents, events = tables()
    a, b = fit(parents, events, seed=4), fit(parents, events, seed=4)
    for x, y in zip(a.sample(20, seed=1), b.sample(20, seed=1)):
        pd.testing.assert_frame_equal(x, y)


def test_bad_settings_are_one_line():
    cases = [
        (dict(model="gan", link="kind"), "the gan model has no setting 'link'"),
        (dict(model="gan", time_bins=8), "the gan model has no setting 'time_bins'"),
        (dict(model="linked", epochs=3.0), "the linked model has no setting 'epochs'"),
        (dict(model="linked", event_hidden=8), "the linked model has no setting 'event_hidden'"),
        (dict(model="gan", event_hidden=0), "event_hidden must be a whole number from 1 to 1024"),
        (dict(model="gan", step_noise=2.5), "step_noise must be a whole number"),
        (dict(model="gan", loss="hinge"), "loss must be one of"),
        (dict(model="gan", noise_multiplier=1.0), "noise_multiplier does not apply"),
    ]
    for settings, message in cases:
        with pytest.raises(InputError, match=message) as caught:
            EntitySynthesizer(epsilon=1.0, **settings)
        assert "\n" not in str(caught.value)


def test_the_gan_fits_on_the_csv_only_path_with_its_schema_bought_in_the_one_ledger(tmp_path):
    """No table schema or hint: the schemas are bought with DP before the critic's steps, and the gan is
    built on the bought schema (the kind's model() reads it from the tally's details, not the facade's)."""
    parents, events = tables(n=60)
    public = {k: PUBLIC[k] for k in ("key", "time_column", "time_bounds", "time_format")}
    synth = EntitySynthesizer(epsilon=3.0, seed=0, accountant="rdp", **SMALL).fit(parents, events, **public)
    names = [e.name for e in synth.ledger.entries]
    assert names[-1] == "DP-SGD on the critic" and any(n.startswith("entity schema") for n in names)
    assert synth.ledger.epsilon(1e-5, "rdp") <= 3.0 * (1 + 1e-9)
    sampled = synth.sample(5, seed=1)
    synth.save(tmp_path / "model")
    again = EntitySynthesizer.load(tmp_path / "model").sample(5, seed=1)
    assert sampled[0].equals(again[0]) and sampled[1].equals(again[1])
