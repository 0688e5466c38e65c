"""No image decides a public fact (dpgan.privacy.unit_rule, issue 30's image items).

Each test fits (or reads) two inputs that differ in ONE image and checks the same refusal-or-not,
the same public metadata (label names and order, image shape, what model.json records) and, where
the added image is dropped, the same release: with a fixed seed the two fits draw the same noise,
so their ledgers and generators are identical and the tally differs by exactly 1 in the dropped
image's cell. The fits are tiny (8×8 digits, two critic steps): they check the privacy plumbing,
not image quality.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from sklearn.datasets import load_digits

from dpgan.errors import InputError
from dpgan.images import io as image_io
from dpgan.images.checks import LABEL_REASON, OTHER_SHAPE_REASON, PIXELS_REASON, sort_label_names
from dpgan.images.io import read_images, write_images
from dpgan.images.labels import CLASS_REASON, LABEL_SET_EVENT, LABELS_EVENT, SHAPE_EVENT
from dpgan.images.reading import check_images
from dpgan.synthesizers import ImageSynthesizer, load_model
from dpgan.training.critic_step import CRITIC_EVENT

# RDP: its calibration is ten times faster than PLD's, and these tests compare two fits, not ε
TINY = {"epochs": 1.0, "batch_size": 32, "max_sample_rate": 0.1, "width": 4, "max_steps": 2, "label_guide": False}
DIGITS = [str(d) for d in range(10)]


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    data = load_digits()
    images = np.round(data.images[:400] * 255 / 16).astype(np.uint8)
    return images[:, None], data.target[:400]


def fit(images, labels=None, *, epsilon: float = 10.0, **settings) -> ImageSynthesizer:
    return ImageSynthesizer(recipe="dcgan", epsilon=epsilon, seed=0, accountant="rdp", **TINY, **settings).fit(
        images, labels
    )


def assert_same_release(a: ImageSynthesizer, b: ImageSynthesizer) -> None:
    """Identical public output: ledger, shape, label names, generator weights, N̂."""
    assert a.ledger.to_dict() == b.ledger.to_dict()
    assert a.image_shape == b.image_shape and a.label_names == b.label_names
    assert a.training["estimated_images"] == b.training["estimated_images"]
    sa, sb = a.generator.state_dict(), b.generator.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def assert_one_more_dropped(a: ImageSynthesizer, b: ImageSynthesizer, reason: str) -> None:
    """b's tally is a's with one more image in `reason`'s cell (the same noise, seeded)."""
    da, db = a.released_units.dropped, b.released_units.dropped
    assert da.keys() == db.keys() and reason in da
    for key in da:
        assert db[key] - da[key] == pytest.approx(float(key == reason), abs=1e-9)
    assert a.released_units.kept == b.released_units.kept


def refusal(call) -> str | None:
    try:
        call()
    except InputError as exc:
        return str(exc)
    return None


# ---- 1. label order ------------------------------------------------------------------------------


def test_label_order_is_read_off_each_label_alone() -> None:
    assert sort_label_names(["10", "2", "x", "-1", "b", "-0"]) == ["-1", "-0", "2", "10", "b", "x"]
    plain = check_images(np.zeros((4, 1, 2, 2), np.uint8), np.array(["2", "10", "2", "10"], dtype=object))
    with_x = check_images(np.zeros((5, 1, 2, 2), np.uint8), np.array(["2", "10", "2", "10", "x"], dtype=object))
    assert plain.label_names == ["2", "10"] and with_x.label_names == ["2", "10", "x"]  # was ['10', '2', 'x']
    assert with_x.labels[:4].tolist() == plain.labels.tolist()


def test_one_image_labelled_x_changes_neither_the_released_label_order_nor_the_fit(digits) -> None:
    """DP label set: 'x' (one image) is not released, and '2' stays before '10'."""
    images, target = digits
    labels = np.where(target < 5, "2", "10").astype(object)
    a = fit(images, labels)
    b = fit(np.concatenate([images, images[:1]]), np.append(labels, "x"))
    assert a.label_names == b.label_names == ("2", "10")
    assert a.training["label_source"] == "dp" and [e.name for e in a.ledger.entries] == [LABEL_SET_EVENT, CRITIC_EVENT]
    assert_same_release(a, b)


