"""General ledger entries (dpgan.privacy.events.EventEntry): any add/remove-accountable dp-accounting
event with a label, composed with the Gaussian entries and the one-of-shards mixture.

The references are dp-accounting's own accountants composing the same events directly
(PLDAccountant / RdpAccountant, add/remove-one, the ledger's grid and orders) and, for the shard
mixture, dp-accounting's PLD library and per-n RdpAccountants summed over the binomial.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from dp_accounting import dp_event as ev
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.privacy_accountant import NeighboringRelation
from dp_accounting.rdp import RdpAccountant
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon as rdp_compute_epsilon
from scipy import stats

from dpgan.errors import BudgetError, InputError
from dpgan.privacy.accounting import (
    ACCOUNTANTS,
    CLASSIC_2019_ORDERS,
    PLD_DISCRETIZATION,
    RDP_ORDERS,
    Budget,
    IncrementalAccountant,
    LedgerEntry,
    PrivacyLedger,
    entry_from_dict,
    epsilon_of,
    pld_discretization,
)
from dpgan.privacy.calibration import calibrate_noise_multiplier
from dpgan.privacy.events import (
    EVENT_TYPES,
    SUPPORT_CHECKS,
    EventEntry,
    canonical_event,
    event_from_dict,
    event_pld,
    event_rdp,
    event_to_dict,
)

DELTA = 1e-5
ADD_REMOVE = NeighboringRelation.ADD_OR_REMOVE_ONE
SIGMA, Q, STEPS = 1.1, 0.01, 100  # the Poisson Gaussian steps of the mixed ledgers
# Same events, same grid/orders, same order of composition: only floating-point summation order
# differs (RDP curves are added entry by entry here, in one accountant there).
SAME_EVENTS_REL = 1e-9


def _sgd_event(sigma: float = SIGMA, q: float = Q, steps: int = STEPS) -> ev.DpEvent:
    return ev.SelfComposedDpEvent(ev.PoissonSampledDpEvent(q, ev.GaussianDpEvent(sigma)), steps)


def _search() -> EventEntry:
    """A hyper-parameter search (Papernot & Steinke 2022): RDP only."""
    return EventEntry("search", ev.RepeatAndSelectDpEvent(ev.GaussianDpEvent(6.0), 8.0, math.inf))


def _rdp_classic(curve: np.ndarray, orders: tuple[float, ...], delta: float) -> float:
    """Mironov (2017) Prop. 3: min_α RDP(α) + log(1/δ)/(α − 1)."""
    return float(np.min(curve + math.log(1.0 / delta) / (np.asarray(orders) - 1.0)))


# --- the general path against dp-accounting, and against the Gaussian fast path -----------------


def test_laplace_plus_poisson_gaussian_ledger_equals_dp_accounting_composing_the_same_events():
    """A Laplace count then Poisson Gaussian steps: the ledger's ε is dp-accounting's, to 1e-9."""
    laplace = ev.LaplaceDpEvent(4.0)
    entries = [EventEntry("count", laplace, note="noisy N"), LedgerEntry("sgd", SIGMA, Q, STEPS)]
    pld = PLDAccountant(ADD_REMOVE, value_discretization_interval=PLD_DISCRETIZATION)
    pld.compose(laplace).compose(_sgd_event())
    assert pld_discretization(entries) == PLD_DISCRETIZATION
    assert epsilon_of(entries, DELTA, "pld") == pytest.approx(pld.get_epsilon(DELTA), rel=SAME_EVENTS_REL)
    rdp = RdpAccountant(orders=list(RDP_ORDERS), neighboring_relation=ADD_REMOVE)
    rdp.compose(laplace).compose(_sgd_event())
    assert epsilon_of(entries, DELTA, "rdp") == pytest.approx(rdp.get_epsilon(DELTA), rel=SAME_EVENTS_REL)
    composed = ev.ComposedDpEvent([laplace, _sgd_event()])
    classic = _rdp_classic(event_rdp(composed, CLASSIC_2019_ORDERS), CLASSIC_2019_ORDERS, DELTA)
    assert epsilon_of(entries, DELTA, "rdp-classic") == pytest.approx(classic, rel=SAME_EVENTS_REL)
    # and the Laplace entry is not free: it costs on top of the steps under every accountant
    for accountant in ACCOUNTANTS:
        assert epsilon_of(entries, DELTA, accountant) > epsilon_of(entries[1:], DELTA, accountant) + 0.05


@pytest.mark.parametrize("sigma, q, steps", [(SIGMA, Q, STEPS), (3.0, 1.0, 4)])
@pytest.mark.parametrize("accountant", ACCOUNTANTS)
def test_general_entry_of_a_gaussian_equals_the_gaussian_entry(sigma, q, steps, accountant):
    """Both paths agree: the same Gaussian as a LedgerEntry or as an event (self-composed in the
    event, or repeated by the entry's count), alone and after a Laplace entry."""
    inner: ev.DpEvent = ev.GaussianDpEvent(sigma)
    if q < 1.0:
        inner = ev.PoissonSampledDpEvent(q, inner)
    gaussian = LedgerEntry("sgd", sigma, q, steps)
    as_tree = EventEntry("sgd", ev.SelfComposedDpEvent(inner, steps))
    as_count = EventEntry("sgd", inner, count=steps)
    prior = EventEntry("count", ev.LaplaceDpEvent(4.0))
    expected = epsilon_of([gaussian], DELTA, accountant)
    assert epsilon_of([as_tree], DELTA, accountant) == pytest.approx(expected, rel=SAME_EVENTS_REL)
    assert epsilon_of([as_count], DELTA, accountant) == pytest.approx(expected, rel=SAME_EVENTS_REL)
    expected = epsilon_of([prior, gaussian], DELTA, accountant)
    assert epsilon_of([prior, as_count], DELTA, accountant) == pytest.approx(expected, rel=SAME_EVENTS_REL)


def test_event_pld_and_event_rdp_read_what_dp_accounting_composes():
    """event_pld reads PLDAccountant's private `_pld`, event_rdp RdpAccountant's `_rdp`: if a
    dp-accounting release renames or changes either, these ε stop matching (or raise)."""
    events = [
        ev.LaplaceDpEvent(2.0),
        _sgd_event(steps=50),
        ev.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0], [0.7, 0.3]),
        ev.ComposedDpEvent([ev.GaussianDpEvent(3.0), ev.DiscreteLaplaceDpEvent(0.5, 1)]),
    ]
    for event in events:
        # dp-accounting's mixture-of-Gaussians PLD takes ~20 s on the ledger's grid: a coarser one here
        grid = 1e-2 if isinstance(event, ev.MixtureOfGaussiansDpEvent) else PLD_DISCRETIZATION
        pld = event_pld(event, 3, grid)
        assert isinstance(pld, pld_lib.PrivacyLossDistribution)
        reference = PLDAccountant(ADD_REMOVE, value_discretization_interval=grid).compose(event, 3)
        assert pld.get_epsilon_for_delta(DELTA) == reference.get_epsilon(DELTA)
    for event in [ev.LaplaceDpEvent(2.0), _sgd_event(steps=50), ev.ZCDpEvent(0.05, 0.01), _search().event]:
        curve = event_rdp(event, RDP_ORDERS)
        reference = RdpAccountant(orders=list(RDP_ORDERS), neighboring_relation=ADD_REMOVE).compose(event)
        assert rdp_compute_epsilon(RDP_ORDERS, curve, DELTA)[0] == reference.get_epsilon(DELTA)


