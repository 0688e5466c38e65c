"""What each rank of the series fit's two-process test runs (a module, so torch.multiprocessing can
spawn it): rank r joins a gloo group through a file and fits the same .npy of series through
`SequenceSynthesizer.fit` (each rank reads blocks r, r + 2, ...), then writes its released arrays
and its ledger to an .npz (no pickle)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
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


def long_table(n: int = 1500, length: int = 8, seed: int = 0) -> pd.DataFrame:
    """n series of `length` readings as a long table, rows shuffled (one series' readings scattered),
    one series with a missing value (dropped, counted)."""
    gen = np.random.default_rng(seed)
    values = np.clip(gen.normal(50.0, 15.0, (n, length)), 0.0, 100.0)
    labels = gen.integers(0, 3, n)
    frame = pd.DataFrame(
        {"id": np.repeat(np.arange(n), length), "t": np.tile(np.arange(length), n), "x": values.reshape(-1),
         "k": np.repeat(labels, length)}
    )  # fmt: skip
    frame.loc[5, "x"] = np.nan
    return frame.sample(frac=1.0, random_state=seed + 1).reset_index(drop=True)


def long_schema(length: int = 8):  # noqa: ANN201
    from dpgan.sequences.schema import SequenceSchema, ValueColumn

    return SequenceSchema(id="id", time="t", length=length, values=(ValueColumn("x"),), label="k")


def write_parts(frame: pd.DataFrame, folder: Path, parts: int = 3) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, part in enumerate(np.array_split(np.arange(len(frame)), parts)):
        frame.iloc[part].to_parquet(folder / f"part-{i}.parquet")
    return folder


def fit_long(folder: Path, seed: int | None, buckets: int = 7):  # noqa: ANN201
    from dpgan.sequences.long_parquet import LongParquet
    from dpgan.synthesizers import SequenceSynthesizer

    synth = SequenceSynthesizer(epsilon=2.0, seed=seed)
    return synth.fit(LongParquet.open(folder, buckets=buckets), long_schema(), progress=False)


def run_long(rank: int, world_size: int, init_file: str, folder: str) -> None:
    """One rank of the long table's two-process fit: its buckets of the same Parquet parts."""
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        synth = fit_long(Path(folder) / "parts", 3)
        facts = {"ledger": np.array(repr(synth.ledger.to_dict())), "schema": np.array(repr(synth.schema))}
        np.savez(Path(folder) / f"long-{rank}.npz", **facts, **arrays(synth))
    finally:
        dist.destroy_process_group()
