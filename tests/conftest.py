"""Shared fixtures: small slices of the bundled Adult data and a fitted tiny model."""

from __future__ import annotations

import pandas as pd
import pytest

from dpgan import Schema, TabularSynthesizer, datasets


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
