"""Networks for series and images (dpgan.models.recurrent, dpgan.models.conv): what the DP backend
relies on (no batch coupling, a batching rule for every op) and what their users will rely on."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from dpgan.models.conv import ConvCritic, ConvGenerator, halvings
from dpgan.models.recurrent import LSTM, LSTMCritic, LSTMGenerator, LSTMLayer
from dpgan.privacy.grad_sample import CriticUnitLoss
from dpgan.privacy.grad_sample.functorch import functorch_per_unit_gradients


def test_lstm_layer_equals_torch_lstm_with_the_same_weights():
    lstm = nn.LSTM(3, 5, batch_first=True).double()
    layer = LSTMLayer.from_lstm(lstm)
    x = torch.randn(4, 7, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    expected, (h, c) = lstm(x)
    got, (h2, c2) = layer(x)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(h2, h.squeeze(0), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(c2, c.squeeze(0), rtol=1e-12, atol=1e-12)
    state = (torch.full((4, 5), 0.3, dtype=torch.float64), torch.full((4, 5), -0.2, dtype=torch.float64))
    torch.testing.assert_close(layer(x, state)[0], lstm(x, (state[0][None], state[1][None]))[0])
    with pytest.raises(ValueError, match="one-layer"):
        LSTMLayer.from_lstm(nn.LSTM(3, 5, num_layers=2, batch_first=True))


def test_stacked_lstm_equals_torch_lstm_layer_by_layer():
    torch_lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True).double()
    ours = LSTM(3, 4, num_layers=2).double()
    with torch.no_grad():
        for k, layer in enumerate(ours.layers):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(layer, f"{name}_l0").copy_(getattr(torch_lstm, f"{name}_l{k}"))
    x = torch.randn(2, 6, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    outputs, last = ours(x)
    expected, (h, _) = torch_lstm(x)
    torch.testing.assert_close(outputs, expected, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(last, h[-1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("critic", "real", "context"),
    [
        (ConvCritic((1, 16, 16), 4, num_classes=3), torch.randn(3, 1, 16, 16), (torch.eye(3),)),
        (ConvCritic((1, 16, 16), 4, num_classes=3, projection="pooled"), torch.randn(3, 1, 16, 16), (torch.eye(3),)),
        (ConvCritic((1, 28, 28), 4, num_classes=3, projection="grid"), torch.randn(3, 1, 28, 28), (torch.eye(3),)),
        (LSTMCritic(3, 6, condition_dim=2), torch.randn(3, 5, 3), (torch.eye(3)[:, :2],)),
    ],
    ids=["conv", "conv-pooled", "conv-grid", "lstm"],
)
def test_critics_have_batching_rules_for_every_op(critic, real, context):
    """vmap over the critic (penalty included) never falls back to a per-unit loop (that is
    what makes nn.LSTM slow here); the warning is torch.func's own."""
    loss = CriticUnitLoss(real=real, partners=real.flip(0), alpha=torch.rand(3), gp_weight=10.0, context=context)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*performance drop.*")
        grads = functorch_per_unit_gradients(critic, loss)
    assert all(g.shape[0] == 3 and torch.isfinite(g).all() for g in grads.values())


def test_critic_scores_do_not_depend_on_the_rest_of_the_batch():
    """Unit i's score is the same alone and in a batch (no cross-unit layer slipped in)."""
    gen = torch.Generator().manual_seed(2)
    conv, images = ConvCritic((1, 28, 28), 8).double(), torch.randn(5, 1, 28, 28, generator=gen, dtype=torch.float64)
    lstm, series = LSTMCritic(4, 8).double(), torch.randn(5, 24, 4, generator=gen, dtype=torch.float64)
    for critic, x in ((conv, images), (lstm, series)):
        batch = critic(x)
        assert batch.shape == (5,)
        alone = torch.stack([critic(x[i : i + 1])[0] for i in range(5)])
        torch.testing.assert_close(batch, alone, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("side", "stages"), [(28, 2), (32, 3), (64, 4), (8, 1), (7, 0), (30, 1)])
def test_image_sides_halve_while_even_and_above_seven(side, stages):
    assert halvings(side) == stages


@pytest.mark.parametrize("upsample", [False, True])
@pytest.mark.parametrize("shape", [(1, 28, 28), (3, 32, 32), (1, 16, 24)])
def test_conv_generator_and_critic_mirror_each_other(shape, upsample):
    gen = torch.Generator().manual_seed(3)
    G = ConvGenerator(10, shape, 8, num_classes=4, upsample=upsample)
    D = ConvCritic(shape, 8, num_classes=4)
    labels = torch.eye(4)[torch.tensor([0, 3])]
    images = G(torch.randn(2, 10, generator=gen), labels)
    assert images.shape == (2, *shape) and images.abs().max() < 1
    assert D(images, labels).shape == (2,)
    assert D.features(images).shape == (2, D.feature_dim)
    with pytest.raises(ValueError, match="conditional"):
        D(images)
    with pytest.raises(ValueError, match="conditional"):
        G(torch.randn(2, 10))


def test_upsampling_generator_has_no_transposed_convolution_and_ends_at_full_size():
    G = ConvGenerator(10, (1, 28, 28), 8, upsample=True)
    kinds = [type(m) for m in G.body]
    assert nn.ConvTranspose2d not in kinds and kinds.count(nn.Upsample) == 2
    last = G.body[-1]
    assert isinstance(last, nn.Conv2d) and last.kernel_size == (3, 3) and last.out_channels == 1
    # each output pixel reads only its 3×3 neighbourhood of the last features: a feature map that is
    # constant gives a constant image away from the border
    with torch.no_grad():
        inner = G.body[:-1](G.project(torch.zeros(1, 10)).reshape(-1, *G.start))
        flat = last(torch.ones_like(inner))
    assert torch.allclose(flat[..., 1:-1, 1:-1], flat[..., 1, 1].reshape(1, 1, 1, 1).expand_as(flat[..., 1:-1, 1:-1]))


def test_conv_networks_refuse_sides_they_cannot_halve():
    with pytest.raises(ValueError, match="even"):
        ConvCritic((1, 7, 7))
    with pytest.raises(ValueError, match="norm"):
        ConvCritic((1, 28, 28), norm="batch")
    with pytest.raises(ValueError, match="projection"):
        ConvCritic((1, 28, 28), num_classes=2, projection="half")


def test_lstm_generator_gives_series_in_range_and_reads_its_condition():
    gen = torch.Generator().manual_seed(4)
    G = LSTMGenerator(5, 3, 8, condition_dim=2)
    z = torch.randn(2, 24, 5, generator=gen)
    a, b = G(z, torch.tensor([[1.0, 0.0], [1.0, 0.0]])), G(z, torch.tensor([[0.0, 1.0], [0.0, 1.0]]))
    assert a.shape == (2, 24, 3) and a.abs().max() < 1
    assert not torch.allclose(a, b)
    with pytest.raises(ValueError, match="conditional"):
        G(z)
