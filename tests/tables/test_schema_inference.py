"""A schema learned with DP: nothing about a column may depend on one row for free.

The leak this guards against: pandas infers dtypes from every value, so one row with an empty
`age` made the inferred column `continuous, nullable` instead of `integer, complete`, and the
saved dtype said the same — one bit per column at ε = ∞.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from dpgan import InputError, TabularSynthesizer
from dpgan.privacy.mechanisms import public_numeric_grid
from dpgan.privacy.preprocessing import TARGET_HISTOGRAM_SCALE
from dpgan.tables.codec.encoder import public_dtypes
from dpgan.tables.fit.preparation import CLASS_EVENT, SCHEMA_EVENT
from dpgan.tables.inference.column_kinds import NUMERIC, ClassCounts, PublicHints, class_counts, decide_kind
from dpgan.tables.inference.domain import OTHER, domain_counts, release_domain
from dpgan.tables.inference.infer import decide_column, infer_schema_private, infer_schema_without_privacy
from dpgan.tables.reading.table_io import read_private_table as read_table
from dpgan.tables.schema.cells import INFINITE, NULL, NUMBER, TEXT, classify
from dpgan.tables.schema.encoding_hints import kind_from_dtype

SIGMA = 8.0


def table(rows: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, rows),
            "income": np.round(rng.lognormal(10, 1, rows), 2),
            "city": rng.choice(["Turin", "Milan", "Rome"], rows, p=[0.5, 0.3, 0.2]),
            "member": rng.choice([True, False], rows),
            "label": rng.choice(["yes", "no"], rows, p=[0.8, 0.2]),
        }
    )


def as_csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False)


def read_csv_text(text: str, tmp_path, name: str) -> pd.DataFrame:
    path = tmp_path / name
    path.write_text(text)
    return read_table(path)


def learn(frame: pd.DataFrame, seed: int, hints: PublicHints | None = None, sigma: float = SIGMA):
    schema, _ = infer_schema_private(
        frame,
        hints=hints or PublicHints(target="label"),
        noise_multiplier=sigma,
        threshold_delta=1e-6,
        estimated_rows=float(len(frame)),
        rng=np.random.default_rng(seed),
    )
    return schema


def structure(schema) -> list[tuple]:
    """Everything the leak was about: kind, nullability, the saved dtype, categories."""
    dtypes = public_dtypes(schema)
    return [(c.name, c.kind, c.nullable, dtypes[c.name], c.categories) for c in schema.columns]


def test_the_neighbouring_pair_is_a_real_distinguisher_for_pandas_dtypes(tmp_path):
    """Sanity: with pandas' own inference the two CSVs below give different kinds (the old leak)."""
    base = as_csv(table())
    neighbour = base + ",123.5,Rome,True,yes\n"  # one more row, its age empty
    typed = [pd.read_csv(io.StringIO(text)) for text in (base, neighbour)]
    assert kind_from_dtype(typed[0]["age"]) == "integer" and kind_from_dtype(typed[1]["age"]) == "continuous"


@pytest.mark.parametrize("seed", range(8))
def test_neighbouring_csvs_give_the_same_schema(tmp_path, seed):
    """One more row with an empty age, or a fractional age, or a word in a numeric column: the
    learned structure is the same draw for the same noise (the counts move by one, σ ≫ 1)."""
    base = as_csv(table())
    variants = [
        base,
        base + ",123.5,Rome,True,yes\n",
        base + "41.5,123.5,Rome,True,yes\n",
        base + "old,1,Rome,True,no\n",
    ]
    schemas = [learn(read_csv_text(text, tmp_path, f"t{i}.csv"), seed) for i, text in enumerate(variants)]
    first = structure(schemas[0])
    assert all(structure(s) == first for s in schemas[1:])
    kinds = {c.name: c.kind for c in schemas[0].columns}
    assert kinds == {
        "age": "integer",
        "income": "continuous",
        "city": "categorical",
        "member": "boolean",
        "label": "categorical",
    }
    # no column has nulls: a null slot is a false one (about 2 % of complete columns at the 2σ bar,
    # dpgan.tables.inference.categorical.NULL_SLOT_SIGMAS), at most one of the five here
    assert sum(c.nullable for c in schemas[0].columns) <= 1


def test_the_same_values_in_any_dtype_give_the_same_schema():
    """Dtypes are never read: int64, float64, Int64, float32 and text hold the same numbers."""
    frame = table(1500)
    forms = [
        frame,
        frame.assign(age=frame["age"].astype("float64")),
        frame.assign(age=frame["age"].astype("Int64"), income=frame["income"].astype("float32")),
        frame.astype(str),
    ]
    structures = [structure(learn(f, seed=3)) for f in forms]
    assert all(s == structures[0] for s in structures[1:])