def test_support_checks_cover_exactly_the_ledgers_accountants():
    assert set(SUPPORT_CHECKS) == set(ACCOUNTANTS)


# --- refusals -----------------------------------------------------------------------------------


def test_repeat_and_select_is_accepted_under_rdp_and_refused_under_pld():
    """An RDP-only event: a budgeted RDP ledger takes it; a PLD one refuses it, naming the entry and
    the accountants that could, and is left unchanged."""
    rdp_ledger = PrivacyLedger(budget=Budget(8.0, DELTA, "rdp"))
    rdp_ledger.add(LedgerEntry("sgd", SIGMA, Q, STEPS))
    before = rdp_ledger.epsilon(DELTA, "rdp")
    rdp_ledger.add(_search())
    assert rdp_ledger.epsilon(DELTA, "rdp") > before
    assert rdp_ledger.epsilon(DELTA, "rdp-classic") > rdp_ledger.epsilon(DELTA, "rdp")

    pld_ledger = PrivacyLedger([LedgerEntry("sgd", SIGMA, Q, STEPS)], budget=Budget(8.0, DELTA, "pld"))
    with pytest.raises(InputError, match=r"^search: the pld accountant cannot account RepeatAndSelect\(Gaussian\)"):
        pld_ledger.add(_search())
    with pytest.raises(InputError, match="choose rdp, rdp-classic"):
        pld_ledger.reserve(_search(), 3)
    assert pld_ledger.entries == [LedgerEntry("sgd", SIGMA, Q, STEPS)] and pld_ledger.reserved == {}


