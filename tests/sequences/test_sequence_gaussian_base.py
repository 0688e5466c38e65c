"""The Gaussian-base generator (issue 15): G = a draw of the released per-label DP Gaussian plus the
LSTM's residual times a learned gate that starts at 0. Checked: at gate 0 G's samples have the
released label shares, means and covariances; the gate is what learns first; a fit charges the
Gaussian release at its share of ε, then the critic's steps, and stays within ε; save/load keeps the
base; what the option cannot do is refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dpgan.errors import InputError
from dpgan.models.sequence_units import SeriesUnitCritic, SeriesUnitGenerator
from dpgan.privacy.accounting import epsilon_of
from dpgan.sequences.baseline import EVENT as GAUSSIAN_EVENT
from dpgan.sequences.settings import COUNT_EVENT, COUNT_SHARE
from dpgan.synthesizers.sequence import SequenceSynthesizer
from test_sequence_synthesizer import FAST, _fit, _long, _schema

CRITIC_EVENT = "DP-SGD on the critic"
L = 6  # steps of the module-level series


def _released(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Two labels' shares, means and factors: small, correlated covariances well inside [-1, 1]."""
    g = torch.Generator().manual_seed(seed)
    means = torch.stack([torch.linspace(-0.4, 0.2, L), torch.linspace(0.3, -0.1, L)])
    factors = torch.stack([0.05 * torch.randn(L, L, generator=g) for _ in range(2)])
    return torch.tensor([0.3, 0.7]), means, factors


def _base_generator(**changes) -> SeriesUnitGenerator:
    torch.manual_seed(0)
    G = SeriesUnitGenerator(
        length=L, n_values=1, n_labels=2, step_noise=2, hidden_size=8, series_noise=3, base=True, **changes
    )
    G.set_base(*_released())
    return G


def test_at_gate_zero_samples_have_the_released_shares_means_and_covariances():
    G = _base_generator()
    shares, means, factors = _released()
    values, codes = G.sample(40_000, torch.Generator().manual_seed(1))
    assert float(G.gate.detach()) == 0.0
    frequency = torch.bincount(codes, minlength=2).float() / len(codes)
    assert torch.allclose(frequency, shares, atol=0.01)
    for label in range(2):
        rows = values[codes == label].reshape(-1, L).double()
        covariance = factors[label].double() @ factors[label].double().T
        # the sample mean's sd is at most 0.05·√L/√12,000 ≈ 0.001: 0.005 is a 5-sd bound
        assert torch.allclose(rows.mean(dim=0), means[label].double(), atol=0.005)
        assert torch.allclose(torch.cov(rows.T), covariance, atol=0.003)
        assert float((torch.cov(rows.T) - covariance).abs().max()) < 0.1 * float(covariance.abs().max())


def test_at_gate_zero_a_series_is_the_clipped_base_draw_and_only_the_gate_learns_first():
    G = _base_generator()
    z = torch.randn(64, G.noise_dim, generator=torch.Generator().manual_seed(2))
    codes = torch.randint(0, 2, (64,), generator=torch.Generator().manual_seed(3))
    one_hot = torch.nn.functional.one_hot(codes, 2).float()
    wide = _base_generator()
    with torch.no_grad():
        wide.base_factor.mul_(40.0)  # draws far outside [-1, 1]: clipped as the baseline clips them
    for net in (G, wide):
        series = net.series(z, one_hot, codes)
        assert torch.allclose(series, net.base_draw(z, codes), atol=1e-4)
    assert float(wide.series(z, one_hot, codes).detach().abs().max()) <= 1.0
    G.series(z, one_hot, codes).pow(2).sum().backward()
    assert G.gate.grad is not None and float(G.gate.grad.abs()) > 0  # the gate can open
    lstm_grads = [p.grad for p in G.lstm.parameters()]
    assert all(g is None or float(g.abs().max()) == 0.0 for g in lstm_grads)  # the residual waits for it
    with torch.no_grad():
        G.gate.fill_(0.5)
    assert not torch.allclose(G.series(z, one_hot, codes), G.base_draw(z, codes), atol=1e-3)


