"""What each rank of the image stream's two-process test runs (a module, so torch.multiprocessing can
spawn it): rank r joins a gloo group through a file and fits the "gaussian" image model through the
library on an image stream (dpgan.images.open_images), reading blocks r, r+2, ...; it writes its
released model's arrays, its ledger and its training record to an .npz (no pickle)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

BLOCK = 40


def fit(source: Path, seed: int | None = 3):  # noqa: ANN201
    """The image statistics model fitted on `source` read in blocks of BLOCK images."""
    from dpgan.images import open_images
    from dpgan.synthesizers.image import ImageSynthesizer

    return ImageSynthesizer(epsilon=3.0, seed=seed).fit(open_images(source, labelled=True, block=BLOCK))


def released(synth) -> dict[str, np.ndarray]:  # noqa: ANN001
    """The released model's arrays (means, factors, shares, marginals: what its file holds)."""
    return {name: np.asarray(array.detach().cpu()) for name, array in synth.generator.arrays.items()}


def run(rank: int, world_size: int, init_file: str, out: str, source: str) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        synth = fit(Path(source))
        record = json.dumps(synth.training, sort_keys=True, default=str)
        np.savez(
            Path(out) / f"rank-{rank}.npz", entries=np.array(repr(synth.ledger.entries)), record=np.array(record),
            **released(synth),
        )  # fmt: skip
    finally:
        dist.destroy_process_group()


def cli_arguments(source: Path, out: Path) -> list[str]:
    """`dpgan fit` of the image stream (the class list given: the set is small for a DP label set)."""
    classes = ",".join(str(d) for d in range(10))
    return ["fit", str(source), "--kind", "image", "--epsilon", "3", "--seed", "3", "--classes", classes,
            "--quiet", "--out", str(out)]  # fmt: skip


def run_cli(rank: int, world_size: int, init_file: str, out: str, source: str) -> None:
    """One rank of `dpgan fit --kind image` under an initialized gloo group (as torchrun's would be):
    each rank names its own --out, so the test sees which ranks wrote."""
    import torch.distributed as dist

    from dpgan.cli import main

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    code = main(cli_arguments(Path(source), Path(out) / f"model-{rank}"))  # the CLI ends the group
    (Path(out) / f"exit-{rank}").write_text(str(code))
