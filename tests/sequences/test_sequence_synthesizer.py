"""Series as a data kind (issue 15): the public schema, the codec, the units of privacy (one series or
one entity), the DP path through the engine, sampling in the input's form, save/load, bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan.errors import InputError, ModelFileError
from dpgan.models.sequence_units import SeriesUnitCritic, SeriesUnitGenerator
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.sequences.codec import read_array, read_long, write_long
from dpgan.sequences.fit_kind import series_units
from dpgan.sequences.reader import LABEL_OUTSIDE, NO_SINGLE_LABEL, TIME_UNREADABLE, VALUE_UNREADABLE
from dpgan.sequences.settings import COUNT_EVENT, RELEASED_MODELS
from dpgan.synthesizers.sequence import SequenceSynthesizer
from dpgan.training import critic_step as critic_step_module
from dpgan.training.config import TrainingConfig
from headless_browser import decoded_images

T = 12
CRITIC_EVENT = "DP-SGD on the critic"
FAST = {"model": "gan", "epochs": 3, "batch_size": 32, "critic_hidden": (16,), "generator_hidden": 8}  # the GAN, small


def _schema(**changes) -> SequenceSchema:
    base = {
        "id": "sid",
        "time": "hour",
        "length": T,
        "values": (ValueColumn("flow", 0.0, 40.0),),
        "label": "district",
        "categories": ("north", "south"),
    }
    return SequenceSchema(**(base | changes))


def _long(n: int = 120, seed: int = 0, entities: int = 0) -> pd.DataFrame:
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


def test_the_schema_round_trips_and_refuses_what_it_cannot_be():
    schema = _schema(entity="home", max_series_per_entity=3)
    assert SequenceSchema.from_dict(json.loads(json.dumps(schema.to_dict()))) == schema
    assert schema.unit == "entity" and _schema().unit == "series"
    for bad in (
        {"length": 1},
        {"values": ()},
        {"categories": ("north",)},
        {"label": None},  # categories without a label
        {"time": "sid"},
        {"max_series_per_entity": 0, "entity": "home"},
        {"values": (ValueColumn("flow", 0.0, 40.0), ValueColumn("flow", 0.0, 1.0))},
    ):
        with pytest.raises(InputError) as caught:
            _schema(**bad)
        assert "\n" not in str(caught.value)
    with pytest.raises(InputError):
        ValueColumn("flow", 5.0, 5.0)
    with pytest.raises(InputError, match="kind"):
        SequenceSchema.from_dict({"id": "a"})


def test_long_tables_round_trip_and_incomplete_series_are_dropped_and_counted():
    frame = _long(10)
    short = frame[~((frame["sid"] == 3) & (frame["hour"] == 5))]  # 11 readings: a DST-like day
    extra = pd.concat([short, short[short["sid"] == 4].assign(hour=99)])  # 13 readings
    extra.loc[(extra["sid"] == 6) & (extra["hour"] == 2), "flow"] = np.nan  # a gap
    series = read_long(extra.sample(frac=1, random_state=0), _schema())  # row order does not matter
    assert series.values.shape == (7, T, 1) and series.dropped == 3 and series.dropped_units == 3
    assert series.values.min() >= -1.0 and series.values.max() <= 1.0
    back = write_long(series.values, series.labels, _schema())
    kept = frame[~frame["sid"].isin([3, 4, 6])].reset_index(drop=True)
    np.testing.assert_allclose(back["flow"].to_numpy(), kept["flow"].clip(0, 40).to_numpy(), atol=1e-4)
    assert (back["district"].to_numpy() == kept["district"].to_numpy()).all()
    assert list(back.columns) == ["sid", "hour", "flow", "district"]


@pytest.mark.parametrize(
    "change,reason",
    [
        (lambda f: f.assign(flow=f["flow"].astype(object).where(f.index != 5, "high")), VALUE_UNREADABLE),
        (lambda f: f.assign(district=np.where(f.index == 3, "south", f["district"])), NO_SINGLE_LABEL),
        (lambda f: f.assign(district=np.where(f["sid"] == 2, "east", f["district"])), LABEL_OUTSIDE),
        (lambda f: f.assign(flow=np.where(f.index == 7, np.inf, f["flow"])), VALUE_UNREADABLE),
        (lambda f: f.assign(hour=f["hour"].astype(object).where(f.index != 8, None)), TIME_UNREADABLE),
    ],
)
def test_a_bad_series_is_dropped_and_counted_not_refused(change, reason):
    """One series' cells decide only that series (dpgan.privacy.unit_rule): dropped, with its reason."""
    frame = _long(6)
    frame.loc[frame["sid"] == 0, "district"] = "north"
    series = read_long(change(frame), _schema())
    assert len(series.values) == 5 and series.tally.kept == 5 and series.tally.dropped == {reason: 1}