def test_a_saved_ledger_without_budget_refuses_epsilon_from_an_accountant_that_cannot_account_it():
    """from_dict has no budget; it loads an RDP-only entry, but ε under PLD is an InputError naming
    it (never the ε of the other entries), and the report shows None for PLD."""
    saved = PrivacyLedger([LedgerEntry("sgd", SIGMA, Q, STEPS), _search()]).to_dict()
    ledger = PrivacyLedger.from_dict(json.loads(json.dumps(saved, allow_nan=False)))
    assert ledger.epsilon(DELTA, "rdp") > epsilon_of(ledger.entries[:1], DELTA, "rdp")
    with pytest.raises(InputError, match="^search: the pld accountant"):
        ledger.epsilon(DELTA, "pld")
    report = ledger.report(DELTA, "rdp")
    assert report["epsilon_by_accountant"] == {"rdp": report["epsilon"], "pld": None}
    with pytest.raises(InputError, match="^search:"):
        ledger.report(DELTA, "pld")
    with pytest.raises(InputError, match="^search:"):
        IncrementalAccountant(ledger.entries, LedgerEntry("more", 1.0, 0.01), delta=DELTA, accountant="pld")


@pytest.mark.parametrize(
    "event",
    [
        ev.SampledWithoutReplacementDpEvent(1000, 10, ev.GaussianDpEvent(1.0)),
        ev.SampledWithReplacementDpEvent(1000, 10, ev.GaussianDpEvent(1.0)),
        ev.RandomizedResponseDpEvent(0.5, 4),
        ev.ComposedDpEvent([ev.GaussianDpEvent(1.0), ev.RandomizedResponseDpEvent(0.5, 4)]),
    ],
    ids=["without-replacement", "with-replacement", "randomized-response", "nested-randomized-response"],
)
def test_events_no_accountant_supports_under_add_remove_are_refused(event):
    """Replace-one events (a fixed-size shuffled batch, randomized response) would be charged at the
    wrong neighbouring relation: refused, with the entry's name."""
    with pytest.raises(InputError, match="^shuffled: no accountant can account .* add/remove-one"):
        EventEntry("shuffled", event)


@pytest.mark.parametrize(
    "event",
    [
        ev.NonPrivateDpEvent(),
        ev.UnsupportedDpEvent(),
        ev.ComposedDpEvent([ev.GaussianDpEvent(1.0), ev.NonPrivateDpEvent()]),
        ev.PoissonSampledDpEvent(0.1, ev.UnsupportedDpEvent()),
        ev.SingleEpochTreeAggregationDpEvent(1.0, 10),
        ev.GaussianDpEvent(0.0),
        ev.LaplaceDpEvent(0.0),
        ev.SelfComposedDpEvent(ev.GaussianDpEvent(-1.0), 3),
    ],
    ids=["non-private", "unsupported", "nested-non-private", "sampled-unsupported", "tree", "zero-gaussian",
         "zero-laplace", "negative-gaussian"],
)  # fmt: skip
def test_non_private_and_unsupported_events_are_never_accepted(event):
    """dp-accounting would compose a non-private event as ε = ∞; the ledger refuses it outright."""
    with pytest.raises(InputError, match="^leak: "):
        EventEntry("leak", event)


