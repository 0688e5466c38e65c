"""End-to-end on a small Adult slice: the ledger, never overshooting ε, sampling, save/load."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import InputError, ModelFileError, TabularSynthesizer
from dpgan.privacy.accounting import epsilon_of
from dpgan.statistics.tables.pair_marginals import PAIRS_EVENT, PROBE_EVENT
from dpgan.tables.fit.preparation import CLASS_EVENT, REPAIR_EVENT, SCHEMA_EVENT
from dpgan.tables.reading.conform import validate_table


def test_fit_spends_at_most_epsilon_and_records_every_read(fitted):
    report = fitted.privacy_report()
    assert report["epsilon"] <= 3.0
    assert report["epsilon"] > 2.5  # σ is calibrated to land on ε, not far below
    names = [e["name"] for e in report["events"]]
    assert names == ["row count", REPAIR_EVENT, PAIRS_EVENT, "DP-SGD on the critic"]  # label model: from the tables
    assert fitted.training["label_model_kind"] == "pair-tables"
    sgd = report["events"][-1]
    assert sgd["count"] == fitted.training["steps"] > 0
    rows = fitted.training["estimated_rows"]
    assert sgd["sampling_rate"] == pytest.approx(min(64, fitted.config.max_sample_rate * rows) / rows)
    assert set(report["epsilon_by_accountant"]) == {"rdp", "pld"}
    assert report["guarantee_covers_schema"] is True


def test_sample_has_same_columns_public_dtypes_and_domain(fitted, adult_small, adult_schema):
    synthetic = fitted.sample(300, seed=1)
    assert list(synthetic.columns) == list(adult_small.columns)
    # dtypes follow the public schema (integer → int64, continuous → float64), never the training frame's
    expected = {
        c.name: {"integer": "int64", "continuous": "float64"}.get(c.kind, "object") for c in adult_schema.columns
    }
    assert dict(synthetic.dtypes.astype(str)) == expected
    validate_table(synthetic, adult_schema)  # every value inside the public domain
    assert len(synthetic) == 300


def test_sampling_with_a_seed_is_reproducible(fitted):
    pd.testing.assert_frame_equal(fitted.sample(50, seed=3), fitted.sample(50, seed=3))


@pytest.mark.parametrize("recipe", ["dp-gan", "dtgan-g"])
def test_fit_with_a_seed_is_reproducible_and_leaves_the_global_rng_alone(recipe, adult_small, adult_schema):
    """Weights are initialised from torch's global RNG: a seeded fit must seed it, inside a fork."""

    small = {"num_discriminators": 3, "marginal_warmup_steps": 20} if recipe == "dtgan-g" else {}

    def synthesizer() -> TabularSynthesizer:
        return TabularSynthesizer(
            epsilon=3.0, epochs=1, batch_size=64, recipe=recipe, accountant="rdp", seed=7, **small
        )

    def fit_and_sample(global_seed: int) -> pd.DataFrame:
        torch.manual_seed(global_seed)  # what the caller's RNG holds must not matter
        return synthesizer().fit(adult_small.head(300), schema=adult_schema).sample(60, seed=1)

    pd.testing.assert_frame_equal(fit_and_sample(1), fit_and_sample(2))
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    synthesizer().fit(adult_small.head(200), schema=adult_schema)
    assert torch.equal(torch.rand(3), expected), "a seeded fit must not consume the caller's global RNG"


def test_save_load_round_trip_gives_identical_samples(fitted, tmp_path):
    path = fitted.save(tmp_path / "model")
    files = sorted(p.name for p in path.iterdir())
    assert files == ["generator.safetensors", "model.json"]
    meta = json.loads((path / "model.json").read_text())
    assert not any("critic" in k or "net." in k for k in meta), "the critic must never be saved"
    loaded = TabularSynthesizer.load(path)
    pd.testing.assert_frame_equal(fitted.sample(40, seed=5), loaded.sample(40, seed=5))
    assert loaded.privacy_report()["epsilon"] == pytest.approx(fitted.privacy_report()["epsilon"])


