"""Code hierarchies: a rare value falls back to its released parent, one DP histogram per level."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpgan import InputError, TabularSynthesizer
from dpgan.tables.fit.preparation import HIERARCHY_EVENT
from dpgan.tables.inference.column_kinds import PublicHints
from dpgan.tables.inference.domain import OTHER
from dpgan.tables.inference.hierarchy import fallback_counts, level_counts
from dpgan.tables.inference.infer import infer_schema_private
from dpgan.tables.reading.conform import conform
from dpgan.tables.schema.hierarchy import Hierarchy
from dpgan.tables.schema.table import Schema

PREFIX = Hierarchy(prefix=(3, 1))
PARENTS = Hierarchy.from_dict({"parents": [{"02139": "Cambridge", "02140": "Cambridge"}, {"Cambridge": "MA"}]})


def zips(rows: int, seed: int = 0) -> pd.DataFrame:
    """Three prefixes, a hundred codes each: no code clears the threshold at σ = 10, every prefix does."""
    rng = np.random.default_rng(seed)
    prefixes = rng.choice(["021", "100", "941"], rows, p=[0.5, 0.3, 0.2])
    return pd.DataFrame({"zip": [p + f"{rng.integers(0, 100):02d}" for p in prefixes]})


def learn(frame: pd.DataFrame, hints: PublicHints, seed: int = 0) -> Schema:
    schema, _ = infer_schema_private(
        frame, hints=hints, noise_multiplier=10.0, threshold_delta=1e-6, estimated_rows=float(len(frame)),
        rng=np.random.default_rng(seed),
    )  # fmt: skip
    return schema


def test_ancestors_are_the_prefixes_then_the_mapped_parents():
    assert PREFIX.ancestors("02139") == ["021*", "0*"]
    assert PREFIX.ancestors("7") == ["7*", "7*"]  # shorter than a length: its own prefix
    assert PARENTS.ancestors("02139") == ["Cambridge", "MA"] and PARENTS.ancestors("10001") == []
    assert Hierarchy.from_dict(PREFIX.to_dict()) == PREFIX and Hierarchy.from_dict(PARENTS.to_dict()) == PARENTS


@pytest.mark.parametrize(
    "data", [{"prefix": [1, 3]}, {"prefix": [0]}, {"prefix": 3}, {"parents": []}, {"prefix": [3], "parents": {}}, []]
)
def test_bad_hierarchies_are_one_line(data):
    with pytest.raises(InputError):
        Hierarchy.from_dict(data)


@pytest.mark.parametrize("hierarchy", [PREFIX, PARENTS])
@pytest.mark.parametrize("added", ["02139", "02199", "10001", "9", None])
def test_each_level_has_sensitivity_one(hierarchy, added):
    """Neighbouring tables (one row added) differ by one in at most one cell of each level."""
    base = zips(300)["zip"].value_counts().astype(float).to_dict()
    neighbour = dict(base)
    if added is not None:
        neighbour[added] = neighbour.get(added, 0.0) + 1.0
    for level in range(hierarchy.levels):
        one, two = level_counts(base, hierarchy, level), level_counts(neighbour, hierarchy, level)
        difference = np.array([two.get(k, 0.0) - one.get(k, 0.0) for k in set(one) | set(two)])
        assert np.abs(difference).sum() <= 1.0


def test_rare_codes_fall_back_to_their_released_prefix_instead_of_other():
    """Before: no hierarchy, so every row of this column became (other)."""
    frame = zips(3000)
    plain = learn(frame, PublicHints())["zip"]
    coded = learn(frame, PublicHints(hierarchies={"zip": PREFIX}))["zip"]
    assert plain.categories == (OTHER,)
    assert {"021*", "100*", "941*"} <= set(coded.categories) and coded.hierarchy == PREFIX
    mapped = conform(frame, Schema((coded,))).frame["zip"]
    assert (mapped == OTHER).mean() < 0.01 and set(mapped) >= {"021*", "100*", "941*"}
    assert mapped[frame["zip"].str.startswith("021")].eq("021*").all()


def test_released_frequencies_count_the_rows_that_fall_back():
    levels = [{"021": 100.0, "100": 50.0}, {"0": 130.0, "1": 60.0, "9": 20.0}]
    leaves = {"02139": 30.0, "10001": 55.0, "94110": 12.0}
    fallbacks = fallback_counts(leaves, levels, PREFIX)
    # 021* less its released code; 100* less more than it holds (noise): 0; 0* less 021*; 9* less 94110
    assert fallbacks == [{"021": 70.0, "100": 0.0}, {"0": 30.0, "1": 10.0, "9": 8.0}]


def test_public_parent_cells_need_no_threshold():
    frame = pd.DataFrame({"zip": ["02139"] * 40 + ["02140"] * 40 + ["10001"] * 900})
    spec = learn(frame, PublicHints(hierarchies={"zip": PARENTS}))["zip"]
    # each code's 40 rows sit below the values' bar (≈ 54 rows); their public parent needs none
    assert "Cambridge" in spec.categories and "10001" in spec.categories
    assert spec.categories.index("Cambridge") < spec.categories.index(OTHER)


def test_a_hand_schema_maps_an_unlisted_code_to_its_listed_ancestor():
    column = {"name": "zip", "kind": "categorical", "other_category": "(other)",
              "categories": ["02139", "021*", "(other)"], "hierarchy": {"prefix": [3]}}  # fmt: skip
    schema = Schema.from_dict({"columns": [column]})
    frame = pd.DataFrame({"zip": ["02139", "02199", "10001", None]})
    assert conform(frame, schema).frame["zip"].tolist() == ["02139", "021*", "(other)", "(other)"]
    with pytest.raises(InputError, match="categorical columns only"):
        Schema.from_dict(
            {"columns": [{"name": "n", "kind": "integer", "min": 0, "max": 1, "hierarchy": {"prefix": [1]}}]}
        )


def test_the_levels_are_charged_to_the_ledger_and_the_fit_stays_within_epsilon():
    frame = zips(1500).assign(b=np.arange(1500) % 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(epsilon=1.0, epochs=1, batch_size=64, seed=0).fit(
            frame, hierarchies={"zip": {"prefix": [3, 1]}}, progress=False
        )
    entries = {e.name: e for e in synth.ledger.entries}
    assert entries[HIERARCHY_EVENT].count == 2 and synth.privacy_report()["epsilon"] <= 1.0
    assert (synth.sample(400, seed=1)["zip"] == OTHER).mean() < 0.2


def test_hierarchy_hints_are_refused_on_the_target_or_beside_a_schema():
    frame = zips(50).assign(y=["a", "b"] * 25)
    synth = TabularSynthesizer(epsilon=1.0, epochs=1, seed=0)
    with pytest.raises(InputError, match="cannot take a hierarchy"):
        synth.fit(frame, target="zip", hierarchies={"zip": {"prefix": [3]}}, progress=False)
    schema = {"columns": [{"name": "zip", "kind": "categorical", "categories": ["x"]},
                          {"name": "y", "kind": "categorical", "categories": ["a", "b"]}]}  # fmt: skip
    with pytest.raises(InputError, match="write them into it"):
        synth.fit(frame, schema=schema, hierarchies={"zip": {"prefix": [3]}}, progress=False)
