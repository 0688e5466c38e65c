"""Binary codes for small integer columns (Boob et al.; issue 14, option 5).

The coding is a function of the public schema alone, so it costs no ε; what these tests check is
that it is exact (every level round-trips), that anything G outputs decodes inside the public
bounds, that a schema with it saves and loads, and that it reaches a fit from the library and the
CLI without changing what the ledger records."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpgan import Schema, TabularSynthesizer
from dpgan.cli import main
from dpgan.errors import InputError
from dpgan.models.output_spans import TANH
from dpgan.tables.codec.encoder import BinaryCodeTransform, TableEncoder, make_transform
from dpgan.tables.schema.columns import MAX_BINARY_VALUES, ColumnSpec
from dpgan.tables.schema.table import binary_coded

TINY = {"generator_hidden": (32,), "critic_hidden": (32,), "noise_dim": 8}


def _spec(**kwargs) -> ColumnSpec:
    return ColumnSpec("k", "integer", **({"min": 3, "max": 12, "encoding": "binary"} | kwargs))


@pytest.mark.parametrize("low,high,bits", [(0, 1, 1), (3, 12, 4), (-2, 5, 3), (1, 16, 4), (0, 2, 2)])
def test_every_level_round_trips_in_the_fewest_bits(low, high, bits):
    transform = make_transform(_spec(min=low, max=high))
    assert isinstance(transform, BinaryCodeTransform) and transform.width == bits
    levels = pd.Series(np.arange(low, high + 1))
    encoded = transform.encode(levels)
    assert set(np.unique(encoded)) <= {-1.0, 1.0}
    assert len({tuple(row) for row in encoded}) == len(levels)  # one code per level
    decoded = transform.decode(encoded, np.random.default_rng(0))
    assert decoded.tolist() == levels.tolist()


def test_nulls_get_their_own_bit_and_come_back_as_missing():
    transform = make_transform(_spec(nullable=True), "Int64")
    values = pd.Series([3, None, 12, 7], dtype="Int64")
    encoded = transform.encode(values)
    assert transform.width == 5 and encoded[:, -1].tolist() == [-1.0, 1.0, -1.0, -1.0]
    decoded = transform.decode(encoded, np.random.default_rng(0))
    assert decoded.isna().tolist() == [False, True, False, False]
    assert decoded.dropna().tolist() == [3, 12, 7]


def test_any_generator_output_decodes_inside_the_public_bounds():
    # 10 levels in 4 bits: codes 10..15 do not exist and must be rounded into the range
    transform = make_transform(_spec())
    block = np.random.default_rng(1).uniform(-1, 1, size=(5000, transform.width))
    decoded = transform.decode(block, np.random.default_rng(0))
    assert decoded.between(3, 12).all()
    assert decoded.nunique() == 10
    top = np.ones((1, transform.width))  # code 15, above the range: the top level
    assert transform.decode(top, np.random.default_rng(0)).tolist() == [12]


def test_out_of_range_private_values_are_coded_as_the_nearest_bound():
    transform = make_transform(_spec())
    encoded = transform.encode(pd.Series([-50, 99]))
    assert transform.decode(encoded, np.random.default_rng(0)).tolist() == [3, 12]


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "continuous", "min": 0.0, "max": 1.0},
        {"max": 3 + MAX_BINARY_VALUES},  # 17 levels
        {"max": 3.5, "min": 3.2},  # no whole number inside: 0 levels
        {"bins": 4},
        {"point_masses": (3,)},
        {"encoding": "gray"},
    ],
)
def test_impossible_binary_codes_are_refused_with_one_line(spec):
    with pytest.raises(InputError) as caught:
        ColumnSpec("k", **({"kind": "integer", "min": 3, "max": 12, "encoding": "binary"} | spec))
    assert "\n" not in str(caught.value) and "'k'" in str(caught.value)


def test_the_encoding_survives_the_schema_file_and_old_schemas_read_as_bins():
    schema = Schema((_spec(), ColumnSpec("c", "categorical", categories=("a", "b"))))
    data = schema.to_dict()
    assert data["columns"][0]["encoding"] == "binary" and "encoding" not in data["columns"][1]
    assert Schema.from_dict(json.loads(json.dumps(data))) == schema
    assert ColumnSpec.from_dict({"name": "k", "kind": "integer", "min": 0, "max": 3}).encoding == "bins"


def test_the_rewrite_codes_small_integers_only_and_keeps_the_target(adult_schema):
    coded = binary_coded(adult_schema, keep=("income",))
    encodings = {c.name: c.encoding for c in coded.columns}
    assert encodings["education-num"] == "binary"  # 1..16: sixteen levels
    assert {encodings[name] for name in ("age", "capital-gain", "hours-per-week", "workclass")} == {"bins"}
    small = Schema((ColumnSpec("y", "integer", min=0, max=1), ColumnSpec("x", "integer", min=0, max=3)), target="y")
    kept = binary_coded(small, keep=("y",))
    assert (kept["y"].encoding, kept["x"].encoding) == ("bins", "binary")
    before, after = TableEncoder(adult_schema), TableEncoder(coded)
    assert before.width - after.width == 1 + 15 - 4  # a position and a 15-bin softmax become 4 bits
    assert [s.activation for s in after.spans if s.column == "education-num"] == [TANH]


def test_a_fit_with_binary_codes_samples_in_bounds_and_reloads(adult_small, adult_schema, tmp_path):
    kwargs = {"epsilon": 2.0, "epochs": 1, "batch_size": 64, "seed": 0, "label_model": False, **TINY}
    synth = TabularSynthesizer(binary_codes=True, **kwargs).fit(adult_small, schema=adult_schema)
    assert synth.schema["education-num"].encoding == "binary" and synth.settings.binary_codes
    rows = synth.sample(400, seed=1)
    assert rows["education-num"].between(1, 16).all() and rows["education-num"].nunique() > 1
    synth.save(tmp_path / "m")
    again = TabularSynthesizer.load(tmp_path / "m")
    pd.testing.assert_frame_equal(again.sample(50, seed=3), synth.sample(50, seed=3))
    # the coding reads nothing from the rows: the same ledger, event by event, as a fit without it
    plain = TabularSynthesizer(**kwargs).fit(adult_small, schema=adult_schema)
    names = [e["name"] for e in synth.privacy_report()["events"]]
    assert names == [e["name"] for e in plain.privacy_report()["events"]]
    assert "binary_codes" not in plain.settings.to_dict()


def test_neighbouring_tables_get_the_same_coding(adult_small, adult_schema):
    kwargs = {"epsilon": 2.0, "epochs": 1, "batch_size": 64, "seed": 0, "label_model": False, "binary_codes": True}
    full = TabularSynthesizer(**kwargs, **TINY).fit(adult_small, schema=adult_schema)
    neighbour = TabularSynthesizer(**kwargs, **TINY).fit(adult_small.iloc[1:], schema=adult_schema)
    assert full.schema == neighbour.schema
    assert full.encoder.spans == neighbour.encoder.spans


def test_cli_binary_codes_flag_fits_and_saves_the_coding(tmp_path):
    table = tmp_path / "t.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"n": rng.integers(0, 6, 300), "c": rng.choice(["a", "b"], 300)}).to_csv(table, index=False)
    schema = Schema((ColumnSpec("n", "integer", min=0, max=5), ColumnSpec("c", "categorical", categories=("a", "b"))))
    schema.to_json(tmp_path / "s.json")
    out = tmp_path / "m"
    args = ["fit", str(table), "--schema", str(tmp_path / "s.json"), "--epsilon", "2", "--epochs", "1"]
    assert main(args + ["--out", str(out), "--binary-codes", "--no-label-model"]) == 0
    saved = json.loads(next(p for p in out.iterdir() if p.suffix == ".json").read_text())
    text = json.dumps(saved)
    assert '"encoding": "binary"' in text and '"binary_codes": true' in text