def test_a_budgeted_ledger_refuses_a_general_entry_that_would_pass_epsilon():
    ledger = PrivacyLedger([LedgerEntry("sgd", SIGMA, Q, STEPS)], budget=Budget(1.0, DELTA, "pld"))
    ledger.add(EventEntry("cheap count", ev.LaplaceDpEvent(20.0)))
    state = json.dumps(ledger.state_dict())
    with pytest.raises(BudgetError, match="^costly count: 1 more release"):
        ledger.add(EventEntry("costly count", ev.LaplaceDpEvent(0.5)))
    with pytest.raises(BudgetError, match="^costly count: 20 more release"):
        ledger.reserve(EventEntry("costly count", ev.LaplaceDpEvent(5.0)), 20)
    assert json.dumps(ledger.state_dict()) == state
    assert ledger.epsilon(DELTA, "pld") <= 1.0


def test_a_general_entry_can_be_reserved_and_charged_and_survives_a_checkpoint():
    ledger = PrivacyLedger(budget=Budget(3.0, DELTA, "rdp"))
    ledger.add(LedgerEntry("sgd", SIGMA, Q, STEPS))
    reservation = ledger.reserve(EventEntry("queries", ev.LaplaceDpEvent(30.0)), 4)
    reservation.charge()
    restored = PrivacyLedger.from_state_dict(json.loads(json.dumps(ledger.state_dict(), allow_nan=False)))
    assert restored.entries == ledger.entries and restored.reserved == {1: 4}
    resumed = restored.reservation(1)
    for _ in range(3):
        resumed.charge()
    with pytest.raises(BudgetError):
        resumed.charge()
    full = [ledger.entries[0], EventEntry("queries", ev.LaplaceDpEvent(30.0), count=4)]
    assert restored.epsilon(DELTA, "rdp") == epsilon_of(full, DELTA, "rdp")


def test_a_tampered_state_with_an_entry_its_budget_accountant_cannot_account_is_refused():
    state = PrivacyLedger([_search()]).state_dict() | {"budget": Budget(5.0, DELTA, "pld").to_dict()}
    with pytest.raises(InputError, match="^search: the pld accountant"):
        PrivacyLedger.from_state_dict(state)


def test_incremental_accountant_takes_general_prior_entries_but_only_a_gaussian_step():
    prior = [EventEntry("count", ev.LaplaceDpEvent(4.0))]
    step = LedgerEntry("sgd", SIGMA, Q)
    for accountant in ACCOUNTANTS:
        inc = IncrementalAccountant(prior, step, delta=DELTA, accountant=accountant)
        expected = epsilon_of([*prior, LedgerEntry("sgd", SIGMA, Q, 120)], DELTA, accountant)
        assert inc.epsilon_after(120) == pytest.approx(expected, rel=1e-9)
    with pytest.raises(InputError, match="^count: the repeated step must be a Gaussian LedgerEntry"):
        IncrementalAccountant([], prior[0], delta=DELTA)


def test_calibration_pays_for_a_general_prior_entry_first():
    prior = [EventEntry("count", ev.LaplaceDpEvent(2.0))]
    plan = {"sample_rate": Q, "steps": STEPS, "epsilon": 2.0, "delta": DELTA, "accountant": "rdp"}
    sigma = calibrate_noise_multiplier(**plan, prior=prior)
    alone = calibrate_noise_multiplier(**plan)
    assert sigma > alone
    assert epsilon_of([*prior, LedgerEntry("sgd", sigma, Q, STEPS)], DELTA, "rdp") <= 2.0


# --- the one-of-shards mixture with a general entry ---------------------------------------------


def _shard(sigma: float, steps: int, n_d: int) -> LedgerEntry:
    return LedgerEntry("g", sigma, sampling_rate=1.0 / n_d, count=steps, sampling="one-of-shards")


