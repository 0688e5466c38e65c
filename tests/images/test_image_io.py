"""Image data layer: checks, .npz / PNG-folder round trips, atomic writes, contact sheets.

Every refused input plants a distinctive label ("SECRET-label-42") or pixel value and asserts the
message does not carry it: error text ends up in logs, so it may name shapes and dtypes only. What
one image holds is never a reason to refuse (dpgan.privacy.unit_rule): such images are dropped and
counted (tests/images/test_image_unit_rule.py checks the neighbouring inputs end to end).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dpgan.errors import InputError
from dpgan.images import (
    ImageSet,
    check_images,
    read_images,
    to_uint8,
    to_unit_range,
    write_contact_sheet,
    write_images,
)
from dpgan.images import io as image_io
from dpgan.images.checks import LABEL_REASON, OTHER_SHAPE_REASON, PIXELS_REASON, ImageGroups

SECRET = "SECRET-label-42"
SECRET_PIXEL = 0.7654321  # planted in float inputs; "0.765" must never show in a message


def gray(n: int = 6, h: int = 5, w: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(n, 1, h, w), dtype=np.uint8)


def colour(n: int = 6, h: int = 4, w: int = 5, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(n, 3, h, w), dtype=np.uint8)


def assert_clean(exc: pytest.ExceptionInfo[InputError]) -> None:
    """The message may name the path the caller gave; no planted value.

    pytest numbers its temporary root (``pytest-142``): that number is blanked before "42" is looked
    for; the rest of any path stays checked (a label used as a folder name would still be caught).
    """
    message = str(exc.value)
    assert "\n" not in message
    message = re.sub(r"pytest-\d+", "pytest-N", message)
    assert "SECRET" not in message and "42" not in message and "0.765" not in message


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# ---- check_images ---------------------------------------------------------------------------------


def test_nhw_gains_a_channel_axis_and_keeps_dtype() -> None:
    x = gray()[:, 0]
    s = check_images(x)
    assert s.images.shape == (6, 1, 5, 4) and s.images.dtype == np.uint8
    assert np.array_equal(s.images[:, 0], x) and s.labels is None and s.label_names is None
    assert len(s) == 6


def test_labels_become_codes_with_names_sorted_numbers_numerically() -> None:
    s = check_images(gray(5), np.array([10, 9, 2, 10, 9]))
    assert s.label_names == ["2", "9", "10"] and s.labels.tolist() == [2, 1, 0, 2, 1]
    assert s.labels.dtype == np.int64
    # decimal strings (e.g. folder names) sort the same way, so ints and their names agree
    assert check_images(gray(5), ["10", "9", "2", "10", "9"]).labels.tolist() == [2, 1, 0, 2, 1]
    t = check_images(gray(4), np.array(["b", "a", "c", "a"], dtype=object))
    assert t.label_names == ["a", "b", "c"] and t.labels.tolist() == [1, 0, 2, 0]


def test_to_unit_range_and_to_uint8() -> None:
    x = np.array([0, 1, 128, 255], dtype=np.uint8).reshape(2, 1, 1, 2)
    unit = to_unit_range(x)
    assert unit.dtype == np.float32 and unit.min() == 0.0 and unit.max() == 1.0
    assert np.allclose(unit.ravel(), [0, 1 / 255, 128 / 255, 1])
    f = np.array([0.0, 0.5, 0.999, 1.0]).reshape(2, 1, 1, 2)
    assert to_unit_range(f).dtype == np.float32 and np.allclose(to_unit_range(f), f)
    assert to_uint8(f).ravel().tolist() == [0, 128, 255, 255]
    assert np.array_equal(to_uint8(to_unit_range(x)), x)  # uint8 -> unit -> uint8 is exact


BAD_IMAGES = {
    "2-D": np.zeros((4, 4), dtype=np.uint8),
    "5-D": np.zeros((2, 1, 1, 4, 4), dtype=np.uint8),
    "2 channels": np.zeros((2, 2, 4, 4), dtype=np.uint8),
    "channels last": np.zeros((2, 4, 4, 3), dtype=np.uint8),
    "bool": np.zeros((2, 4, 4), dtype=bool),
    "int64 in 0..255": np.full((2, 4, 4), 42, dtype=np.int64),
    "object": np.array([np.zeros((4, 4)), np.zeros((5, 5))], dtype=object),
    "side over 512": np.zeros((2, 1, 4, 513), dtype=np.uint8),
}


@pytest.mark.parametrize("case", list(BAD_IMAGES))
def test_bad_images_are_refused_in_one_clean_line(case: str) -> None:
    with pytest.raises(InputError) as exc:
        check_images(BAD_IMAGES[case])
    assert_clean(exc)
    assert "0.765" not in str(exc.value) and "1.76" not in str(exc.value)


def test_channels_last_message_says_how_to_fix_without_the_image_count() -> None:
    with pytest.raises(InputError, match="transpose") as exc:
        check_images(np.zeros((37, 4, 4, 3), dtype=np.uint8))
    assert "(N, 4, 4, 3)" in str(exc.value) and "37" not in str(exc.value)


IMAGES_DROPPED = {  # a float image with one bad pixel is dropped, the others kept
    "NaN": np.nan,
    "inf": np.inf,
    "above 1": 1.7654321,
    "below 0": -SECRET_PIXEL,
}


@pytest.mark.parametrize("case", list(IMAGES_DROPPED))
def test_a_float_image_out_of_range_is_dropped_and_counted_not_refused(case: str) -> None:
    x = np.full((5, 1, 4, 4), SECRET_PIXEL)
    x[2, 0, 1, 1] = IMAGES_DROPPED[case]
    s = check_images(x, ["a", "b", "c", "d", "e"])
    assert len(s) == 4 and s.label_names == ["a", "b", "d", "e"] and s.labels.tolist() == [0, 1, 2, 3]
    assert s.reasons == (PIXELS_REASON, LABEL_REASON)
    assert s.dropped == {PIXELS_REASON: 1, LABEL_REASON: 0}
    assert check_images(x[2:3]).dropped == {PIXELS_REASON: 1} and len(check_images(x[2:3])) == 0


def test_few_or_no_images_pass_the_checks() -> None:
    """A refusal on the number of images would be decided by one image: none is made."""
    for n in (0, 1):
        s = check_images(gray(n), ["a"] * n)
        assert len(s) == n and s.shape == (1, 5, 4) and s.label_names == (["a"] if n else [])
    assert check_images(gray(3), np.array([SECRET] * 3)).label_names == [SECRET]  # one label: the fit decides


BAD_LABELS = {  # public structure: the labels array's dimensions, dtype, one label per image
    "2-D": np.array([[SECRET, "a"], ["b", "c"], ["d", "e"]]),
    "too short": np.array([SECRET, "a"]),
    "too long": np.array([SECRET, "a", "b", "c"]),
    "float": np.array([0.5, 42.0, 1.0]),
    "bool": np.array([True, False, True]),
}


@pytest.mark.parametrize("case", list(BAD_LABELS))
def test_bad_labels_are_refused_without_naming_a_label(case: str) -> None:
    with pytest.raises(InputError) as exc:
        check_images(gray(3), BAD_LABELS[case])
    assert_clean(exc)
    assert "3" not in str(exc.value).replace("3 dimensions", "")  # no count of images or labels


def test_label_length_message_names_no_count() -> None:
    with pytest.raises(InputError, match="one label per image") as exc:
        check_images(gray(37), ["a"] * 41)
    assert "37" not in str(exc.value) and "41" not in str(exc.value)


def test_an_unusable_label_drops_its_image_only() -> None:
    """Missing, float, bool or nested labels in an object array or a list: each image judged alone;
    integers and text mix (7 and "7" are the same label)."""
    labels = np.array([SECRET, None, "b", 42, 2.5, True, float("nan"), "42"], dtype=object)
    s = check_images(gray(8), labels)
    assert s.label_names == ["42", SECRET, "b"] and s.labels.tolist() == [1, 2, 0, 0]
    assert s.dropped == {LABEL_REASON: 4} and len(s) == 4
    t = check_images(gray(3), ["a", ["b"], 3])
    assert t.label_names == ["3", "a"] and t.dropped == {LABEL_REASON: 1}


# ---- round trips ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [gray, colour])
def test_npz_round_trip_labelled_ints(tmp_path: Path, make) -> None:
    x, labels = make(), np.array([3, 11, 3, 7, 11, 7])
    s = check_images(x, labels)
    write_images(tmp_path / "set.npz", s.images, s.labels, s.label_names)
    with np.load(tmp_path / "set.npz", allow_pickle=False) as raw:
        assert raw["labels"].dtype == np.int64 and raw["labels"].tolist() == labels.tolist()
        assert raw["images"].dtype == np.uint8
    back = read_images(tmp_path / "set.npz")
    assert np.array_equal(back.images, x)
    assert back.labels.tolist() == s.labels.tolist() and back.label_names == ["3", "7", "11"]


def test_npz_round_trip_string_labels_and_unlabelled_float(tmp_path: Path) -> None:
    names = ["cat", "dog", "cat", "emu", "dog", "cat"]
    write_images(tmp_path / "s.npz", gray(), names)
    back = read_images(tmp_path / "s.npz")
    assert back.label_names == ["cat", "dog", "emu"] and back.labels.tolist() == [0, 1, 0, 2, 1, 0]
    f = np.random.default_rng(3).random((4, 3, 6, 6))
    write_images(tmp_path / "f.npz", f)
    back = read_images(tmp_path / "f.npz")  # an .npz keeps float pixels float (samples keep their form)
    assert back.labels is None and back.images.dtype == np.float32
    assert np.array_equal(back.images, f.astype(np.float32))


@pytest.mark.parametrize("make", [gray, colour])
def test_png_folder_round_trip_labelled(tmp_path: Path, make) -> None:
    x = make(7)
    labels = np.array([2, 0, 1, 0, 2, 10, 1])
    write_images(tmp_path / "pngs", x, labels)
    assert sorted(p.name for p in (tmp_path / "pngs").iterdir()) == ["0", "1", "10", "2"]
    back = read_images(tmp_path / "pngs")
    order = np.argsort(labels, kind="stable")  # grouped by label, file order within a label
    assert np.array_equal(back.images, x[order])
    assert back.label_names == ["0", "1", "2", "10"]
    assert [int(back.label_names[c]) for c in back.labels] == labels[order].tolist()


def test_png_folder_round_trip_unlabelled_float_keeps_order(tmp_path: Path) -> None:
    f = np.random.default_rng(4).random((12, 1, 3, 3)).astype(np.float32)
    write_images(tmp_path / "pngs", f)
    back = read_images(tmp_path / "pngs")
    assert back.labels is None and np.array_equal(back.images, to_uint8(f))


def test_png_modes_rgba_palette_la_and_bilevel(tmp_path: Path) -> None:
    rgba = np.zeros((3, 2, 4), dtype=np.uint8)
    rgba[..., 0], rgba[..., 3] = 200, 17
    (tmp_path / "c").mkdir()
    Image.fromarray(rgba, "RGBA").save(tmp_path / "c" / "a.png")
    Image.fromarray(rgba[..., :3], "RGB").convert("P", palette=Image.Palette.ADAPTIVE).save(tmp_path / "c" / "b.png")
    back = read_images(tmp_path / "c")
    assert back.images.shape == (2, 3, 3, 2) and (back.images[:, 0] == 200).all() and (back.images[:, 1:] == 0).all()
    (tmp_path / "g").mkdir()
    Image.fromarray(np.full((3, 2, 2), 90, dtype=np.uint8), "LA").save(tmp_path / "g" / "a.png")
    Image.fromarray(np.full((3, 2), 255, dtype=np.uint8)).convert("1").save(tmp_path / "g" / "b.png")
    back = read_images(tmp_path / "g")
    assert back.images.shape == (2, 1, 3, 2) and back.images[0].max() == 90 and back.images[1].min() == 255


# ---- bad files ------------------------------------------------------------------------------------


def labelled_folder(root: Path, n: int = 3) -> Path:
    folder = root / "in"
    for label in ("a", SECRET):
        (folder / label).mkdir(parents=True)
        for i in range(n):
            Image.fromarray(np.full((4, 4), 77, dtype=np.uint8)).save(folder / label / f"{i}.png")
    return folder


def test_folder_round_trip_with_a_secret_label(tmp_path: Path) -> None:
    back = read_images(labelled_folder(tmp_path))
    assert isinstance(back, ImageGroups) and back.labelled and set(back.groups) == {(1, 4, 4)}
    assert back.label_names == [SECRET, "a"] and np.bincount(back.labels).tolist() == [3, 3]
    assert back.dropped == dict.fromkeys(back.reasons, 0)


def corrupt(folder: Path) -> None:
    (folder / SECRET / "bad.png").write_bytes(b"\x89PNG not really")


def jpeg(folder: Path) -> None:
    Image.new("L", (4, 4)).save(folder / SECRET / "x.png", format="JPEG")


def other_size(folder: Path) -> None:
    Image.new("L", (5, 4)).save(folder / SECRET / "x.png")


def other_mode(folder: Path) -> None:
    Image.new("RGB", (4, 4)).save(folder / SECRET / "x.png")


def sixteen_bit(folder: Path) -> None:
    Image.fromarray(np.full((4, 4), 4242, dtype=np.uint16)).save(folder / SECRET / "x.png")


def too_large(folder: Path) -> None:
    Image.new("L", (600, 4)).save(folder / SECRET / "x.png")


def stray_file(folder: Path) -> None:
    (folder / SECRET / "notes.txt").write_text(SECRET)


def empty_label(folder: Path) -> None:
    (folder / f"{SECRET}-2").mkdir()


def top_and_sub(folder: Path) -> None:
    Image.new("L", (4, 4)).save(folder / "top.png")


SPOILED_FOLDERS = {  # one entry added to a clean folder: dropped under its reason, nothing refused
    "corrupt": (corrupt, image_io.UNREADABLE_REASON),
    "jpeg named .png": (jpeg, image_io.UNREADABLE_REASON),
    "mixed sizes": (other_size, OTHER_SHAPE_REASON),
    "mixed modes": (other_mode, OTHER_SHAPE_REASON),
    "16-bit": (sixteen_bit, image_io.SIXTEEN_BIT_REASON),
    "too large": (too_large, image_io.TOO_LARGE_REASON),
    "stray file": (stray_file, image_io.NOT_PNG_REASON),
    "empty label folder": (empty_label, None),
    "PNGs top and in subfolders": (top_and_sub, image_io.OUTSIDE_REASON),
}


@pytest.mark.parametrize("case", list(SPOILED_FOLDERS))
def test_one_spoiled_entry_is_dropped_and_counted_not_refused(tmp_path: Path, case: str) -> None:
    folder = labelled_folder(tmp_path)
    spoil, reason = SPOILED_FOLDERS[case]
    spoil(folder)
    back = read_images(folder, shape=(1, 4, 4), labelled=True)
    assert isinstance(back, ImageSet) and back.label_names == [SECRET, "a"]
    assert np.bincount(back.labels).tolist() == [3, 3] and (back.images == 77).all()
    assert back.dropped == {r: int(r == reason) for r in back.reasons}
    groups = read_images(folder, labelled=True)  # no shape declared: every readable shape kept, apart
    if reason == OTHER_SHAPE_REASON:
        assert len(groups.groups) == 2 and groups.counts()[(1, 4, 4)] == 6
        assert groups.select((1, 4, 4)).dropped == back.dropped
        with pytest.raises(InputError, match="several shapes") as exc:
            _ = groups.images
        assert_clean(exc)
    else:
        assert groups.counts() == {(1, 4, 4): 6}


def test_folder_layout_is_declared_or_read_off_the_subfolders(tmp_path: Path) -> None:
    folder = labelled_folder(tmp_path)
    top_and_sub(folder)
    flat = read_images(folder, shape=(1, 4, 4), labelled=False)  # every PNG, labels ignored
    assert flat.labels is None and len(flat) == 7 and image_io.OUTSIDE_REASON not in flat.reasons
    assert read_images(folder).labelled and len(read_images(folder)) == 6  # subfolders: labelled
    (tmp_path / "empty").mkdir()
    empty = read_images(tmp_path / "empty", labelled=True)
    assert len(empty) == 0 and empty.groups == {}
    none = empty.select((1, 4, 4))
    assert none.images.shape == (0, 1, 4, 4) and none.labels.tolist() == [] and none.label_names == []


def test_bad_paths_and_npz(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_images(tmp_path / "absent.npz")
    (tmp_path / "x.npy").write_bytes(b"")
    with pytest.raises(InputError, match="unsupported"):
        read_images(tmp_path / "x.npy")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="several shapes, or none"):
        _ = read_images(tmp_path / "empty").images
    np.savez(tmp_path / "noimages.npz", pixels=gray())
    with pytest.raises(InputError, match="no array named 'images'"):
        read_images(tmp_path / "noimages.npz")
    np.savez(tmp_path / "pickled.npz", images=gray(), labels=np.array([SECRET, 1, 2, 3, 4, 5], dtype=object))
    with pytest.raises(InputError, match="pickled") as exc:
        read_images(tmp_path / "pickled.npz")
    assert_clean(exc)
    (tmp_path / "broken.npz").write_bytes(b"PK\x03\x04" + SECRET.encode())
    with pytest.raises(InputError, match="not a well-formed") as exc:
        read_images(tmp_path / "broken.npz")
    assert_clean(exc)
    np.save(tmp_path / "bare.npy", gray())
    (tmp_path / "bare.npy").rename(tmp_path / "bare.npz")
    with pytest.raises(InputError, match="not a zip"):
        read_images(tmp_path / "bare.npz")
    np.savez(tmp_path / "shortlabels.npz", images=gray(), labels=np.array([SECRET] * 5))
    with pytest.raises(InputError, match="one label per image") as exc:
        read_images(tmp_path / "shortlabels.npz")
    assert_clean(exc)
    assert "5" not in str(exc.value) and "6" not in str(exc.value)
    np.savez(tmp_path / "s.npz", images=gray())
    with pytest.raises(InputError, match="not the declared shape"):
        read_images(tmp_path / "s.npz", shape=(3, 5, 4))
    with pytest.raises(InputError, match="no array named 'labels'"):
        read_images(tmp_path / "s.npz", labelled=True)
    assert read_images(tmp_path / "shortlabels.npz", labelled=False).labels is None
    with pytest.raises(InputError, match="C, H, W"):
        read_images(tmp_path / "s.npz", shape=(1, 5))


# ---- writing: overwrite and atomicity ------------------------------------------------------------


def test_existing_path_is_kept_unless_overwrite(tmp_path: Path) -> None:
    write_images(tmp_path / "s.npz", gray(seed=1))
    with pytest.raises(InputError, match="already exists"):
        write_images(tmp_path / "s.npz", gray(seed=2))
    assert np.array_equal(read_images(tmp_path / "s.npz").images, gray(seed=1))
    write_images(tmp_path / "s.npz", gray(seed=2), overwrite=True)
    assert np.array_equal(read_images(tmp_path / "s.npz").images, gray(seed=2))
    write_images(tmp_path / "p", gray(seed=1), [0, 1, 0, 1, 0, 1])
    write_images(tmp_path / "p", gray(seed=2), overwrite=True)
    assert read_images(tmp_path / "p").labels is None  # the old label folders are gone
    assert listing(tmp_path) == ["p"] + [f"p/{i:06d}.png" for i in range(6)] + ["s.npz"]


def test_written_files_get_the_usual_permissions(tmp_path: Path) -> None:
    """Temporary siblings are made like any new file (umask), not private like tempfile's."""
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain.txt").touch()
    write_images(tmp_path / "p", gray())
    write_images(tmp_path / "s.npz", gray())
    assert (tmp_path / "p").stat().st_mode == (tmp_path / "plain").stat().st_mode
    assert (tmp_path / "s.npz").stat().st_mode == (tmp_path / "plain.txt").stat().st_mode


