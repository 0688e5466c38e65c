"""`dpgan inspect` answers from model.json (issue 49): the report stored at save time is the one the
loaded model computes, inspecting imports none of PyTorch, pandas, scikit-learn, SciPy or
dp-accounting, and a file without a stored report (or with one that no longer states its ledger)
is inspected by loading the model. `dpgan sample` loads the model (strictly, its ledger too) and
samples without the accountant: dp-accounting and scipy.stats are a fit's imports, not a sample's."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from dpgan import ImageSynthesizer, SequenceSynthesizer, datasets, load_model
from dpgan.inspection import inspect_model
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.serialization import HASH_KEY, METADATA, REPORT_KEY, WEIGHTS, content_hash

HEAVY = ("torch", "pandas", "sklearn", "scipy", "dp_accounting")


def as_json(value):
    return json.loads(json.dumps(value, default=str))


@pytest.fixture(scope="module")
def table_model(fitted, tmp_path_factory):
    return fitted.save(tmp_path_factory.mktemp("inspect") / "table")


@pytest.fixture(scope="module")
def image_model(tmp_path_factory):
    images, labels = datasets.load_digits_images()
    synth = ImageSynthesizer(epsilon=3.0, seed=0, classes=[str(d) for d in range(10)])
    return synth.fit(images[:300], labels[:300]).save(tmp_path_factory.mktemp("inspect") / "image")


@pytest.mark.parametrize("model", ["table_model", "image_model"])
def test_the_stored_report_is_the_loaded_models_report(model, request):
    path = request.getfixturevalue(model)
    stored = json.loads((path / METADATA).read_text())[REPORT_KEY]
    assert as_json(inspect_model(path)) == as_json(stored) == as_json(load_model(path).privacy_report())


@pytest.mark.parametrize("model", ["table_model", "image_model"])
def test_inspect_imports_no_heavy_library(model, request):
    """A property, not a timing: the command line's inspect never loads what makes it slow."""
    path = request.getfixturevalue(model)
    code = (
        "import sys, json\n"
        "from dpgan.cli import main\n"
        f"code = main(['inspect', {str(path)!r}])\n"
        f"print(json.dumps([code, sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    status, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert status == 0 and "ε = " in out.stdout
    assert loaded == []


@pytest.fixture(scope="module")
def series_model(tmp_path_factory):
    frame = datasets.load_water_districts()
    frame = frame[frame["day"] < "2021-03-01"]  # two months: a small slice
    schema = SequenceSchema(
        id=("district", "day"), time="hour", length=24, values=(ValueColumn("inflow", 0.0, 200.0),), label="district"
    )
    synth = SequenceSynthesizer(epsilon=3.0, seed=0)  # the default model: the DP copula
    return synth.fit(frame, schema).save(tmp_path_factory.mktemp("inspect") / "series")


ACCOUNTANT_LIBRARIES = ("dp_accounting", "scipy.stats", "scipy.optimize")


@pytest.mark.parametrize("model", ["table_model", "series_model", "image_model"])
def test_sample_loads_and_samples_without_the_accountant(model, request, tmp_path):
    """A property, not a timing (issue 49: `dpgan sample -n 10` within 3 s): the accountant's
    libraries, about a second of imports, are not loaded to read a model and sample from it; the
    ledger is still read and checked (a damaged entry is refused on load, tests/test_model_files)."""
    path = request.getfixturevalue(model)
    out_file = tmp_path / ("s.npz" if model == "image_model" else "s.csv")
    code = (
        "import sys, json\n"
        "from dpgan.cli import main\n"
        f"code = main(['sample', {str(path)!r}, '-n', '10', '--out', {str(out_file)!r}])\n"
        f"print(json.dumps([code, sorted(m for m in {ACCOUNTANT_LIBRARIES!r} if m in sys.modules)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    status, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert status == 0 and out_file.exists()
    assert loaded == []
    assert load_model(path).privacy_report()["epsilon"] <= 3.0  # and ε is still composed on demand


def _rewrite(path, change) -> None:
    meta = json.loads((path / METADATA).read_text())
    change(meta)
    meta[HASH_KEY] = content_hash(meta, (path / WEIGHTS).read_bytes())
    (path / METADATA).write_text(json.dumps(meta))


def test_a_model_without_a_stored_report_is_inspected_by_loading_it(fitted, tmp_path):
    path = fitted.save(tmp_path / "old")
    _rewrite(path, lambda meta: meta.pop(REPORT_KEY))  # as a model saved before the report was stored
    assert as_json(inspect_model(path)) == as_json(fitted.privacy_report())


def test_a_stored_report_that_no_longer_states_the_ledger_is_not_used(fitted, tmp_path):
    path = fitted.save(tmp_path / "edited")

    def double_the_noise(meta):
        meta["ledger"][-1]["noise_multiplier"] *= 2  # an edit (hash recomputed) that leaves the report behind

    _rewrite(path, double_the_noise)
    report = inspect_model(path)
    assert report["events"][-1]["noise_multiplier"] == pytest.approx(2 * fitted.ledger.entries[-1].noise_multiplier)
    assert report["events"][-1]["epsilon_alone"] < fitted.privacy_report()["events"][-1]["epsilon_alone"]


def test_inspect_refuses_a_changed_file_without_loading_the_model(table_model, tmp_path):
    import shutil

    from dpgan.errors import ModelFileError

    path = shutil.copytree(table_model, tmp_path / "changed")
    meta = json.loads((path / METADATA).read_text())
    meta[REPORT_KEY]["epsilon"] = float(np.float64(0.01))  # a smaller ε, hash not recomputed
    (path / METADATA).write_text(json.dumps(meta))
    with pytest.raises(ModelFileError, match="changed after dpgan wrote it"):
        inspect_model(path)
