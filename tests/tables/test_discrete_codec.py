"""The marginals model's discrete variables (dpgan.tables.codec.discrete): one per softmax span, a
one-bin numeric column's cells, a binary code's bits; codes → encoded rows → codes is the identity,
and the decoded table lies in the schema's domain."""

from __future__ import annotations

import numpy as np

from dpgan import Schema
from dpgan.tables.codec.discrete import BIT, CELLS, POSITION_CELLS, SPAN, DiscreteCodec
from dpgan.tables.codec.encoder import TableEncoder, public_dtypes

SCHEMA = Schema.from_dict(
    {
        "columns": [
            {"name": "colour", "kind": "categorical", "categories": ["red", "blue"], "nullable": True},
            {"name": "amount", "kind": "continuous", "min": 0, "max": 100, "bins": 4, "point_masses": [0]},
            {"name": "age", "kind": "integer", "min": 18, "max": 90, "nullable": True},
            {"name": "plain", "kind": "continuous", "min": -1, "max": 1},
            {"name": "small", "kind": "integer", "min": 0, "max": 5, "encoding": "binary"},
            {"name": "day", "kind": "date", "min": "2021-01-01", "max": "2021-12-31", "bins": 12},
        ]
    }
)


def test_variables_follow_the_codec():
    codec = DiscreteCodec(TableEncoder(SCHEMA, public_dtypes(SCHEMA)))
    kinds = [(v.column, v.kind, v.levels) for v in codec.variables]
    assert kinds == [
        ("colour", SPAN, 3),
        ("amount", SPAN, 5),  # 4 bins and the point mass
        ("age", CELLS, POSITION_CELLS + 1),  # one bin cut in cells, and the null slot
        ("plain", CELLS, POSITION_CELLS),
        ("small", BIT, 2),
        ("small", BIT, 2),
        ("small", BIT, 2),
        ("day", SPAN, 12),
        ("day", SPAN, 7),  # the weekday
    ]


def test_codes_round_trip_and_decode_into_the_domain():
    encoder = TableEncoder(SCHEMA, public_dtypes(SCHEMA))
    codec = DiscreteCodec(encoder)
    rng = np.random.default_rng(0)
    codes = np.stack([rng.integers(0, w, 2000) for w in codec.levels], axis=1)
    encoded = codec.decode(codes, rng)
    np.testing.assert_array_equal(codec.encode(encoded), codes)
    frame = encoder.decode(encoded, rng)
    assert frame["amount"].between(0, 100).all() and frame["plain"].between(-1, 1).all()
    age = codes[:, 2]
    assert frame["age"].isna().to_numpy().tolist() == (age == POSITION_CELLS).tolist()
    assert frame["age"].dropna().between(18, 90).all()
    assert (frame["amount"][codes[:, 1] == 4] == 0).all()  # the point mass's slot is the value 0