def test_cells_are_classified_one_by_one():
    cells = classify(pd.Series(["1", " 2.5", "word", "", None, "inf", "nan", True]))
    assert cells.kind.tolist() == [NUMBER, NUMBER, TEXT, NULL, NULL, INFINITE, NULL, TEXT]
    assert cells.whole.tolist() == [True, False, False, False, False, False, False, False]
    assert cells.text[2] == "word" and cells.text[7] == "True"


def test_kind_and_nullability_come_from_the_class_counts():
    counts = class_counts(pd.Series([1.0, 2.0, None] * 200))
    assert counts == ClassCounts(null=200, whole=400, fractional=0, text=0)
    kind = decide_kind("x", counts, sigma=5.0, hints=PublicHints())
    assert kind.kind == NUMERIC and kind.integer
    spec = decide_column("x", kind, _domain([1.0, 2.0] * 200), sigma=5.0, rows=600.0, hints=PublicHints()).spec
    assert spec.kind == "integer" and spec.nullable  # 200 nulls clear both 3σ and 0.5 % of rows
    few = decide_kind("x", class_counts(pd.Series([1.0, 2.0] * 300 + [None])), sigma=5.0, hints=PublicHints())
    assert not decide_column(
        "x", few, _domain([1.0, 2.0] * 300), sigma=5.0, rows=601.0, hints=PublicHints()
    ).spec.nullable
    # a numeric column with a few words stays numeric (the words become nulls and are counted)
    mixed = decide_kind("x", class_counts(pd.Series(["3", "4.5"] * 300 + ["n/a?"] * 5)), sigma=1.0, hints=PublicHints())
    assert mixed.kind == NUMERIC and not mixed.integer and mixed.will_be_null == 5
    # mostly words: categorical, whatever numbers it holds
    words = decide_kind("x", ClassCounts(null=0, whole=100, fractional=0, text=900), sigma=1.0, hints=PublicHints())
    assert words.kind == "categorical"


def _domain(values) -> object:
    return domain_counts(pd.Series(values), NUMERIC)


def test_hints_are_public_and_override_what_the_counts_say():
    frame = table(1500)
    frame["zip"] = np.random.default_rng(1).choice(["10100", "20100", "00100"], 1500)
    hints = PublicHints(target="label", categorical=("zip",), bounds={"age": (0.0, 120.0)})
    schema = learn(frame, seed=0, hints=hints)
    assert schema["zip"].kind == "categorical" and "00100" in schema["zip"].categories  # keys kept verbatim
    assert (schema["age"].min, schema["age"].max) == (0.0, 120.0)
    assert schema.target == "label" and not schema["label"].nullable
    with pytest.raises(InputError, match="not in the table"):
        learn(frame, seed=0, hints=PublicHints(target="nosuch"))


def test_a_long_tail_is_not_truncated_to_the_bulk():
    """The range covers the bulk plus a margin bin: values out to the margin are inside."""
    rng = np.random.default_rng(0)
    values = pd.Series(np.round(rng.lognormal(7, 0.6, 5000)))  # amounts of about 300..5000
    kind = decide_kind("amount", class_counts(values), sigma=40.0, hints=PublicHints())
    released = release_domain(domain_counts(values, NUMERIC), 20.0, math.inf, np.random.default_rng(0))
    spec = decide_column("amount", kind, released, sigma=20.0, rows=5000.0, hints=PublicHints()).spec
    assert spec.kind == "integer"
    assert np.mean((values >= spec.min) & (values <= spec.max)) > 0.99


def test_one_noise_bin_decades_away_does_not_take_the_range_there():
    """Times of day 1..2,400 and one grid bin of pure noise at −7·10⁷ drawn at 3.7σ (the grid has
    about 150 bins: some bin of a column clears 3.5σ about 3 % of the time). The bin is set apart
    from the data: it needs 5σ to count, so the range stays the data's (NYC flights' arr_time came
    out [−7·10⁷, 3,000]); a far cluster that clears 5σ still counts."""
    from dpgan.tables.inference.numeric import mass_bins, quantile_range

    rng = np.random.default_rng(0)
    values = pd.Series(rng.integers(1, 2400, 20000))
    edges = public_numeric_grid()
    sigma = 97.0
    counts = domain_counts(values, NUMERIC).bins + rng.normal(0.0, 0.3 * sigma, len(edges) - 1)
    far = int(np.searchsorted(edges, -7e7, side="right")) - 1
    counts[far] = 3.7 * sigma
    low, high = quantile_range(mass_bins(counts, sigma, edges), counts, sigma, edges)
    assert low >= 0.0 and high <= 5000.0
    counts[far] = 400 * sigma  # a real cluster far away: thousands of rows
    low, _ = quantile_range(mass_bins(counts, sigma, edges), counts, sigma, edges)
    assert low <= -7e7


