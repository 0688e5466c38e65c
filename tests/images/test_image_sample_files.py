"""Sampled images streamed to disk a chunk at a time (dpgan.images.sample_files, `dpgan sample`).

Properties: the streamed .npz and PNG folder hold exactly the images and labels of `sample` with the
same seed, over several chunks (labelled uint8, unlabelled float); the contact sheet is the one of
the whole sample; `dpgan sample` writes them and refuses a bad destination in one line.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from sklearn.datasets import load_digits

from dpgan.cli import main
from dpgan.images import sampling
from dpgan.images.io import read_images, write_contact_sheet
from dpgan.synthesizers import ImageSynthesizer

CLASSES = [str(d) for d in range(10)]


@pytest.fixture(scope="module")
def models() -> dict[str, ImageSynthesizer]:
    data = load_digits()
    images, labels = np.round(data.images * 255 / 16).astype(np.uint8), data.target.astype(str)
    labelled = ImageSynthesizer(epsilon=3.0, seed=0, recipe="gaussian", classes=CLASSES).fit(images, labels)
    unit = images[:300].astype(np.float32) / 255.0
    unlabelled = ImageSynthesizer(epsilon=2.0, seed=0, recipe="gaussian", conditional=False).fit(unit)
    return {"labelled": labelled, "unlabelled": unlabelled}


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(sampling, "CHUNK", 7)  # several chunks, the last one short


@pytest.mark.parametrize("which", ["labelled", "unlabelled"])
def test_a_streamed_npz_holds_the_sampled_images_and_labels(models, which, tmp_path, small_chunks):
    synth = models[which]
    images, labels = synth.sample(30, seed=4)
    sheet = synth.sample_to(tmp_path / "out.npz", 30, seed=4)
    with np.load(tmp_path / "out.npz") as saved:
        assert saved["images"].shape == (30, 1, 8, 8) and saved["images"].dtype == images.dtype  # as write_images
        np.testing.assert_array_equal(saved["images"][:, 0], images.reshape(30, 8, 8))
        if labels is None:
            assert "labels" not in saved.files
        else:
            assert saved["labels"].tolist() == [int(name) for name in labels]
    whole = tmp_path / "whole.png"
    write_contact_sheet(whole, images, labels, pixel_range=synth.pixel_range)
    assert np.array_equal(np.asarray(Image.open(sheet)), np.asarray(Image.open(whole)))


def test_a_streamed_png_folder_holds_the_sampled_images(models, tmp_path, small_chunks):
    synth = models["labelled"]
    images, labels = synth.sample(30, seed=4)
    synth.sample_to(tmp_path / "pngs", 30, seed=4)
    read = read_images(tmp_path / "pngs", shape=(1, 8, 8))
    order = np.argsort([f"{label}/{i:06d}" for i, label in enumerate(labels)])  # the folder's order
    np.testing.assert_array_equal(read.images[:, 0], images[order])
    assert [read.label_names[c] for c in read.labels] == list(labels[order])


def test_dpgan_sample_streams_an_image_model_and_refuses_a_bad_destination(models, tmp_path, capsys):
    models["labelled"].save(tmp_path / "model")
    assert main(["sample", str(tmp_path / "model"), "-n", "25", "--out", str(tmp_path / "s.npz")]) == 0
    with np.load(tmp_path / "s.npz") as saved:
        assert saved["images"].shape == (25, 1, 8, 8) and saved["labels"].shape == (25,)
    assert (tmp_path / "s.png").is_file()
    code = main(["sample", str(tmp_path / "model"), "-n", "5", "--out", str(tmp_path / "s.tif")])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1