def test_the_gaussian_base_is_built_only_where_it_belongs():
    with pytest.raises(ValueError, match="not both"):
        SeriesUnitGenerator(length=L, n_values=1, n_labels=2, profile=True, base=True)
    plain = SeriesUnitGenerator(length=L, n_values=1, n_labels=2)
    with pytest.raises(ValueError, match="without a Gaussian base"):
        plain.set_base(*_released())
    assert _base_generator().noise_dim == L * 2 + 3 + L  # per-step, latent, then the base's normals
    for bad in ({"gaussian_base_fraction": 0.0}, {"gaussian_base_fraction": 0.9}, {"gaussian_base_gate": 11.0}):
        with pytest.raises(InputError, match="gaussian_base"):
            SequenceSynthesizer(epsilon=3.0, model="gaussian+gan", **bad)
    with pytest.raises(InputError, match="the gaussian model has no setting 'label_profile'"):
        SequenceSynthesizer(epsilon=3.0, model="gaussian", label_profile=True)
    with pytest.raises(InputError, match="model must be one of"):
        SequenceSynthesizer(epsilon=3.0, model="gmm")
    with pytest.raises(InputError, match="entity column"):
        SequenceSynthesizer(epsilon=3.0, seed=0, moment_anchor=True, **FAST).fit(
            _long(60, entities=10), _schema(entity="home", max_series_per_entity=2)
        )


def test_a_fit_charges_the_release_at_its_share_then_the_critic_and_reloads(tmp_path):
    fraction = 0.6
    synth = _fit(model="gaussian+gan", gaussian_base_fraction=fraction, label_projection=True, critic_differences=True)
    entries = synth.ledger.entries
    assert [e.name for e in entries[:2]] == [COUNT_EVENT, GAUSSIAN_EVENT]
    assert all(e.name == CRITIC_EVENT for e in entries[2:]) and len(entries) > 2
    before_critic = epsilon_of(entries[:2], synth.delta, synth.accountant)
    assert before_critic == pytest.approx((COUNT_SHARE + fraction) * 3.0, rel=0.02)
    assert synth.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)
    G = synth.generator
    shares = G.label_shares
    assert float(shares.sum()) == pytest.approx(1.0) and float(shares.min()) > 0.2  # two labels, ~half each
    assert "gaussian_base_gate" in synth.training
    synth.save(tmp_path / "m")
    again = SequenceSynthesizer.load(tmp_path / "m")
    assert again.networks.model == "gaussian+gan" and again.networks.gaussian_base_fraction == fraction
    assert torch.equal(again.generator.base_factor, G.base_factor) and float(again.generator.gate.detach()) == float(
        G.gate.detach()
    )
    assert again.sample(5, seed=2).equals(synth.sample(5, seed=2))
    south = again.sample(8, seed=3, label="south")
    assert set(south["district"]) == {"south"}
    # south's level is 25 and north's 10 (public bounds 0-40): the base already separates them
    north = again.sample(200, seed=4, label="north")["flow"].mean()
    assert float(again.sample(200, seed=4, label="south")["flow"].mean()) - float(north) > 8.0
    assert np.isfinite(again.sample(50, seed=5)["flow"]).all()


def test_an_open_gate_starts_over_a_zero_read_out_so_g_still_starts_at_the_base():
    G = _base_generator(gate=1.0)
    z = torch.randn(32, G.noise_dim, generator=torch.Generator().manual_seed(4))
    codes = torch.randint(0, 2, (32,), generator=torch.Generator().manual_seed(5))
    series = G.series(z, torch.nn.functional.one_hot(codes, 2).float(), codes)
    assert torch.allclose(series, G.base_draw(z, codes), atol=1e-4)
    series.pow(2).sum().backward()
    assert float(G.lstm.out.weight.grad.abs().max()) > 0  # the read-out learns first