def test_saved_weights_hold_only_the_released_networks(fitted, tmp_path):
    from safetensors.torch import load_file

    path = fitted.save(tmp_path / "model")
    keys = load_file(str(path / "generator.safetensors")).keys()
    label_keys = {"label_model." + k for k in fitted.label_model.classifier.state_dict()}
    assert set(keys) == set(fitted.generator.state_dict().keys()) | label_keys


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "not found"),
        ({"model.json": "{}"}, "not a complete"),
        ({"model.json": "{bad", "generator.safetensors": b"x"}, "corrupt"),
        ({"model.json": json.dumps({"format": "other"}), "generator.safetensors": b"x"}, "not written by dpgan"),
    ],
)
def test_missing_or_corrupt_model_is_refused(tmp_path, content, message):
    path = tmp_path / "m"
    if content is not None:
        path.mkdir()
        for name, body in content.items():
            (path / name).write_bytes(body if isinstance(body, bytes) else body.encode())
    with pytest.raises(ModelFileError, match=message):
        TabularSynthesizer.load(path)


def test_corrupt_weights_are_refused(fitted, tmp_path):
    path = fitted.save(tmp_path / "model")
    (path / "generator.safetensors").write_bytes(b"\x00" * 20)
    with pytest.raises(ModelFileError, match="corrupt"):
        TabularSynthesizer.load(path)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -1}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"delta": 0}, "delta"),
        ({"delta": 1}, "delta"),
        ({"accountant": "moments"}, "accountant"),
        ({"batch_size": 0}, "batch_size"),
        ({"epochs": -1}, "epochs"),
        ({"no_such_setting": 1}, "unknown setting"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(InputError, match=message):
        TabularSynthesizer(**kwargs)


@pytest.mark.parametrize("n", [0, -3, 2.5, 10**9])
def test_bad_sample_sizes_are_refused(fitted, n):
    with pytest.raises(InputError):
        fitted.sample(n)


def test_unfitted_synthesizer_refuses_to_sample():
    with pytest.raises(InputError, match="not fitted"):
        TabularSynthesizer().sample(3)


def test_bad_tables_are_refused_before_training(adult_schema):
    synth = TabularSynthesizer(accountant="rdp")
    with pytest.raises(InputError, match="no columns"):  # no rows alone is not refused (test_stream_unit_rule)
        synth.fit(pd.DataFrame())
    with pytest.raises(InputError, match="DataFrame"):
        synth.fit([[1, 2]])  # type: ignore[arg-type]


def test_no_schema_learns_the_domain_with_dp_and_pays_for_it(adult_small):
    synth = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, accountant="rdp", seed=0)
    synth.fit(adult_small)
    report = synth.privacy_report()
    names = [e["name"] for e in report["events"]]
    # no target: a tree's worth of Adult's pairs is under a quarter of them, so a probe chooses them
    expected = ["row count", CLASS_EVENT, SCHEMA_EVENT, REPAIR_EVENT, PROBE_EVENT, PAIRS_EVENT, "DP-SGD on the critic"]
    assert names == expected
    assert report["events"][1]["count"] == report["events"][2]["count"] == adult_small.shape[1]  # per column
    assert report["epsilon"] <= 3.0
    # the thresholds' failure probability is charged to δ
    assert sum(e["extra_delta"] for e in report["events"]) > 0
    # rare categories are merged: a category seen a handful of times cannot survive the threshold
    countries = synth.schema["native-country"].categories
    assert "(other)" in countries and "Holand-Netherlands" not in countries
    sample = synth.sample(100, seed=0)
    assert sample["age"].between(synth.schema["age"].min, synth.schema["age"].max).all()
    # encoding hints come from the same noisy histograms: most capital gains are exactly 0
    assert synth.schema["capital-gain"].point_masses == (0,) and synth.schema["age"].point_masses == ()
    age = synth.schema["age"]
    assert age.bins == (int(age.max - age.min) if age.max - age.min <= 32 else 8)  # one bin per level when few