def test_shard_mixture_composed_with_a_laplace_entry_under_pld_is_dp_accountings_pld():
    """PLD: the shard entry's mixture (Gaussian mixed with the identity at 1/N_d, T-fold) composed
    with the Laplace PLD, built directly with dp-accounting's PLD library on the ledger's grid."""
    b, sigma, steps, n_d = 3.0, 8.0, 500, 20
    entries = [EventEntry("count", ev.LaplaceDpEvent(b)), _shard(sigma, steps, n_d)]
    grid = pld_discretization(entries)
    laplace = pld_lib.from_laplace_mechanism(b, value_discretization_interval=grid)
    gaussian = pld_lib.from_gaussian_mechanism(sigma, value_discretization_interval=grid)
    mixture = gaussian.compute_mixture(pld_lib.identity(grid), 1.0 / n_d).self_compose(steps)
    expected = pld_lib.identity(grid).compose(laplace).compose(mixture).get_epsilon_for_delta(DELTA)
    assert epsilon_of(entries, DELTA, "pld") == pytest.approx(expected, rel=SAME_EVENTS_REL)
    assert epsilon_of(entries, DELTA, "pld") > epsilon_of(entries[1:], DELTA, "pld")


@pytest.mark.parametrize("accountant", ["rdp", "rdp-classic"])
def test_shard_mixture_composed_with_a_laplace_entry_under_rdp_is_the_binomial_sum(accountant):
    """RDP: at the ledger's ε, Σ_n Bin(n; T, 1/N_d)·δ_n(ε) with δ_n from one RdpAccountant per n
    composing Laplace + n Gaussians equals the target δ: buckets are exact below n = 1000 and at
    most 2·1e-6·δ is charged in excess (BINOMIAL_TAIL), so to 1e-5 relative."""
    b, sigma, steps, n_d = 3.0, 4.0, 60, 4
    entries = [EventEntry("count", ev.LaplaceDpEvent(b)), _shard(sigma, steps, n_d)]
    epsilon = epsilon_of(entries, DELTA, accountant)
    orders = CLASSIC_2019_ORDERS if accountant == "rdp-classic" else RDP_ORDERS
    total = 0.0
    for n, weight in enumerate(stats.binom.pmf(np.arange(steps + 1), steps, 1.0 / n_d)):
        acc = RdpAccountant(orders=list(orders), neighboring_relation=ADD_REMOVE)
        acc.compose(ev.LaplaceDpEvent(b))
        if n:
            acc.compose(ev.GaussianDpEvent(sigma), n)
        if accountant == "rdp":
            delta_n = acc.get_delta(epsilon)
        else:  # Mironov: δ = min_α exp((α − 1)(RDP(α) − ε))
            curve = event_rdp(acc.ledger, orders)
            delta_n = min(1.0, float(np.exp(np.min((np.asarray(orders) - 1) * (curve - epsilon)))))
        total += weight * delta_n
    assert total == pytest.approx(DELTA, rel=1e-5)
    assert total <= DELTA * (1 + 1e-9)


# --- saving -------------------------------------------------------------------------------------

# one instance of every whitelisted type (the test below fails when a type is added without one)
EXAMPLES: dict[str, ev.DpEvent] = {
    "NoOpDpEvent": ev.NoOpDpEvent(),
    "GaussianDpEvent": ev.GaussianDpEvent(1.5),
    "LaplaceDpEvent": ev.LaplaceDpEvent(2),
    "DiscreteLaplaceDpEvent": ev.DiscreteLaplaceDpEvent(0.7, 2),
    "RandomizedResponseDpEvent": ev.RandomizedResponseDpEvent(0.25, 3),
    "ZCDpEvent": ev.ZCDpEvent(0.1, 0.02),
    "MixtureOfGaussiansDpEvent": ev.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0, 2.0], [0.5, 0.25, 0.25]),
    "TruncatedSubsampledGaussianDpEvent": ev.TruncatedSubsampledGaussianDpEvent(10_000, 0.01, 150, 1.2),
    "PoissonSampledDpEvent": ev.PoissonSampledDpEvent(0.02, ev.LaplaceDpEvent(1.0)),
    "SampledWithReplacementDpEvent": ev.SampledWithReplacementDpEvent(500, 20, ev.GaussianDpEvent(1.0)),
    "SampledWithoutReplacementDpEvent": ev.SampledWithoutReplacementDpEvent(500, 20, ev.GaussianDpEvent(1.0)),
    "SelfComposedDpEvent": ev.SelfComposedDpEvent(ev.GaussianDpEvent(2.0), 7),
    "ComposedDpEvent": ev.ComposedDpEvent([ev.GaussianDpEvent(2.0), ev.ComposedDpEvent([ev.NoOpDpEvent()])]),
    "RepeatAndSelectDpEvent": ev.RepeatAndSelectDpEvent(ev.GaussianDpEvent(5.0), 4.0, math.inf),
}


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_every_whitelisted_event_type_round_trips_through_strict_json(name):
    event = EXAMPLES[name]
    assert type(event).__name__ == name
    text = json.dumps(event_to_dict(event), allow_nan=False)
    restored = event_from_dict(json.loads(text))
    assert restored == canonical_event(event)
    assert json.dumps(event_to_dict(restored), allow_nan=False) == text
    hash(restored)  # canonical events are hashable (the accounting caches key on them)


