"""The saved model format (dpgan.synthesizers.model_file) is stable across refactors.

tests/fixtures/saved-model-format-2/ was written by the code before the facade split (commit
97ff340, src/dpgan/synthesizers.py), with the two samples beside it:

    synth = TabularSynthesizer(condition="sex", epsilon=3.0, epochs=1, seed=0, accountant="rdp",
                               generator_hidden=(8,), critic_hidden=(8,), noise_dim=4, batch_size=64,
                               label_model_epochs=1.0)
    synth.fit(load_adult()[0].head(300), schema=Schema.from_dict(load_adult_schema_json()))
    synth.save("saved-model-format-2")
    synth.sample(12, seed=3)                                                    # ...-sample.csv
    synth.sample(12, seed=3, conditions={"sex": "Female", "income": ">50K"})    # ...-female-over-50k.csv

It holds a condition (sex) and a label model (income), so every part of model.json is in use.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from safetensors.torch import load_file

from dpgan import TabularSynthesizer
from dpgan.serialization import REPORT_KEY

FIXTURES = Path(__file__).parent / "fixtures"
SAVED = FIXTURES / "saved-model-format-2"
# written afresh on every save: the versions of the writer, and the hash over all the rest
WRITER_KEYS = ("dpgan_version", "torch_version", "content_sha256")
# derived, added after the fixture was written: the privacy report `dpgan inspect` reads (dpgan.inspection)
DERIVED_KEYS = (REPORT_KEY,)


def csv_round_trip(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as the fixture CSVs hold it (same text conversion, same parsed dtypes)."""
    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))


@pytest.mark.parametrize(
    "conditions, expected",
    [
        (None, "saved-model-format-2-sample.csv"),
        ({"sex": "Female", "income": ">50K"}, "saved-model-format-2-sample-female-over-50k.csv"),
    ],
)
def test_a_model_saved_before_the_facade_split_samples_the_same_rows(conditions, expected):
    loaded = TabularSynthesizer.load(SAVED)
    assert loaded.condition is not None and loaded.label_model is not None
    sample = csv_round_trip(loaded.sample(12, seed=3, conditions=conditions))
    # categories exactly; decoded numbers to float precision (CPU kernels may differ in the last bits)
    pd.testing.assert_frame_equal(sample, pd.read_csv(FIXTURES / expected), rtol=1e-6)
    if conditions:
        assert set(sample["sex"]) == {"Female"} and set(sample["income"]) == {">50K"}


def test_a_loaded_model_saves_the_same_entries_and_weights(tmp_path):
    """Load then save: model.json's keys in the same order, the same values (but the writer's
    versions and hash), and the same tensors under the same names."""
    path = TabularSynthesizer.load(SAVED).save(tmp_path / "again")
    before = json.loads((SAVED / "model.json").read_text())
    after = json.loads((path / "model.json").read_text())
    assert [k for k in after if k not in DERIVED_KEYS] == list(before) and all(k in after for k in DERIVED_KEYS)
    assert {k: v for k, v in after.items() if k not in WRITER_KEYS + DERIVED_KEYS} == {
        k: v for k, v in before.items() if k not in WRITER_KEYS
    }
    old, new = load_file(str(SAVED / "generator.safetensors")), load_file(str(path / "generator.safetensors"))
    assert sorted(new) == sorted(old) and any(k.startswith("label_model.") for k in new)
    assert all(new[k].equal(old[k]) for k in old)


def test_a_fresh_fit_writes_the_keys_of_the_saved_format(fitted, tmp_path):
    after = json.loads((fitted.save(tmp_path / "m") / "model.json").read_text())
    before = list(json.loads((SAVED / "model.json").read_text()))
    assert [k for k in after if k not in DERIVED_KEYS] == before and all(k in after for k in DERIVED_KEYS)