def test_dp_schema_does_not_reveal_a_single_outlier(adult_small):
    """Pitfall (iii): one extreme record must not show up in the learned bounds (whp)."""
    outlier = adult_small.iloc[:1].copy()
    outlier["capital-gain"] = 10**9
    outlier["workclass"] = "Astronaut"
    with_outlier = pd.concat([adult_small, outlier], ignore_index=True)
    synth = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, accountant="rdp", seed=0)
    synth.fit(with_outlier)
    assert synth.schema["capital-gain"].max < 10**9
    assert "Astronaut" not in synth.schema["workclass"].categories


def test_unsafe_schema_is_labelled_everywhere(adult_small, tmp_path):
    synth = TabularSynthesizer(
        epsilon=3.0, epochs=1, batch_size=64, accountant="rdp", seed=0, schema_from_data_without_dp=True
    )
    synth.fit(adult_small)
    report = synth.privacy_report()
    assert report["guarantee_covers_schema"] is False and "WITHOUT differential privacy" in report["warning"]
    loaded = TabularSynthesizer.load(synth.save(tmp_path / "m"))
    assert loaded.privacy_report()["guarantee_covers_schema"] is False


def test_fixed_noise_multiplier_trains_until_the_budget_is_spent(adult_small, adult_schema):
    synth = TabularSynthesizer(epsilon=1.0, noise_multiplier=4.0, batch_size=64, accountant="rdp", seed=0)
    synth.fit(adult_small, schema=adult_schema)
    steps = synth.training["steps"]
    entries = synth.ledger.entries
    assert synth.ledger.epsilon(1e-5, "rdp") <= 1.0
    one_more = [*entries[:-1], type(entries[-1])(**{**entries[-1].__dict__, "count": steps + 1})]
    assert epsilon_of(one_more, 1e-5, "rdp") > 1.0  # the next step would have overshot


def test_pld_accountant_fit_stays_within_budget(adult_small, adult_schema):
    synth = TabularSynthesizer(epsilon=2.0, epochs=1, batch_size=100, seed=0)
    synth.fit(adult_small, schema=adult_schema)
    assert 1.8 < synth.privacy_report()["epsilon"] <= 2.0


def test_released_model_holds_no_rng_state(fitted, tmp_path):
    path = fitted.save(tmp_path / "m")
    text = (path / "model.json").read_text().lower()
    assert "rng" not in text and "generator_state" not in text
    assert all(isinstance(v, torch.Tensor) for v in fitted.generator.state_dict().values())
    assert np.isfinite(fitted.privacy_report()["epsilon"])


def test_nullable_columns_round_trip_with_their_null_indicator():
    """Missing values are data: a nullable column is learned with its null indicator, not dropped."""
    from dpgan import ColumnSpec, Schema

    rng = np.random.default_rng(0)
    values = rng.normal(50, 10, 400)
    values[rng.random(400) < 0.3] = np.nan
    frame = pd.DataFrame({"x": values, "c": rng.choice(["a", "b", None], 400).astype(object)})
    schema = Schema(
        (
            ColumnSpec("x", "continuous", min=0, max=100, nullable=True),
            ColumnSpec("c", "categorical", categories=("a", "b"), nullable=True),
        )
    )
    synth = TabularSynthesizer(epsilon=5.0, epochs=2, batch_size=50, accountant="rdp", seed=0).fit(frame, schema)
    sample = synth.sample(2000, seed=0)
    assert sample["x"].dtype == np.float64 and sample["x"].isna().any() and sample["x"].notna().any()
    assert sample["c"].isna().any() and set(sample["c"].dropna()) <= {"a", "b"}
    validate_table(sample, schema)


def test_a_failed_save_leaves_no_model_directory(fitted, tmp_path, monkeypatch):
    """Written under a temporary name and renamed at the end: a crash leaves nothing that looks complete."""
    import safetensors.torch

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(safetensors.torch, "save", broken)  # dpgan.serialization imports it when it writes
    with pytest.raises(OSError):
        fitted.save(tmp_path / "model")
    assert list(tmp_path.iterdir()) == []


