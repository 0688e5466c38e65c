"""DP checkpoint selection (dpgan.training.selection): the held-out split is per record, every
score lies in [−1, 1], the exponential mechanism meets the e^ε ratio bound on neighbouring
utilities, its ledger event is a pure ε-DP release that dp-accounting accounts exactly and composes
with the Gaussian entries, and a fit with selection spends exactly its ε, records what it chose,
saves and loads (top-Q mixtures too), resumes, and takes its CLI flags."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from dp_accounting import dp_event

from dpgan import TabularSynthesizer
from dpgan.errors import InputError
from dpgan.models.output_spans import SOFTMAX, OutputSpan
from dpgan.privacy.accounting import PLD_DISCRETIZATION, LedgerEntry, PrivacyLedger, epsilon_of
from dpgan.privacy.events import EventEntry, pure_dp_event
from dpgan.privacy.mechanisms import exponential_mechanism, exponential_probabilities, exponential_top
from dpgan.training.checkpoint import STATE_FILE
from dpgan.training.selection import SCORE_RANGE, SELECTION_EVENT, brier_scores, heldout_mask, snapshot_steps

SMALL = {"epochs": 2, "generator_hidden": (16,), "critic_hidden": (16,), "label_model": False}


# --- the held-out split --------------------------------------------------------------------------


def test_removing_a_record_leaves_every_other_records_side_unchanged():
    rows = np.random.default_rng(0).normal(size=(2000, 5))
    key = bytes(range(32))
    mask = heldout_mask(rows, 0.1, key)
    for removed in (0, 777, 1999):
        neighbour = np.delete(rows, removed, axis=0)
        assert np.array_equal(heldout_mask(neighbour, 0.1, key), np.delete(mask, removed))
    assert 0.08 < mask.mean() < 0.12  # the public rate
    assert not np.array_equal(heldout_mask(rows, 0.1, bytes(32)), mask)  # the key (per fit) decides it


def test_snapshot_steps_are_evenly_spaced_and_end_at_the_last_step():
    assert snapshot_steps(100, 5) == [20, 40, 60, 80, 100]
    assert snapshot_steps(3, 5) == [1, 2, 3]


# --- the score and the mechanism ------------------------------------------------------------------


def test_every_brier_score_lies_in_minus_one_to_one_including_the_extremes():
    rng = np.random.default_rng(1)
    widths = [3, 4, 2]
    marginals = [(0, 1), (0, 2), (1, 2)]
    for _ in range(20):
        samples = np.stack([rng.integers(0, w, size=50) for w in widths], axis=1)
        rows = np.stack([rng.integers(0, w, size=200) for w in widths], axis=1)
        scores = brier_scores(samples, rows, widths, marginals)
        assert scores.min() >= -1 - 1e-12 and scores.max() <= 1 + 1e-12
    # every sample in one cell: a row in that cell scores 2 − 1 = 1, a row elsewhere 0 − 1 = −1
    point = np.zeros((10, 3), dtype=np.int64)
    rows = np.array([[0, 0, 0], [1, 1, 1]])
    assert brier_scores(point, rows, widths, marginals).tolist() == [1.0, -1.0]


def worst_neighbours(utilities: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """u(D') for D' = D plus one record: each candidate moved by its score, in [−1, 1]."""
    return utilities + rng.choice([-1.0, 1.0], size=utilities.size) * rng.uniform(0.5, 1.0, utilities.size)


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 2.0])
def test_exponential_mechanism_output_ratio_is_at_most_e_to_the_epsilon_on_neighbouring_utilities(epsilon):
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(300):
        u = rng.normal(0, 30, size=6)
        u2 = worst_neighbours(u, rng)
        p, q = exponential_probabilities(u, epsilon, SCORE_RANGE), exponential_probabilities(u2, epsilon, SCORE_RANGE)
        worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(q)))))
    assert worst <= epsilon * (1 + 1e-9)
    # the bound is nearly attained (one candidate up by 1, the others down by 1): half the range
    # in the coefficient would break it, so the test can fail
    u = np.zeros(50)
    u2 = -np.ones(50)
    u2[0] = 1.0
    p, q = exponential_probabilities(u2, epsilon, SCORE_RANGE), exponential_probabilities(u, epsilon, SCORE_RANGE)
    assert 0.9 * epsilon < math.log(p[0] / q[0]) <= epsilon * (1 + 1e-9)
    loose = exponential_probabilities(u2, epsilon, SCORE_RANGE / 2)[0] / q[0]
    assert math.log(loose) > epsilon


def test_gumbel_report_noisy_max_draws_the_exponential_mechanisms_law():
    u = np.array([0.0, 1.0, 2.0, 0.5])
    rng = np.random.default_rng(3)
    draws = np.bincount([exponential_mechanism(u, 1.0, 1.0, rng) for _ in range(20000)], minlength=4) / 20000
    assert np.abs(draws - exponential_probabilities(u, 1.0, 1.0)).max() < 0.015


def test_top_q_picks_distinct_candidates():
    chosen = exponential_top(np.arange(6.0), 3.0, 2.0, 3, np.random.default_rng(4))
    assert len(set(chosen)) == 3 and all(0 <= k < 6 for k in chosen)
    with pytest.raises(ValueError):
        exponential_top(np.arange(3.0), 1.0, 2.0, 4, np.random.default_rng(0))


# --- the ledger event ------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.05, 0.3, 1.0])
def test_a_pure_event_alone_is_charged_exactly_its_epsilon(epsilon):
    """Binary randomized response with P(truth) = e^ε/(1+e^ε): PLD gives ε at δ ≈ 0, up to dp-
    accounting's pessimistic rounding of the privacy loss up to its grid (one step, 1e-4: ε = 0.05
    computes to 0.05 + 1e-17 and is charged 0.0501); RDP a valid bound above it; both accept the
    event under the ledger's relation."""
    entry = EventEntry(SELECTION_EVENT, pure_dp_event(epsilon))
    assert epsilon - 1e-9 <= epsilon_of([entry], 1e-12, "pld") <= epsilon + PLD_DISCRETIZATION + 1e-9
    assert epsilon <= epsilon_of([entry], 1e-12, "rdp") < epsilon + 0.05
    four = epsilon_of([EventEntry("sel", pure_dp_event(epsilon / 4), count=4)], 1e-12, "pld")
    assert four <= epsilon + 4 * PLD_DISCRETIZATION


