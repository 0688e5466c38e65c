"""The entity kind's time column by type (dpgan.entities.schema): a pandas datetime64 column, naive or
zoned, fits and samples back in its own dtype, with a window (hand schema) or bought with DP (CSV-only
path); an integer order and a float day count sample back as numbers of their own kind; the format a
window without one implies comes from the caller's dtype alone, so neighbouring inputs give the same
public facts; a format that cannot read the column's dtype is one line, whatever the cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpgan.entities.facade import EntitySynthesizer
from dpgan.entities.reader import read_entities
from dpgan.entities.schema import EntitySchema, TimeSpec, parse_times
from dpgan.errors import InputError

HINTS = dict(key="id", time_column="when", categories={"kind": ["a", "b"]}, bounds={"x": (0.0, 1.0)}, max_events=6)
WINDOW = ("2020-01-01", "2020-03-01")
DTYPES = ("datetime64[us]", "datetime64[ns]", "datetime64[ns, UTC]", "datetime64[us, Europe/Paris]")


def tables(times: pd.Series | np.ndarray, n: int = 40, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """n parents, and one event per time in `times` owned by a random parent."""
    rng = np.random.default_rng(seed)
    parents = pd.DataFrame({"id": np.arange(n), "kind": rng.choice(["a", "b"], n)})
    m = len(times)
    events = pd.DataFrame({"id": rng.integers(0, n, m), "when": times, "x": rng.random(m)})
    return parents, events


def stamps(dtype: str, m: int = 200, seed: int = 1) -> pd.Series:
    """m date-times inside WINDOW (in the dtype's zone: its wall clock, not UTC's) of the given dtype."""
    seconds = np.random.default_rng(seed).integers(0, 50 * 86400, m)
    naive = pd.Series(pd.Timestamp("2020-01-02") + pd.to_timedelta(seconds, unit="s"))
    zone = getattr(pd.api.types.pandas_dtype(dtype), "tz", None)
    return (naive.dt.tz_localize(zone) if zone is not None else naive).astype(dtype)


def fit(parents, events, **extra) -> EntitySynthesizer:
    return EntitySynthesizer(epsilon=5.0, seed=0).fit(parents, events, **{**HINTS, **extra})


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_datetime64_time_column_samples_back_in_its_dtype_in_time_order_and_window(dtype, tmp_path):
    parents, events = tables(stamps(dtype))
    synth = fit(parents, events, time_bounds=WINDOW)
    assert synth.schema.time.format == dtype
    _, sampled = synth.sample(50, seed=3)
    assert sampled["when"].dtype == events["when"].dtype and len(sampled) > 0
    utc = sampled["when"].dt.tz_convert(None) if sampled["when"].dt.tz is not None else sampled["when"]
    assert utc.min() >= pd.Timestamp(WINDOW[0]) and utc.max() <= pd.Timestamp(WINDOW[1])
    assert all(g["when"].is_monotonic_increasing for _, g in sampled.groupby("id"))
    synth.save(tmp_path / "model")  # the window is written as ISO text (JSON), the dtype as the format
    _, again = EntitySynthesizer.load(tmp_path / "model").sample(50, seed=3)
    pd.testing.assert_frame_equal(sampled, again)


@pytest.mark.parametrize("dtype", ("datetime64[us]", "datetime64[ns, Europe/Paris]"))
def test_a_datetime64_time_column_without_a_window_has_it_bought_and_keeps_its_dtype(dtype):
    parents, events = tables(stamps(dtype, m=1200), n=200)  # a bought window needs a few hundred entities
    synth = fit(parents, events)  # the window bought with DP; the format is the caller's dtype (public)
    assert synth.schema.time.format == dtype
    assert any("window of 'when'" in part for part in synth.training["dp_schema"])
    assert not any("format" in part for part in synth.training["dp_schema"])
    _, sampled = synth.sample(30, seed=0)
    assert sampled["when"].dtype == events["when"].dtype


def test_zoned_and_naive_cells_are_read_on_one_clock_utc_for_zoned_ones():
    spec = TimeSpec("when", "2020-01-01", "2020-03-01", "datetime64")
    zoned = pd.Series([pd.Timestamp("2020-01-02 01:00", tz="Europe/Paris")])  # midnight UTC
    naive = pd.Series([pd.Timestamp("2020-01-02 00:00")])
    mixed = pd.Series([pd.Timestamp("2020-01-02 00:00"), "2020-01-02 00:00", 5, None, pd.NaT], dtype=object)
    expected = (pd.Timestamp("2020-01-02") - pd.Timestamp(0)).total_seconds()
    assert parse_times(zoned, spec)[0] == parse_times(naive, spec)[0] == expected
    read = parse_times(mixed, spec)  # in an object column only typed cells are read: text, a number, nulls are not
    assert read[0] == expected and np.isnan(read[1:]).all()


def test_an_entity_s_unreadable_time_drops_its_event_alone_and_is_counted():
    times = stamps("datetime64[us]").astype(object)
    times.iloc[:5] = "not a time"  # an object column: five events of some entities are text
    parents, events = tables(times)
    synth = fit(parents, events, time_bounds=WINDOW, time_format="datetime64")  # object: the format is named
    assert synth.sample(20, seed=0)[1]["when"].dtype == "datetime64[us]"  # "datetime64" alone: pandas' default
    read = read_entities(parents, events, synth.schema, 8, np.random.default_rng(0))  # before any noise
    owners = events["id"].iloc[:5]
    assert read.flags[0] == owners.nunique()  # each entity with a text time counted once
    assert read.counts.sum() == len(events) - 5  # those five events dropped, every other one kept


@pytest.mark.parametrize(("values", "dtype"), [(np.arange(200) % 29, "int64"), (np.linspace(0, 4000, 200), "float64")])
def test_an_integer_order_or_a_float_day_count_samples_back_as_numbers_of_its_kind(values, dtype):
    parents, events = tables(pd.Series(values).astype(dtype))
    synth = fit(parents, events, time_bounds=(0, int(values.max()) + 1))
    _, sampled = synth.sample(40, seed=0)
    assert sampled["when"].dtype == np.dtype(dtype)
    assert sampled["when"].between(0, int(values.max()) + 1).all()
    if dtype == "int64":
        assert synth.schema.time.format == "integer"
    again = fit(parents, events, time_bounds=(0, int(values.max()) + 1), time_format="number")
    assert again.sample(40, seed=0)[1]["when"].dtype == np.float64  # a format given wins over the dtype


@pytest.mark.parametrize("dtype", ("datetime64[us]", "datetime64[ns, UTC]", "int64"))
def test_neighbours_give_the_same_time_format_and_public_facts(dtype):
    """Adding one entity with far more than k events (all at one time) or whose every time is null:
    the time spec, the schema and the ledger's entries are the same."""
    values = stamps(dtype) if dtype.startswith("datetime64") else pd.Series(np.arange(200) % 60, dtype=dtype)
    parents, events = tables(values)
    window = WINDOW if dtype.startswith("datetime64") else (0, 60)

    def facts(p, e):
        synth = fit(p, e, time_bounds=window)
        return synth.schema.to_dict(), [(x.name, x.noise_multiplier, x.count) for x in synth.ledger.entries]

    base = facts(parents, events)
    heavy_parent = pd.DataFrame({"id": [999], "kind": ["a"]})
    for heavy_time in (values.iloc[0], None):
        heavy = pd.DataFrame({"id": [999] * 300, "when": pd.Series([heavy_time] * 300).astype(values.dtype)
                              if heavy_time is not None else pd.Series([None] * 300, dtype=values.dtype
                              if dtype.startswith("datetime64") else "float64"), "x": 0.5})  # fmt: skip
        neighbour = (pd.concat([parents, heavy_parent], ignore_index=True),
                     pd.concat([events, heavy], ignore_index=True))  # fmt: skip
        if neighbour[1]["when"].dtype != events["when"].dtype:
            continue  # a null in an int64 column makes pandas change the caller's dtype: not a neighbour
        assert facts(*neighbour) == base


