"""Poisson batches padded to a public size (dpgan.privacy.padded_batches): the same units as the
Poisson sampler for a seed, padding masked out, an overflowing draw left unpadded, and a pad whose
overflow probability is bounded (Bernstein, checked against the exact binomial tail)."""

from __future__ import annotations

import pytest
import torch
from scipy.stats import binom

from dpgan.privacy.padded_batches import PaddedSampler, overflow_bound, pad_size
from dpgan.privacy.sampling import PoissonSampler


def test_padded_draws_hold_the_poisson_samplers_units_then_masked_padding():
    plain = PoissonSampler(2000, 0.02, torch.Generator().manual_seed(5))
    padded = PaddedSampler(PoissonSampler(2000, 0.02, torch.Generator().manual_seed(5)), pad=pad_size(40.0, 0.02))
    for _ in range(20):
        expected, draw = plain.sample(), padded.sample()
        assert not draw.overflow and draw.indices.shape == draw.mask.shape == (padded.pad,)
        assert draw.units == len(expected) and torch.equal(draw.indices[: draw.units], expected)
        assert draw.mask[: draw.units].eq(1).all() and draw.mask[draw.units :].eq(0).all()
        assert draw.indices[draw.units :].eq(0).all()  # padding points at a real position, masked out


def test_a_draw_larger_than_the_pad_takes_the_unpadded_path():
    draw = PaddedSampler(PoissonSampler(100, 0.5, torch.Generator().manual_seed(0)), pad=8).sample()
    assert draw.overflow and draw.units > 8 and draw.indices.shape == (draw.units,) and draw.mask.eq(1).all()


@pytest.mark.parametrize(("units", "rate", "pad"), [(1000, 0.05, 60), (30000, 0.03, 1000), (500, 0.5, 290)])
def test_the_overflow_bound_holds_against_the_exact_binomial_tail(units, rate, pad):
    assert binom.sf(pad, units, rate) <= overflow_bound(units, rate, pad)


def test_the_pad_makes_an_overflow_rare_even_when_the_count_was_low():
    """Adult's 32,561 rows at q = 1,024 / N̂, N̂ 300 rows low (noise), margin 600: P[|B| > P] < 1e-7."""
    rate = 1024 / 32261
    pad = pad_size(1024.0, rate, count_margin=600.0)
    assert pad % 8 == 0 and 1024 < pad < 1400
    assert overflow_bound(32561, rate, pad) < 1e-7
    assert pad_size(10.0, 0.5) <= pad_size(20.0, 0.5) and pad_size(0.0, 0.1) >= 8
    with pytest.raises(ValueError):
        pad_size(-1.0, 0.1)
