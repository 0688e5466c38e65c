"""The statistics models read in blocks (dpgan.statistics.blocks): the same releases as one array.

Properties: every model fitted on an array cut into blocks gives the one-array model (its released
means, factors, CDFs, histograms, up to the order of float additions) and the same ledger; an array
passed as one block gives it bit for bit; the passes over the blocks are fixed before any value is
read (neighbouring inputs, one unit apart, are read the same number of times and leave the same
ledger and, where the fit draws only noise, the same generator state); two ranks that each read half
of the blocks and sum before the noise give the one-process model and ledger.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch.multiprocessing as mp

import statistics_rank_worker as worker
from dpgan.statistics.blocks import VectorBlocks, in_memory
from dpgan.statistics.gaussian import DPGaussian
from statistics_rank_worker import BASIS, LABELS, MODELS, D
from statistics_rank_worker import data as _data
from statistics_rank_worker import fit as _fit
from statistics_rank_worker import released as _released

TOL = {"rtol": 1e-9, "atol": 1e-9}  # float sums in another order


class CountedBlocks:
    """An array's blocks of `size` rows, counting the passes and blocks read."""

    def __init__(self, values: np.ndarray, labels: np.ndarray, size: int) -> None:
        self.values, self.labels, self.size, self.passes, self.blocks = values, labels, size, 0, 0

    def read(self):  # noqa: ANN201
        self.passes += 1
        for start in range(0, len(self.values), self.size):
            self.blocks += 1
            yield self.values[start : start + self.size], self.labels[start : start + self.size]

    def as_blocks(self) -> VectorBlocks:
        return VectorBlocks(D, self.read)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("size", [1, 37, 400])
def test_blocks_release_what_one_array_releases(name, size):
    values, labels = _data()
    whole, blocked = MODELS[name](), MODELS[name]()
    whole_ledger, _ = _fit(whole, values, labels, per_unit=2)
    blocked_ledger, _ = _fit(blocked, in_memory(values, labels, block=size), None, per_unit=2)
    assert blocked_ledger == whole_ledger
    for got, want in zip(_released(blocked), _released(whole), strict=True):
        np.testing.assert_allclose(got, want, **TOL)
    a, b = whole.sample(64, np.random.default_rng(9)), blocked.sample(64, np.random.default_rng(9))
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_allclose(a[0], b[0], rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("name", list(MODELS))
def test_one_block_is_the_one_array_fit_bit_for_bit(name):
    values, labels = _data()
    whole, blocked = MODELS[name](), MODELS[name]()
    _fit(whole, values, labels)
    _fit(blocked, in_memory(values, labels), None)
    for got, want in zip(_released(blocked), _released(whole), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(MODELS))
def test_neighbouring_inputs_are_read_alike_and_charged_alike(name):
    """One unit removed, or replaced by an extreme one at a box corner with another label: the same
    passes over the blocks, the same ledger, and (a fit that draws noise alone) the same generator."""
    values, labels = _data(401)
    extreme = values.copy()
    extreme[200], labels_extreme = 1.0, labels.copy()
    labels_extreme[200] = (labels[200] + 1) % LABELS
    neighbours = [(values, labels), (np.delete(values, 200, 0), np.delete(labels, 200)), (extreme, labels_extreme)]
    seen = []
    for x, y in neighbours:
        counted = CountedBlocks(x, y, 50)
        entries, rng = _fit(MODELS[name](), counted.as_blocks(), None)
        state = rng.bit_generator.state if name in ("gaussian", "gaussian-centred", "copula", "independent") else None
        seen.append((counted.passes, entries, state))
    assert seen[0] == seen[1] == seen[2]


def test_a_block_without_some_labels_and_an_empty_block_are_read():
    values, labels = _data()
    labels = np.where(np.arange(len(labels)) < 200, 0, labels)  # the first blocks hold label 0 alone

    def read():  # noqa: ANN202
        yield values[:0], labels[:0]
        yield values[:200], labels[:200]
        yield values[200:], labels[200:]

    whole, blocked = DPGaussian(-1.0, 1.0, basis=BASIS, clip=2.0), DPGaussian(-1.0, 1.0, basis=BASIS, clip=2.0)
    _fit(whole, values, labels)
    _fit(blocked, VectorBlocks(D, read), None)
    for got, want in zip(_released(blocked), _released(whole), strict=True):
        np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("name", ["gaussian-centred", "copula", "mixture", "independent"])
def test_two_ranks_that_each_read_half_the_blocks_release_the_one_process_model(tmp_path, name):
    values, labels = _data()
    single = MODELS[name]()
    entries, _ = _fit(single, in_memory(values, labels, block=50), None)
    mp.spawn(worker.run, args=(2, str(tmp_path / "init"), str(tmp_path), name), nprocs=2, join=True)
    for rank in range(2):
        got = np.load(tmp_path / f"{name}-{rank}.npz")
        assert got["entries"].item() == repr(entries)  # the same ledger
        for i, want in enumerate(_released(single)):
            np.testing.assert_allclose(got[f"a{i}"], want, rtol=1e-7, atol=1e-9)


def test_a_block_of_another_width_is_refused_in_one_line():
    from dpgan.errors import InputError

    values, labels = _data()
    with pytest.raises(InputError, match=f"\\(n, {D}\\)"):
        _fit(DPGaussian(-1.0, 1.0), VectorBlocks(D, lambda: iter([(values[:, :-1], labels)])), None)
