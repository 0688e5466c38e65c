"""Released files as a new user shares them: synthetic tables, series, images and the model itself
are readable by others (0644, folders 0755, under the usual umask 022; checkpoints stay 0600:
tests/training/test_checkpoint.py); `dpgan sample` replaces an existing output only with --overwrite, and
atomically; its refusals name the real problem (a folder that is no model; an .npz's arrays)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpgan.cli import main
from dpgan.errors import InputError
from dpgan.images.io import read_images, write_contact_sheet, write_images
from dpgan.sequences.schema import SequenceSchema, ValueColumn
from dpgan.synthesizers import ImageSynthesizer, SequenceSynthesizer
from dpgan.tables.reading.table_io import write_chunks, write_table

ROOT = Path(__file__).resolve().parents[1]


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def usual_umask():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture(scope="module")
def image_model(tmp_path_factory) -> Path:
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(60, 8, 8), dtype=np.uint8)
    tiny = {"epochs": 1.0, "batch_size": 16, "max_sample_rate": 0.3, "max_steps": 2, "width": 4, "label_guide": False}
    synth = ImageSynthesizer(recipe="dcgan", epsilon=2.0, seed=0, conditional=False, **tiny).fit(images)
    return synth.save(tmp_path_factory.mktemp("image") / "model")


@pytest.fixture(scope="module")
def series_model(tmp_path_factory) -> Path:
    schema = SequenceSchema(id="sid", time="t", length=6, values=(ValueColumn("v", -3.0, 3.0),))
    values = np.random.default_rng(0).normal(size=(60, 6))
    long = pd.DataFrame({"sid": np.repeat(np.arange(60), 6), "t": np.tile(np.arange(6), 60), "v": values.ravel()})
    synth = SequenceSynthesizer(epsilon=1.0, seed=0)
    synth.fit(long, schema)  # a long table: sampled as one
    return synth.save(tmp_path_factory.mktemp("series") / "model")


def test_released_files_and_the_model_are_readable_by_others(fitted, tmp_path, usual_umask):
    model = fitted.save(tmp_path / "model")
    assert mode(model) == 0o755 and {mode(p) for p in model.iterdir()} == {0o644}
    frame = fitted.sample(20, seed=0)
    for name in ("whole.csv", "whole.parquet"):
        assert mode(write_table(frame, tmp_path / name)) == 0o644
    for name in ("streamed.csv", "streamed.parquet"):
        assert mode(write_chunks([frame, frame], tmp_path / name)[0]) == 0o644
    assert mode(fitted.sample_to(tmp_path / "sampled.csv", 30, seed=1)) == 0o644
    pixels = np.zeros((3, 1, 8, 8), dtype=np.uint8)
    assert mode(write_images(tmp_path / "i.npz", pixels, ["a", "b", "a"])) == 0o644
    folder = write_images(tmp_path / "pngs", pixels, ["a", "b", "a"])
    assert mode(folder) == 0o755 and {mode(p) for p in folder.rglob("*.png")} == {0o644}
    assert mode(write_contact_sheet(tmp_path / "sheet.png", pixels)) == 0o644
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left behind


def test_a_private_umask_is_respected(fitted, tmp_path):
    old = os.umask(0o077)
    try:
        model = fitted.save(tmp_path / "model")
        csv = write_table(fitted.sample(5, seed=0), tmp_path / "s.csv")
    finally:
        os.umask(old)
    assert mode(model) == 0o700 and mode(model / "model.json") == 0o600 and mode(csv) == 0o600


def test_sample_replaces_a_table_only_with_overwrite(fitted, tmp_path, capsys, usual_umask):
    model = str(fitted.save(tmp_path / "model"))
    out = tmp_path / "rows.csv"
    assert main(["sample", model, "-n", "20", "--out", str(out), "--seed", "1"]) == 0
    first = out.read_bytes()
    assert main(["sample", model, "-n", "20", "--out", str(out), "--seed", "2"]) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err and out.read_bytes() == first
    assert main(["sample", model, "-n", "25", "--out", str(out), "--seed", "2", "--overwrite"]) == 0
    assert len(pd.read_csv(out)) == 25 and mode(out) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model", "rows.csv"]


def test_sample_replaces_series_only_with_overwrite(series_model, tmp_path, capsys, usual_umask):
    out = tmp_path / "series.parquet"
    assert main(["sample", str(series_model), "-n", "4", "--out", str(out), "--seed", "1"]) == 0
    assert main(["sample", str(series_model), "-n", "5", "--out", str(out), "--seed", "1"]) == 2
    assert "--overwrite" in capsys.readouterr().err and pd.read_parquet(out)["sid"].nunique() == 4
    assert main(["sample", str(series_model), "-n", "5", "--out", str(out), "--overwrite"]) == 0
    assert pd.read_parquet(out)["sid"].nunique() == 5 and mode(out) == 0o644


@pytest.mark.parametrize("name", ["images.npz", "pngs"])
def test_sample_replaces_images_only_with_overwrite(image_model, tmp_path, capsys, name, usual_umask):
    out = tmp_path / name
    assert main(["sample", str(image_model), "-n", "3", "--out", str(out), "--seed", "1"]) == 0
    assert main(["sample", str(image_model), "-n", "4", "--out", str(out)]) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err and len(read_images(out).images) == 3
    assert main(["sample", str(image_model), "-n", "4", "--out", str(out), "--overwrite"]) == 0
    assert len(read_images(out).images) == 4 and mode(out) == (0o644 if out.suffix else 0o755)


def test_sample_from_a_folder_that_is_no_model_says_so(tmp_path, capsys):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "holiday.jpg").write_text("x")
    assert main(["sample", str(folder), "-n", "3", "--out", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err
    assert "is not a dpgan model" in err and ".csv or .parquet" not in err


def test_an_npz_without_images_names_its_arrays(tmp_path):
    np.savez(tmp_path / "x.npz", pixels=np.zeros((2, 8, 8), np.uint8), y=np.zeros(2))
    with pytest.raises(InputError, match=r"no array named 'images' \(it holds 'pixels', 'y'\)"):
        read_images(tmp_path / "x.npz")


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_second_make_demo_skips_pip_until_the_inputs_change(tmp_path):
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()  # the venv exists

    def dry_run(target: str) -> str:
        return subprocess.run(["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, check=True).stdout

    assert "pip install" in dry_run("demo")  # first run: installs
    now = os.stat(tmp_path / "pyproject.toml").st_mtime
    stamp = tmp_path / ".venv" / ".dpgan-installed"
    stamp.touch()
    os.utime(stamp, (now + 10, now + 10))
    second = dry_run("demo")
    assert "pip" not in second and "dpgan demo" in second
    assert '-e ".[test]"' in dry_run("test")  # `make test` still installs what it needs
    os.utime(tmp_path / "constraints.txt", (now + 20, now + 20))
    assert "pip install" in dry_run("demo")  # the pins changed: install again
