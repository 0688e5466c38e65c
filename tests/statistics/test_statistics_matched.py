"""Matched marginals (dpgan.statistics.matched): the copula's two releases on one ledger, the model of
the values themselves, its own marginal's table, and the monotone map to the released histogram."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dpgan.models.marginal_map import cdf_at, quantile_values
from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.statistics.copula import HISTOGRAM_EVENT
from dpgan.statistics.gaussian import DPGaussian
from dpgan.statistics.matched import DPMatchedMarginals, tabulated_cdf
from test_statistics_copula import _fit  # the copula's two targets on one ledger: the same fit call


def _images(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """The box's floor (a background) around a bright blob that starts anywhere in the first half:
    each coordinate is dark or bright, which a Gaussian's draws speckle between."""
    start = rng.integers(0, d // 2, (n, 1))
    inside = (np.arange(d) >= start) & (np.arange(d) < start + d // 2)
    blob = rng.uniform(0.2, 1.0, (n, 1)) * inside
    return np.clip(-1.0 + 2.0 * blob + rng.normal(0, 0.05, (n, d)) * (blob > 0), -1.0, 1.0)


def test_the_cdf_table_counts_each_end_atom_half():
    edges = np.linspace(-1.0, 1.0, 5)
    values = np.array([-1.0, -1.0, -0.9, 0.1, 1.0])
    cdf = tabulated_cdf(values, edges)
    assert cdf[0] == pytest.approx(0.2) and cdf[-1] == pytest.approx(0.9)  # 2/5 and 1/5 atoms, halved
    assert cdf[1] == pytest.approx(0.6) and cdf[3] == pytest.approx(0.8) and np.all(np.diff(cdf) >= 0)
    assert tabulated_cdf(np.array([]), edges) == pytest.approx(np.linspace(0, 1, 5))


def test_each_end_of_the_box_is_a_cell_of_its_own():
    model = DPMatchedMarginals(-1.0, 1.0, bins=4)
    cells = model.cells_of(np.array([-1.0, -0.99, -0.5, 0.0, 0.49, 0.99, 1.0]))
    assert cells.tolist() == [0, 1, 2, 3, 3, 4, 5] and len(model.edges) == 4 + 3


def test_the_two_releases_land_on_epsilon_like_the_copula_and_neighbours_share_the_public_facts():
    rng = np.random.default_rng(0)
    values, labels = _images(600, 10, rng), rng.integers(0, 3, 600)
    outcomes = []
    for data, labs in ((values, labels), (np.vstack([values, np.ones((1, 10))]), np.append(labels, 1))):
        model = DPMatchedMarginals(-1.0, 1.0)
        ledger = _fit(model, data, labs, 3)
        histogram, gaussian = ledger.entries
        assert histogram.name == HISTOGRAM_EVENT and gaussian.name == "scores" and gaussian.count == 3
        assert ledger.epsilon(1e-5) == pytest.approx(3.0, rel=2e-3)
        outcomes.append(
            (
                [(e.name, e.noise_multiplier, e.count) for e in ledger.entries],
                [c.shape for c in model.cdfs],
                [c.shape for c in model.source_cdfs],
            )
        )
    assert outcomes[0] == outcomes[1]


def test_at_a_large_epsilon_draws_take_the_data_marginal_and_keep_the_gaussian_order():
    rng = np.random.default_rng(1)
    values = _images(8000, 16, rng)
    model = DPMatchedMarginals(-1.0, 1.0, bins=64)
    _fit(model, values, None, 0, epsilon=1e4)
    drawn, _ = model.sample(8000, np.random.default_rng(2))
    # the plain Gaussian of the same values speckles the background; matched draws sit at the floor
    plain = DPGaussian(-1.0, 1.0)
    ledger = PrivacyLedger(budget=Budget(1e4, 1e-5, "pld"))
    plain.fit(values, None, 0, np.random.default_rng(3), ledger=ledger, target=ShareTarget(1e4, 1e-5, "pld"),
              event="g", note="")  # fmt: skip
    speckled, _ = plain.sample(8000, np.random.default_rng(2))
    floor = np.mean(values <= -0.95)
    # the box's end is a cell of its own: the data's exact floor comes back as an atom, not a haze
    assert abs(np.mean(drawn == -1.0) - np.mean(values == -1.0)) < 0.05 and np.mean(values == -1.0) > 0.4
    assert abs(np.mean(drawn <= -0.95) - floor) < 0.05 < abs(np.mean(speckled <= -0.95) - floor)
    levels = [0.25, 0.6, 0.75, 0.9]  # not 0.5: half the data sit on the floor, the median on the jump
    assert np.quantile(drawn, levels) == pytest.approx(np.quantile(values, levels), abs=0.06)
    # the map is monotone per label: a vector's values keep their order, so the blob stays where it was
    grid = np.linspace(-1.2, 1.2, 200)[None, :]
    mapped = model.values(grid, np.zeros(1, dtype=np.int64))
    assert np.all(np.diff(mapped) >= -1e-12) and mapped.min() >= -1.0 and mapped.max() <= 1.0
    assert np.corrcoef(drawn[:, 5], drawn[:, 6])[0, 1] > 0.5 * np.corrcoef(values[:, 5], values[:, 6])[0, 1] > 0.3


def test_torch_maps_equal_numpys():
    rng = np.random.default_rng(4)
    edges = np.linspace(-1.0, 1.0, 9)
    tables = np.stack([tabulated_cdf(rng.uniform(-1, 1, 300) ** 3, edges) for _ in range(5)])
    values = rng.uniform(-1.1, 1.1, (5, 30))
    expected = np.stack([np.interp(v, edges, t) for v, t in zip(values, tables, strict=True)])
    found = cdf_at(torch.tensor(values), torch.tensor(tables), torch.tensor(edges))
    np.testing.assert_allclose(found.numpy(), expected, atol=1e-12)
    cdfs = np.sort(np.concatenate([np.zeros((5, 1)), rng.uniform(0, 1, (5, 7)), np.ones((5, 1))], axis=1), axis=1)
    quantiles = rng.uniform(0, 1, (5, 30))
    inverse = np.stack([np.interp(q, c, edges) for q, c in zip(quantiles, cdfs, strict=True)])
    found = quantile_values(torch.tensor(quantiles)[:, None, :], torch.tensor(cdfs)[:, None, :], torch.tensor(edges))
    np.testing.assert_allclose(found[:, 0, :].numpy(), inverse, atol=1e-9)


def test_a_threshold_reads_small_noisy_counts_as_empty_and_none_keeps_the_copulas_counts():
    noisy = np.array([-5.0, 1.0, 3.0, 10.0])
    assert DPMatchedMarginals(-1.0, 1.0, threshold=2.0).kept_counts(noisy, 2.0).tolist() == [0.0, 0.0, 0.0, 10.0]
    assert DPMatchedMarginals(-1.0, 1.0).kept_counts(noisy, 2.0).tolist() == [0.0, 1.0, 3.0, 10.0]


def test_the_histogram_note_counts_the_end_cells_it_releases():
    """32 equal bins and the box's two ends: 34 cells released per label and channel, and the note
    says 34 (issue 49: it said 32)."""
    model = DPMatchedMarginals(-1.0, 1.0, bins=32)
    ledger = _fit(model, _images(300, 8, np.random.default_rng(1)), None, 0, per_unit=2)
    note = ledger.entries[0].note
    assert len(model.edges) - 1 == 34 and len(model.cdfs[0][0]) == 35  # 34 cells, 35 edges
    assert note.startswith("34 cells per label and channel (the box's ends -1 and 1 as cells of their own, then 32 ")
    assert note.endswith("Δ = 2·d/√C = 2·8/√1 = 16")
