"""The package as a new user meets it in a notebook: `dir(dpgan)` and `__all__` are the public API
(nothing of the package's plumbing), imported lazily; a synthesizer's repr shows its recipe, its
target (ε, δ) and, once fitted, the ε it spent."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

import dpgan
from dpgan import ImageSynthesizer, SequenceSynthesizer, TabularSynthesizer
from dpgan.sequences.schema import SequenceSchema, ValueColumn

PUBLIC = {
    "TabularSynthesizer",
    "SequenceSynthesizer",
    "ImageSynthesizer",
    "EntitySynthesizer",
    "load_model",
    "Schema",
    "ColumnSpec",
    "ParquetSource",
    "DPGanError",
    "InputError",
    "ModelFileError",
    "BudgetError",
    "datasets",
    "__version__",
}


def test_dir_and_all_are_the_public_api_only():
    importlib.import_module("dpgan.cli")  # a submodule the caller imported must not show up either
    assert set(dpgan.__all__) == PUBLIC and len(dpgan.__all__) == len(PUBLIC)
    assert dir(dpgan) == sorted(PUBLIC)
    for name in dpgan.__all__:
        assert getattr(dpgan, name) is not None
    namespace: dict = {}
    exec("from dpgan import *", namespace)  # noqa: S102
    assert set(namespace) - {"__builtins__"} == PUBLIC
    with pytest.raises(AttributeError):
        dpgan.not_a_name  # noqa: B018


def test_importing_dpgan_loads_no_pytorch():
    probe = "import sys, dpgan; dir(dpgan); assert 'torch' not in sys.modules and 'pandas' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def test_reprs_show_the_recipe_the_target_and_the_epsilon_spent(fitted):
    unfitted = "TabularSynthesizer(recipe='dp-gan', epsilon=3.0, delta=1e-05, not fitted)"
    assert repr(TabularSynthesizer(epsilon=3.0)) == unfitted
    spent = fitted.ledger.epsilon(fitted.delta, fitted.accountant)
    assert repr(fitted) == f"TabularSynthesizer(recipe='dp-gan', epsilon=3.0, delta=1e-05, fitted: ε={spent:.4g})"
    assert repr(ImageSynthesizer(epsilon=2.0, recipe="dp-cgan")) == (
        "ImageSynthesizer(recipe='dp-cgan', epsilon=2.0, delta=1e-05, not fitted)"
    )
    series = SequenceSynthesizer(epsilon=1.0, delta=1e-6, model="gan", critic="lstm")
    assert repr(series) == "SequenceSynthesizer(critic='lstm', epsilon=1.0, delta=1e-06, not fitted)"


def test_a_fitted_image_or_series_repr_names_its_epsilon_or_its_missing_certificate():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(60, 8, 8), dtype=np.uint8)
    tiny = {"epochs": 1.0, "batch_size": 16, "max_sample_rate": 0.3, "max_steps": 2, "width": 4}
    uncertified = ImageSynthesizer(epsilon=2.0, seed=0, recipe="noise-layer", conditional=False, **tiny).fit(images)
    assert repr(uncertified).endswith("fitted: NOT certified, no ε claimed)")
    schema = SequenceSchema(id="sid", time="t", length=6, values=(ValueColumn("v", -3.0, 3.0),))
    series = SequenceSynthesizer(epsilon=1.0, seed=0)  # the default model: DP statistics, no GAN loop
    series.fit(rng.normal(size=(60, 6)), schema)
    text = repr(series)
    assert text.startswith("SequenceSynthesizer(critic='mlp', unit='series', epsilon=1.0, delta=1e-05, fitted: ε=")
    assert float(text.rsplit("ε=", 1)[1].rstrip(")")) <= 1.0