def test_overwrite_refuses_a_folder_with_other_files(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "thesis.tex").write_text("precious")
    with pytest.raises(InputError, match="other than PNG"):
        write_images(tmp_path / "home", gray(), overwrite=True)
    assert (tmp_path / "home" / "thesis.tex").read_text() == "precious"
    (tmp_path / "dir.npz").mkdir()
    with pytest.raises(InputError, match="is a folder"):
        write_images(tmp_path / "dir.npz", gray(), overwrite=True)
    (tmp_path / "file").write_text("precious")
    with pytest.raises(InputError, match="is a file"):
        write_images(tmp_path / "file", gray(), overwrite=True)
    assert (tmp_path / "file").read_text() == "precious"


def test_a_failing_png_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    real = image_io.png_image

    def flaky(pixels: np.ndarray) -> Image.Image:
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError("disk full")
        return real(pixels)

    monkeypatch.setattr(image_io, "png_image", flaky)
    with pytest.raises(OSError, match="disk full"):
        write_images(tmp_path / "deep" / "er" / "pngs", gray(), [0, 1, 0, 1, 0, 1])
    assert listing(tmp_path) == []
    assert calls["n"] == 4


def test_a_failing_npz_write_keeps_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_images(tmp_path / "s.npz", gray(seed=1))

    def half(fh, **arrays) -> None:
        fh.write(b"PK\x03\x04 half")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", half)
    with pytest.raises(OSError):
        write_images(tmp_path / "s.npz", gray(seed=2), overwrite=True)
    with pytest.raises(OSError):
        write_images(tmp_path / "new.npz", gray(seed=2))
    monkeypatch.undo()
    assert listing(tmp_path) == ["s.npz"]
    assert np.array_equal(read_images(tmp_path / "s.npz").images, gray(seed=1))