def test_the_differences_critic_reads_step_changes_and_scores_each_unit_alone():
    torch.manual_seed(0)
    critic = SeriesUnitCritic(length=L, channels=3, hidden=(8,), n_labels=2, projection=True, differences=True)
    values = torch.linspace(-0.5, 0.5, L)[None, :, None].repeat(3, 1, 1)
    labels = torch.nn.functional.one_hot(torch.tensor([0, 1, 0]), 2).float()[:, None, :].expand(3, L, 2)
    series = torch.cat([values, labels], dim=2)
    widened = critic._with_differences(series)
    assert widened.shape == (3, L, 4)
    assert torch.allclose(widened[:, 1:, 1], torch.full((3, L - 1), 1.0 / (L - 1)))  # the step change
    assert float(widened[:, 0, 1].abs().max()) == 0.0 and torch.equal(widened[..., 2:], labels)
    changed = series.clone()
    changed[0, 3, 0] += 0.3
    with torch.no_grad():
        scores, moved = critic(series[:, None]), critic(changed[:, None])
    assert abs(float(scores[0] - moved[0])) > 0 and torch.equal(scores[1:], moved[1:])


def test_the_gaussian_model_is_the_dp_gaussian_on_all_of_epsilon_with_no_gan_steps(tmp_path):
    """model="gaussian": one count, one Gaussian release calibrated to the rest of ε (the ledger
    lands on ε), no critic step; the model is the released Gaussian, saved and reloaded."""
    synth = _fit(model="gaussian")
    entries = synth.ledger.entries
    assert [e.name for e in entries] == [COUNT_EVENT, GAUSSIAN_EVENT]
    assert synth.privacy_report()["epsilon"] == pytest.approx(3.0, rel=1e-3)
    assert synth.training["steps"] == 0 and "gaussian_base_gate" not in synth.training
    assert synth.privacy_report()["model"].startswith("gaussian (the DP Gaussian")
    model = synth.generator  # the released Gaussian itself: no network, no gate
    assert not isinstance(model, torch.nn.Module) and set(model.state_dict()) == {"label_shares", "means", "factors"}
    south = synth.sample(300, seed=3, label="south")["flow"].mean()
    north = synth.sample(300, seed=3, label="north")["flow"].mean()
    assert 20.0 < float(south) < 30.0 and 5.0 < float(north) < 15.0  # the levels 25 and 10
    synth.save(tmp_path / "m")
    again = SequenceSynthesizer.load(tmp_path / "m")
    assert again.networks.model == "gaussian" and again.sample(5, seed=2).equals(synth.sample(5, seed=2))


def test_a_model_saved_with_the_old_gaussian_base_flag_loads_as_the_composition(tmp_path):
    import json

    from dpgan.serialization import HASH_KEY, METADATA, WEIGHTS, content_hash

    synth = _fit(model="gaussian+gan", epochs=1)
    path = synth.save(tmp_path / "m")
    meta = json.loads((path / METADATA).read_text())
    meta["networks"].pop("model")
    meta["networks"]["gaussian_base"] = True  # the layout before `model`
    meta[HASH_KEY] = content_hash(meta, (path / WEIGHTS).read_bytes())
    (path / METADATA).write_text(json.dumps(meta))
    again = SequenceSynthesizer.load(path)
    assert again.networks.model == "gaussian+gan" and again.sample(4, seed=1).equals(synth.sample(4, seed=1))