def test_fit_without_schema_records_one_histogram_per_column_and_the_target(adult_small):
    synth = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, accountant="rdp", seed=0)
    synth.fit(adult_small.astype(str), target="income")
    events = {e.name: e for e in synth.ledger.entries}
    assert events[CLASS_EVENT].count == adult_small.shape[1]  # one class histogram per column ...
    assert events[SCHEMA_EVENT].count == adult_small.shape[1] - 1  # ... and one of values, the target's apart
    target_event = events["schema: the target's values (income)"]
    scale = TARGET_HISTOGRAM_SCALE  # less noise than a column's: the target's values decide which labels exist
    assert scale < 1 and target_event.noise_multiplier == pytest.approx(scale * events[SCHEMA_EVENT].noise_multiplier)
    assert synth.schema.target == "income" and synth.label_model is not None
    # the two classes and nothing else: the rest of N̂ is noise, so no third class "(other)"
    assert synth.schema["income"].categories == ("<=50K", ">50K") and not synth.schema["income"].nullable


def test_without_dp_drops_identifier_columns_unless_asked():
    frame = table(300).assign(customer=[f"C{i:05d}" for i in range(300)])
    schema, notes = infer_schema_without_privacy(frame)
    assert "customer" not in schema.names and any("identifier" in n for n in notes)
    kept, _ = infer_schema_without_privacy(frame, keep_identifiers=True)
    assert "customer" in kept.names


def test_a_public_label_list_keeps_a_rare_label_at_any_noise():
    """A threshold would fold a 3 % label into (other) at this σ; a public list needs none."""
    frame = pd.DataFrame({"x": np.arange(2000) % 50, "y": ["no"] * 1940 + ["yes"] * 60})
    sigma = 30.0  # the threshold is then about 1 + 5.3σ = 160 rows
    plain = learn(frame, seed=0, hints=PublicHints(target="y"), sigma=sigma)
    # seed 1: with seed 0 the rest cell's noise (drawn after the five-cell class histograms) lands at
    # 3.07σ, where a public list rightly gets `(other)` (a 0.1 % event)
    listed = learn(frame, seed=1, hints=PublicHints(target="y", categories={"y": ("no", "yes")}), sigma=sigma)
    assert "yes" not in plain["y"].categories
    assert listed["y"].categories == ("no", "yes") and listed["y"].other_category is None
    assert listed["y"].frequencies[1] == pytest.approx(60, abs=4 * sigma)  # a noisy count, not the exact one
    frame["y"] = ["no"] * 1500 + ["maybe"] * 500
    unlisted = learn(frame, seed=0, hints=PublicHints(target="y", categories={"y": ("no",)}), sigma=sigma)
    assert unlisted["y"].categories == ("no", OTHER)  # values outside the list are clearly there: a slot


def test_a_target_that_kept_one_class_is_released_again_and_charged():
    """The first release decides (its output only): a target that kept both classes is released
    exactly as before, with no second event; one that kept fewer than two gets the second chance,
    one more ledger event, and finds the minority class in most draws. Its cost is capped, and a
    whole fit's ε stays the target (the GAN is calibrated on what is left)."""
    from dpgan.privacy.accounting import PrivacyLedger
    from dpgan.privacy.calibration import FitBudget
    from dpgan.privacy.mechanisms import set_union_threshold
    from dpgan.tables.fit.preparation import TARGET_AGAIN_EVENT, TARGET_SECOND_SHARE, learn_schema, plan_for

    hints = PublicHints(target="y")
    budget = FitBudget(1.0, 1e-5, "pld")
    plan = plan_for(
        ["x", "y"], hints=hints, infer=True, count_repairs=True, needs_prior=False, budget=budget, fraction=0.25
    )
    bar = set_union_threshold(plan.sigma(TARGET_HISTOGRAM_SCALE), plan.threshold_delta / 2)
    rows = 3000
    minority = int(bar)  # at the first release's bar: it fails about half the time
    frame = pd.DataFrame({"x": np.arange(rows) % 7, "y": ["no"] * (rows - minority) + ["yes"] * minority})
    cap = budget.at(0.25 + TARGET_SECOND_SHARE)
    triggered = found = 0
    for seed in range(12):
        runs = {}
        for second in (None, cap):
            ledger = PrivacyLedger()
            schema, _ = learn_schema(
                frame,
                hints=hints,
                plan=plan,
                rows=rows,
                ledger=ledger,
                rng=np.random.default_rng(seed),
                second_cap=second,
            )
            runs[second is not None] = (schema, [e.name for e in ledger.entries], ledger)
        (first, first_events, _), (again, events, ledger) = runs[False], runs[True]
        assert TARGET_AGAIN_EVENT not in first_events
        if "yes" in first["y"].categories:  # the first release kept both: nothing more is released
            assert again == first and events == first_events
            continue
        triggered += 1
        assert events == [*first_events, TARGET_AGAIN_EVENT]
        assert ledger.epsilon(1e-5, "pld") <= (0.25 + TARGET_SECOND_SHARE) * 1.0 + 1e-6
        found += "yes" in again["y"].categories
    # the second chance finds it in about 0.8 of the draws that need it (60 seeds, before and after the
    # domain release's null cell moved the draws): most, not all
    assert triggered >= 3 and found >= (2 * triggered) // 3


