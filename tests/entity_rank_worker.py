"""Entity tables for the Parquet tests and what each rank of their two-process tests runs (a module, so
torch.multiprocessing can spawn it): rank r joins a gloo group through a file and fits the same
Parquet parts through `EntitySynthesizer.fit` (each rank reads its buckets), or through `dpgan fit`,
then writes its released arrays and its ledger to an .npz (no pickle)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

CATEGORIES = {"kind": ["a", "b", "c"], "region": ["n", "s"], "tag": ["x", "y", "z"]}
BOUNDS = {"age": (0.0, 100.0), "amount": (-5.0, 20.0)}
WINDOW = ("2020-01-01 00:00", "2020-03-01 00:00")
FORMAT = "%Y-%m-%d %H:%M"
PUBLIC = dict(key="id", time_column="when", time_bounds=WINDOW, time_format=FORMAT, categories=CATEGORIES,
              bounds=BOUNDS, max_events=4)  # fmt: skip
BUCKETS = 5


def tables(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """n parents (two categorical columns: the link is chosen with DP) and their events, many with more
    than k = 4; two orphan keys and one duplicated parent (dropped, tallied); events in shuffled order."""
    rng = np.random.default_rng(seed)
    kinds, regions = rng.choice(["a", "b", "c"], n), rng.choice(["n", "s"], n)
    parents = pd.DataFrame({"id": [f"P{i}" for i in range(n)], "kind": kinds, "region": regions,
                            "age": rng.integers(20, 80, n)})  # fmt: skip
    parents = pd.concat([parents, parents.iloc[[7]]], ignore_index=True)  # P7 twice: a duplicate
    rows = []
    for i, kind in enumerate(kinds):
        for _ in range(rng.poisson({"a": 1, "b": 3, "c": 9}[kind])):
            day, hour = int(rng.integers(1, 28)), int(rng.integers(0, 24))
            rows.append((f"P{i}", f"2020-01-{day:02d} {hour:02d}:00", float(rng.normal(3, 2)),
                         str(rng.choice(["x", "y", "z"]))))  # fmt: skip
    rows += [("ORPHAN1", "2020-01-02 00:00", 1.0, "x"), ("ORPHAN2", "2020-01-03 00:00", 2.0, "y")]
    events = pd.DataFrame(rows, columns=["id", "when", "amount", "tag"])
    return parents, events.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def write_parts(frame: pd.DataFrame, folder: Path, parts: int = 3) -> Path:
    """`frame` cut into `parts` Parquet files in `folder` (in order: part-0 holds the first rows)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), parts)):
        frame.iloc[rows].to_parquet(folder / f"part-{i}.parquet", index=False)
    return folder


def written(folder: Path, parents: pd.DataFrame, events: pd.DataFrame, parts: tuple[int, int] = (2, 3)) -> tuple:
    return write_parts(parents, folder / "parents", parts[0]), write_parts(events, folder / "events", parts[1])


def fit_parquet(parents: Path, events: Path, seed: int | None = 3, buckets: int = BUCKETS, **settings):  # noqa: ANN003, ANN201
    from dpgan.entities.facade import EntitySynthesizer
    from dpgan.entities.parquet import EntityParquet

    synth = EntitySynthesizer(epsilon=3.0, seed=seed, **settings)
    return synth.fit(EntityParquet.open(parents, events, buckets=buckets), **PUBLIC)


def arrays(synth) -> dict[str, np.ndarray]:  # noqa: ANN001
    return synth.generator.arrays()


def run(rank: int, world_size: int, init_file: str, folder: str) -> None:
    """One rank of the two-process fit: its buckets of the same Parquet parts."""
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        synth = fit_parquet(Path(folder) / "parents", Path(folder) / "events")
        facts = {"ledger": np.array(repr(synth.ledger.to_dict())), "units": np.array(repr(synth.training["units"]))}
        np.savez(Path(folder) / f"entities-{rank}.npz", **facts, **arrays(synth))
    finally:
        dist.destroy_process_group()


def cli_arguments(folder: Path, out: Path) -> list[str]:
    """`dpgan fit` of the two folders of parts with the public facts as flags."""
    hints = [f"--categories={c}={','.join(v)}" for c, v in CATEGORIES.items()]
    hints += [f"--bounds={c}={low:g}:{high:g}" for c, (low, high) in BOUNDS.items()]
    return ["fit", str(folder / "parents"), "--kind", "entity", "--events", str(folder / "events"), "--key", "id",
            "--time-column", "when", "--time-min", WINDOW[0], "--time-max", WINDOW[1], "--time-format", FORMAT,
            "--max-events", "4", *hints, "--epsilon", "3", "--seed", "3", "--out", str(out)]  # fmt: skip


def run_cli(rank: int, world_size: int, init_file: str, folder: str) -> None:
    """One rank of `dpgan fit --kind entity` under an initialized gloo group (as torchrun's would be):
    each rank names its own --out, so the test sees which ranks wrote."""
    import torch.distributed as dist

    from dpgan.cli import main

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    code = main(cli_arguments(Path(folder), Path(folder) / f"model-{rank}"))  # the CLI ends the group
    (Path(folder) / f"exit-{rank}").write_text(str(code))