def test_refusals_name_public_structure_only():
    for bad, message in (
        (_long(6).drop(columns=["hour"]), "lacks"),
        ([[1, 2]], "DataFrame"),
    ):
        with pytest.raises(InputError) as caught:
            read_long(bad, _schema())
        assert message in str(caught.value) and "\n" not in str(caught.value)
    empty = read_long(_long(6).iloc[:0], _schema())  # no series: counted, not refused
    assert empty.values.shape == (0, T, 1) and empty.tally.kept == 0


def test_arrays_are_checked_and_scaled_like_tables():
    schema = _schema(label=None, categories=())
    data = np.random.default_rng(0).uniform(0, 40, (5, T))
    data[1, 3] = np.nan
    series = read_array(data, None, schema)
    assert series.values.shape == (4, T, 1) and series.dropped == 1
    with pytest.raises(InputError, match="shape"):
        read_array(np.zeros((5, T + 1)), None, schema)
    with pytest.raises(InputError, match="label"):
        read_array(np.zeros((5, T)), None, _schema())


def _fit(frame=None, **settings) -> SequenceSynthesizer:
    schema = settings.pop("schema", _schema())
    chosen = FAST | settings
    if chosen["model"] in RELEASED_MODELS:  # DP statistics alone: the GAN's settings are refused
        gan = {*FAST, "max_steps"} - {"model"}
        chosen = {key: value for key, value in chosen.items() if key not in gan}
    return SequenceSynthesizer(epsilon=3.0, seed=0, **chosen).fit(_long() if frame is None else frame, schema)


def test_a_fit_charges_one_count_and_one_event_per_critic_step():
    synth = _fit()
    report = synth.privacy_report()
    names = [e["name"] for e in report["events"]]
    assert names == [COUNT_EVENT, CRITIC_EVENT]
    critic = report["events"][1]
    assert critic["count"] == synth.training["steps"] > 0
    assert critic["sampling_rate"] == pytest.approx(synth.training["sample_rate"])
    assert report["epsilon"] <= 3.0 * (1 + 1e-9) and report["unit_of_privacy"].startswith("one series")


def test_samples_come_in_the_input_form_and_labels_can_be_imposed(tmp_path):
    synth = _fit()
    rows = synth.sample(30, seed=1)
    assert list(rows.columns) == ["sid", "hour", "flow", "district"] and len(rows) == 30 * T
    assert rows["flow"].between(0, 40).all() and set(rows["district"]) <= {"north", "south"}
    south = synth.sample(10, seed=2, label="south")
    assert set(south["district"]) == {"south"}
    with pytest.raises(InputError, match="not a label"):
        synth.sample(3, label="east")
    synth.save(tmp_path / "m")
    again = SequenceSynthesizer.load(tmp_path / "m")
    pd.testing.assert_frame_equal(again.sample(8, seed=3), synth.sample(8, seed=3))
    assert again.privacy_report()["epsilon"] == pytest.approx(synth.privacy_report()["epsilon"])
    with pytest.raises(ModelFileError, match="already holds"):
        synth.save(tmp_path / "m")  # exists: refused without overwrite
    arrays = SequenceSynthesizer(epsilon=3.0, seed=0, **FAST).fit(
        np.random.default_rng(0).uniform(0, 40, (80, T)), _schema(label=None, categories=())
    )
    values, labels = arrays.sample(5, seed=0)
    assert values.shape == (5, T, 1) and labels is None


def test_entity_units_hold_k_series_of_one_entity_and_count_entities():
    frame = _long(120, entities=15)  # 8 series per home
    frame["flow"] = frame["home"] * 2.0 + 1.0  # each home has its own flat level: units are traceable
    schema = _schema(entity="home", max_series_per_entity=3)
    series = read_long(frame, schema)
    units = series_units(series, schema, np.random.default_rng(0))
    assert units.shape == (15, 3, T, 1 + 2)
    levels = units[..., 0]
    assert bool((levels == levels[:, :1, :1]).all())  # every series of a unit comes from one home
    assert len(torch.unique(levels[:, 0, 0])) == 15
    fitted = SequenceSynthesizer(epsilon=3.0, seed=0, **FAST).fit(frame, schema)
    assert abs(fitted.training["estimated_units"] - 15) < 15  # a noisy count of homes, not of 120 series
    assert "entity" in fitted.privacy_report()["unit_of_privacy"]
    without_one = read_long(frame[frame["home"] != 4], schema)
    assert len(np.unique(without_one.entities)) == len(np.unique(series.entities)) - 1


