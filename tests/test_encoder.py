"""Encoders depend on the public schema alone and round-trip values and dtypes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan import ColumnSpec, Schema
from dpgan.transforms.encoder import SOFTMAX, TANH, TableEncoder


def schema() -> Schema:
    return Schema(
        (
            ColumnSpec("x", "continuous", min=-5.0, max=5.0, nullable=True),
            ColumnSpec("n", "integer", min=0, max=100),
            ColumnSpec("c", "categorical", categories=("a", "b", "c"), nullable=True),
            ColumnSpec("f", "boolean"),
        )
    )


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "x": [-5.0, 0.0, 2.5, np.nan],
            "n": np.array([0, 7, 100, 42], dtype=np.int32),
            "c": ["a", None, "c", "b"],
            "f": [True, False, True, True],
        }
    )


def test_layout_has_one_span_per_activation():
    enc = TableEncoder(schema())
    assert [(s.activation, s.width) for s in enc.spans] == [
        (TANH, 1),
        (SOFTMAX, 2),
        (TANH, 1),
        (SOFTMAX, 4),
        (SOFTMAX, 2),
    ]
    assert enc.width == 10


def test_round_trip_of_one_hot_rows_restores_values_and_dtypes():
    data = frame()
    enc = TableEncoder(schema(), {c: str(data[c].dtype) for c in data.columns})
    decoded = enc.decode(enc.encode(data), np.random.default_rng(0))
    assert decoded["n"].dtype == np.int32
    assert decoded["f"].dtype == bool
    np.testing.assert_allclose(decoded["x"].to_numpy()[:3], [-5.0, 0.0, 2.5], atol=1e-5)
    assert np.isnan(decoded["x"].iloc[3])
    assert decoded["n"].tolist() == [0, 7, 100, 42]
    assert decoded["c"].tolist()[0] == "a" and pd.isna(decoded["c"].iloc[1]) and decoded["c"].tolist()[2:] == ["c", "b"]
    assert decoded["f"].tolist() == [True, False, True, True]


def test_out_of_bounds_values_are_clamped_not_dropped():
    enc = TableEncoder(Schema((ColumnSpec("x", "continuous", min=0.0, max=1.0),)))
    encoded = enc.encode(pd.DataFrame({"x": [-10.0, 0.5, 99.0]}))
    assert encoded.shape == (3, 1)
    np.testing.assert_allclose(encoded[:, 0], [-1.0, 0.0, 1.0])


def test_encoder_state_does_not_depend_on_the_data():
    """Pitfall (iii): adding an extreme record must not change any transform."""
    enc_a, enc_b = TableEncoder(schema()), TableEncoder(schema())
    data = frame()
    outlier = pd.concat([data, pd.DataFrame({"x": [1e9], "n": [100], "c": ["a"], "f": [False]})])
    enc_a.encode(data)
    enc_b.encode(outlier)
    assert enc_a.spans == enc_b.spans and enc_a.width == enc_b.width


def test_decoded_integers_stay_within_bounds():
    enc = TableEncoder(Schema((ColumnSpec("n", "integer", min=3, max=9),)))
    decoded = enc.decode(np.array([[-1.0], [1.0], [0.999], [-0.999]], dtype=np.float32), np.random.default_rng(0))
    assert decoded["n"].between(3, 9).all()
    assert decoded["n"].tolist() == [3, 9, 9, 3]
