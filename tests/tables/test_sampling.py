"""Sampling a released tabular model (dpgan.tables.sampling.rows), with stand-in post-processors.

The post-processors are injected (black box): each rewrites one column and says which slot it
drew, so the properties are checked without training a label model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from dpgan.errors import InputError
from dpgan.tables.sampling.rows import SAMPLE_CHUNK, RowPostProcessor, TableSampler


@dataclass
class SetColumn:
    """Writes `value` into `column` of every row (slot 0); records each call."""

    column: str
    value: str
    calls: list[tuple[str, int]] = field(default_factory=list)

    def redraw(self, frame, encoder, rng):
        self.calls.append((self.column, len(frame)))
        out = frame.copy()
        out[self.column] = self.value
        return out, np.zeros(len(frame), dtype=np.int64)

    def code_of(self, value, encoder):
        if value != self.value:
            raise InputError(f"{value!r} is not a value of {self.column!r}")
        return 0


@dataclass
class CoinColumn:
    """Writes "heads" (slot 0) or "tails" (slot 1) into `column`, drawn from the sampling rng;
    `p_tails` = 0 makes tails a value the model never gives."""

    column: str
    p_tails: float = 0.5

    def redraw(self, frame, encoder, rng):
        codes = (rng.random(len(frame)) < self.p_tails).astype(np.int64)
        out = frame.copy()
        out[self.column] = np.where(codes == 1, "tails", "heads")
        return out, codes

    def code_of(self, value, encoder):
        return ["heads", "tails"].index(value)


def sampler(fitted, *processors: RowPostProcessor) -> TableSampler:
    return TableSampler(fitted.generator, fitted.encoder, None, fitted.config.noise_dim, processors)


def test_post_processors_rewrite_only_their_column_in_order(fitted):
    race, sex = SetColumn("race", "R"), SetColumn("sex", "S")
    plain = sampler(fitted).sample(30, {}, seed=4)
    processed = sampler(fitted, race, sex).sample(30, {}, seed=4)
    assert set(processed["race"]) == {"R"} and set(processed["sex"]) == {"S"}
    others = [c for c in plain.columns if c not in ("race", "sex")]
    pd.testing.assert_frame_equal(processed[others], plain[others])
    assert race.calls == [("race", 30)] and sex.calls == [("sex", 30)]


def test_large_samples_are_generated_in_chunks(fitted):
    race = SetColumn("race", "R")
    frame = sampler(fitted, race).sample(SAMPLE_CHUNK + 7, {}, seed=0)
    assert len(frame) == SAMPLE_CHUNK + 7 and race.calls == [("race", SAMPLE_CHUNK), ("race", 7)]


def test_a_wanted_post_processed_value_is_met_by_rejection(fitted):
    coin, other = CoinColumn("race"), CoinColumn("sex", p_tails=0.3)
    frame = sampler(fitted, coin, other).sample(50, {"race": "tails", "sex": "tails"}, seed=1)
    assert len(frame) == 50 and set(frame["race"]) == {"tails"} and set(frame["sex"]) == {"tails"}
    again = sampler(fitted, coin, other).sample(50, {"race": "tails", "sex": "tails"}, seed=1)
    pd.testing.assert_frame_equal(frame, again)


def test_a_value_the_model_never_gives_is_refused_as_too_rare(fitted):
    with pytest.raises(InputError, match="'race' that value in 0 of"):
        sampler(fitted, CoinColumn("race", p_tails=0.0)).sample(5, {"race": "tails"}, seed=0)


def test_conditions_on_other_columns_need_a_conditional_model(fitted):
    with pytest.raises(InputError, match="not conditional"):
        sampler(fitted, CoinColumn("race")).sample(5, {"race": "heads", "sex": "Male"}, seed=0)
    with pytest.raises(InputError, match="not a value"):
        sampler(fitted, SetColumn("race", "R")).sample(5, {"race": "Q"}, seed=0)