def test_an_entity_unit_scales_every_gaussian_noise_by_its_series():
    """k series per unit: every sensitivity is k times a series' one, so every noise draw is too
    (the same draws from the same seed, times k), under the same ledger entry."""
    from dpgan.privacy.calibration import FitBudget
    from dpgan.sequences.baseline import DPGaussianSeries
    from dpgan.sequences.codec import SeriesSet

    n, d = 200_000, 4
    zeros = SeriesSet(np.zeros((n, d, 1), dtype=np.float32), None, None, tally=None)  # type: ignore[arg-type]
    fits = {}
    for k in (1, 3):
        fits[k] = DPGaussianSeries(FitBudget(1.0, 1e-5)).fit(zeros, 1, np.random.default_rng(7), per_unit=k)
        assert [e.name for e in fits[k].ledger.entries] == [GAUSSIAN_EVENT]
    assert fits[1].ledger.entries[0].noise_multiplier == fits[3].ledger.entries[0].noise_multiplier
    # each mean is (noise in the sum) / (N + noise in the count): k times the noise, N ≫ the noise
    np.testing.assert_allclose(fits[3].means[0], 3.0 * fits[1].means[0], rtol=1e-3)
    assert float(np.abs(fits[1].means[0]).max()) > 0.0
    with pytest.raises(ValueError, match="per_unit"):
        DPGaussianSeries(FitBudget(1.0, 1e-5)).fit(zeros, 1, np.random.default_rng(7), per_unit=0)


@pytest.mark.parametrize("model", ["gaussian", "gaussian+gan"])
def test_the_gaussian_models_fit_an_entity_unit(model):
    """With an entity column a unit is k series of one entity: the Gaussian is released over the
    units' series at k times the noise, and the model samples series as the series unit does."""
    schema = _schema(entity="home", max_series_per_entity=2)
    synth = _fit(_long(120, entities=30), model=model, epochs=1, schema=schema)
    names = [e.name for e in synth.ledger.entries]
    assert names[:2] == [COUNT_EVENT, GAUSSIAN_EVENT] and (len(names) == 2) == (model == "gaussian")
    assert "2 series" in synth.ledger.entries[1].note
    assert synth.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)
    sample = synth.sample(40, seed=1)
    assert set(sample["district"]) <= {"north", "south"} and np.isfinite(sample["flow"]).all()