def test_png_label_subfolders_are_ordered_per_label(tmp_path: Path) -> None:
    x = np.zeros((6, 1, 4, 4), np.uint8)
    write_images(tmp_path / "a", x[:4], ["2", "10", "2", "10"])
    write_images(tmp_path / "b", x[:6], ["2", "10", "2", "10", "x", "x"])
    assert read_images(tmp_path / "a").label_names == ["2", "10"]
    assert read_images(tmp_path / "b").label_names == ["2", "10", "x"]


# ---- 2. refusals that depended on one image ----------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1.5, -0.25])
def test_a_float_image_out_of_range_is_dropped_and_counted(digits, bad) -> None:
    images, target = digits
    unit = images.astype(np.float32) / 255.0
    spoiled = unit[:1].copy()
    spoiled[0, 0, 3, 3] = bad
    before = unit.copy()
    a = fit(unit, target, classes=DIGITS)
    np.testing.assert_array_equal(unit, before)  # the fit scales a copy, never the caller's float32 array
    b = fit(np.concatenate([unit, spoiled]), np.append(target, 4), classes=DIGITS)
    assert_same_release(a, b)
    assert_one_more_dropped(a, b, PIXELS_REASON)


def test_few_images_are_not_refused(digits) -> None:
    """1 or 0 images (or all dropped): the fit runs on what is left; its noisy count says so."""
    images, target = digits
    outcomes = [refusal(lambda n=n: fit(images[:n], conditional=False)) for n in (2, 1, 0)]
    assert outcomes == [None, None, None]
    none = fit(np.full((3, 1, 8, 8), np.nan, np.float32), conditional=False)
    assert set(none.training["units"]["dropped"]) == {PIXELS_REASON} and none.training["shape_source"] == "public"
    a, b = fit(images[:1], target[:1], classes=DIGITS), fit(images[:0], target[:0], classes=DIGITS)
    assert a.ledger.to_dict() == b.ledger.to_dict() and a.label_names == b.label_names == tuple(DIGITS)


def test_fewer_than_two_labels_public_classes_fit_dp_labels_refuse_alike(digits) -> None:
    images, _ = digits
    one = np.full(len(images), "3", dtype=object)
    two = np.append(one, "4")
    more = np.concatenate([images, images[:1]])
    assert refusal(lambda: fit(images, one, classes=DIGITS)) is None  # was refused: one distinct label
    assert refusal(lambda: fit(more, two, classes=DIGITS)) is None
    first, second = refusal(lambda: fit(images, one)), refusal(lambda: fit(more, two))
    assert first is not None and second is not None  # the DP release keeps < 2 labels in both
    for message in (first, second):
        assert "DP release" in message and "classes=" in message and "400" not in message


def test_an_unusable_label_drops_its_image(digits) -> None:
    images, target = digits
    labels = target.astype(object)
    more = np.concatenate([images, images[:1]])
    a = fit(images, labels, classes=DIGITS)
    for bad in (None, 2.5, True):
        b = fit(more, np.append(labels, np.array([bad], dtype=object)), classes=DIGITS)
        assert_same_release(a, b)
        assert_one_more_dropped(a, b, LABEL_REASON)
    with pytest.raises(InputError, match="dtype float64"):  # the array's dtype is public structure
        fit(images, target.astype(np.float64), classes=DIGITS)


# ---- PNG folders ------------------------------------------------------------------------------------


def corrupt(folder: Path) -> None:
    (folder / "7" / "zz.png").write_bytes(b"\x89PNG not really")


def sixteen_bit(folder: Path) -> None:
    Image.fromarray(np.full((8, 8), 4242, dtype=np.uint16)).save(folder / "7" / "zz.png")


def too_large(folder: Path) -> None:
    Image.new("L", (600, 8)).save(folder / "7" / "zz.png")


def colour(folder: Path) -> None:
    Image.new("RGB", (8, 8)).save(folder / "7" / "zz.png")  # (3, 8, 8): sorts after (1, 8, 8)


def wider(folder: Path) -> None:
    Image.new("L", (10, 8)).save(folder / "7" / "zz.png")  # (1, 8, 10)


def stray(folder: Path) -> None:
    (folder / "7" / "notes.txt").write_text("not an image")


