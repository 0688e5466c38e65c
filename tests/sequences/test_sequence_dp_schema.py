"""Sequence value bounds and label sets released with DP when the schema does not give them
(issue 15, invariant 5): the releases, their ledger entries, neighbouring inputs, the errors, the
CLI and the saved model."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpgan.errors import InputError
from dpgan.privacy.accounting import Budget, LedgerEntry, PrivacyLedger, epsilon_of
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.mechanisms import noisy_stacked_histograms, public_numeric_grid
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.sequences.codec import encode, read_long, read_long_raw
from dpgan.sequences.dp_schema import (
    BOUNDS_EVENT,
    BOUNDS_SHARE,
    LABEL_THRESHOLD_DELTA,
    LABELS_EVENT,
    LABELS_SHARE,
    complete_schema,
    label_contributions,
    unit_extremes,
)
from dpgan.sequences.reader import LABEL_OUTSIDE
from dpgan.sequences.settings import COUNT_EVENT, COUNT_SHARE
from dpgan.synthesizers.sequence import SequenceSynthesizer

T = 12
DELTA = 1e-5
FAST: dict = {}  # the default model: DP statistics, no GAN loop, no networks' settings (it would refuse them)
GRID = set(public_numeric_grid().tolist())


def _long(n: int, seed: int = 0, entities: int = 0) -> pd.DataFrame:
    """Daily profiles: the north's level is 10, the south's 25, with a shared daily cycle."""
    rng = np.random.default_rng(seed)
    label = rng.choice(["north", "south"], n)
    level = np.where(label == "north", 10.0, 25.0)[:, None]
    flow = level + 4 * np.sin(np.arange(T) / T * 2 * np.pi)[None, :] + rng.normal(0, 1, (n, T))
    frame = pd.DataFrame(
        {
            "sid": np.repeat(np.arange(n), T),
            "hour": np.tile(np.arange(T), n),
            "flow": flow.ravel(),
            "district": np.repeat(label, T),
        }
    )
    if entities:
        frame["home"] = np.repeat(np.arange(n) % entities, T)
    return frame


def _schema(**changes) -> SequenceSchema:
    base = {"id": "sid", "time": "hour", "length": T, "values": (ValueColumn("flow", None, None),), "label": "district"}
    return SequenceSchema(**(base | changes))


def _release(frame: pd.DataFrame, schema: SequenceSchema, epsilon: float, seed: int = 0):
    ledger = PrivacyLedger(budget=Budget(epsilon, DELTA, "pld"))
    shares = FitBudget(epsilon, DELTA, "pld")
    released = complete_schema(
        read_long_raw(frame, schema), schema, budget=shares, ledger=ledger, rng=np.random.default_rng(seed)
    )
    return released, ledger


def _add_series(frame: pd.DataFrame, value: float, label: str) -> pd.DataFrame:
    extra = pd.DataFrame({"sid": 10**6, "hour": np.arange(T), "flow": value, "district": label})
    return pd.concat([frame, extra], ignore_index=True)


def test_the_schema_may_leave_bounds_and_labels_to_dp_and_round_trips():
    schema = _schema(values=(ValueColumn("flow", 0.0, None), ValueColumn("temp", None, None, "log")))
    assert not schema.complete and SequenceSchema.from_dict(json.loads(json.dumps(schema.to_dict()))) == schema
    with pytest.raises(InputError, match="bounds"):
        read_long(_long(5).assign(temp=1.0), schema)  # reading needs a complete schema
    done = _schema(values=(ValueColumn("flow", 0.0, 50.0, source="dp"),), categories=("a", "b"), categories_source="dp")
    data = done.to_dict()
    assert data["values"][0]["source"] == "dp" and data["label"]["source"] == "dp"
    assert SequenceSchema.from_dict(json.loads(json.dumps(data))) == done
    with pytest.raises(InputError, match="source"):
        ValueColumn("flow", 0.0, 1.0, source="guess")


def test_the_releases_are_in_the_ledger_with_the_shares_sigma():
    frame = _long(2000)
    released, ledger = _release(frame, _schema(), 10.0)
    bounds, labels = ledger.entries
    shares = FitBudget(10.0, DELTA, "pld")
    assert bounds.name == BOUNDS_EVENT and bounds.count == 1 and bounds.sampling_rate == 1.0
    assert bounds.noise_multiplier == shares.at(BOUNDS_SHARE).sigma(1.0, 1, ())
    assert epsilon_of([bounds], DELTA, "pld") == pytest.approx(BOUNDS_SHARE * 10.0, rel=1e-3)
    assert labels.name == LABELS_EVENT and labels.extra_delta == pytest.approx(LABEL_THRESHOLD_DELTA * DELTA)
    pending = LedgerEntry("label threshold", 1.0, count=0, extra_delta=LABEL_THRESHOLD_DELTA * DELTA)
    assert labels.noise_multiplier == shares.at(BOUNDS_SHARE + LABELS_SHARE).sigma(1.0, 1, [bounds, pending])
    assert ledger.epsilon(DELTA, "pld") == pytest.approx((BOUNDS_SHARE + LABELS_SHARE) * 10.0, rel=1e-3)
    assert released.share == BOUNDS_SHARE + LABELS_SHARE
    flow = released.schema.values[0]
    assert flow.source == "dp" and released.schema.categories == ("north", "south")
    assert released.schema.categories_source == "dp"
    # grid edges, never the data's own extremes; most of the data inside
    assert flow.min in GRID and flow.max in GRID
    assert flow.min != frame["flow"].min() and flow.max != frame["flow"].max()
    per_series = frame.groupby("sid")["flow"]
    assert (per_series.min() >= flow.min).mean() > 0.95 and (per_series.max() <= flow.max).mean() > 0.95
    # nothing unknown: nothing released, nothing spent
    public = _schema(values=(ValueColumn("flow", 0.0, 40.0),), categories=("north", "south"))
    nothing, empty = _release(frame, public, 10.0)
    assert nothing.schema == public and nothing.share == 0.0 and not empty.entries


def test_neighbouring_inputs_release_the_same_schema_under_one_seed():
    """One series more, with an extreme value (and a known label), changes one bin by 1: under the
    same noise the released bounds and labels are the same, so the extreme leaks nothing."""
    frame = _long(1500, seed=3)
    for epsilon in (3.0, 30.0):
        for seed in range(3):
            base, _ = _release(frame, _schema(), epsilon, seed)
            for extreme in (1e6, -1e6):
                neighbour, _ = _release(_add_series(frame, extreme, "south"), _schema(), epsilon, seed)
                assert neighbour.schema == base.schema


def test_a_label_only_one_series_holds_is_not_released_and_its_series_is_dropped():
    frame = _add_series(_long(2000), 15.0, "secret")
    for epsilon in (3.0, 100.0):
        released, _ = _release(frame, _schema(values=(ValueColumn("flow", 0.0, 40.0),)), epsilon)
        assert released.schema.categories == ("north", "south")
        assert released.share == LABELS_SHARE  # bounds were public: only the labels were bought
    series = encode(read_long_raw(frame, released.schema), released.schema)
    assert len(series.values) == 2000 and series.dropped == 1 and series.dropped_units == 1
    # with a public label set the same series is dropped and counted too: one series never decides
    # whether the fit runs (dpgan.privacy.unit_rule)
    public = _schema(values=(ValueColumn("flow", 0.0, 40.0),), categories=("north", "south"))
    outside = read_long(frame, public)
    assert len(outside.values) == 2000 and outside.tally.dropped == {LABEL_OUTSIDE: 1}


def test_too_little_data_gives_a_clear_error_never_exact_values():
    small = _long(40)
    with pytest.raises(InputError, match=r"--bounds flow=LOW:HIGH") as caught:
        _release(small, _schema(), 1.0)
    assert "\n" not in str(caught.value)
    bounded = _schema(values=(ValueColumn("flow", 0.0, 40.0),))
    with pytest.raises(InputError, match=r"--categories district="):
        _release(small, bounded, 1.0)
    with pytest.raises(InputError, match="log scale"):  # centred data: a negative DP low bound
        centred = _long(2000).assign(flow=lambda f: f["flow"] - 17.5)
        _release(centred, _schema(values=(ValueColumn("flow", None, None, "log"),)), 10.0)


def test_only_the_missing_bounds_are_estimated():
    frame = _long(2000).assign(temp=lambda f: 20.0 + np.sin(f["hour"]))
    schema = _schema(
        values=(ValueColumn("flow", 0.0, None), ValueColumn("temp", 0.0, 40.0)), categories=("north", "south")
    )
    released, ledger = _release(frame, schema, 10.0)
    (entry,) = ledger.entries
    assert entry.name == BOUNDS_EVENT and "√1" in entry.note  # one histogram: the flow's maxima
    flow, temp = released.schema.values
    assert flow.min == 0.0 and flow.max in GRID and flow.max > 25.0 and flow.source == "dp"
    assert temp == ValueColumn("temp", 0.0, 40.0)


def test_the_stacked_histograms_have_std_sigma_root_k():
    draws = noisy_stacked_histograms(np.zeros((8, 20_000)), 2.0, np.random.default_rng(0))
    assert draws.std() == pytest.approx(2.0 * np.sqrt(8), rel=0.01)


def test_an_entity_is_one_unit_for_both_releases():
    frame = _long(30, entities=3)
    schema = _schema(entity="home", max_series_per_entity=2)
    raw = read_long_raw(frame, schema)
    lows, highs = unit_extremes(raw)
    expected = frame.groupby("home")["flow"]
    assert np.allclose(lows[:, 0], expected.min()) and np.allclose(highs[:, 0], expected.max())
    # an entity holding three labels adds 1/√2 to two of them (its cap): L2 norm 1
    three = pd.DataFrame({"sid": np.arange(3), "district": ["a", "b", "c"], "home": 0})
    three = three.loc[three.index.repeat(T)].assign(hour=np.tile(np.arange(T), 3), flow=1.0)
    sums = label_contributions(read_long_raw(three, schema), 2, np.random.default_rng(0))
    assert len(sums) == 2 and all(v == pytest.approx(2**-0.5) for v in sums.values())
    one = label_contributions(read_long_raw(frame, schema), 2, np.random.default_rng(0))
    assert sum(one.values()) == pytest.approx(3 * 2**0.5)  # three entities, each holding both labels


def test_a_fit_without_bounds_or_labels_charges_them_first_and_reports_them(tmp_path):
    frame = _long(2000)
    synth = SequenceSynthesizer(epsilon=10.0, delta=DELTA, seed=0, **FAST).fit(frame, _schema())
    names = [e.name for e in synth.ledger.entries]
    assert names[:3] == [BOUNDS_EVENT, LABELS_EVENT, COUNT_EVENT]
    count = synth.ledger.entries[2]
    share = FitBudget(10.0, DELTA, "pld").at(BOUNDS_SHARE + LABELS_SHARE + COUNT_SHARE)
    assert count.noise_multiplier == share.sigma(1.0, 1, synth.ledger.entries[:2])
    assert synth.ledger.epsilon(DELTA, "pld") <= 10.0 * (1 + 1e-9)
    report = synth.privacy_report()
    assert "estimated with DP" in report["schema_source"] and "bounds of 'flow'" in report["schema_source"]
    flow = synth.schema.values[0]
    assert report["dp_schema"] == {"bounds": {"flow": [flow.min, flow.max]}, "labels": {"district": ["north", "south"]}}
    assert "clipped" in report["training"]["clipping"] and "flow" in report["training"]["clipping"]
    synth.save(tmp_path / "m")
    loaded = SequenceSynthesizer.load(tmp_path / "m")
    assert loaded.schema == synth.schema and loaded.privacy_report()["dp_schema"] == report["dp_schema"]
    sample = loaded.sample(50, seed=0)
    assert sample["flow"].between(flow.min, flow.max).all() and set(sample["district"]) <= {"north", "south"}


def test_cli_fits_series_without_bounds_or_categories(tmp_path, capsys):
    from dpgan.cli import main

    frame = _long(2000).assign(temp=lambda f: 20.0 + np.sin(f["hour"]))
    frame.to_csv(tmp_path / "series.csv", index=False)
    roles = ["--id-column", "sid", "--time-column", "hour", "--length", str(T), "--label-column", "district"]
    fit = ["fit", str(tmp_path / "series.csv"), "--kind", "sequence", "--epsilon", "10", *roles]
    fit += ["--seed", "0", "--bounds", "temp=0:40"]
    assert main([*fit, "--out", str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out
    assert "estimated with DP (in the ledger): bounds of 'flow', the label set of 'district'" in out
    assert "public: bounds of 'temp'" in out
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    flow, temp = meta["schema"]["values"]
    assert flow["source"] == "dp" and flow["min"] in GRID and flow["max"] in GRID
    assert temp == {"name": "temp", "min": 0.0, "max": 40.0}
    assert meta["schema"]["label"] == {"name": "district", "categories": ["north", "south"], "source": "dp"}
    assert [e["name"] for e in meta["ledger"]][:3] == [BOUNDS_EVENT, LABELS_EVENT, COUNT_EVENT]
    assert main(["inspect", str(tmp_path / "m")]) == 0
    shown = capsys.readouterr().out
    assert BOUNDS_EVENT in shown and "estimated with DP" in shown
    assert main(["sample", str(tmp_path / "m"), "-n", "5", "--out", str(tmp_path / "s.csv")]) == 0
    assert list(pd.read_csv(tmp_path / "s.csv").columns) == ["sid", "hour", "flow", "temp", "district"]
    # too few series for the DP estimates: one clear line, nothing written
    _long(40).to_csv(tmp_path / "small.csv", index=False)
    small = ["fit", str(tmp_path / "small.csv"), "--kind", "sequence", "--epsilon", "1", *roles]
    assert main([*small, "--out", str(tmp_path / "b")]) != 0
    err = capsys.readouterr().err.strip()
    assert "--bounds flow=LOW:HIGH" in err and err.count("\n") == 0 and not (tmp_path / "b").exists()
