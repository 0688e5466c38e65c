"""The label set at ordinary sizes (issue 31): a second Gaussian release, combined with the first,
when the first keeps fewer than two labels (dpgan.privacy.partition_selection)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from dpgan.images.labels import LABEL_SET_AGAIN_EVENT
from dpgan.privacy.accounting import Budget, LedgerEntry, PrivacyLedger, epsilon_of
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.partition_selection import RELEASE_PROBABILITY, combined_sigma_for, second_release
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.sequences.dp_schema import LABELS_AGAIN_EVENT
from dpgan.synthesizers.image import ImageSynthesizer
from dpgan.synthesizers.sequence import SequenceSynthesizer

DELTA_TAU = 1e-6


def test_the_combined_sigma_releases_a_label_of_the_target_size_with_the_stated_probability():
    sigma = combined_sigma_for(100.0, DELTA_TAU)
    threshold = 1.0 + sigma * norm.isf(DELTA_TAU)
    assert norm.sf(threshold, loc=100.0, scale=sigma) == pytest.approx(RELEASE_PROBABILITY, abs=1e-9)


def test_the_second_release_combines_by_inverse_variance_and_charges_its_own_event():
    ledger = PrivacyLedger(budget=Budget(3.0, 1e-5, "rdp"))
    ledger.add(LedgerEntry("first", 80.0, count=1, extra_delta=DELTA_TAU))
    shares = FitBudget(3.0, 1e-5, "rdp")
    first = np.array([150.0, 90.0])
    again = second_release(
        [100.0, 100.0],
        first,
        80.0,
        target_units=100.0,
        threshold_delta=DELTA_TAU,
        cap=shares.at(0.5),
        ledger=ledger,
        rng=np.random.default_rng(0),
        event="again",
        note="",
    )
    assert again.noise_multiplier == pytest.approx(combined_sigma_for(100.0, DELTA_TAU), rel=1e-6)
    assert 1 / again.noise_multiplier**2 == pytest.approx(1 / 80.0**2 + 1 / again.stage_sigma**2)
    entry = ledger.entries[-1]
    assert entry.name == "again" and entry.noise_multiplier == again.stage_sigma and entry.extra_delta == DELTA_TAU
    # a tight cap binds: σ₂ is then the one that lands the ledger on it, never below
    tight = PrivacyLedger(budget=Budget(3.0, 1e-5, "rdp"))
    tight.add(LedgerEntry("first", 80.0, count=1, extra_delta=DELTA_TAU))
    capped = second_release(
        [100.0],
        [90.0],
        80.0,
        target_units=100.0,
        threshold_delta=DELTA_TAU,
        cap=shares.at(0.03),
        ledger=tight,
        rng=np.random.default_rng(0),
        event="again",
        note="",
    )
    assert capped.stage_sigma > again.stage_sigma
    assert epsilon_of(tight.entries, 1e-5, "rdp") <= 0.03 * 3.0 * (1 + 1e-6)


def _digit_like(per_label: int, labels: int = 10, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(labels), per_label)
    images = rng.integers(0, 256, (len(codes), 8, 8), dtype=np.uint8)
    return images, codes.astype(str)


FAST = {"max_steps": 2, "batch_size": 64, "width": 4, "accountant": "rdp", "label_guide": False}


def test_images_of_about_180_per_label_release_their_labels_at_epsilon_3():
    images, labels = _digit_like(180)
    synth = ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, **FAST).fit(images, labels)
    assert len(synth.label_names) == 10
    assert LABEL_SET_AGAIN_EVENT in [e.name for e in synth.ledger.entries]
    assert synth.ledger.epsilon(synth.delta, "rdp") <= 3.0 * (1 + 1e-9)


def test_large_labels_need_no_second_chance():
    images, labels = _digit_like(4000, labels=2)
    synth = ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, **FAST).fit(images, labels)
    assert synth.label_names == ("0", "1")
    assert LABEL_SET_AGAIN_EVENT not in [e.name for e in synth.ledger.entries]


def test_series_of_about_60_per_label_release_their_labels_at_epsilon_3():
    rng = np.random.default_rng(0)
    data = rng.uniform(0, 10, (120, 6))
    labels = np.repeat(["north", "south"], 60)
    schema = SequenceSchema(id="s", time="t", length=6, values=(ValueColumn("v", 0.0, 10.0),), label="l")
    synth = SequenceSynthesizer(epsilon=3.0, seed=0, accountant="rdp")  # the default model: DP statistics
    synth.fit(data, schema, labels=labels)
    assert synth.schema.categories == ("north", "south")
    assert LABELS_AGAIN_EVENT in [e.name for e in synth.ledger.entries]
    assert synth.ledger.epsilon(synth.delta, "rdp") <= 3.0 * (1 + 1e-9)