def test_an_entity_unit_moves_the_clipped_sum_by_at_most_c():
    """Removing one entity's unit (k series) moves the pre-noise sum by at most C (sensitivity C)."""
    torch.manual_seed(0)
    critic = SeriesUnitCritic(length=T, channels=3, kind="lstm", hidden=(6,))
    units = torch.randn(5, 3, T, 3, generator=torch.Generator().manual_seed(1)) * 5
    partners = torch.randn(5, 3, T, 3, generator=torch.Generator().manual_seed(2))
    alpha = torch.rand(5, 1, generator=torch.Generator().manual_seed(3))
    settings = critic_step_module.CriticStepSettings.from_config(TrainingConfig())
    sums = []
    for n in (5, 4):
        batch = critic_step_module.CriticUnits(units[:n], torch.ones(n), partners[:n], alpha[:n], None, False)
        summed, norms = critic_step_module.critic_clipped_sum(settings)(critic, batch, 0.5)
        sums.append(torch.cat([t.reshape(-1) for _, t in sorted(summed.items())]))
    difference = float((sums[0] - sums[1]).norm())
    assert 0.25 < difference <= 0.5 * (1 + 1e-5)


def test_the_generator_imposes_labels_and_keeps_values_in_range():
    G = SeriesUnitGenerator(length=T, n_values=2, n_labels=3, per_unit=2, step_noise=3, hidden_size=8)
    units = G(torch.randn(4, G.noise_dim), torch.Generator().manual_seed(0))
    assert units.shape == (4, 2, T, 5) and float(units[..., :2].abs().max().detach()) < 1.0
    assert torch.allclose(units[..., 2:].sum(dim=-1), torch.ones(4, 2, T), atol=1e-5)
    values, labels = G.sample(6, torch.Generator().manual_seed(1), torch.full((6,), 2))
    assert values.shape == (6, T, 2) and labels.tolist() == [2] * 6


def test_bad_settings_and_files_are_refused(tmp_path):
    with pytest.raises(InputError, match="epsilon|ε"):
        SequenceSynthesizer(epsilon=0.0)
    with pytest.raises(InputError, match="critic"):
        SequenceSynthesizer(epsilon=1.0, critic="transformer")
    with pytest.raises(InputError, match="unknown setting"):
        SequenceSynthesizer(epsilon=1.0, colour="blue")
    with pytest.raises(InputError, match="DataFrame"):
        SequenceSynthesizer(epsilon=1.0).fit([[1, 2]], _schema())
    (tmp_path / "m").mkdir()
    with pytest.raises((ModelFileError, InputError)):
        SequenceSynthesizer.load(tmp_path / "m")


def test_cli_fits_samples_and_inspects_a_sequence_model(tmp_path, capsys):
    from dpgan.cli import main

    _long(60).to_csv(tmp_path / "series.csv", index=False)
    base = ["fit", str(tmp_path / "series.csv"), "--kind", "sequence", "--epsilon", "3"]
    roles = ["--id-column", "sid", "--time-column", "hour", "--length", str(T), "--label-column", "district"]
    public = ["--bounds", "flow=0:40", "--categories", "district=north,south"]
    assert main(base + roles + public + ["--out", str(tmp_path / "m"), "--seed", "0"]) == 0
    assert "unit of privacy: one series" in capsys.readouterr().out
    out = tmp_path / "s.csv"
    assert main(["sample", str(tmp_path / "m"), "-n", "7", "--out", str(out), "--condition", "district=south"]) == 0
    sampled = pd.read_csv(out)
    assert list(sampled.columns) == ["sid", "hour", "flow", "district"] and len(sampled) == 7 * T
    assert set(sampled["district"]) == {"south"}
    assert main(["inspect", str(tmp_path / "m")]) == 0
    assert "model: gaussian-copula (each label" in capsys.readouterr().out  # the default series model
    # bad input: one line, non-zero, nothing written
    for bad in (
        ["--out", str(tmp_path / "b1")] + roles + ["--categories", "district=north,south"],  # no bounds
        ["--out", str(tmp_path / "b2")] + roles[:4] + public,  # no length
        ["--out", str(tmp_path / "b3"), "--epsilon", "0"] + roles + public,
    ):
        assert main(base + bad) != 0
        err = capsys.readouterr().err
        assert err.strip().count("\n") == 0 and err.strip()
    assert not any((tmp_path / f"b{i}").exists() for i in (1, 2, 3))
    assert (
        main(["fit", str(tmp_path / "series.csv"), "--epsilon", "1", "--out", str(tmp_path / "t"), "--length", "4"])
        != 0
    )
    assert "--kind sequence" in capsys.readouterr().err