@pytest.mark.parametrize(
    ("dtype", "fmt", "said"),
    [
        ("datetime64[us]", "%Y-%m-%d", "holds typed date-times"),
        ("datetime64[ns, UTC]", "integer", "holds typed date-times"),
        ("str", "datetime64[us]", "not typed date-times"),
        ("float64", "datetime64", "not typed date-times"),
    ],
)
def test_a_format_that_cannot_read_the_column_s_dtype_is_one_line_whatever_the_cells(dtype, fmt, said):
    """The refusal reads the caller's dtype and the format only: with every time null it is the same."""
    if dtype.startswith("datetime64"):
        values = stamps(dtype)
    else:
        values = pd.Series(np.arange(200.0)).astype(dtype)
    window = WINDOW if fmt.startswith("%") or fmt.startswith("datetime64") else (0, 10**10)
    for times in (values, pd.Series([None] * len(values), dtype=values.dtype)):
        parents, events = tables(times)
        with pytest.raises(InputError) as caught:
            fit(parents, events, time_bounds=window, time_format=fmt)
        message = str(caught.value)
        assert said in message and "\n" not in message and "2020-01-" not in message


def test_a_typed_format_is_checked_and_an_entity_schema_with_one_round_trips():
    with pytest.raises(InputError, match="not a datetime64 dtype"):
        TimeSpec("when", *WINDOW, "datetime64[parsecs]")
    spec = TimeSpec("when", pd.Timestamp("2020-01-01", tz="Europe/Paris"), "2020-03-01", "datetime64[us, Europe/Paris]")
    parents, events = tables(stamps("datetime64[us]"))
    schema = fit(parents, events, time_bounds=WINDOW).schema
    whole = EntitySchema(schema.key, schema.parents, schema.events, schema.max_events, spec)
    back = EntitySchema.from_dict(whole.to_dict())
    assert back.time.bounds == spec.bounds and back.time.format == spec.format
    assert spec.bounds[0] == (pd.Timestamp("2019-12-31 23:00") - pd.Timestamp(0)).total_seconds()  # in UTC