def test_whitelist_examples_are_complete():
    assert set(EXAMPLES) == set(EVENT_TYPES)


def test_accountable_entries_round_trip_in_a_ledger_with_the_same_epsilon():
    """Every example an add/remove accountant supports, as an entry in a saved ledger: the same
    entries come back and the same ε under each accountant that can account them."""
    entries: list[LedgerEntry | EventEntry] = [LedgerEntry("sgd", SIGMA, Q, 50, note="steps")]
    for name, event in EXAMPLES.items():
        try:
            entries.append(EventEntry(name, event, count=2, extra_delta=1e-9, note=f"a {name}"))
        except InputError:
            assert name in {"RandomizedResponseDpEvent", "SampledWithReplacementDpEvent",
                            "SampledWithoutReplacementDpEvent"}  # fmt: skip
    ledger = PrivacyLedger(entries)
    restored = PrivacyLedger.from_dict(json.loads(json.dumps(ledger.to_dict(), allow_nan=False)))
    assert restored == ledger
    assert all(type(a) is type(b) for a, b in zip(restored.entries, ledger.entries))
    # dp-accounting's PLDs of these two take 2-20 s on the ledger's grid (checked in the test above)
    slow = {"MixtureOfGaussiansDpEvent", "TruncatedSubsampledGaussianDpEvent"}
    by_pld = PrivacyLedger(
        [e for e in entries if isinstance(e, LedgerEntry) or (SUPPORT_CHECKS["pld"](e.event) and e.name not in slow)]
    )
    by_rdp = PrivacyLedger([e for e in entries if isinstance(e, LedgerEntry) or SUPPORT_CHECKS["rdp"](e.event)])
    assert len(by_pld.entries) > 5 and len(by_rdp.entries) > 5
    for part, accountant in [(by_pld, "pld"), (by_rdp, "rdp")]:
        again = PrivacyLedger.from_dict(json.loads(json.dumps(part.to_dict())))
        assert 0 < again.epsilon(DELTA, accountant) == part.epsilon(DELTA, accountant) < math.inf


def test_equal_events_built_differently_are_equal_entries():
    a = EventEntry("q", ev.ComposedDpEvent([ev.GaussianDpEvent(1), ev.LaplaceDpEvent(2)]))
    b = EventEntry("q", ev.ComposedDpEvent((ev.GaussianDpEvent(1.0), ev.LaplaceDpEvent(2.0))))
    assert a == b and hash(a) == hash(b)


def _deep(depth: int) -> dict:
    data: dict = {"type": "GaussianDpEvent", "noise_multiplier": 1.0}
    for _ in range(depth):
        data = {"type": "SelfComposedDpEvent", "event": data, "count": 1}
    return data


