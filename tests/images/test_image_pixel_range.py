"""An image input that trains on nothing says so; samples keep the input's form (issue 49 item 3).

Float images in 0-255 (the commonest mistake) used to be dropped every one, the fit exiting 0 with
no word, and an empty .npz fitted silently. The warning is post-processing of the released count
(dpgan.privacy.unit_rule.none_usable_note, as for series). A declared `pixel_range` makes 0-255
floats usable, and samples come back float in that range; uint8 in, uint8 out.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpgan.cli import main
from dpgan.cli.images import parse_pixel_range
from dpgan.errors import DPGanWarning, InputError
from dpgan.images.checks import pixels_reason
from dpgan.images.io import read_images, write_images
from dpgan.images.reading import check_images
from dpgan.serialization import HASH_KEY, WEIGHTS, content_hash
from dpgan.synthesizers import ImageSynthesizer, load_model
from test_image_unit_rule import DIGITS, digits, fit

__all__ = ["digits"]  # the fixture, shared with the unit-rule tests

EMPTY = "indistinguishable from none"


def fit_warnings(images, labels=None, **settings) -> tuple[ImageSynthesizer, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        synth = fit(images, labels, **settings)
    return synth, [str(w.message) for w in caught if issubclass(w.category, DPGanWarning)]


def test_floats_in_0_255_without_the_option_warn_with_advice(digits) -> None:
    images, target = digits
    floats = images.astype(np.float32)  # 0-255 floats: every image breaks the [0, 1] rule
    synth, said = fit_warnings(floats, conditional=False)
    assert (
        len(said) == 1 and EMPTY in said[0] and "pixel_range=(0, 255)" in said[0] and "--pixel-range 0:255" in said[0]
    )
    assert "400" not in said[0]  # no exact count: only the noisy one
    assert synth.sample(2, seed=0)[0].dtype == np.float32  # float in, float out, even when nothing was kept
    # a conditional fit is refused by its DP label release; the refusal gives the same advice
    with pytest.raises(InputError, match=r"pixel_range=\(0, 255\)"):
        fit(floats, target)


def test_with_the_option_0_255_floats_fit_and_samples_come_back_in_0_255(digits, tmp_path: Path) -> None:
    images, target = digits
    floats = images.astype(np.float64)
    synth, said = fit_warnings(floats, target, classes=DIGITS, pixel_range=(0, 255))
    units = synth.training["units"]  # noisy counts: the 400 images kept, the pixel reason names the range
    assert said == [] and pixels_reason((0.0, 255.0)) in units["dropped"] and units["kept"] > 300
    out, labels = synth.sample(50, seed=0)
    assert out.dtype == np.float32 and out.min() >= 0.0 and out.max() <= 255.0 and out.max() > 1.0
    synth.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "model.json").read_text())["pixel_range"] == [0.0, 255.0]
    back = load_model(tmp_path / "m")
    np.testing.assert_array_equal(back.sample(5, seed=1)[0], synth.sample(5, seed=1)[0])
    # the same images as uint8 with the option: a setting that would do nothing is refused
    with pytest.raises(InputError, match="pixel_range is for float images"):
        fit(images, target, classes=DIGITS, pixel_range=(0, 255))


def test_float_in_float_out_uint8_in_uint8_out_and_old_model_files(digits, tmp_path: Path) -> None:
    images, target = digits
    unit = fit(images.astype(np.float32) / 255.0, target, classes=DIGITS)
    eight = fit(images, target, classes=DIGITS)
    assert unit.sample(3, seed=0)[0].dtype == np.float32 and unit.sample(3, seed=0)[0].max() <= 1.0
    assert eight.sample(3, seed=0)[0].dtype == np.uint8
    for synth, name in ((unit, "float"), (eight, "uint8")):
        synth.save(tmp_path / name)
        meta = json.loads((tmp_path / name / "model.json").read_text())
        assert meta["input_dtype"] == name and meta["pixel_range"] is None
    # a model file written before the options: no input_dtype, no pixel_range → uint8, as it sampled then
    meta = json.loads((tmp_path / "float" / "model.json").read_text())
    del meta["input_dtype"], meta["pixel_range"]
    meta[HASH_KEY] = content_hash(meta, (tmp_path / "float" / WEIGHTS).read_bytes())
    (tmp_path / "float" / "model.json").write_text(json.dumps(meta))
    old = load_model(tmp_path / "float")
    assert old.pixel_range is None and old.sample(3, seed=0)[0].dtype == np.uint8


def test_an_empty_npz_fits_and_warns(tmp_path: Path) -> None:
    np.savez(tmp_path / "empty.npz", images=np.zeros((0, 1, 8, 8), np.uint8))
    data = read_images(tmp_path / "empty.npz")
    synth, said = fit_warnings(data, conditional=False)
    assert len(said) == 1 and EMPTY in said[0] and "pixel_range" not in said[0]  # uint8: no float advice
    assert synth.sample(2, seed=0)[0].dtype == np.uint8


def test_pixel_range_is_checked_and_applies_to_float_pixels_only() -> None:
    for bad in ((255, 0), (0,), (0, float("inf")), ("0", "255"), (True, 2)):
        with pytest.raises(InputError, match="pixel_range is two finite numbers"):
            ImageSynthesizer(epsilon=1.0, pixel_range=bad)
    assert parse_pixel_range("0:255") == (0.0, 255.0) and parse_pixel_range("-1:1") == (-1.0, 1.0)
    for bad in ("255", "1:0", "a:b", "0:255:1"):
        with pytest.raises(InputError, match="LO:HI"):
            parse_pixel_range(bad)
    floats = np.full((3, 1, 4, 4), 200.0)
    floats[1, 0, 0, 0] = -0.5  # this image alone breaks the declared range
    read = check_images(floats, pixel_range=(0, 255))
    assert len(read) == 2 and read.dropped == {"pixels outside [0, 255]": 1}
    assert check_images(np.zeros((2, 1, 4, 4), np.uint8), pixel_range=(0, 255)).pixel_range is None


def test_cli_pixel_range_and_the_empty_warning(digits, tmp_path: Path, capsys) -> None:
    images, _ = digits
    write_images(tmp_path / "f.npz", images.astype(np.float32) / 255.0)  # float32 in the file, [0, 1]
    floats = np.load(tmp_path / "f.npz")["images"] * 255.0
    np.savez(tmp_path / "f255.npz", images=floats)
    common = ["--kind", "image", "--epsilon", "10", "--accountant", "rdp", "--seed", "0", "--unconditional"]
    common += ["--recipe", "dcgan", "--max-steps", "2", "--batch-size", "32", "--quiet"]
    assert main(["fit", str(tmp_path / "f255.npz"), *common, "--out", str(tmp_path / "bad")]) == 0
    err = capsys.readouterr().err
    assert "dpgan: warning:" in err and EMPTY in err and "--pixel-range 0:255" in err
    assert (
        main(["fit", str(tmp_path / "f255.npz"), *common, "--pixel-range", "0:255", "--out", str(tmp_path / "m")]) == 0
    )
    assert EMPTY not in capsys.readouterr().err
    assert main(["sample", str(tmp_path / "m"), "-n", "20", "--seed", "0", "--out", str(tmp_path / "s.npz")]) == 0
    sampled = np.load(tmp_path / "s.npz")["images"]
    assert sampled.dtype == np.float32 and sampled.max() <= 255.0 and sampled.max() > 1.0
    assert (tmp_path / "s.png").exists()  # the contact sheet scales from the model's range
    assert main(["fit", str(tmp_path / "f255.npz"), *common, "--pixel-range", "1:0", "--out", str(tmp_path / "x")]) == 2
    assert "LO:HI" in capsys.readouterr().err