@pytest.mark.parametrize("model", ["linked", "independent"])
def test_an_order_samples_back_as_each_entity_s_step_index_from_the_window_s_min(model, tmp_path):
    """A series' frame index: drawn times would repeat and skip (a uniform time inside the span); "order"
    writes each sampled event's rank, from the window's min, in time order."""
    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 10, 40)
    parents = pd.DataFrame({"id": np.arange(40), "kind": rng.choice(["a", "b"], 40)})
    events = pd.DataFrame({"id": np.repeat(np.arange(40), lengths),
                           "when": np.concatenate([np.arange(1, n + 1) for n in lengths]),
                           "x": rng.random(int(lengths.sum()))})  # fmt: skip
    synth = EntitySynthesizer(epsilon=5.0, seed=0, model=model, counts_above_k=False)
    synth.fit(parents, events, **{**HINTS, "max_events": 9}, time_bounds=(1, 9), time_format="order")
    _, sampled = synth.sample(60, seed=1)
    assert sampled["when"].dtype == np.int64 and len(sampled) > 0
    for _, steps in sampled.groupby("id")["when"]:
        assert list(steps) == list(range(1, len(steps) + 1))
    synth.save(tmp_path / "model")
    assert EntitySynthesizer.load(tmp_path / "model").sample(60, seed=1)[1].equals(sampled)
    read = parse_times(pd.Series([1, 2.0, 2.5, "3", None], dtype=object), synth.schema.time)
    assert list(read[:2]) == [1.0, 2.0] and np.isnan(read[2]) and read[3] == 3.0 and np.isnan(read[4])