def test_a_long_run_of_weak_noise_does_not_carry_the_range_away():
    """Forty negative bins at 0.6σ each: their sum clears 3.5σ·√40, no run of a decade's bins does.
    A tail is taken a decade-long run at a time, so the range stays at the data."""
    from dpgan.tables.inference.numeric import mass_bins, quantile_range

    edges = public_numeric_grid()
    sigma = 10.0
    counts = np.zeros(len(edges) - 1)
    data = (edges[:-1] >= 100.0) & (edges[:-1] < 2000.0)
    counts[data] = 500.0
    start = int(np.searchsorted(edges, 100.0))
    counts[start - 40 : start] = 0.6 * sigma  # the 40 bins below the data, down into the negatives
    low, high = quantile_range(mass_bins(counts, sigma, edges), counts, sigma, edges)
    assert low >= 50.0 and high <= 3000.0


def test_learned_bins_hold_like_shares_of_a_heavy_tail(monkeypatch):
    """Bins at the DP quantiles of the grid mass (BIN_PLACEMENT "quantile"): on a long-tailed amount
    every learned bin holds a like share of the rows (equal bins on the log scale, the default,
    leave the tail's bins nearly empty); the edges are post-processing of the same release, so both
    placements read one draw and give the same range and scale."""
    from dpgan.tables.codec.column_transforms import NumericTransform
    from dpgan.tables.inference import numeric as schema_inference

    rng = np.random.default_rng(0)
    values = pd.Series(np.round(rng.lognormal(8, 1.2, 20000)))
    kind = decide_kind("amount", class_counts(values), sigma=40.0, hints=PublicHints())
    released = release_domain(domain_counts(values, NUMERIC), 20.0, math.inf, np.random.default_rng(0))
    specs = {}
    for placement in ("equal", "quantile"):
        monkeypatch.setattr(schema_inference, "BIN_PLACEMENT", placement)
        specs[placement] = decide_column("amount", kind, released, sigma=20.0, rows=20000.0, hints=PublicHints()).spec
    equal, quantile = specs["equal"], specs["quantile"]
    assert (quantile.min, quantile.max, quantile.scale) == (equal.min, equal.max, equal.scale)
    assert not equal.bin_edges and quantile.bins == len(quantile.bin_edges) + 1 >= 6
    assert all(edge - math.floor(edge) == 0.5 for edge in quantile.bin_edges)  # between whole numbers

    def shares(spec):
        block = NumericTransform(spec).encode(values)
        return block[:, 1 : 1 + spec.bins].mean(axis=0)

    assert shares(quantile).min() > 0.5 / quantile.bins and shares(quantile).max() < 2.0 / quantile.bins
    assert shares(equal).min() < 0.02  # the equal bins it replaces


def test_quantile_bin_edges_read_the_mass_and_merge_where_it_piles_up():
    from dpgan.tables.inference.numeric import quantile_bin_edges

    edges = np.array([0.0, 10.0, 20.0, 30.0, 40.0])
    uniform = np.array([5.0, 5.0, 5.0, 5.0])
    assert quantile_bin_edges(uniform, edges, 0.0, 40.0, 4, integer=False) == (10.0, 20.0, 30.0)
    # only the mass inside the range counts: [0, 20] holds two even bins
    assert quantile_bin_edges(uniform, edges, 0.0, 20.0, 4, integer=False) == (5.0, 10.0, 15.0)
    assert quantile_bin_edges(uniform, edges, 0.0, 40.0, 4, integer=True) == (9.5, 19.5, 29.5)
    # all mass in one grid bin of an integer column: the cuts collapse to fewer distinct edges
    piled = np.array([0.0, 9.0, 0.0, 0.0])
    assert quantile_bin_edges(piled, edges, 0.0, 40.0, 8, integer=True) == (11.5, 12.5, 13.5, 14.5, 16.5, 17.5, 18.5)
    assert quantile_bin_edges(piled, edges, 0.0, 40.0, 40, integer=True)[:3] == (10.5, 11.5, 12.5)
    assert quantile_bin_edges(np.zeros(4), edges, 0.0, 40.0, 4, integer=False) == ()