def test_the_dp_gaussian_baseline_spends_epsilon_and_learns_the_levels():
    from dpgan.privacy.calibration import FitBudget
    from dpgan.sequences.baseline import EVENT, DPGaussianSeries

    series = read_long(_long(400), _schema())
    model = DPGaussianSeries(FitBudget(3.0, 1e-5)).fit(series, 2, np.random.default_rng(0))
    (entry,) = model.ledger.entries
    assert entry.name == EVENT and entry.count == 3
    assert model.ledger.epsilon(1e-5, "pld") == pytest.approx(3.0, rel=0.02)
    values, labels = model.sample(500, np.random.default_rng(1))
    assert values.shape == (500, T, 1) and values.min() >= -1.0 and values.max() <= 1.0
    flow = write_long(values, labels, _schema())
    means = flow.groupby("district")["flow"].mean()
    assert abs(means["north"] - 10.0) < 3.0 and abs(means["south"] - 25.0) < 3.0


def test_cli_evaluates_series_and_the_report_decodes_in_a_browser(tmp_path, capsys):
    import re

    from dpgan.cli import main

    train, test = _long(80, seed=0), _long(40, seed=1)
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    synth = _fit(train)
    synth.save(tmp_path / "m")
    synth.sample(60, seed=0).to_csv(tmp_path / "synthetic.csv", index=False)
    files = ["--real", str(tmp_path / "train.csv"), "--synthetic", str(tmp_path / "synthetic.csv")]
    files += ["--test", str(tmp_path / "test.csv")]
    assert (
        main(["evaluate", "--kind", "sequence", *files, "--model", str(tmp_path / "m"), "--out", str(tmp_path / "r")])
        == 0
    )
    assert "held-out floor" in capsys.readouterr().out
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert {"dtw_nearest", "bands", "autocorrelation", "total_wd", "label_tstr", "membership_auc", "privacy"} <= set(
        metrics
    )
    assert metrics["privacy"]["epsilon"] <= 3.0 * (1 + 1e-9)
    page = (tmp_path / "r" / "report.html").read_text()
    images = len(re.findall(r"<img ", page))
    assert images == 2 + 1 + 1 and "<script" not in page  # bands, ACF, distances, nearest series
    assert main(["evaluate", "--kind", "sequence", *files, "--out", str(tmp_path / "x")]) != 0  # no schema
    assert "--schema" in capsys.readouterr().err and not (tmp_path / "x").exists()
    assert decoded_images(page, tmp_path) == images


def test_the_label_may_name_the_entity():
    frame = _long(60)
    schema = _schema(entity="district", max_series_per_entity=4)
    assert schema.columns == ["sid", "hour", "flow", "district"]
    series = read_long(frame, schema)
    assert len(np.unique(series.entities)) == 2
    synth = SequenceSynthesizer(epsilon=3.0, seed=0, **FAST).fit(frame, schema)
    assert list(synth.sample(3, seed=0).columns) == ["sid", "hour", "flow", "district"]


def test_a_log_scale_round_trips_and_spreads_small_flows():
    schema = _schema(values=(ValueColumn("flow", 0.0, 200.0, "log"),))
    assert SequenceSchema.from_dict(json.loads(json.dumps(schema.to_dict()))) == schema
    frame = _long(5)
    series = read_long(frame, schema)
    back = write_long(series.values, series.labels, schema)
    np.testing.assert_allclose(back["flow"].to_numpy(), frame["flow"].clip(0, 200).to_numpy(), rtol=1e-4, atol=1e-3)
    linear = read_long(frame, _schema(values=(ValueColumn("flow", 0.0, 200.0),)))
    assert np.ptp(series.values) > 2 * np.ptp(linear.values)  # flows of 5-30 use more of [-1, 1]
    with pytest.raises(InputError, match="scale"):
        ValueColumn("flow", 0.0, 1.0, "sqrt")
