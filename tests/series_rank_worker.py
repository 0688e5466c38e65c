"""What each rank of the series fit's two-process test runs (a module, so torch.multiprocessing can
spawn it): rank r joins a gloo group through a file and fits the same .npy of series through
`SequenceSynthesizer.fit` (each rank reads blocks r, r + 2, ...), then writes its released arrays
and its ledger to an .npz (no pickle)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

BLOCK = 500


def series(n: int = 2000, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """n series of 12 readings of 2 values in [0, 100], three labels."""
    gen = np.random.default_rng(seed)
    return np.clip(gen.normal(50.0, 15.0, (n, 12, 2)), 0.0, 100.0), gen.integers(0, 3, n)


def written(folder: Path, n: int = 2000) -> tuple[Path, Path]:
    values, labels = series(n)
    np.save(folder / "series.npy", values)
    np.save(folder / "labels.npy", labels)
    return folder / "series.npy", folder / "labels.npy"


def fit(path: Path, labels: Path, model: str, seed: int | None):  # noqa: ANN201
    from dpgan.sequences.series_file import SeriesFile
    from dpgan.synthesizers import SequenceSynthesizer

    synth = SequenceSynthesizer(epsilon=2.0, seed=seed, model=model)
    return synth.fit(SeriesFile.open(path, labels, block=BLOCK), progress=False)


def arrays(synth) -> dict[str, np.ndarray]:  # noqa: ANN001
    return {key: value.cpu().numpy() for key, value in synth.generator.state_dict().items()}


def run(rank: int, world_size: int, init_file: str, folder: str, model: str, seed: int | None) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        synth = fit(Path(folder) / "series.npy", Path(folder) / "labels.npy", model, seed)
        out = Path(folder) / f"{model}-{seed}-{rank}.npz"
        facts = {"ledger": np.array(repr(synth.ledger.to_dict())), "schema": np.array(repr(synth.schema))}
        np.savez(out, **facts, **arrays(synth))
    finally:
        dist.destroy_process_group()
