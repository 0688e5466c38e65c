"""Images read in blocks (dpgan.images.stream, .stream_fit, .stream_run): the in-memory fit's
releases in flat memory, and under torchrun.

Properties: an .npy or a PNG folder read as one block gives the in-memory fit bit for bit (model,
ledger, record); blocks of any size give the same ledger and record and the same model up to the
order of float additions; neighbouring inputs (one image more, one unreadable file more) leave the
same public facts (ledger, shape, reasons, refusal-or-not); bad input is one line; two gloo ranks
that each read half of the blocks give the one-process model and ledger.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch.multiprocessing as mp

import image_rank_worker as worker
from dpgan.datasets import load_mnist_5k
from dpgan.errors import InputError
from dpgan.images import open_images, read_images, write_images
from dpgan.synthesizers.image import ImageSynthesizer

N = 600


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    images, labels = load_mnist_5k("train")  # sorted by label: a public shuffle of N of them
    pick = np.random.default_rng(0).permutation(len(images))[:N]
    return images[pick], labels[pick].astype(np.int64)


@pytest.fixture(scope="module")
def npy(tmp_path_factory, digits) -> Path:
    folder = tmp_path_factory.mktemp("npy")
    np.save(folder / "d.npy", digits[0])
    np.save(folder / "d.labels.npy", digits[1])
    return folder / "d.npy"


@pytest.fixture(scope="module")
def pngs(tmp_path_factory, digits) -> Path:
    """A labelled PNG folder with one unreadable PNG, one of another shape and one non-PNG."""
    folder = tmp_path_factory.mktemp("png") / "set"
    write_images(folder, *digits)
    (folder / "3" / "zz-broken.png").write_bytes(b"\x89PNG not really")
    write_images(folder.parent / "big", np.zeros((1, 1, 12, 12), dtype=np.uint8), [3])
    shutil.copy(next((folder.parent / "big" / "3").iterdir()), folder / "3" / "zz-big.png")
    (folder / "5" / "notes.txt").write_text("not an image")
    return folder


def fit(data, labels=None, **settings) -> ImageSynthesizer:  # noqa: ANN001
    return ImageSynthesizer(epsilon=3.0, seed=3, **settings).fit(data, labels)


def same_model(a: ImageSynthesizer, b: ImageSynthesizer, exact: bool) -> None:
    assert repr(a.ledger.entries) == repr(b.ledger.entries)
    assert json.dumps(a.training, sort_keys=True) == json.dumps(b.training, sort_keys=True)
    assert a.label_names == b.label_names and a.image_shape == b.image_shape
    for name, want in worker.released(a).items():
        got = worker.released(b)[name]
        if exact:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_an_npy_read_as_one_block_is_the_in_memory_fit_bit_for_bit(digits, npy):
    same_model(fit(*digits), fit(open_images(npy, block=10**6)), exact=True)


@pytest.mark.parametrize("block", [1, 37, 256])
def test_blocks_of_any_size_release_the_one_block_model(npy, block):
    same_model(fit(open_images(npy, block=10**6)), fit(open_images(npy, block=block)), exact=False)


def test_float_pixels_out_of_range_are_dropped_and_counted_as_in_memory(tmp_path, digits):
    images = digits[0].astype(np.float32) / 255.0
    images[5, 0, 3, 3] = np.nan
    images[9, 0, 0, 0] = 1.5
    labels = digits[1].astype(str)
    np.save(tmp_path / "f.npy", images)
    np.save(tmp_path / "f.labels.npy", labels)
    whole, blocked = fit(images, labels), fit(open_images(tmp_path / "f.npy", block=10**6))
    same_model(whole, blocked, exact=True)
    assert "pixels outside [0, 1]" in blocked.training["units"]["dropped"]
    same_model(whole, fit(open_images(tmp_path / "f.npy", block=50)), exact=False)


def test_a_png_folder_read_in_blocks_is_the_in_memory_fit(pngs):
    """Without a declared shape: the shape released by DP; the unreadable, big and non-PNG files dropped."""
    whole = fit(read_images(pngs, labelled=True))
    same_model(whole, fit(open_images(pngs, labelled=True, block=10**6)), exact=True)
    same_model(whole, fit(open_images(pngs, labelled=True, block=64)), exact=False)
    assert whole.training["shape_source"] == "dp"
    declared = fit(read_images(pngs, labelled=True, shape=(1, 28, 28)))
    same_model(declared, fit(open_images(pngs, labelled=True, shape=(1, 28, 28))), exact=False)


def test_neighbouring_folders_leave_the_same_public_facts(pngs, tmp_path):
    """One image more, or one unreadable file more: the same ledger, shape, label source and
    reasons, and neither refused (only the noisy counts may move)."""
    base = fit(open_images(pngs, labelled=True, block=64))
    for extra in ("image", "unreadable"):
        other = tmp_path / extra
        shutil.copytree(pngs, other)
        if extra == "image":
            shutil.copy(next((other / "7").iterdir()), other / "7" / "zz-extra.png")
        else:
            (other / "7" / "zz-extra.png").write_bytes(b"garbage")
        neighbour = fit(open_images(other, labelled=True, block=64))
        assert repr(neighbour.ledger.entries) == repr(base.ledger.entries)
        assert neighbour.image_shape == base.image_shape
        assert neighbour.training["shape_source"] == base.training["shape_source"]
        assert neighbour.training["label_source"] == base.training["label_source"]
        assert set(neighbour.training["units"]["dropped"]) == set(base.training["units"]["dropped"])


def test_an_unlabelled_fit_of_a_labelled_stream_ignores_the_labels(digits, npy):
    same_model(fit(digits[0], conditional=False), fit(open_images(npy, block=10**6), conditional=False), exact=True)


def truncated(path: Path) -> Path:
    path.write_bytes(path.read_bytes()[:-10])
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "x.txt", "read in blocks"),
        (lambda p: np.save(p / "c.npy", np.zeros((4, 5, 8, 8), np.uint8)) or p / "c.npy", "channels"),
        (lambda p: np.save(p / "i.npy", np.zeros((4, 8, 8), np.int64)) or p / "i.npy", "dtype int64"),
        (lambda p: np.save(p / "o.npy", np.asfortranarray(np.zeros((4, 8, 8), np.uint8))) or p / "o.npy", "C-ordered"),
        (lambda p: ((p / "b.npy").write_bytes(b"nope"), p / "b.npy")[1], "well-formed"),
        (lambda p: np.save(p / "t.npy", np.zeros((9, 8, 8), np.uint8)) or truncated(p / "t.npy"), "shorter"),
    ],
)
def test_bad_input_is_one_line(tmp_path, make, message):
    (tmp_path / "x.txt").write_text("x")
    with pytest.raises(InputError, match=message) as info:
        open_images(make(tmp_path))
    assert "\n" not in str(info.value)


def test_labels_declared_but_missing_and_labels_given_twice_are_one_line(tmp_path, digits, npy):
    np.save(tmp_path / "u.npy", digits[0])
    with pytest.raises(InputError, match="u.labels.npy"):
        open_images(tmp_path / "u.npy", labelled=True)
    with pytest.raises(InputError, match="conditional"):
        fit(open_images(tmp_path / "u.npy"))
    with pytest.raises(InputError, match="pass no labels"):
        fit(open_images(npy), digits[1])


def test_under_torchrun_a_gan_recipe_and_images_in_memory_are_refused_in_one_line(digits):
    from dpgan.images.stream_run import refuse_distributed
    from dpgan.privacy.distributed import ProcessGroupContext
    from dpgan.recipes.images import get_image_recipe

    ranks = ProcessGroupContext(world_size=2, rank=0)
    with pytest.raises(InputError, match="gaussian model only"):
        refuse_distributed(get_image_recipe("dp-cgan"), None, ranks)
    with pytest.raises(InputError, match="in blocks"):
        refuse_distributed(get_image_recipe("gaussian"), digits[0], ranks)


def test_a_gan_recipe_reads_a_stream_whole(npy, digits):
    a = fit(open_images(npy), model="dp-cgan", max_steps=2)
    b = fit(*digits, model="dp-cgan", max_steps=2)
    assert repr(a.ledger.entries) == repr(b.ledger.entries)


def test_the_cli_fits_an_npy_and_a_png_folder_in_blocks(tmp_path, npy, pngs, capsys):
    from dpgan.cli import main

    classes = ",".join(str(d) for d in range(10))
    for source in (npy, pngs):
        out = tmp_path / f"model-{source.stem}"
        args = ["fit", str(source), "--kind", "image", "--out", str(out), "--epsilon", "3", "--classes", classes]
        assert main(args) == 0
        assert (out / "model.json").exists()
    assert "saved model" in capsys.readouterr().out


def test_two_ranks_that_each_read_half_the_blocks_release_the_one_process_model(tmp_path, npy):
    single = worker.fit(npy)
    mp.spawn(worker.run, args=(2, str(tmp_path / "init"), str(tmp_path), str(npy)), nprocs=2, join=True)
    for rank in range(2):
        got = np.load(tmp_path / f"rank-{rank}.npz")
        assert got["entries"].item() == repr(single.ledger.entries)  # the same ledger
        assert got["record"].item() == json.dumps(single.training, sort_keys=True, default=str)
        for name, want in worker.released(single).items():
            np.testing.assert_allclose(got[name], want, rtol=1e-6, atol=1e-8)


def test_dpgan_fit_under_two_ranks_writes_once_the_one_process_model(tmp_path, npy):
    from dpgan.cli import main
    from dpgan.serialization import read_model_dir

    assert main(worker.cli_arguments(npy, tmp_path / "single")) == 0
    mp.spawn(worker.run_cli, args=(2, str(tmp_path / "init"), str(tmp_path), str(npy)), nprocs=2, join=True)
    assert [(tmp_path / f"exit-{rank}").read_text() for rank in range(2)] == ["0", "0"]
    assert (tmp_path / "model-0" / "model.json").exists() and not (tmp_path / "model-1").exists()
    (single, single_meta), (ranks, ranks_meta) = (
        read_model_dir(tmp_path / "single"),
        read_model_dir(tmp_path / "model-0"),
    )
    assert single_meta["ledger"] == ranks_meta["ledger"] and single_meta["training"] == ranks_meta["training"]
    for name, want in single.items():
        np.testing.assert_allclose(ranks[name].numpy(), want.numpy(), rtol=1e-6, atol=1e-8)
