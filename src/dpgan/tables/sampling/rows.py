"""Rows from a released tabular model: chunked generation, post-processors, wanted values.

Key columns (dpgan.tables.schema.keys) are written afresh into every sample, at their place
among the columns: their format is public and nothing about the private keys was ever read.

Privacy: everything here reads only released DP models (the generator, each post-processor's
own DP-SGD model) and the public (or DP) schema, never the private table, so a sample of any
size costs nothing further (post-processing). The randomness is the caller's (`seed`, else OS
entropy) and never enters the ledger.

A post-processor (`RowPostProcessor`) rewrites one column of every generated row from a released
model: the label model (dpgan.tables.sampling.label_model) redraws the target from P(target | other
columns). A request for a value of such a column cannot be passed to the generator; it is met
by rejection: rows are drawn until enough have that value after post-processing, so they follow
P(other columns | value) of the joint the released model samples.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd
import torch

from dpgan.devices import module_device
from dpgan.errors import InputError
from dpgan.tables.codec.conditioning import Condition, condition_codes
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.codec.geo import region_points
from dpgan.tables.fit.options import positive_int
from dpgan.tables.schema.keys import sampled_keys
from dpgan.tables.schema.table import Schema

MAX_SAMPLE_ROWS = 100_000_000
SAMPLE_CHUNK = 20_000
# sampling a wanted value of a post-processed column gives up below this acceptance rate
MIN_ACCEPTANCE = 1e-3


class RowPostProcessor(Protocol):
    """Rewrites `column` of generated rows from a released DP model (free: post-processing)."""

    column: str

    def redraw(
        self, frame: pd.DataFrame, encoder: TableEncoder, rng: np.random.Generator
    ) -> tuple[pd.DataFrame, np.ndarray]:
        """`frame` with `column` drawn afresh, and the category slot drawn for each row."""
        ...

    def code_of(self, value: Any, encoder: TableEncoder) -> int:
        """The slot of a requested value of `column` (InputError if it has none)."""
        ...


@dataclass(frozen=True)
class TableSampler:
    """A released generator with its codec, condition and post-processors, ready to sample."""

    generator: torch.nn.Module
    encoder: TableEncoder
    condition: Condition | None
    noise_dim: int
    post_processors: Sequence[RowPostProcessor] = ()

    def sample(self, n: int, conditions: dict[str, Any], seed: int | None) -> pd.DataFrame:
        """n rows; `conditions` names columns of the model (checked by the caller): the generator's
        condition column is fixed at generation, a post-processed column by rejection. Without a
        `seed` the draws come from OS entropy."""
        return pd.concat(list(self.chunks(n, conditions, seed)), ignore_index=True)

    def chunks(self, n: int, conditions: dict[str, Any], seed: int | None) -> Iterator[pd.DataFrame]:
        """The rows of `sample(n, conditions, seed)` as consecutive frames of at most SAMPLE_CHUNK
        rows, each generated only when asked for: memory stays flat in n. The arguments are
        checked now, before any row is drawn; `sample` is their concatenation, so a seed gives the
        same rows whether they are collected or streamed."""
        conditions = dict(conditions)
        wanted = {
            index: processor.code_of(conditions.pop(processor.column), self.encoder)
            for index, processor in enumerate(self.post_processors)
            if processor.column in conditions
        }
        if conditions and self.condition is None:
            raise InputError("this model is not conditional: fit with a condition column to use conditions")
        rng = np.random.default_rng(seed if seed is not None else secrets.randbits(64))
        torch_gen = torch.Generator(device=module_device(self.generator)).manual_seed(int(rng.integers(0, 2**63 - 1)))
        self.generator.eval()
        if wanted:
            return self._wanted_chunks(n, wanted, conditions, rng, torch_gen)
        return (
            self._generate(min(SAMPLE_CHUNK, n - start), conditions, rng, torch_gen)[0]
            for start in range(0, n, SAMPLE_CHUNK)
        )

    def _generate(
        self, size: int, conditions: dict[str, Any], rng: np.random.Generator, torch_gen: torch.Generator
    ) -> tuple[pd.DataFrame, list[np.ndarray]]:
        """`size` decoded rows after every post-processor, with the slots each one drew."""
        z = torch.randn(size, self.noise_dim, generator=torch_gen, device=torch_gen.device)
        onehot = None
        if self.condition is not None:
            onehot = self.condition.one_hot(condition_codes(self.condition, conditions or None, size, torch_gen))
        draw = getattr(self.generator, "draw_encoded", None)  # a statistics model draws its own rows
        encoded = draw(size, torch_gen) if draw is not None else self.generator.sample_encoded(z, onehot)
        frame = self.encoder.decode(encoded.cpu().numpy(), rng)
        drawn_codes = []
        for processor in self.post_processors:
            frame, codes = processor.redraw(frame, self.encoder, rng)
            drawn_codes.append(codes)
        return frame, drawn_codes

    def _wanted_chunks(
        self,
        n: int,
        wanted: dict[int, int],
        conditions: dict[str, Any],
        rng: np.random.Generator,
        torch_gen: torch.Generator,
    ) -> Iterator[pd.DataFrame]:
        """n rows whose post-processed columns have the `wanted` slots ({processor index: slot}):
        rejection sampling from the released model, the kept rows of each drawn chunk in turn."""
        have = drawn = 0
        while have < n:
            frame, codes = self._generate(SAMPLE_CHUNK, conditions, rng, torch_gen)
            drawn += SAMPLE_CHUNK
            hits = np.logical_and.reduce([codes[index] == slot for index, slot in wanted.items()])
            match = frame[hits].head(n - have).reset_index(drop=True)
            have += len(match)
            if have < n and have < MIN_ACCEPTANCE * drawn:
                columns = " and ".join(repr(self.post_processors[index].column) for index in wanted)
                raise InputError(
                    f"the model gives {columns} that value in {have} of {drawn} rows: too rare to sample it on its own"
                )
            if len(match):
                yield match


def sample_chunks(
    sampler: TableSampler,
    schema: Schema,
    n: int,
    seed: int | None,
    conditions: dict[str, Any] | None,
    region_points: Sequence[str],
) -> Iterator[pd.DataFrame]:
    """n rows in chunks, the arguments checked now (before anything is generated), the rows
    generated as they are consumed; `region_points` adds a point inside each row's region box."""
    n = positive_int(n, "n")
    if n > MAX_SAMPLE_ROWS:
        raise InputError(f"n={n} is too large; sample at most {MAX_SAMPLE_ROWS} rows per call")
    if conditions is not None and not isinstance(conditions, dict):
        raise InputError("conditions must be a mapping like {'income': '>50K'}")
    unknown = [str(c) for c in conditions or {} if c not in schema.names]
    if unknown:
        raise InputError(
            f"{', '.join(map(repr, unknown))} is not a column of this model; its columns are " + ", ".join(schema.names)
        )
    if isinstance(region_points, str):
        raise InputError("region_points must be a list of column names")
    for column in region_points:  # refused before anything is generated
        if column not in schema.names or not schema[column].boxes:
            raise InputError(f"{column!r} is not a region column: its schema entry has no 'boxes'")
    chunks = sampler.chunks(n, dict(conditions or {}), seed)
    if region_points:
        points_rng = np.random.default_rng(None if seed is None else [seed, 1])  # not the rows' stream
        chunks = (_with_points(frame, schema, region_points, points_rng) for frame in chunks)
    return _with_keys(chunks, schema, seed) if schema.keys else chunks


def _with_keys(chunks: Iterator[pd.DataFrame], schema: Schema, seed: int | None) -> Iterator[pd.DataFrame]:
    """Each chunk with fresh key columns (dpgan.tables.schema.keys), numbered on from the last chunk's,
    so keys are unique across the whole sample; a UUID's bits come from a stream of their own."""
    rng = np.random.default_rng(None if seed is None else [seed, 2])  # neither the rows' nor the points'
    start = 0
    for frame in chunks:
        yield sampled_keys(schema.keys, frame, start, rng)
        start += len(frame)


def _with_points(frame: pd.DataFrame, schema: Schema, columns: Sequence[str], rng: np.random.Generator) -> pd.DataFrame:
    """One chunk with a point for each of its rows in each region column (drawn chunk by chunk:
    with one region column, the same points as for the whole frame at once)."""
    for column in columns:
        frame = region_points(frame, schema, column, rng)
    return frame