def test_a_pure_event_composes_with_gaussian_entries_and_round_trips():
    sgd = LedgerEntry("sgd", 1.1, 0.01, 1000)
    selection = EventEntry(SELECTION_EVENT, pure_dp_event(0.1), count=2, note="two rounds")
    for accountant in ("pld", "rdp"):
        alone = epsilon_of([sgd], 1e-5, accountant)
        both = epsilon_of([sgd, selection], 1e-5, accountant)
        assert alone < both < alone + 0.2 + 1e-6
    ledger = PrivacyLedger([sgd, selection])
    restored = PrivacyLedger.from_dict(json.loads(json.dumps(ledger.to_dict())))
    assert restored == ledger and restored.epsilon(1e-5) == ledger.epsilon(1e-5)


def test_randomized_response_is_admitted_only_as_a_binary_pure_release():
    with pytest.raises(InputError, match="no accountant"):
        EventEntry("rr", dp_event.RandomizedResponseDpEvent(0.2, 3))
    with pytest.raises(InputError, match="no accountant"):
        EventEntry("rr", dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(1.0), pure_dp_event(0.5)]))
    with pytest.raises(InputError):
        pure_dp_event(0.0)


# --- a fit with selection ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def table(adult_small):
    return adult_small.iloc[:600].reset_index(drop=True)


def sample_hash(synth: TabularSynthesizer) -> str:
    return hashlib.sha256(synth.sample(200, seed=1).to_csv(index=False).encode()).hexdigest()


