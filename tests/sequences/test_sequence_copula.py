"""The series model "gaussian-copula" (dpgan.statistics.copula through the fit pipeline): its ledger,
the released model's inverse-CDF map against the release's own, save and load, an entity unit,
neighbouring inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dpgan.sequences.released_gaussian import COPULA_EVENT, ReleasedSeriesGaussian
from dpgan.sequences.settings import COUNT_EVENT
from dpgan.statistics.copula import HISTOGRAM_EVENT, DPGaussianCopula
from dpgan.synthesizers.sequence import SequenceSynthesizer
from test_sequence_synthesizer import T, _fit, _long, _schema


def test_the_copula_model_charges_the_histogram_then_the_scores_and_lands_on_epsilon(tmp_path):
    synth = _fit(model="gaussian-copula")
    assert [e.name for e in synth.ledger.entries] == [COUNT_EVENT, HISTOGRAM_EVENT, COPULA_EVENT]
    assert synth.privacy_report()["epsilon"] == pytest.approx(3.0, rel=1e-3)
    assert synth.training["steps"] == 0 and synth.privacy_report()["model"].startswith("gaussian-copula")
    south = synth.sample(400, seed=3, label="south")["flow"]
    north = synth.sample(400, seed=3, label="north")["flow"]
    assert 20.0 < float(south.mean()) < 30.0 and 5.0 < float(north.mean()) < 15.0  # the levels 25 and 10
    assert south.between(0.0, 40.0).all()
    synth.save(tmp_path / "m")
    again = SequenceSynthesizer.load(tmp_path / "m")
    assert again.networks.model == "gaussian-copula" and again.sample(5, seed=2).equals(synth.sample(5, seed=2))


def _released(copula: DPGaussianCopula, length: int, n_values: int) -> ReleasedSeriesGaussian:
    """The copula's released model with a zero mean and an identity factor: its draws are its normals."""
    d = length * n_values
    return ReleasedSeriesGaussian(
        "gaussian-copula", length=length, n_values=n_values, n_labels=2, lead=0, shares=torch.ones(2) / 2,
        means=torch.zeros(2, d), factors=torch.eye(d).expand(2, d, d).clone(),
        cdfs=torch.tensor(np.stack(copula.cdfs), dtype=torch.float32),
        scale=torch.tensor(copula.scale, dtype=torch.float32),
    )  # fmt: skip


def test_the_released_model_maps_scores_back_as_the_release_does():
    rng = np.random.default_rng(0)
    values = np.clip(-1.0 + rng.exponential(0.2, (500, 6)), -1.0, 1.0)
    labels = rng.integers(0, 2, 500)
    from dpgan.privacy.accounting import Budget, PrivacyLedger
    from dpgan.privacy.calibration import ShareTarget

    copula = DPGaussianCopula(-1.0, 1.0, bins=16).fit(
        values, labels, 2, rng, ledger=PrivacyLedger(budget=Budget(5.0, 1e-5, "pld")),
        histogram_target=ShareTarget(1.0, 1e-5, "pld"), target=ShareTarget(5.0, 1e-5, "pld"), event="s", note="",
    )  # fmt: skip
    model = _released(copula, 6, 1)
    scores = rng.uniform(-1.0, 1.0, (200, 6))
    codes = rng.integers(0, 2, 200)
    got = model.values(torch.tensor(scores, dtype=torch.float32), torch.tensor(codes)).double().numpy()
    np.testing.assert_allclose(got.reshape(200, 6), copula.values(scores, codes), atol=2e-4)


