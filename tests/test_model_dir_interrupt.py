"""A model directory being replaced is never left empty: an interrupt (Ctrl-C) during the swap
leaves the old model in place and no staging folder behind (issue 49)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from dpgan.images.io import write_images
from dpgan.serialization import METADATA, write_model_dir


def test_an_interrupt_between_the_renames_keeps_the_old_model(tmp_path, monkeypatch):
    target = tmp_path / "model"
    write_model_dir(target, {"w": torch.zeros(2)}, {"generation": "old"})
    real_replace = os.replace

    def interrupted(source, destination):
        if str(destination) == str(target) and not str(source).endswith(".old"):
            raise KeyboardInterrupt  # the new model's rename: Ctrl-C arrives just before it
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_model_dir(target, {"w": torch.ones(2)}, {"generation": "new"}, overwrite=True)
    monkeypatch.undo()
    assert json.loads((target / METADATA).read_text())["generation"] == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # no staging or aside folder left


def test_a_replaced_model_leaves_no_aside_folder(tmp_path):
    target = tmp_path / "model"
    write_model_dir(target, {"w": torch.zeros(2)}, {"generation": "old"})
    write_model_dir(target, {"w": torch.ones(2)}, {"generation": "new"}, overwrite=True)
    assert json.loads((target / METADATA).read_text())["generation"] == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_an_interrupt_while_replacing_a_png_folder_keeps_the_old_folder(tmp_path, monkeypatch):
    """The image writer's folder swap goes through the same rename (dpgan.atomic_files.replace_folder)."""
    target = tmp_path / "pngs"
    write_images(target, np.zeros((2, 1, 4, 4), np.uint8), ["a", "b"])
    before = sorted(p.relative_to(target).as_posix() for p in target.rglob("*"))
    real_replace = os.replace

    def interrupted(source, destination):
        if str(destination) == str(target) and not str(source).endswith(".old"):
            raise KeyboardInterrupt
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_images(target, np.full((3, 1, 4, 4), 255, np.uint8), ["c", "d", "e"], overwrite=True)
    monkeypatch.undo()
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pngs"]