def top_level(folder: Path) -> None:
    Image.new("L", (8, 8)).save(folder / "zz.png")


SPOILERS = {
    "corrupt": (corrupt, image_io.UNREADABLE_REASON),
    "16-bit": (sixteen_bit, image_io.SIXTEEN_BIT_REASON),
    "too large": (too_large, image_io.TOO_LARGE_REASON),
    "colour among grayscale": (colour, OTHER_SHAPE_REASON),
    "another size": (wider, OTHER_SHAPE_REASON),
    "not a PNG": (stray, image_io.NOT_PNG_REASON),
    "outside the label folders": (top_level, image_io.OUTSIDE_REASON),
}


@pytest.fixture(scope="module")
def folders(digits, tmp_path_factory) -> dict[str, Path]:
    """The digits as a labelled PNG folder, and one copy per spoiler with one more entry."""
    images, target = digits
    root = tmp_path_factory.mktemp("folders")
    write_images(root / "clean", images, target)
    out = {"clean": root / "clean"}
    for name, (spoil, _) in SPOILERS.items():
        copy = root / name.replace(" ", "-")
        write_images(copy, images, target)
        spoil(copy)
        out[name] = copy
    return out


@pytest.mark.parametrize("declared", [True, False], ids=["declared shape", "DP shape"])
@pytest.mark.parametrize("case", list(SPOILERS))
def test_one_spoiled_png_is_dropped_and_the_fit_unchanged(folders, case, declared) -> None:
    """Same shape, labels, ledger and generator with and without the spoiled entry; its reason's
    cell grows by 1. Without a declared shape the shape is released with DP (a key of another
    shape only adds a cell after the chosen one: the seeded noise of the others is unchanged)."""
    shape = (1, 8, 8) if declared else None
    settings = {"classes": DIGITS, "image_shape": shape}
    a = fit(read_images(folders["clean"], shape=shape, labelled=True), **settings)
    b = fit(read_images(folders[case], shape=shape, labelled=True), **settings)
    assert_same_release(a, b)
    assert_one_more_dropped(a, b, SPOILERS[case][1])
    assert a.image_shape == (1, 8, 8) and a.training["shape_source"] == ("declared" if declared else "dp")
    names = [e.name for e in a.ledger.entries]
    assert names == ([] if declared else [SHAPE_EVENT]) + [LABELS_EVENT, CRITIC_EVENT]


def test_dp_shape_release_is_charged_and_refuses_only_on_its_output(folders, tmp_path) -> None:
    synth = fit(read_images(folders["clean"], labelled=True), classes=DIGITS)
    shape_entry = synth.ledger.entries[0]
    assert shape_entry.name == SHAPE_EVENT and shape_entry.extra_delta > 0
    assert 0 < synth.privacy_report()["epsilon"] <= 10.0 * (1 + 1e-9)
    assert synth.privacy_report()["shape_source"] == "dp"
    few = tmp_path / "few"
    write_images(few, np.zeros((3, 1, 8, 8), np.uint8), ["a", "b", "a"])
    message = refusal(lambda: fit(read_images(few, labelled=True), classes=["a", "b"]))
    assert message is not None and "DP release" in message and "image_shape" in message
    declared = fit(read_images(few, labelled=True), classes=["a", "b"], image_shape=(1, 8, 8))
    assert declared.image_shape == (1, 8, 8)


def test_a_declared_shape_must_match_an_array(digits) -> None:
    images, target = digits
    with pytest.raises(InputError, match="declared image_shape"):
        fit(images, target, classes=DIGITS, image_shape=(1, 8, 10))
    with pytest.raises(InputError, match="C, H, W"):
        ImageSynthesizer(recipe="dcgan", epsilon=1.0, image_shape=(8, 8))


# ---- 3. labels outside the public class list ------------------------------------------------------------


def test_labels_outside_the_classes_are_counted_in_the_record(digits, tmp_path) -> None:
    images, target = digits
    a = fit(images, target.astype(str), classes=DIGITS)
    b = fit(np.concatenate([images, images[:1]]), np.append(target.astype(str), "x"), classes=DIGITS)
    assert_same_release(a, b)
    assert_one_more_dropped(a, b, CLASS_REASON)
    units = json.loads((b.save(tmp_path / "m") / "model.json").read_text())["training"]["units"]
    assert units["unit"] == "image" and set(units["dropped"]) == {LABEL_REASON, CLASS_REASON}
    assert units["kept"] > 0 and units["noise_std"] == b.released_units.noise_multiplier
    report = load_model(tmp_path / "m").privacy_report()
    assert report["units"] == units and report["training"]["units"] == units