def test_the_base_anchor_holds_the_residual_to_the_released_moments_at_no_cost():
    """gaussian+gan with base_anchor: the hook's targets are the base's own released shares, means
    and covariances (post-processing: the ledger is the same as without it), and G at its base
    scores a penalty near 0 while a G pushed off its base scores more."""
    from dpgan.fit import KindData
    from dpgan.privacy.calibration import FitBudget
    from dpgan.sequences.anchor import MomentAnchorHook
    from dpgan.sequences.plugins import GaussianBasePlugin
    from dpgan.training.context import FitContext

    plain = _fit(model="gaussian+gan", epochs=1, base_anchor=0.0)
    anchored = _fit(model="gaussian+gan", epochs=1)  # the default weight, 10
    assert [e.name for e in anchored.ledger.entries] == [e.name for e in plain.ledger.entries]
    assert anchored.ledger.entries[1].noise_multiplier == plain.ledger.entries[1].noise_multiplier

    torch.manual_seed(0)
    units = torch.rand(400, 1, L, 3)  # one value channel and two label channels, filled below
    codes = torch.randint(0, 2, (400,))
    units[:, 0, :, 1:] = torch.nn.functional.one_hot(codes, 2).float()[:, None, :]
    series = type("S", (), {"tally": None})()
    data = KindData(units, 400.0, type("D", (), {"series": series})())
    G = _base_generator()
    ctx = FitContext.open(FitBudget(epsilon=3.0, delta=1e-5, accountant="pld", seed=0))
    hooks = GaussianBasePlugin(0.5, 2, n_values=1, anchor_weight=10.0).release(ctx, data, G)
    assert len(hooks) == 1 and isinstance(hooks[0], MomentAnchorHook) and hooks[0].weight == 10.0
    assert torch.equal(hooks[0].means, G.base_mean) and torch.allclose(hooks[0].shares, G.label_shares)
    z = torch.randn(4000, G.noise_dim, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        at_base = float(hooks[0].penalty(G(z, torch.Generator().manual_seed(2))))
        G.gate.fill_(3.0)
        pushed = float(hooks[0].penalty(G(z, torch.Generator().manual_seed(2))))
    assert at_base < 0.01 < pushed


def test_the_centred_low_frequency_gaussian_is_a_public_choice_of_form(tmp_path):
    """gaussian_basis / gaussian_clip: the same one entry (Δ c² for the second moments, noted), the
    levels come back, the factor padded to d columns draws the same Gaussian, saved and reloaded;
    bad shares refused in one line."""
    synth = _fit(model="gaussian", gaussian_basis=0.5, gaussian_clip=0.3)
    entries = synth.ledger.entries
    assert [e.name for e in entries] == [COUNT_EVENT, GAUSSIAN_EVENT] and entries[1].count == 3
    assert "centred" in entries[1].note and "low frequencies" in entries[1].note
    assert synth.privacy_report()["epsilon"] == pytest.approx(3.0, rel=1e-3)
    south = synth.sample(300, seed=3, label="south")["flow"].mean()
    north = synth.sample(300, seed=3, label="north")["flow"].mean()
    assert 20.0 < float(south) < 30.0 and 5.0 < float(north) < 15.0
    synth.save(tmp_path / "m")
    again = SequenceSynthesizer.load(tmp_path / "m")
    assert again.networks.gaussian_clip == 0.3 and again.sample(5, seed=2).equals(synth.sample(5, seed=2))
    for bad in (0.0, 1.5, True):
        with pytest.raises(InputError, match="gaussian_basis, gaussian_clip and gaussian_residual"):
            _fit(model="gaussian", gaussian_clip=bad)
    # with a residual share the same entry holds a fourth release (the spectrum outside the basis)
    rough = _fit(model="gaussian", gaussian_basis=0.5, gaussian_clip=0.3, gaussian_residual=0.2)
    assert rough.ledger.entries[1].count == 4 and "residual's spectrum" in rough.ledger.entries[1].note
    assert rough.privacy_report()["epsilon"] == pytest.approx(3.0, rel=1e-3)


def test_a_clip_well_inside_the_box_cuts_the_covariance_noise():
    """One smooth factor of variation (true covariance 0.09·uuᵀ, one eigenvalue ≈ 0.3): uncentred
    (Δ d) at ε = 1 the noise's spectral level on 2,000 series is above it, so the shrink keeps
    nothing; centred and clipped to 0.2·√d (Δ c² ≈ d/25) the level is 25 times lower and the factor
    comes back. The same seed, the same entry: only the public form differs."""
    from dpgan.privacy.calibration import FitBudget
    from dpgan.sequences.baseline import DPGaussianSeries
    from dpgan.sequences.codec import SeriesSet

    n, d = 2000, 24
    rng = np.random.default_rng(0)
    shape = 0.5 * np.sin(np.linspace(0, np.pi, d))
    drawn = 0.2 + rng.normal(0, 0.3, (n, 1)) * shape[None, :]
    data = SeriesSet(np.clip(drawn, -1, 1)[:, :, None].astype(np.float32), np.zeros(n, dtype=np.int64), None, None)  # type: ignore[arg-type]
    truth = np.cov(data.values[:, :, 0].T, bias=True)
    plain = DPGaussianSeries(FitBudget(1.0, 1e-5)).fit(data, 1, np.random.default_rng(1))
    centred = DPGaussianSeries(FitBudget(1.0, 1e-5), clip_fraction=0.2).fit(data, 1, np.random.default_rng(1))
    assert plain.ledger.entries[0].noise_multiplier == centred.ledger.entries[0].noise_multiplier
    top = np.linalg.eigvalsh(truth)[-1]
    assert np.linalg.eigvalsh(plain.covariances()[0])[-1] < 0.1 * top  # shrunk away with the noise
    # back, less the shrink (a public level) and the clip of the few series farthest out: both bias it down
    assert 0.6 * top < np.linalg.eigvalsh(centred.covariances()[0])[-1] <= top
    assert np.abs(centred.covariances()[0] - truth).sum() < 0.5 * np.abs(plain.covariances()[0] - truth).sum()
