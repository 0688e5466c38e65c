"""The unit rule for series (issue 30, dpgan.privacy.unit_rule): two long tables that differ in one
series give the same refusal-or-not, the same order of every other series' readings, and, when the
added series is dropped, bit-identical releases under one seed."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpgan.errors import DPGanWarning, InputError
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.sequences.reader import (
    INCOMPLETE,
    LABEL_OUTSIDE,
    NO_SINGLE_LABEL,
    NO_USABLE_SERIES,
    TIME_UNREADABLE,
    VALUE_MISSING,
    VALUE_UNREADABLE,
    read_array_raw,
    read_long_raw,
)
from dpgan.sequences.times import CLOCK_TIME, MISSING, NUMBER_TIME, TEXT_TIME, time_keys
from dpgan.synthesizers.sequence import SequenceSynthesizer

T = 12
TINY: dict = {}  # the default model (DP statistics): no GAN loop, no networks' settings (it would refuse them)


def _schema(**changes) -> SequenceSchema:
    base = {
        "id": "sid",
        "time": "hour",
        "length": T,
        "values": (ValueColumn("flow", 0.0, 40.0),),
        "label": "district",
        "categories": ("north", "south"),
    }
    return SequenceSchema(**(base | changes))


def _csv_like(n: int = 200, seed: int = 0, homes: int = 0) -> pd.DataFrame:
    """Series as a CSV reader gives them: every cell text, times "0".."11", rows shuffled."""
    rng = np.random.default_rng(seed)
    label = rng.choice(["north", "south"], n)
    level = np.where(label == "north", 10.0, 25.0)[:, None]
    flow = level + 4 * np.sin(np.arange(T) / T * 2 * np.pi)[None, :] + rng.normal(0, 1, (n, T))
    frame = pd.DataFrame(
        {
            "sid": np.repeat(np.arange(n), T).astype(str),
            "hour": np.tile(np.arange(T), n).astype(str),
            "flow": [repr(float(v)) for v in flow.ravel()],
            "district": np.repeat(label, T),
        },
        dtype=object,
    )
    if homes:
        frame["home"] = np.repeat(np.arange(n) % homes, T).astype(str)
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _one_series(name: str, **columns) -> pd.DataFrame:
    """One well-formed series (id `name`), with any column replaced by the given T cells."""
    cells = {
        "sid": [name] * T,
        "hour": [str(h) for h in range(T)],
        "flow": [str(20.0 + h) for h in range(T)],
        "district": ["north"] * T,
    }
    return pd.DataFrame(cells | columns, dtype=object)


def _with(frame: pd.DataFrame, extra: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([frame, extra.reindex(columns=frame.columns)], ignore_index=True)


def test_one_series_of_text_or_clock_times_does_not_reorder_the_others():
    base = _csv_like(300)
    before = read_long_raw(base, _schema())
    for times in ([f"x{h:02d}" for h in range(T)], [f"{h + 1}:00" for h in range(T)]):
        # "zz" sorts after every numeric id: the other series keep their positions
        after = read_long_raw(_with(base, _one_series("zz", hour=times)), _schema())
        assert after.series.kept == before.series.kept + 1  # its times are of one kind: it is kept
        np.testing.assert_array_equal(after.values[:-1], before.values)
        np.testing.assert_array_equal(after.labels[:-1], before.labels)


def test_each_series_is_ordered_by_its_own_times():
    clocks = _one_series("c", hour=[f"{h}:00" for h in (10, 2, 1, 0, 11, 3, 4, 5, 6, 7, 8, 9)])
    clocks["flow"] = [str(float(h)) for h in (10, 2, 1, 0, 11, 3, 4, 5, 6, 7, 8, 9)]
    numbers = _one_series("n", hour=[str(h) for h in (10, 2, 1, 0, 11, 3, 4, 5, 6, 7, 8, 9)])
    numbers["flow"] = clocks["flow"]
    raw = read_long_raw(pd.concat([clocks, numbers]), _schema())
    np.testing.assert_array_equal(raw.values[:, :, 0], np.tile(np.arange(T, dtype=float), (2, 1)))
    keys = time_keys(pd.Series(["7", "07", "7.0", "1:30", "a", None, 3, np.inf], dtype=object))
    assert keys.kind.tolist()[:6] == [NUMBER_TIME] * 3 + [CLOCK_TIME, TEXT_TIME, MISSING]
    assert keys.key[0] == keys.key[1] == keys.key[2] == 7.0 and keys.key[3] == 5400.0


def test_ids_of_any_type_are_one_id_per_canonical_text():
    base = _csv_like(20)
    typed = base.assign(sid=base["sid"].astype(int))  # 1 and "1" are the same series
    mixed = _with(typed, _one_series("a"))  # an id of another type: no TypeError, no refusal
    raw = read_long_raw(mixed, _schema())
    assert raw.series.kept == 21
    np.testing.assert_array_equal(read_long_raw(typed, _schema()).values, read_long_raw(base, _schema()).values)


# one bad series, and the reason it is dropped for
BAD_SERIES = {
    "text value": (_one_series("zz", flow=["high"] + ["1.0"] * (T - 1)), VALUE_UNREADABLE),
    "infinite value": (_one_series("zz", flow=["inf"] + ["1.0"] * (T - 1)), VALUE_UNREADABLE),
    "missing value": (_one_series("zz", flow=[""] + ["1.0"] * (T - 1)), VALUE_MISSING),
    "missing time": (_one_series("zz", hour=[None] + [str(h) for h in range(1, T)]), TIME_UNREADABLE),
    "mixed time kinds": (_one_series("zz", hour=["0:00"] + [str(h) for h in range(1, T)]), TIME_UNREADABLE),
    "repeated time": (_one_series("zz", hour=["01"] + [str(h) for h in range(1, T)]), INCOMPLETE),
    "short": (_one_series("zz").iloc[:-1], INCOMPLETE),
    "missing id on a reading": (_one_series("zz", sid=[None] + ["zz"] * (T - 1)), INCOMPLETE),
    "changing label": (_one_series("zz", district=["south"] + ["north"] * (T - 1)), NO_SINGLE_LABEL),
    "missing label": (_one_series("zz", district=[None] * T), NO_SINGLE_LABEL),
    "label outside": (_one_series("zz", district=["east"] * T), LABEL_OUTSIDE),
}


def _fit(frame: pd.DataFrame, schema: SequenceSchema) -> SequenceSynthesizer:
    return SequenceSynthesizer(epsilon=2.0, seed=0, accountant="rdp", **TINY).fit(frame, schema)


def _same_release(a: SequenceSynthesizer, b: SequenceSynthesizer) -> None:
    assert a.training["estimated_units"] == b.training["estimated_units"]
    assert [e.to_dict() for e in a.ledger.entries] == [e.to_dict() for e in b.ledger.entries]
    for (name, x), (_, y) in zip(a.generator.state_dict().items(), b.generator.state_dict().items()):
        assert bool((x == y).all()), name


@pytest.mark.parametrize("name", sorted(BAD_SERIES))
def test_a_table_and_its_neighbour_with_one_bad_series_release_the_same(name):
    bad, reason = BAD_SERIES[name]
    base = _csv_like(200)
    neighbour = _with(base, bad)
    raw = read_long_raw(neighbour, _schema())
    if reason != LABEL_OUTSIDE:  # the reader's own reasons; the label set's is encode's
        assert raw.series.dropped == {reason: 1}
    _same_release(_fit(base, _schema()), _fit(neighbour, _schema()))


def test_a_text_time_series_does_not_move_a_fit_on_the_others():
    """The issue's case: one series of text times used to re-order every other series' readings."""
    base = _csv_like(300)
    neighbour = _with(base, _one_series("zz", hour=[f"x{h:02d}" for h in range(T)], flow=["1.0"] * (T - 1) + ["x"]))
    _same_release(_fit(base, _schema()), _fit(neighbour, _schema()))


def test_an_entity_with_no_usable_series_and_readings_of_no_entity_release_the_same():
    schema = _schema(entity="home", max_series_per_entity=2)
    base = _csv_like(120, homes=30)
    bad_entity = _one_series("zz", district=["south"] + ["north"] * (T - 1)).assign(home="new")
    orphan = _one_series("yy").assign(home=None)  # readings of no entity: ignored
    neighbour = _with(_with(base, bad_entity), orphan)
    raw = read_long_raw(neighbour, schema)
    assert raw.units == 31
    a, b = _fit(base, schema), _fit(neighbour, schema)
    _same_release(a, b)
    from dpgan.sequences.codec import encode

    assert encode(raw, schema).tally.dropped == {NO_USABLE_SERIES: 1}


def test_a_table_with_no_readable_series_still_fits_and_warns():
    base = _csv_like(20).assign(hour="0")  # every series repeats one time: none is readable
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DPGanWarning)
        synth = _fit(base, _schema())
    assert any("indistinguishable from none" in str(w.message) for w in caught)
    record = synth.training["units"]
    assert record["kept"] < 5 * record["noise_std"]  # the noisy count of none, clamped at 0
    assert "dropped" in synth.unit_summary() or "kept" in synth.unit_summary()


def test_arrays_drop_a_bad_series_and_release_the_same():
    rng = np.random.default_rng(0)
    data = rng.uniform(0, 40, (120, T))
    labels = rng.choice(["north", "south"], 120).astype(object)
    schema = _schema(time="t")
    for bad, label in ((np.full(T, np.inf), "north"), (np.full(T, 5.0), None), (np.full(T, np.nan), "south")):
        raw = read_array_raw(np.vstack([data, bad]), np.append(labels, label), schema)
        assert raw.series.kept == 120 and raw.series.total_dropped == 1
        a = SequenceSynthesizer(epsilon=2.0, seed=0, accountant="rdp", **TINY).fit(data, schema, labels=labels)
        b = SequenceSynthesizer(epsilon=2.0, seed=0, accountant="rdp", **TINY).fit(
            np.vstack([data, bad]), schema, labels=np.append(labels, label)
        )
        _same_release(a, b)


def test_the_unit_count_is_one_release_with_one_cell_per_reason():
    synth = _fit(_with(_csv_like(200), BAD_SERIES["short"][0]), _schema())
    record = synth.training["units"]
    assert record["unit"] == "series" and set(record["dropped"]) == {
        TIME_UNREADABLE,
        INCOMPLETE,
        VALUE_MISSING,
        VALUE_UNREADABLE,
        NO_SINGLE_LABEL,
        LABEL_OUTSIDE,
    }
    assert min(record["dropped"].values()) >= 0  # noisy counts are shown clamped at 0
    counts = [e for e in synth.ledger.entries if e.name.startswith("unit count")]
    assert len(counts) == 1 and counts[0].sampling_rate == 1.0 and counts[0].count == 1


def test_a_list_of_series_is_refused_on_its_type_whatever_one_series_holds() -> None:
    """Issue 49: np.asarray of a list let one series decide: text made the list's dtype refused, another
    length made it ragged. A list is refused on its public type instead, the same for both."""
    schema = _schema(label=None, categories=())
    plain = [np.zeros(T) for _ in range(4)]
    outcomes = []
    for series in (plain, [*plain, np.array(["SECRET-42"] * T)], [*plain, np.zeros(T + 1)]):
        with pytest.raises(InputError) as exc:
            read_array_raw(series, None, schema)  # type: ignore[arg-type]
        outcomes.append(str(exc.value))
    assert len(set(outcomes)) == 1 and "list" in outcomes[0] and "SECRET" not in outcomes[0]