def test_progress_reports_steps_and_an_epsilon_that_never_exceeds_the_target(adult_small, adult_schema):
    seen: list[tuple[int, int, float]] = []
    synth = TabularSynthesizer(epsilon=2.0, epochs=2, batch_size=64, accountant="pld", seed=0)
    synth.fit(adult_small, schema=adult_schema, progress=lambda s, t, e: seen.append((s, t, e)))
    steps = [s for s, _, _ in seen]
    eps = [e for _, _, e in seen]
    assert steps[0] == 1 and steps[-1] == seen[-1][1] == synth.training["steps"]
    assert steps == sorted(steps) and eps == sorted(eps)
    assert 0 < eps[0] and max(eps) <= 2.0
    assert eps[-1] == pytest.approx(synth.privacy_report()["epsilon"], rel=1e-9)  # the ledger's own ε


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_progress_epsilon_is_the_accountant_in_use_at_every_refresh(accountant):
    from dpgan.privacy.accounting import LedgerEntry, PrivacyLedger, epsilon_of
    from dpgan.privacy.calibration import FitBudget
    from dpgan.training.progress import StepReporter

    prior = [LedgerEntry("row count", 40.0), LedgerEntry("label model", 3.0, sampling_rate=0.05, count=40)]
    step = LedgerEntry("step", 1.2, sampling_rate=0.02)
    seen: list[tuple[int, float]] = []
    ledger = PrivacyLedger(list(prior))
    reporter = StepReporter(lambda s, t, e: seen.append((s, e)), 60, step, ledger, FitBudget(1.0, 1e-5, accountant))
    reporter.REFRESH_SECONDS, reporter.COST_FACTOR = 0.0, 0.0  # refresh at every step
    for t in range(1, 61):
        if t == 60:  # by the last call the training loop has charged every step
            ledger.add(LedgerEntry("DP-SGD on the critic", 1.2, sampling_rate=0.02, count=60))
        reporter(t)
    assert [s for s, _ in seen] == list(range(1, 61))
    for t, shown in seen[::7] + seen[-1:]:
        exact = epsilon_of([*prior, LedgerEntry("step", 1.2, sampling_rate=0.02, count=t)], 1e-5, accountant)
        assert exact * (1 - 1e-6) <= shown <= exact * 1.005  # an upper bound, close to the ledger's


def test_progress_refreshes_are_spaced_by_their_own_cost():
    """A refresh that took c seconds waits COST_FACTOR·c (at least REFRESH_SECONDS) before the
    next, so the bar's ε costs at most 1/COST_FACTOR of the fit; the first and last always show."""
    from dpgan.privacy.accounting import LedgerEntry, PrivacyLedger
    from dpgan.privacy.calibration import FitBudget
    from dpgan.training.progress import StepReporter

    ledger = PrivacyLedger([LedgerEntry("row count", 40.0)])
    shown: list[int] = []
    step = LedgerEntry("step", 1.2, sampling_rate=0.02)
    reporter = StepReporter(lambda s, t, e: shown.append(s), 100, step, ledger, FitBudget(1.0, 1e-5, "rdp"))
    ticks = iter(range(10_000))
    reporter.clock = lambda: 0.05 * next(ticks)  # every clock read advances 50 ms: each refresh costs 50 ms
    reporter.REFRESH_SECONDS, reporter.COST_FACTOR = 1.0, 100.0  # interval max(1 s, 100 × 50 ms) = 5 s
    for t in range(1, 100):
        reporter(t)
    ledger.add(LedgerEntry("DP-SGD on the critic", 1.2, sampling_rate=0.02, count=100))
    reporter(100)
    assert shown[0] == 1 and shown[-1] == 100
    # each skipped call reads the clock once (50 ms), a refresh twice: 5 s between refreshes ≈ 50 calls
    gaps = [b - a for a, b in zip(shown[:-2], shown[1:-1])]
    assert gaps and all(45 <= g <= 101 for g in gaps[1:]) and len(shown) < 10