@pytest.mark.parametrize(
    "data",
    [
        "GaussianDpEvent",
        {"noise_multiplier": 1.0},
        {"type": "NonPrivateDpEvent"},
        {"type": "UnsupportedDpEvent"},
        {"type": "os.system", "noise_multiplier": 1.0},
        {"type": "GaussianDpEvent"},
        {"type": "GaussianDpEvent", "noise_multiplier": 1.0, "sigma": 2.0},
        {"type": "GaussianDpEvent", "noise_multiplier": "1.0"},
        {"type": "GaussianDpEvent", "noise_multiplier": True},
        {"type": "GaussianDpEvent", "noise_multiplier": float("nan")},
        {"type": "GaussianDpEvent", "noise_multiplier": -1.0},
        {"type": "SelfComposedDpEvent", "event": {"type": "GaussianDpEvent", "noise_multiplier": 1.0}, "count": 2.5},
        {"type": "SelfComposedDpEvent", "event": [], "count": 2},
        {"type": "ComposedDpEvent", "events": {"type": "NoOpDpEvent"}},
        {"type": "PoissonSampledDpEvent", "sampling_probability": 1.5, "event": {"type": "NoOpDpEvent"}},
        {"type": "MixtureOfGaussiansDpEvent", "standard_deviation": 1.0, "sensitivities": [1.0],
         "sampling_probs": [0.9]},
        {"type": "MixtureOfGaussiansDpEvent", "standard_deviation": 1.0, "sensitivities": [], "sampling_probs": []},
        {"type": "RepeatAndSelectDpEvent", "event": {"type": "NoOpDpEvent"}, "mean": 1.0, "shape": "infinity"},
        {"type": "DiscreteLaplaceDpEvent", "noise_parameter": 1.0, "sensitivity": 0},
        _deep(40),
    ],
)  # fmt: skip
def test_malformed_event_dicts_raise_one_line_input_errors(data):
    with pytest.raises(InputError) as info:
        event_from_dict(data)
    assert "\n" not in str(info.value)
    entry = {"mechanism": "dp_event", "name": "bad", "event": data, "count": 1}
    with pytest.raises(InputError, match="^bad: "):
        PrivacyLedger.from_dict([entry])


@pytest.mark.parametrize(
    "entry",
    [
        {"mechanism": "dp_event", "name": "x", "count": 1},
        {"mechanism": "dp_event", "event": {"type": "NoOpDpEvent"}, "count": 1},
        {"mechanism": "dp_event", "name": "x", "event": {"type": "NoOpDpEvent"}, "count": -1},
        {"mechanism": "dp_event", "name": "x", "event": {"type": "NoOpDpEvent"}, "count": "3"},
        {"mechanism": "dp_event", "name": "x", "event": {"type": "NoOpDpEvent"}, "count": 1, "extra_delta": 1.0},
        {"mechanism": "pickle", "name": "x"},
    ],
)
def test_malformed_entry_dicts_raise_input_errors(entry):
    with pytest.raises(InputError):
        entry_from_dict(entry)
    with pytest.raises(InputError):
        PrivacyLedger.from_state_dict({"entries": [entry]})


def test_ledgers_saved_before_general_entries_load_exactly_as_before():
    """Dicts as saved by earlier versions ("mechanism": "gaussian"; the oldest lack "sampling")."""
    saved = [
        {"mechanism": "gaussian", "name": "row count", "noise_multiplier": 8.0, "sampling_rate": 1.0, "count": 1,
         "extra_delta": 0.0, "note": "noisy N"},
        {"mechanism": "gaussian", "name": "categories of x", "noise_multiplier": 8.0, "sampling_rate": 1.0,
         "count": 1, "extra_delta": 1e-7, "note": "", "sampling": "poisson"},
        {"mechanism": "gaussian", "name": "generator", "noise_multiplier": 6.0, "sampling_rate": 0.05, "count": 300,
         "extra_delta": 0.0, "note": "", "sampling": "one-of-shards"},
    ]  # fmt: skip
    ledger = PrivacyLedger.from_dict(saved)
    assert ledger.entries == [
        LedgerEntry("row count", 8.0, note="noisy N"),
        LedgerEntry("categories of x", 8.0, extra_delta=1e-7),
        LedgerEntry("generator", 6.0, 0.05, 300, sampling="one-of-shards"),
    ]
    assert all(type(e) is LedgerEntry for e in ledger.entries)
    assert ledger.to_dict()[1:] == saved[1:]
    assert ledger.to_dict()[0] == saved[0] | {"sampling": "poisson"}
    state = PrivacyLedger.from_state_dict({"entries": saved, "budget": None, "reserved": {}})
    assert state.entries == ledger.entries


