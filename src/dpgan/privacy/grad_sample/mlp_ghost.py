"""The MLP "ghost" kernel (privacy/mlp_clipping.py) as a registered fast path of the generic backend.

It computes the same clipped sum as `functorch_clipped_sum` (tests/privacy/test_grad_sample.py checks
them equal) from a few (B × width) products instead of a (B × #parameters) tensor, but only for
a critic that IS a Linear/LeakyReLU chain ending in one output. The kernel reads the chain from
the critic's leaf modules, so `applies` also checks, on a fixed public probe (seeded noise, no
data), that the critic's forward (and `features`, when the feature vector is asked for) equals
that chain: a module with the same leaves but another forward (a skip, a scale) goes to the
generic path. The decision reads only the module and the loss's settings, never the batch.
"""

from __future__ import annotations

import weakref

import torch
from torch import nn
from torch.nn import functional as F

from dpgan.privacy.grad_sample.spec import ClippedSum, CriticUnitLoss
from dpgan.privacy.mlp_clipping import FEATURES_KEY, _forward, _linear_layers, output_clipped_sum, wgan_gp_clipped_sum

NAME = "mlp-ghost"
_PROBE_ROWS = 4
_PROBE_SEED = 0


def _chain(linears: list[nn.Linear], x: torch.Tensor, slope: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The chain's output and its penultimate activations (what `features` must return)."""
    inputs, _ = _forward(linears, x, slope)
    return F.linear(inputs[-1], linears[-1].weight, linears[-1].bias).reshape(-1), inputs[-1]


# The probe's verdict per critic object and public setting: a training loop asks every step, and
# the verdict reads only the module's structure (not its current weights' values) and the settings.
_VERDICTS: weakref.WeakKeyDictionary[nn.Module, dict[tuple, bool]] = weakref.WeakKeyDictionary()


def applies(critic: nn.Module, loss: CriticUnitLoss) -> bool:
    """True when the kernel computes this critic's loss exactly (see the module docstring)."""
    if loss.context or loss.real.dim() != 2:
        return False
    key = (
        int(loss.real.shape[1]),
        loss.feature_scale > 0,
        tuple(p.requires_grad for p in critic.parameters()),
        len(list(critic.buffers())),
        critic.training,
    )
    verdicts = _VERDICTS.setdefault(critic, {})
    if key not in verdicts:
        verdicts[key] = _probe(critic, loss)
    return verdicts[key]


def _probe(critic: nn.Module, loss: CriticUnitLoss) -> bool:
    """The structural check behind `applies`, run once per critic and setting."""
    try:
        linears, slope = _linear_layers(critic)
    except TypeError:
        return False
    chain_params = {id(p) for layer in linears for p in (layer.weight, layer.bias) if p is not None}
    params = list(critic.parameters())
    if any(layer.bias is None for layer in linears) or {id(p) for p in params} != chain_params:
        return False
    if not all(p.requires_grad for p in params) or list(critic.buffers()):
        return False
    if loss.real.shape[1] != linears[0].in_features:
        return False
    weight = linears[0].weight
    # a fixed public probe, drawn on the CPU (the same numbers on every device), then moved
    probe = torch.randn(
        _PROBE_ROWS,
        linears[0].in_features,
        generator=torch.Generator(device="cpu").manual_seed(_PROBE_SEED),
        dtype=weight.dtype,
        device="cpu",
    ).to(weight.device)
    with torch.no_grad():
        out, penultimate = _chain(linears, probe, slope)
        score = critic(probe)
        if score.numel() != _PROBE_ROWS or not torch.allclose(score.reshape(-1), out, rtol=1e-5, atol=1e-6):
            return False
        if loss.feature_scale > 0:
            features = getattr(critic, "features", None)
            if not callable(features):
                return False
            f = features(probe)
            if f.shape != penultimate.shape or not torch.allclose(f, penultimate, rtol=1e-5, atol=1e-6):
                return False
    return True


def run(critic: nn.Module, loss: CriticUnitLoss, max_norm: float) -> ClippedSum:
    if loss.gp_weight == 0 and loss.feature_scale == 0:
        # nothing but -w_i·D(x_i): the penalty-free kernel, which agrees bit for bit with the full
        # one at λ = 0 (tests/privacy/test_fake_term.py) without its interpolate and penalty chain
        sums, norms = output_clipped_sum(critic, loss.real, -loss.unit_weights(), max_norm=max_norm, mask=loss.mask)
        return ClippedSum(sums, None, norms, NAME)
    batch = loss.batch_size
    partners = loss.partners if loss.partners is not None else loss.real
    if loss.alpha is not None:
        alpha = loss.alpha.reshape(batch, 1).to(loss.real.dtype)
    else:
        alpha = loss.real.new_zeros(batch, 1)
    sums, norms = wgan_gp_clipped_sum(
        critic,
        loss.real,
        partners,
        alpha,
        gp_weight=loss.gp_weight,
        max_norm=max_norm,
        one_sided=loss.one_sided,
        real_weight=loss.weight,
        x_hat=loss.x_hat,
        feature_scale=loss.feature_scale,
        mask=loss.mask,
    )
    features = sums.pop(FEATURES_KEY, None)
    return ClippedSum(sums, features, norms, NAME)


__all__ = ["NAME", "applies", "run"]