def test_a_fit_with_selection_charges_it_and_still_lands_on_epsilon(table, adult_schema, tmp_path):
    synth = TabularSynthesizer(epsilon=1.0, seed=0, select_checkpoints=3, select_top=2, **SMALL)
    synth.fit(table, schema=adult_schema)
    entries = {e.name: e for e in synth.ledger.entries}
    assert entries[SELECTION_EVENT].count == 2
    assert entries[SELECTION_EVENT].event == pure_dp_event(0.05 / 2)
    spent = synth.ledger.epsilon(1e-5)
    assert 0.97 < spent <= 1.0 * (1 + 1e-9)  # σ was calibrated with room for the selection
    record = synth.training["selection"]
    assert record["candidates"] == 3 and len(record["chosen_steps"]) == 2
    assert set(record["chosen_steps"]) <= set(record["snapshot_steps"])
    assert record["snapshot_steps"][-1] == synth.training["steps"]
    loaded = TabularSynthesizer.load(synth.save(tmp_path / "m"))
    assert sample_hash(loaded) == sample_hash(synth)  # the union of the two chosen generators
    assert loaded.ledger.to_dict() == synth.ledger.to_dict() and loaded.settings.select_top == 2


def test_selection_is_off_by_default_and_leaves_the_saved_config_unchanged(table, adult_schema):
    synth = TabularSynthesizer(epsilon=1.0, seed=0, **SMALL).fit(table, schema=adult_schema)
    assert "selection" not in synth.training
    assert SELECTION_EVENT not in {e.name for e in synth.ledger.entries}
    assert "select_checkpoints" not in synth.settings.to_dict()


def test_a_killed_fit_with_selection_resumes_to_the_same_choice(table, adult_schema, tmp_path):
    class Killed(Exception):
        pass

    def kill(done: int, total: int, epsilon: float) -> None:
        if done >= 7:
            raise Killed

    settings = {"epsilon": 1.0, "seed": 0, "select_checkpoints": 4, "accountant": "rdp", **SMALL}
    whole = TabularSynthesizer(**settings).fit(table, schema=adult_schema)
    with pytest.raises(Killed):
        TabularSynthesizer(**settings).fit(
            table, schema=adult_schema, checkpoint=tmp_path, checkpoint_every=2, progress=kill
        )
    resumed = TabularSynthesizer(**settings).fit(table, schema=adult_schema, checkpoint=tmp_path, checkpoint_every=2)
    assert not (tmp_path / STATE_FILE).exists()
    assert resumed.training["selection"] == whole.training["selection"]
    assert resumed.ledger.to_dict() == whole.ledger.to_dict()
    assert sample_hash(resumed) == sample_hash(whole)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"select_checkpoints": 1}, "select_checkpoints must be 0"),
        ({"select_checkpoints": 3, "select_top": 3}, "select_top must be"),
        ({"select_checkpoints": 3, "selection_budget_fraction": 0.7}, "selection_budget_fraction"),
    ],
)
def test_bad_selection_settings_are_refused_before_any_read(settings, message):
    with pytest.raises(InputError, match=message):
        TabularSynthesizer(**settings)


def test_cli_selection_flags_reach_the_training_config():
    from dpgan.cli import build_parser
    from dpgan.cli.tables import synth_kwargs

    parser = build_parser()
    base = ["fit", "t.csv", "--epsilon", "1", "--out", "m"]
    off = TabularSynthesizer(**synth_kwargs(parser.parse_args(base))).settings
    assert off.select_checkpoints == 0
    flags = ["--select-checkpoints", "5", "--select-top", "2", "--selection-budget-fraction", "0.1"]
    on = TabularSynthesizer(**synth_kwargs(parser.parse_args([*base, *flags]))).settings
    assert (on.select_checkpoints, on.select_top, on.selection_budget_fraction) == (5, 2, 0.1)


def test_the_score_reads_only_the_softmax_spans_of_other_columns():
    """Pairs of spans of one column (a numeric column's bins and its null flag) are not a 2-way
    marginal of two columns; with one column only, one-way marginals are scored."""
    from dpgan.training.selection import variable_pairs

    spans = [OutputSpan(SOFTMAX, 0, 3, "a"), OutputSpan(SOFTMAX, 3, 2, "a"), OutputSpan(SOFTMAX, 5, 2, "b")]
    assert variable_pairs(spans) == [(0, 2), (1, 2)]
    assert variable_pairs(spans[:2]) == [(0,), (1,)]
