"""Key columns: never read into any release, never learned, generated afresh and unique."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpgan import InputError, TabularSynthesizer
from dpgan.tables.fit.preparation import CLASS_EVENT, SCHEMA_EVENT
from dpgan.tables.schema.keys import KeySpec
from dpgan.tables.schema.table import Schema


def table(keys: list, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = len(keys)
    return pd.DataFrame({"a": rng.choice(["x", "y", "z"], rows), "id": keys, "b": rng.integers(0, 9, rows).astype(str)})


def fit(frame: pd.DataFrame, **kwargs) -> TabularSynthesizer:
    synth = TabularSynthesizer(epsilon=2.0, epochs=1, batch_size=64, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return synth.fit(frame, progress=False, **kwargs)


def files(path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_tables_that_differ_only_in_their_keys_give_byte_identical_models(tmp_path):
    """Before: `keys` did not exist; without it the id column was learned (bought with DP)."""
    first = table([f"P{i:05d}" for i in range(600)])
    second = first.assign(id=[str(v) for v in np.random.default_rng(9).permutation(10**6)[:600]])
    second.loc[3, "id"] = None  # a null, a different type: nothing of the column is read
    fit(first, keys=["id"]).save(tmp_path / "one")
    fit(second, keys=["id"]).save(tmp_path / "two")
    assert files(tmp_path / "one") == files(tmp_path / "two")


def test_a_key_is_in_no_ledger_entry_and_sampled_unique_in_its_place():
    synth = fit(table(list(range(500))), keys={"id": "P-####"})
    assert synth.schema.names == ["a", "b"] and synth.schema.keys == (KeySpec("id", "P-####", 1),)
    by_name = {entry.name: entry for entry in synth.ledger.entries}
    assert by_name[CLASS_EVENT].count == by_name[SCHEMA_EVENT].count == 2  # one release per learned column
    rows = synth.sample(30_000, seed=1)  # more than one sampling chunk: unique across chunks
    assert list(rows.columns) == ["a", "id", "b"]
    assert rows["id"].is_unique and rows["id"].iloc[0] == "P-0001" and rows["id"].iloc[-1] == "P-30000"


@pytest.mark.parametrize("form, dtype", [("integer", "int64"), ("uuid", "object")])
def test_sampled_keys_take_their_format_and_dtype_family(form, dtype):
    synth = fit(table(list(range(300))), keys={"id": form})
    rows = synth.sample(500, seed=2)
    assert str(rows["id"].dtype) == dtype and rows["id"].is_unique
    if form == "uuid":
        assert all(len(v) == 36 and v[14] == "4" for v in rows["id"])
        pd.testing.assert_series_equal(rows["id"], synth.sample(500, seed=2)["id"])  # seeded: reproducible


def test_a_schema_declares_a_key_by_its_role_and_keeps_it_through_json(tmp_path):
    schema = Schema.from_dict(
        {"columns": [{"name": "id", "role": "key", "format": "uuid"},
                     {"name": "a", "kind": "categorical", "categories": ["x", "y", "z"]},
                     {"name": "b", "kind": "integer", "min": 0, "max": 9}]}
    )  # fmt: skip
    assert schema.names == ["a", "b"] and schema.keys[0].position == 0
    assert Schema.from_dict(schema.to_dict()) == schema
    synth = fit(table(list(range(300)))[["id", "a", "b"]], schema=schema)
    synth.save(tmp_path / "m")
    loaded = TabularSynthesizer.load(tmp_path / "m")
    assert list(loaded.sample(5, seed=0).columns) == ["id", "a", "b"]


@pytest.mark.parametrize(
    "entry, kwargs, message",
    [
        ({"name": "id", "role": "id"}, {}, "'role' can only be"),
        ({"name": "id", "role": "key", "format": "P-"}, {}, "'format' must be"),
        ({"name": "id", "role": "key", "min": 0}, {}, "takes only a name and a format"),
    ],
)
def test_bad_key_entries_are_one_line(entry, kwargs, message):
    with pytest.raises(InputError, match=message):
        Schema.from_dict({"columns": [entry, {"name": "a", "kind": "categorical", "categories": ["x"]}]})


def test_a_key_that_is_also_learned_or_the_target_is_refused():
    frame = table(list(range(50)))
    with pytest.raises(InputError, match="also named as a learned column"):
        fit(frame, keys=["id"], categorical=["id"])
    with pytest.raises(InputError, match="not a column"):
        fit(frame, keys=["nope"])
    with pytest.raises(InputError, match="is a key column"):
        Schema.from_dict({"columns": [{"name": "id", "role": "key"}, {"name": "a", "kind": "boolean"}], "target": "id"})
