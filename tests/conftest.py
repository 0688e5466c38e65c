"""Shared fixtures: small slices of the bundled Adult data, a fitted tiny model, the 8×8 digits split."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import Schema, TabularSynthesizer, datasets
from dpgan.tables.codec.conditioning import PRIOR_FROM_SCHEMA, Condition
from dpgan.tables.codec.encoder import TableEncoder

# One fixed CPU thread for every fit the tests make, in this process and the ones it starts
# (torchrun, the CLI): the default, auto (dpgan.threads), follows the machine's load, and another
# thread count may round a reduction differently, while many tests compare seeded runs bit for bit.
# tests/test_threads.py unsets it where it tests auto.
os.environ.setdefault("DPGAN_THREADS", "1")


@pytest.fixture(scope="session")
def encode_adult(adult_small, adult_schema):
    """`encode_adult(rows)`: Adult's first `rows` small-slice rows encoded by the bundled schema,
    their output spans, and the income condition with the schema's public prior (what the training
    loops' tests feed a strategy). A fresh tensor per call: no test sees another's changes."""

    def encode(rows: int):
        frame = adult_small.iloc[:rows]
        encoder = TableEncoder(adult_schema, {c: str(frame[c].dtype) for c in frame.columns})
        data = torch.from_numpy(encoder.encode(frame[adult_schema.names]))
        start = next(s.start for s in encoder.spans if s.column == "income")
        condition = Condition("income", ("<=50K", ">50K"), start, (0.75, 0.25), PRIOR_FROM_SCHEMA)
        return data, encoder.spans, condition

    return encode


@pytest.fixture(scope="session")
def adult() -> tuple[pd.DataFrame, pd.DataFrame]:
    return datasets.load_adult()


@pytest.fixture(scope="session")
def adult_schema() -> Schema:
    return Schema.from_json(datasets.adult_schema_path())


@pytest.fixture(scope="session")
def adult_small(adult) -> pd.DataFrame:
    return adult[0].sample(600, random_state=0).reset_index(drop=True)


@pytest.fixture(scope="session")
def fitted(adult_small, adult_schema) -> TabularSynthesizer:
    """A tiny model (a few steps): enough for API, ledger and round-trip properties."""
    synth = TabularSynthesizer(epsilon=3.0, delta=1e-5, epochs=1, batch_size=64, accountant="rdp", seed=0)
    return synth.fit(adult_small, schema=adult_schema)


@pytest.fixture(scope="session")
def digits_unit_split() -> dict[str, np.ndarray]:
    """scikit-learn's digits scaled to [0, 1] as (N, 1, 8, 8), split 1200 train / 597 test by a fixed
    permutation (the image evaluation's tests)."""
    from sklearn.datasets import load_digits

    data = load_digits()
    x, y = (data.images / 16.0).astype(np.float32)[:, None], data.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(x))
    train, test = order[:1200], order[1200:]
    return {"x": x[train], "y": y[train], "test_x": x[test], "test_y": y[test]}