BAD_WRITES = {
    "label with a separator": dict(labels=["../x", "a", "a", "a", "a", "a"]),
    "hidden label": dict(labels=[".x", "a", "a", "a", "a", "a"]),
    "code out of range": dict(labels=[0, 1, 2, 0, 1, 5], label_names=["a", "b", SECRET]),
    "duplicate names": dict(labels=[0, 1, 0, 1, 0, 1], label_names=[SECRET, SECRET]),
    "names without labels": dict(label_names=["a", SECRET]),
    "float images out of range": dict(images=np.full((2, 4, 4), 1.7654321)),
}


@pytest.mark.parametrize("case", list(BAD_WRITES))
def test_bad_writes_are_refused_before_anything_is_written(tmp_path: Path, case: str) -> None:
    kwargs = {"images": gray(), **BAD_WRITES[case]}
    with pytest.raises(InputError) as exc:
        write_images(tmp_path / "out", **kwargs)
    assert_clean(exc)
    assert listing(tmp_path) == []


def test_unsupported_output_suffix(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unsupported image output"):
        write_images(tmp_path / "x.tiff", gray())


# ---- contact sheet --------------------------------------------------------------------------------


def test_contact_sheet_rows_per_label_and_scaled_cells(tmp_path: Path) -> None:
    x = np.zeros((7, 1, 8, 8), dtype=np.uint8)
    x[3] = 255  # the first image of code 2
    codes = np.array([0, 0, 1, 2, 0, 2, 2])
    write_contact_sheet(tmp_path / "s.png", x, codes, ["zero", "one", "two"], per_row=2)
    with Image.open(tmp_path / "s.png") as im:
        sheet = np.asarray(im.convert("L"))
    cell, pad = 32, 2  # 8×8 scaled ×4
    margin = 8 + 6 * len("zero")
    assert sheet.shape == (3 * (cell + pad) + pad, margin + 2 * (cell + pad) + pad)
    top, left = pad + 2 * (cell + pad), margin + pad
    assert (sheet[top : top + cell, left : left + cell] == 255).all()  # row of "two", first cell
    assert (sheet[pad : pad + cell, left : left + cell] == 0).all()  # row of "zero", first cell
    # row "one" has a single image: its second cell stays background
    assert (sheet[pad + cell + pad : 2 * (cell + pad), left + cell + pad : left + 2 * cell + pad] == 255).all()


def test_contact_sheet_unlabelled_and_bad_path(tmp_path: Path) -> None:
    write_contact_sheet(tmp_path / "u.png", colour(25, 40, 40), per_row=10, max_rows=2)
    with Image.open(tmp_path / "u.png") as im:
        assert im.size == (10 * 42 + 2, 2 * 42 + 2)
    with pytest.raises(InputError, match=r"\.png"):
        write_contact_sheet(tmp_path / "u.jpg", gray())
    assert listing(tmp_path) == ["u.png"]


def test_imageset_is_what_check_images_returns_and_io_exports_the_writers() -> None:
    assert isinstance(check_images(gray()), ImageSet)
    assert image_io.write_contact_sheet is write_contact_sheet and image_io.check_images is check_images
