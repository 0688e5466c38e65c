"""The statistics models' fixtures, and what each rank of their two-process test runs (a module, so
torch.multiprocessing can spawn it): rank r reads blocks r, r+2, ... of the same array, the running
sums travel through `rank_sum` before the noise, and each rank writes its released arrays and its
ledger to an .npz (no pickle)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch

from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.statistics.bases import high_frequency_basis, low_frequency_basis
from dpgan.statistics.blocks import VectorBlocks, rank_sum
from dpgan.statistics.copula import DPGaussianCopula
from dpgan.statistics.gaussian import DPGaussian
from dpgan.statistics.independent import DPIndependentMarginals
from dpgan.statistics.matched import DPMatchedMarginals
from dpgan.statistics.mixture import DPGaussianMixture

D, LABELS, BLOCK = 24, 3, 50
BASIS = low_frequency_basis((D,), 0.3)
RESIDUAL = high_frequency_basis((D,), 0.3)
MODELS: dict[str, Callable[[], object]] = {
    "gaussian": lambda: DPGaussian(-1.0, 1.0),
    "gaussian-centred": lambda: DPGaussian(-1.0, 1.0, basis=BASIS, clip=2.0, shrink="spike"),
    "gaussian-residual": lambda: DPGaussian(
        -1.0, 1.0, basis=BASIS, clip=2.0, residual_basis=RESIDUAL, residual_clip=1.0
    ),
    "mixture": lambda: DPGaussianMixture(-1.0, 1.0, components=2, iterations=2, basis=BASIS, clip=2.0),
    "copula": lambda: DPGaussianCopula(-1.0, 1.0, bins=16, channels=3),
    "matched": lambda: DPMatchedMarginals(-1.0, 1.0, bins=16, channels=2),
    "independent": lambda: DPIndependentMarginals(-1.0, 1.0, bins=8),
}


def data(n: int = 400, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    return np.clip(gen.normal(0.0, 0.4, (n, D)), -1.0, 1.0), gen.integers(0, LABELS, n)


def fit(model, values, labels, *, seed: int = 5, per_unit: int = 1):  # noqa: ANN001, ANN201
    """The model fitted at ε = 2 with its own ledger; the ledger's entries and the generator after."""
    ledger = PrivacyLedger(budget=Budget(2.0, 1e-5, "pld"))
    target, rng = ShareTarget(2.0, 1e-5, "pld"), np.random.default_rng(seed)
    common = {"ledger": ledger, "target": target, "per_unit": per_unit}
    if isinstance(model, DPGaussianCopula):
        common["histogram_target"] = ShareTarget(0.5, 1e-5, "pld")
    if not isinstance(model, DPIndependentMarginals):
        common |= {"event": "e", "note": "n"}
    model.fit(values, labels, LABELS, rng, **common)  # type: ignore[attr-defined]
    return ledger.entries, rng


def released(model) -> list[np.ndarray]:  # noqa: ANN001
    """Every released array of a fitted model (post-processed), in a fixed order."""
    if isinstance(model, DPIndependentMarginals):
        return [model.probabilities, model.shares]
    if isinstance(model, DPGaussianCopula):
        return [*model.cdfs, *released(model.gaussian)]
    if isinstance(model, DPGaussianMixture):
        return [model.centres, *released(model.cells)]
    return [*model.means, *model.covariances(), *model.residual_variances, model.shares]


def run(rank: int, world_size: int, init_file: str, out: str, name: str) -> None:
    """One rank: join the gloo group through a file, fit `name` on its share of the blocks."""
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        from dpgan.privacy.distributed import process_group_context

        context = process_group_context()
        values, labels = data()

        def read() -> Iterator[tuple[np.ndarray, np.ndarray]]:
            for start in range(rank * BLOCK, len(values), world_size * BLOCK):
                yield values[start : start + BLOCK], labels[start : start + BLOCK]

        model = MODELS[name]()
        entries, _ = fit(model, VectorBlocks(D, read, rank_sum(context)), None)
        arrays = {f"a{i}": array for i, array in enumerate(released(model))}
        np.savez(Path(out) / f"{name}-{rank}.npz", entries=np.array(repr(entries)), **arrays)
    finally:
        dist.destroy_process_group()