def test_report_of_a_mixed_ledger_lists_each_entry_with_its_own_epsilon():
    ledger = PrivacyLedger(
        [EventEntry("count", ev.LaplaceDpEvent(4.0), note="noisy N"), LedgerEntry("sgd", SIGMA, Q, STEPS)]
    )
    report = ledger.report(DELTA, "pld")
    json.dumps(report, allow_nan=False)
    assert report["epsilon"] == ledger.epsilon(DELTA, "pld")
    assert report["epsilon_by_accountant"] == {"rdp": ledger.epsilon(DELTA, "rdp"), "pld": report["epsilon"]}
    count, sgd = report["events"]
    assert count["mechanism"] == "dp_event" and count["event"] == {"type": "LaplaceDpEvent", "noise_multiplier": 4.0}
    assert count["epsilon_alone"] == epsilon_of(ledger.entries[:1], DELTA, "pld")
    assert sgd["mechanism"] == "gaussian" and sgd["epsilon_alone"] == epsilon_of(ledger.entries[1:], DELTA, "pld")
    assert 0 < count["epsilon_alone"] < report["epsilon"] and 0 < sgd["epsilon_alone"] < report["epsilon"]


def test_reports_name_the_mechanism_of_both_kinds_of_entry():
    """`privacy_report()` / `dpgan inspect` / the HTML report describe a general entry by its event
    and a Gaussian entry by σ and q (they used to read σ off every entry)."""
    from dpgan.evaluation.report_core import privacy_section

    ledger = PrivacyLedger(
        [
            LedgerEntry("steps", 1.1, sampling_rate=0.01, count=100),
            EventEntry("selection", ev.LaplaceDpEvent(20.0)),
        ]
    )
    report = ledger.report(1e-5, "pld")
    texts = [e["mechanism_text"] for e in report["events"]]
    assert texts == ["Gaussian σ=1.1, Poisson q=0.01", "Laplace"]
    html = privacy_section(report)
    assert "Gaussian σ=1.1, Poisson q=0.01" in html and "<td>Laplace</td>" in html


def test_a_schema_whose_purchase_holds_a_general_event_opens_the_fit_ledger_with_it(adult_schema):
    from dataclasses import replace

    from dpgan.tables.fit.run import purchased_schema_entries

    entry = EventEntry("schema selection", ev.LaplaceDpEvent(20.0), note="bought with a Laplace count")
    schema = replace(adult_schema, ledger=(entry.to_dict(),))
    assert purchased_schema_entries(schema) == [entry]


@pytest.mark.parametrize("count", [2, 3, 5])
def test_a_repeated_pure_dp_release_costs_count_times_its_epsilon_under_pld(count):
    """dp-accounting 0.6.0's PLDAccountant composes a randomized response once whatever its count, so
    a pure ε-DP entry of count 3 (checkpoint selection's top-k reservations) was charged ε, not 3ε.
    The ledger's PLD composes it once per repetition: one entry of count k = k entries = RDP's value
    (pure ε-DP composes to kε; RDP's bound is a little above it)."""
    from dataclasses import replace

    from dpgan.privacy.ledger import epsilon_of
    from dpgan.privacy.releases import pure_dp_event_entry

    entry = pure_dp_event_entry("select", 0.5)
    counted = epsilon_of([replace(entry, count=count)], 1e-5, "pld")
    separate = epsilon_of([entry] * count, 1e-5, "pld")
    nested = epsilon_of([replace(entry, event=ev.SelfComposedDpEvent(entry.event, count))], 1e-5, "pld")
    assert counted == pytest.approx(separate, rel=1e-6) == pytest.approx(nested, rel=1e-6)
    assert counted == pytest.approx(0.5 * count, rel=1e-3)
    assert counted <= epsilon_of([replace(entry, count=count)], 1e-5, "rdp") + 1e-6
