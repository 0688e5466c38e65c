"""Encoders depend on the public schema alone and round-trip values and dtypes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpgan import ColumnSpec, InputError, Schema
from dpgan.tables.codec.encoder import SOFTMAX, TANH, TableEncoder


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


def point_mass_encoder(nullable: bool = False) -> TableEncoder:
    spec = ColumnSpec("gain", "integer", min=0, max=99999, point_masses=(0, 99999), scale="log", nullable=nullable)
    return TableEncoder(Schema((spec,)))


def test_point_masses_get_a_mode_softmax_and_round_trip_exactly():
    enc = point_mass_encoder(nullable=True)
    assert [(s.activation, s.width) for s in enc.spans] == [(TANH, 1), (SOFTMAX, 4)]  # value, 0, 99999, missing
    data = pd.DataFrame({"gain": pd.array([0, 7688, 99999, None, 1], dtype="Int64")})
    encoded = enc.encode(data)
    np.testing.assert_array_equal(encoded[:, 1:].argmax(axis=1), [1, 0, 2, 3, 0])
    assert encoded[0, 0] == 0.0 and encoded[2, 0] == 0.0  # atoms carry no value
    decoded = enc.decode(encoded, np.random.default_rng(0))["gain"]
    assert decoded.iloc[[0, 1, 2, 4]].tolist() == [0, 7688, 99999, 1] and pd.isna(decoded.iloc[3])


def test_a_generated_point_mass_mode_overrides_the_value():
    enc = point_mass_encoder()
    block = np.array([[0.3, 0.0, 1.0, 0.0], [0.3, 1.0, 0.0, 0.0]], dtype=np.float32)  # mode "0", mode "value"
    decoded = enc.decode(block, np.random.default_rng(0))["gain"].tolist()
    assert decoded[0] == 0 and decoded[1] > 0


def test_log_scale_spreads_small_amounts_and_inverts():
    values = pd.DataFrame({"gain": [1, 100, 7688, 99999]})
    linear = TableEncoder(Schema((ColumnSpec("gain", "integer", min=0, max=99999),))).encode(values)[:, 0]
    log = point_mass_encoder().encode(values)[:, 0]
    assert log[1] - log[0] > 10 * (linear[1] - linear[0])  # small amounts are distinguishable on the log scale
    np.testing.assert_allclose(log[[0, 2]], 2 * np.log([2, 7689]) / np.log(100000) - 1, rtol=1e-5)
    assert log[3] == 0.0 and np.all(np.diff(log[:3]) > 0)  # 99999 is a point mass: no value


def test_generated_values_are_gated_by_their_value_mode_like_encoded_rows():
    """Real rows at a point mass or null carry value 0; the critic must see generated rows the same way."""
    import torch

    from dpgan.models.tabular import TabularGenerator

    enc = TableEncoder(
        Schema(
            (
                ColumnSpec("gain", "integer", min=0, max=99, point_masses=(0,), nullable=True, bins=2),
                ColumnSpec("age", "integer", min=0, max=99),
                ColumnSpec("c", "categorical", categories=("a", "b")),
            )
        )
    )
    torch.manual_seed(0)
    G = TabularGenerator(4, (8,), enc.spans, categorical_activation="softmax")
    z = torch.randn(64, 4)
    rows, released = G(z), G.sample_encoded(z)
    gain_mode = released[:, 1:5]  # [bin 0, bin 1, point mass 0, missing]
    torch.testing.assert_close(rows[:, 0], released[:, 0] * gain_mode[:, :2].sum(dim=1))  # value × P(in a bin)
    torch.testing.assert_close(rows[:, 5], released[:, 5])  # a plain column is untouched
    assert (rows[:, 0].abs() < released[:, 0].abs()).all()


def test_bins_pick_the_bin_as_a_mode_and_round_trip_the_position():
    spec = ColumnSpec("age", "continuous", min=0.0, max=100.0, bins=4, point_masses=(0.0,))
    enc = TableEncoder(Schema((spec,)))
    assert [(s.activation, s.width, s.value_modes) for s in enc.spans] == [(TANH, 1, 0), (SOFTMAX, 5, 4)]
    data = pd.DataFrame({"age": [0.0, 10.0, 37.5, 50.0, 99.0, 100.0]})
    encoded = enc.encode(data)
    np.testing.assert_array_equal(encoded[:, 1:].argmax(axis=1), [4, 0, 1, 2, 3, 3])  # 0 is the point mass
    np.testing.assert_allclose(encoded[:, 0], [0.0, -0.2, 0.0, -1.0, 0.92, 1.0], atol=1e-6)
    decoded = enc.decode(encoded, np.random.default_rng(0))["age"]
    np.testing.assert_allclose(decoded, data["age"], atol=1e-4)


def test_a_generated_position_stays_inside_the_chosen_bin():
    enc = TableEncoder(Schema((ColumnSpec("x", "continuous", min=0.0, max=8.0, bins=4),)))
    block = np.array([[1.0, 0, 1, 0, 0], [-1.0, 0, 0, 0, 1], [0.0, 1, 0, 0, 0]], dtype=np.float32)
    np.testing.assert_allclose(enc.decode(block, np.random.default_rng(0))["x"], [4.0, 6.0, 1.0])


@pytest.mark.parametrize("scale", ["linear", "log"])
def test_public_bin_edges_cut_the_bins_and_the_position_follows_the_scale_inside(scale):
    """Bins at public edges (DP quantiles, or the curator's): a value picks the bin its edges hold,
    the position runs from -1 at the bin's low edge to 1 at its high edge on the column's scale,
    and decoding returns the value."""
    spec = ColumnSpec("amount", "continuous", min=0.0, max=1000.0, bins=3, bin_edges=(10.0, 100.0), scale=scale)
    encoder = TableEncoder(Schema((spec,)))
    values = pd.DataFrame({"amount": [0.0, 5.0, 10.0, 55.0, 99.0, 100.0, 999.0, 1000.0]})
    block = encoder.encode(values)
    assert block[:, 1:].argmax(axis=1).tolist() == [0, 0, 1, 1, 1, 2, 2, 2]
    assert block[0, 0] == -1.0 and block[2, 0] == -1.0 and block[-1, 0] == 1.0
    if scale == "linear":
        np.testing.assert_allclose(block[[1, 3], 0], [0.0, 0.0], atol=1e-6)  # the bins' middles
    else:
        # on the log1p scale the middle of [10, 100] is √(11·101) − 1 ≈ 32: 55 lies above it
        assert block[3, 0] > 0.2
    decoded = encoder.decode(block, np.random.default_rng(0))["amount"].to_numpy()
    np.testing.assert_allclose(decoded, values["amount"].to_numpy(), rtol=1e-5, atol=1e-9)


def test_ratio_scale_cuts_a_positive_range_into_bins_equal_in_ratio_and_inverts():
    """[10⁵, 10⁶] in 8 ratio bins: each bin's top is 10^(1/8) times its bottom (linear bins would put
    every value under 2.2·10⁵ in the first two); encoding then decoding a value returns it."""
    spec = ColumnSpec("price", "continuous", min=1e5, max=1e6, scale="ratio", bins=8)
    encoder = TableEncoder(Schema((spec,)))
    edges = 1e5 * 10 ** (np.arange(9) / 8)
    values = pd.DataFrame({"price": (edges[:-1] * 1.0001).tolist() + [1e6]})
    block = encoder.encode(values)
    modes = block[:, 1:].argmax(axis=1)
    assert modes.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 7]
    decoded = encoder.decode(block, np.random.default_rng(0))["price"].to_numpy()
    np.testing.assert_allclose(decoded, values["price"].to_numpy(), rtol=1e-4)
    assert Schema.from_dict(Schema((spec,)).to_dict())["price"].scale == "ratio"


def test_ratio_scale_needs_a_positive_min():
    with pytest.raises(InputError, match="positive 'min'"):
        ColumnSpec("x", "continuous", min=0.0, max=10.0, scale="ratio")