# ---- 4. messages never carry a private count -------------------------------------------------------------


def test_no_message_names_the_number_of_images() -> None:
    """37 images, 41 labels: none of the refusals that remain names either count."""
    calls = [
        lambda: check_images(np.zeros((37, 8, 8, 3), np.uint8)),  # channels last
        lambda: check_images(np.zeros((37, 2, 8, 8), np.uint8)),
        lambda: check_images(np.zeros((37, 8, 8), np.int64)),
        lambda: check_images(np.zeros((37, 8, 8), np.uint8), ["a"] * 41),
        lambda: check_images(np.zeros((37, 8, 8), np.uint8), np.zeros(37)),
        lambda: ImageSynthesizer(epsilon=1.0, conditional=False, recipe="dcgan").fit(np.zeros((37, 7, 7), np.uint8)),
    ]
    for call in calls:
        message = refusal(call)
        assert message is not None and "37" not in message and "41" not in message, message


def test_no_cap_on_the_number_of_values() -> None:
    """A cap on N·C·H·W would be a refusal on N: only memory limits the count (a view, no copy)."""
    huge = np.broadcast_to(np.zeros((1, 1, 1, 1), dtype=np.uint8), (2**17, 1, 128, 129))
    assert len(check_images(huge)) == 2**17


# ---- 5. the one DP release ------------------------------------------------------------------------------


def test_one_release_covers_the_count_the_labels_and_the_drops(digits) -> None:
    images, target = digits
    unit = images.astype(np.float32) / 255.0
    unit[0, 0, 0, 0] = np.nan
    synth = fit(unit, target, classes=DIGITS)
    entries = [e.name for e in synth.ledger.entries]
    assert entries == [LABELS_EVENT, CRITIC_EVENT] and synth.ledger.entries[0].count == 1
    units = synth.training["units"]
    assert set(units["dropped"]) == {PIXELS_REASON, LABEL_REASON, CLASS_REASON}
    assert synth.training["estimated_images"] == pytest.approx(max(synth.released_units.kept, 1.0))
    assert abs(synth.released_units.kept - 399) < 6 * synth.released_units.noise_multiplier


# ---- the CLI --------------------------------------------------------------------------------------------


def test_cli_image_shape_option_and_the_noisy_summary(folders, tmp_path, capsys) -> None:
    from dpgan.cli import main
    from dpgan.cli.images import parse_image_shape

    assert parse_image_shape("1x8x8") == (1, 8, 8) and parse_image_shape("3×32×32") == (3, 32, 32)
    assert parse_image_shape(None) is None
    for bad in ("8x8", "2x8x8", "1x8x600", "axbxc", "1x8x8x1"):
        with pytest.raises(InputError, match="CxHxW|C, H, W|channels|height"):
            parse_image_shape(bad)
    common = ["--kind", "image", "--epsilon", "10", "--accountant", "rdp", "--seed", "0", "--max-steps", "2"]
    common += ["--recipe", "dp-cgan", "--classes", ",".join(DIGITS)]
    declared = ["--image-shape", "1x8x8", "--out", str(tmp_path / "m")]
    assert main(["fit", str(folders["another size"]), *common, *declared]) == 0
    assert "images (noisy counts): about" in capsys.readouterr().out
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["image_shape"] == [1, 8, 8] and meta["training"]["shape_source"] == "declared"
    assert OTHER_SHAPE_REASON in meta["training"]["units"]["dropped"]
    # without a declared shape: the folder's shape is released with DP
    assert main(["fit", str(folders["corrupt"]), *common, "--out", str(tmp_path / "m2")]) == 0
    meta = json.loads((tmp_path / "m2" / "model.json").read_text())
    assert meta["training"]["shape_source"] == "dp" and meta["ledger"][0]["name"] == SHAPE_EVENT
    assert image_io.UNREADABLE_REASON in meta["training"]["units"]["dropped"]
