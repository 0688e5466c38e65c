"""The sequence GAN's conditioning options (issue 15): the label projection critic, the generator's
released label shares and profile offset, the series-wide latent, and the DP label classifier that
guides G. Each is checked for what it must do and for what it must not do (mix units, skip the
ledger)."""

from __future__ import annotations

import pytest
import torch

from dpgan.errors import InputError
from dpgan.models.sequence_units import SeriesUnitCritic, SeriesUnitGenerator
from dpgan.privacy import grad_sample
from dpgan.sequences.anchor import EVENT as STATISTICS_EVENT
from dpgan.sequences.label_guide import guide_loss
from dpgan.sequences.settings import COUNT_EVENT
from dpgan.synthesizers.sequence import SequenceSynthesizer
from dpgan.training.aux_classifier import GUIDE_EVENT
from test_sequence_synthesizer import FAST, T, _fit, _long, _schema

CRITIC_EVENT = "DP-SGD on the critic"


def _units(n: int, labels: list[int], seed: int = 0) -> torch.Tensor:
    values = torch.rand(n, 1, T, 1, generator=torch.Generator().manual_seed(seed)) * 2 - 1
    one_hot = torch.nn.functional.one_hot(torch.tensor(labels), 3).float()
    return torch.cat([values, one_hot[:, None, None, :].expand(n, 1, T, 3)], dim=3)


def test_the_projection_critic_reads_the_label_and_scores_each_unit_alone():
    torch.manual_seed(0)
    critic = SeriesUnitCritic(length=T, channels=4, hidden=(8,), n_labels=3, projection=True)
    with torch.no_grad():
        critic.series_critic.embed.weight.normal_()
    units = _units(4, [0, 1, 2, 0])
    relabelled = _units(4, [1, 1, 2, 0])
    with torch.no_grad():
        scores, changed = critic(units), critic(relabelled)
    assert abs(float(scores[0] - changed[0])) > 1e-4  # the label moves the score
    assert torch.allclose(scores[1:], changed[1:])  # and only its own unit's
    with pytest.raises(ValueError, match="projection"):
        SeriesUnitCritic(length=T, channels=4, kind="lstm", n_labels=3, projection=True)


def test_the_projection_critic_goes_through_the_engine_with_the_clip_bound():
    torch.manual_seed(1)
    critic = SeriesUnitCritic(length=T, channels=4, hidden=(8,), n_labels=3, projection=True)
    units = _units(6, [0, 1, 2, 0, 1, 2]) * 3
    loss = grad_sample.CriticUnitLoss(real=units, weight=torch.ones(6))
    result = grad_sample.clipped_sum(critic, loss, 0.1)
    # unit 0's gradient by plain autograd: the engine's per-unit norm must be the same number
    grads = torch.autograd.grad(-critic(units[:1]).sum(), list(critic.parameters()))
    assert float(result.norms[0]) == pytest.approx(float(torch.cat([g.reshape(-1) for g in grads]).norm()), rel=1e-4)
    total = torch.cat([g.reshape(-1) for g in result.gradients.values()]).norm()
    assert float(total) <= 6 * 0.1 * (1 + 1e-5) and bool((result.norms > 0.1).all())


def test_the_profile_generator_draws_labels_from_the_released_shares_around_the_offset():
    torch.manual_seed(0)
    G = SeriesUnitGenerator(length=T, n_values=1, n_labels=3, step_noise=2, hidden_size=4, profile=True)
    mean = torch.stack([torch.full((T, 1), v) for v in (-0.5, 0.0, 0.6)])
    G.set_profile(torch.tensor([0.7, 0.2, 0.1]), mean)
    with torch.no_grad():
        G.lstm.out.weight.zero_()
        G.lstm.out.bias.zero_()  # the LSTM adds nothing: every series is its label's profile
    values, codes = G.sample(20_000, torch.Generator().manual_seed(1))
    shares = torch.bincount(codes, minlength=3).float() / 20_000
    assert torch.allclose(shares, torch.tensor([0.7, 0.2, 0.1]), atol=0.015)
    assert torch.allclose(values, mean[codes], atol=1e-5)
    units = G(torch.randn(5, G.noise_dim), torch.Generator().manual_seed(2))
    assert set(units[..., 1:].sum(dim=-1).unique().tolist()) == {1.0}  # hard one-hots, not Gumbel draws
    plain = SeriesUnitGenerator(length=T, n_values=1, n_labels=3, step_noise=2, hidden_size=4)
    with pytest.raises(ValueError, match="without a profile"):
        plain.set_profile(torch.ones(3), mean)


def test_the_series_latent_is_part_of_the_noise_and_moves_the_whole_series():
    torch.manual_seed(0)
    G = SeriesUnitGenerator(length=T, n_values=1, step_noise=2, hidden_size=8, series_noise=5)
    assert G.noise_dim == T * 2 + 5
    z = torch.randn(1, G.noise_dim).repeat(2, 1)
    z[1, T * 2 :] += 3.0  # the same per-step noise, another latent
    with torch.no_grad():
        units = G(z)
    assert float((units[0] - units[1]).abs().min()) > 0  # every step differs


def test_a_fit_with_profile_guide_and_latent_charges_each_release_and_reloads(tmp_path):
    synth = _fit(label_profile=True, label_guide=True, label_projection=True, series_noise=3)
    names = [e["name"] for e in synth.privacy_report()["events"]]
    assert names == [COUNT_EVENT, STATISTICS_EVENT, GUIDE_EVENT, CRITIC_EVENT]
    assert synth.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)
    south = synth.sample(6, seed=1, label="south")
    assert set(south["district"]) == {"south"}
    synth.save(tmp_path / "m")
    again = SequenceSynthesizer.load(tmp_path / "m")
    assert again.sample(5, seed=2).equals(synth.sample(5, seed=2))


def test_the_guide_loss_prefers_series_its_classifier_gives_their_own_label():
    classifier = torch.nn.Linear(T, 3, bias=False)
    with torch.no_grad():  # label 0 ↔ low values, label 2 ↔ high values
        classifier.weight.copy_(torch.tensor([[-1.0], [0.0], [1.0]]).expand(3, T))
    low = _units(4, [0, 0, 0, 0]) * 0 - 0.9
    low[..., 1:] = torch.nn.functional.one_hot(torch.tensor(0), 3).float()
    mislabelled = low.clone()
    mislabelled[..., 1:] = torch.nn.functional.one_hot(torch.tensor(2), 3).float()
    with torch.no_grad():
        assert float(guide_loss(low, 1, classifier)) < float(guide_loss(mislabelled, 1, classifier))


def test_the_guide_and_the_projection_refuse_what_they_cannot_do():
    frame = _long(60, entities=10)
    with pytest.raises(InputError, match="label_guide"):
        SequenceSynthesizer(epsilon=3.0, seed=0, label_guide=True, **FAST).fit(
            frame, _schema(entity="home", max_series_per_entity=2)
        )
    with pytest.raises(InputError, match="label_projection"):
        SequenceSynthesizer(epsilon=3.0, critic="lstm", label_projection=True)
    with pytest.raises(InputError, match="series_noise"):
        SequenceSynthesizer(epsilon=3.0, series_noise=-1)