def test_the_released_model_maps_each_value_column_through_its_own_cdf():
    rng = np.random.default_rng(1)
    values = np.concatenate(
        [
            np.clip(-1.0 + rng.exponential(0.2, (400, 3, 1)), -1, 1),
            np.clip(1.0 - rng.exponential(0.2, (400, 3, 1)), -1, 1),
        ],
        axis=2,
    ).reshape(400, 6)  # 3 steps of 2 columns, channel-last
    labels = rng.integers(0, 2, 400)
    from dpgan.privacy.accounting import Budget, PrivacyLedger
    from dpgan.privacy.calibration import ShareTarget

    copula = DPGaussianCopula(-1.0, 1.0, bins=16, channels=2).fit(
        values, labels, 2, rng, ledger=PrivacyLedger(budget=Budget(5.0, 1e-5, "pld")),
        histogram_target=ShareTarget(1.0, 1e-5, "pld"), target=ShareTarget(5.0, 1e-5, "pld"), event="s", note="",
    )  # fmt: skip
    model = _released(copula, 3, 2)
    scores, codes = rng.uniform(-1.0, 1.0, (200, 6)), rng.integers(0, 2, 200)
    z = torch.tensor(scores, dtype=torch.float32)
    drawn = model.values(z, torch.tensor(codes))
    np.testing.assert_allclose(drawn.double().numpy().reshape(200, 6), copula.values(scores, codes), atol=2e-4)
    again = ReleasedSeriesGaussian.from_files("gaussian-copula", model.form(), model.state_dict())
    assert torch.equal(again.values(z, torch.tensor(codes)), drawn)
    pooled = {**model.state_dict(), "cdfs": model.cdfs[:, 0, :].clone()}  # one pooled CDF per label: not this form
    with pytest.raises(ValueError, match="CDFs"):
        ReleasedSeriesGaussian.from_files("gaussian-copula", model.form(), pooled)


def test_the_copula_fits_an_entity_unit_and_neighbours_share_the_public_facts():
    schema = _schema(entity="home", max_series_per_entity=2)
    synth = _fit(_long(120, entities=30), model="gaussian-copula", schema=schema)
    assert "2 series" in synth.ledger.entries[2].note and synth.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)
    assert np.isfinite(synth.sample(20, seed=1)["flow"]).all()
    frame = _long()
    changed = frame.copy()
    changed.loc[changed["sid"] == 0, "flow"] = 40.0  # one series at the bound
    a, b = _fit(frame, model="gaussian-copula"), _fit(changed, model="gaussian-copula")
    facts = [[(e.name, e.noise_multiplier, e.count) for e in s.ledger.entries] for s in (a, b)]
    assert facts[0] == facts[1]


@pytest.mark.parametrize("setting", [{"copula_bins": 1}, {"copula_bins": 2.5}, {"copula_fraction": 0.5}])
def test_bad_copula_settings_are_one_line(setting):
    from dpgan.errors import InputError

    with pytest.raises(InputError, match="copula_"):
        SequenceSynthesizer(epsilon=3.0, model="gaussian-copula", **setting)


def test_the_residual_spectrum_joins_the_scores_release_and_survives_save_and_load(tmp_path):
    """With a basis, a clip and a residual share the scores' Gaussian is one entry of four releases
    (count, sum, second moments, the residual's spectrum), the ledger still lands on ε, and the
    saved model draws what the fitted one draws."""
    synth = _fit(model="gaussian-copula", copula_basis=0.25, copula_clip=0.3, copula_residual=0.2)
    entries = synth.ledger.entries
    assert [e.name for e in entries] == [COUNT_EVENT, HISTOGRAM_EVENT, COPULA_EVENT]
    assert entries[-1].count == 4 and "residual's spectrum" in entries[-1].note
    assert synth.privacy_report()["epsilon"] == pytest.approx(3.0, rel=1e-3)
    plain = _fit(model="gaussian-copula", copula_residual=None)
    assert plain.ledger.entries[-1].count == 3
    rough = lambda s: float(np.abs(np.diff(s.sample(300, seed=4)["flow"].to_numpy().reshape(300, T))).mean())  # noqa: E731
    assert rough(synth) > rough(plain)  # the residual's wiggles are back in the draws
    synth.save(tmp_path / "m")
    again = SequenceSynthesizer.load(tmp_path / "m")
    assert again.sample(5, seed=2).equals(synth.sample(5, seed=2))


@pytest.mark.parametrize(
    "setting,message",
    [
        ({"gaussian_residual": 0.2}, "needs gaussian_basis"),
        ({"gaussian_basis": 0.3, "gaussian_residual": 0.0}, "must be in"),
        ({"copula_basis": None}, "copula_residual needs copula_basis"),
        ({"copula_clip": 1.5}, "copula_basis, copula_clip and copula_residual"),
    ],
)
def test_bad_residual_settings_are_one_line(setting, message):
    from dpgan.errors import InputError

    with pytest.raises(InputError, match=message):
        SequenceSynthesizer(epsilon=3.0, **setting)
