"""The bundled and fetched image sets: shapes, dtypes, class counts, fixed and disjoint splits.

The splits are pinned by sha256 of their bytes, so a changed split rule or a rebuilt data file fails
here. Fashion-MNIST is not shipped: its tests skip when bench/data_prep/fashion_mnist.sh has not
been run (and the Debian package is not installed).
"""

from __future__ import annotations

import fnmatch
import hashlib
import socket
from pathlib import Path

import numpy as np
import pytest

from dpgan import datasets
from dpgan.errors import InputError
from dpgan.images import check_images

# sha256(images.tobytes() + labels.tobytes()) of each split, as first computed
DIGITS_SHA256 = {
    "train": "d9ee66010e15caef3c9b4e782f122d360243d5b9cf46b81c7cfc68348096f9ad",
    "test": "6caf6f23128ea7a61d1a2cd1ad71c1c58922a9ded6077dd1bdeb431c25fef976",
}
MNIST_5K_SHA256 = {
    "train": "37b713c068daf0b22c8b63f3fbad9b05983912c02e63de1bc12240a7f2ff653b",
    "test": "58c226dbd78ed6bbc8a82a8462b8a88335f1bd31f4f597502362536026ce2b04",
}
DIGITS_TEST_COUNTS = [39, 38, 41, 38, 38, 35, 31, 31, 34, 35]


class Split:
    """(images, labels) as a loader returns them, with names for the checks below."""

    def __init__(self, loaded: tuple[np.ndarray, np.ndarray]) -> None:
        assert isinstance(loaded, tuple) and len(loaded) == 2
        self.images, self.labels = loaded


def digest(s: Split) -> str:
    return hashlib.sha256(s.images.tobytes() + s.labels.tobytes()).hexdigest()


def rows(s: Split) -> set[bytes]:
    return {image.tobytes() for image in s.images}


def check_kind(s: Split, n: int, side: int) -> None:
    assert s.images.shape == (n, 1, side, side) and s.images.dtype == np.uint8
    assert s.images.flags.c_contiguous
    assert s.labels.shape == (n,) and s.labels.dtype == np.int64
    assert s.labels.min() == 0 and s.labels.max() == 9
    # what a loader returns is a valid training set for the image facade
    assert check_images(s.images, s.labels).label_names == [str(d) for d in range(10)]


def test_digits_shapes_split_and_pixel_map() -> None:
    from sklearn.datasets import load_digits

    train, test, every = (Split(datasets.load_digits_images(s)) for s in ("train", "test", "all"))
    check_kind(train, 1437, 8)
    check_kind(test, 360, 8)
    check_kind(every, 1797, 8)
    assert np.bincount(test.labels).tolist() == DIGITS_TEST_COUNTS
    assert {"train": digest(train), "test": digest(test)} == DIGITS_SHA256
    assert not rows(train) & rows(test) and rows(train) | rows(test) == rows(every)
    # the test split is the rule in the docstring, recomputed here
    order = sorted(range(1797), key=lambda i: hashlib.sha256(f"dpgan-digits-{i}".encode()).digest())
    assert np.array_equal(test.images, every.images[sorted(order[:360])])
    # 0..16 -> round(v * 255 / 16), e.g. 8 -> 128 and 16 -> 255
    source = load_digits().images
    assert np.array_equal(every.images[:, 0], np.rint(source * 255 / 16).astype(np.uint8))
    assert set(np.unique(every.images)) <= {round(v * 255 / 16) for v in range(17)}


def test_mnist_5k_shapes_stratified_split() -> None:
    train, test, every = (Split(datasets.load_mnist_5k(s)) for s in ("train", "test", "all"))
    check_kind(train, 4000, 28)
    check_kind(test, 1000, 28)
    check_kind(every, 5000, 28)
    assert np.bincount(train.labels).tolist() == [400] * 10
    assert np.bincount(test.labels).tolist() == [100] * 10
    assert {"train": digest(train), "test": digest(test)} == MNIST_5K_SHA256
    assert not rows(train) & rows(test) and rows(train) | rows(test) == rows(every)
    # MNIST's pixel mean is 0.1307 of full scale; a mis-parsed file (label in the pixels) would not be
    assert abs(every.images.mean() / 255 - 0.1307) < 0.01
    assert every.images.max() == 255 and every.images.min() == 0


def test_bad_split_is_refused() -> None:
    for loader in (datasets.load_digits_images, datasets.load_mnist_5k, datasets.load_fashion_mnist):
        with pytest.raises(InputError, match="split must be"):
            loader("validation")


def test_shipped_image_loaders_work_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dataset loader tried to use the network")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    assert len(datasets.load_digits_images("all")[0]) == 1797
    assert len(datasets.load_mnist_5k("all")[0]) == 5000


def test_mnist_5k_file_is_declared_package_data() -> None:
    tomllib = pytest.importorskip("tomllib")
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["dpgan.datasets"]
    assert any(fnmatch.fnmatch("data/mnist-5k.csv.gz", p) for p in patterns)
    assert any(dep.startswith("pillow") for dep in config["project"]["dependencies"])


# ---- Fashion-MNIST (not shipped) ------------------------------------------------------------------


def fashion_present() -> bool:
    return any((d / "t10k-images-idx3-ubyte.gz").is_file() for d in datasets.fashion_mnist_dirs())


@pytest.mark.skipif(not fashion_present(), reason="Fashion-MNIST files absent (bench/data_prep/fashion_mnist.sh)")
def test_fashion_mnist_shapes_counts_and_pixel_statistics() -> None:
    test = Split(datasets.load_fashion_mnist("test"))
    check_kind(test, 10_000, 28)
    assert np.bincount(test.labels).tolist() == [1000] * 10
    train = Split(datasets.load_fashion_mnist("train"))
    check_kind(train, 60_000, 28)
    assert np.bincount(train.labels).tolist() == [6000] * 10
    # the published training-set statistics (mean 0.2860, sd 0.3530 of full scale)
    unit = train.images / np.float32(255)
    assert abs(unit.mean() - 0.2860) < 5e-4 and abs(unit.std() - 0.3530) < 5e-4
    assert len(datasets.FASHION_MNIST_CLASSES) == 10


def test_fashion_mnist_absent_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(datasets, "fashion_mnist_dirs", lambda: [tmp_path / "nowhere"])
    with pytest.raises(InputError, match="fashion_mnist.sh") as exc:
        datasets.load_fashion_mnist("test")
    assert "\n" not in str(exc.value)


def test_fashion_mnist_dirs_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DPGAN_DATA", str(tmp_path))
    dirs = datasets.fashion_mnist_dirs()
    assert dirs[0] == Path("/usr/share/datasets/fashion-mnist")
    assert dirs[1] == tmp_path / "fashion-mnist"
    assert dirs[2].parts[-3:] == ("bench", "data", "fashion-mnist")


def test_idx_reader_refuses_a_wrong_magic_and_truncation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    folder = tmp_path / "fashion-mnist"
    folder.mkdir()
    header = np.array([0x803, 3, 2, 2], dtype=">u4").tobytes()
    (folder / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(header + bytes(11)))  # 11 of 12 pixels
    (folder / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(np.array([0x801, 3], ">u4").tobytes() + bytes(3)))
    monkeypatch.setattr(datasets, "fashion_mnist_dirs", lambda: [folder])
    with pytest.raises(InputError, match="truncated"):
        datasets.load_fashion_mnist("test")
    (folder / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(np.array([0x801, 3], ">u4").tobytes()))
    with pytest.raises(InputError, match="magic"):
        datasets.load_fashion_mnist("test")
