"""The entity kind's CSV-only path (dpgan.entities.inference): two tables, the key and the time column,
and nothing else. Each table's schema and the time column's format and window are bought with DP in
the fit's ledger, with the entity as the unit: neighbouring inputs (one entity more or less, with all
its events; one with far more than k events; one with an unreadable time) give the same public facts
and ledger; the events' histograms move by at most 1; a round trip keeps the keys and the time format;
bad input is one line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpgan.cli import main
from dpgan.entities.facade import EntitySynthesizer
from dpgan.entities.inference import event_weights
from dpgan.entities.reader import entity_rows
from dpgan.entities.schema import parse_times
from dpgan.errors import InputError
from dpgan.tables.inference.column_kinds import class_counts
from dpgan.tables.inference.infer import column_domain

FORMAT = "%Y-%m-%d %H:%M"
K = 4


def tables(n: int = 400, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Parents (kind, age) and their events (when, amount, tag), every cell as text (a CSV's)."""
    rng = np.random.default_rng(seed)
    kinds = rng.choice(["a", "b", "c"], n)
    parents = pd.DataFrame({"id": [f"P{i}" for i in range(n)], "kind": kinds,
                            "age": rng.integers(20, 80, n).astype(str)})  # fmt: skip
    rows = []
    for i, kind in enumerate(kinds):
        for _ in range(rng.poisson({"a": 1, "b": 3, "c": 8}[kind])):
            month, day, hour = int(rng.integers(1, 7)), int(rng.integers(1, 28)), int(rng.integers(0, 24))
            when = f"2020-{month:02d}-{day:02d} {hour:02d}:00"
            rows.append((f"P{i}", when, f"{rng.normal(3, 2):.2f}", str(rng.choice(["x", "y"]))))
    return parents, pd.DataFrame(rows, columns=["id", "when", "amount", "tag"])


def with_entity(parents: pd.DataFrame, events: pd.DataFrame, count: int, when: str = "2020-03-01 10:00") -> tuple:
    """The neighbour: one more entity with `count` events, all alike, appended last."""
    its = pd.DataFrame({"id": ["HEAVY"] * count, "when": [when] * count, "amount": ["5.00"] * count,
                        "tag": ["y"] * count})  # fmt: skip
    return (pd.concat([parents, pd.DataFrame({"id": ["HEAVY"], "kind": ["c"], "age": ["50"]})], ignore_index=True),
            pd.concat([events, its], ignore_index=True))  # fmt: skip


def fit(parents, events, epsilon=3.0, seed=0, **public) -> EntitySynthesizer:
    return EntitySynthesizer(epsilon=epsilon, seed=seed).fit(
        parents, events, key="id", time_column="when", max_events=K, **public
    )


def public_facts(synth: EntitySynthesizer) -> tuple:
    """What decides the model's shape without noise: the columns, kinds and category lists, the
    time's format, the ledger's entries (with their δ) and the model's form."""
    schema = synth.schema
    columns = [(c.name, c.kind, tuple(c.categories)) for c in (*schema.parents.columns, *schema.events.columns)]
    entries = [(e.name, round(e.noise_multiplier, 12), e.count, e.extra_delta) for e in synth.ledger.entries]
    return columns, schema.time.format, entries, synth.generator.form()


# ------------------------------------------------------------------ what is bought, and where it is charged


def test_a_csv_only_fit_buys_both_schemas_and_the_time_format_and_window_in_the_one_ledger():
    synth = fit(*tables())
    schema, report = synth.schema, synth.privacy_report()
    assert schema.time.format == FORMAT  # chosen among the public formats by noisy counts
    low, high = schema.time.bounds
    assert low <= parse_times(pd.Series(["2020-01-01 00:00"]), schema.time)[0]
    assert high >= parse_times(pd.Series(["2020-06-27 23:00"]), schema.time)[0]
    kinds = {c.name: c.kind for c in (*schema.parents.columns, *schema.events.columns)}
    assert kinds == {"kind": "categorical", "age": "integer", "amount": "continuous", "tag": "categorical"}
    assert set(schema.parents["kind"].categories) >= {"a", "b", "c"}
    names = [e.name for e in synth.ledger.entries]
    assert names[:5] == [
        "entity schema: entities, and the events' weight (noisy counts)",
        "entity schema (parents): each column's cell classes",
        "entity schema (parents): each column's values (grid bins or categories)",
        "entity schema (events): each column's cell classes",
        "entity schema (events): each column's values (grid bins or categories)",
    ]
    assert [e.count for e in synth.ledger.entries[1:5]] == [2, 2, 3, 3]  # the time column is an events column
    assert report["epsilon"] <= 3.0 * (1 + 1e-9)
    assert report["dp_schema"] == ["the parents' columns", "the events' columns", "the format and window of 'when'"]


def test_a_table_with_hints_keeps_them_free_and_only_the_other_is_bought():
    parents, events = tables()
    synth = fit(parents, events, categories={"tag": ["x", "y"]}, bounds={"amount": (-5.0, 20.0)})
    assert list(synth.schema.events.names) == ["amount", "tag"] and synth.schema.events["amount"].min == -5.0
    assert synth.privacy_report()["dp_schema"] == ["the parents' columns", "the format and window of 'when'"]
    window = fit(parents, events, time_bounds=("2020-01-01 00:00", "2020-07-01 00:00"), time_format=FORMAT,
                 categories={"tag": ["x", "y"]}, bounds={"amount": (-5.0, 20.0)})  # fmt: skip
    assert window.privacy_report()["dp_schema"] == ["the parents' columns"]
    assert not any("(events)" in e.name for e in window.ledger.entries)


# ------------------------------------------------------------------ neighbouring inputs


@pytest.mark.parametrize(
    "neighbour",
    [
        lambda p, e: with_entity(p, e, count=500),  # far more than k events
        lambda p, e: with_entity(p, e, count=3, when="not a time"),  # its time cells unreadable
        lambda p, e: (p.iloc[1:], e[e.id != "P0"]),  # one entity removed with all its events
    ],
    ids=["heavy", "unreadable-time", "removed"],
)
def test_neighbouring_inputs_give_the_same_public_facts_and_ledger(neighbour):
    parents, events = tables()
    assert public_facts(fit(parents, events)) == public_facts(fit(*neighbour(parents, events)))


def test_an_entity_moves_each_events_histogram_by_at_most_one_however_many_events_it_has():
    """The exact counts the events' releases noise (each entity ≤ k events weighing 1/k): the heavy
    entity's 500 alike events move every class and domain histogram by at most 1 in L2, and by 1
    exactly where they all fall in one cell."""
    parents, events = tables()

    def histograms(p: pd.DataFrame, e: pd.DataFrame) -> dict[str, np.ndarray]:
        units = entity_rows(p, e, "id")
        weights = event_weights(units.owner, units.entities, K, np.random.default_rng(0))
        frame = e.iloc[units.event_rows].reset_index(drop=True)
        out = {}
        for name, key in (("when", "temporal timestamp %Y-%m-%d %H:%M"), ("amount", "numeric"), ("tag", "x")):
            out[f"{name} classes"] = np.concatenate(
                [
                    class_counts(frame[name], weights).as_array(),
                    class_counts(frame[name], weights).temporal or np.zeros(1),
                ]
            )
            domain = column_domain(frame[name], key, weights)
            if name == "tag":
                out["tag values"] = np.array([domain.values.get(v, 0.0) for v in ("x", "y")] + [domain.nulls])
            else:
                out[f"{name} bins"] = domain.bins
        return out

    before, after = histograms(parents, events), histograms(*with_entity(parents, events, count=500))
    moved = {name: float(np.linalg.norm(after[name] - before[name])) for name in before}
    assert all(m <= 1.0 + 1e-9 for m in moved.values()), moved
    assert abs(moved["tag values"] - 1.0) < 1e-9 and abs(moved["when bins"] - 1.0) < 1e-9


# ------------------------------------------------------------------ the command line, end to end


def test_the_command_line_fits_two_csvs_without_a_schema_samples_linked_keys_in_the_input_s_time_format(
    tmp_path, capsys
):
    parents, events = tables()
    parents.to_csv(tmp_path / "parents.csv", index=False)
    events.to_csv(tmp_path / "events.csv", index=False)
    code = main([
        "fit", str(tmp_path / "parents.csv"), "--kind", "entity", "--events", str(tmp_path / "events.csv"),
        "--key", "id", "--time-column", "when", "--max-events", str(K), "--epsilon", "3", "--seed", "0",
        "--out", str(tmp_path / "m"), "--quiet",
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "schema: learned with DP" in out
    assert main(["sample", str(tmp_path / "m"), "-n", "50", "--out", str(tmp_path / "out"), "--seed", "0"]) == 0
    sampled_parents = pd.read_csv(tmp_path / "out" / "parents.csv", dtype=str)
    sampled_events = pd.read_csv(tmp_path / "out" / "events.csv", dtype=str)
    assert len(sampled_parents) == 50 and set(sampled_events["id"]) <= set(sampled_parents["id"])
    assert len(sampled_events) > 0
    times = pd.to_datetime(sampled_events["when"], format=FORMAT, errors="coerce")
    assert times.notna().all()  # every sampled time in the input's format
    assert (times.groupby(sampled_events["id"]).apply(lambda t: t.is_monotonic_increasing)).all()
    assert main(["inspect", str(tmp_path / "m")]) == 0
    shown = capsys.readouterr().out
    assert "entity schema (events): each column's values" in shown and "entity schema (parents)" in shown


def test_bad_input_on_the_csv_only_path_is_one_line_naming_no_value(tmp_path, capsys):
    parents, events = tables(n=40)
    cases = [
        ((parents, events[["id", "when"]]), {}, "the events table has no columns besides its key and time column"),
        ((parents, events.drop(columns=["when"])), {}, "no time column 'when'"),
        ((parents[["id"]], events), {}, "the parents table has no columns besides its key"),
        ((parents, events.assign(when="P1 said")), {}, "did not read as dates, times or numbers"),
    ]
    for (p, e), public, message in cases:
        with pytest.raises(InputError, match=message) as caught:
            fit(p, e, **public)
        assert "\n" not in str(caught.value) and "P1" not in str(caught.value)
    with pytest.raises(InputError, match="link 'colour' is not one of the parents' modelled columns"):
        EntitySynthesizer(epsilon=1.0, link="colour").fit(parents, events, key="id")
    parents.to_csv(tmp_path / "parents.csv", index=False)
    events.to_csv(tmp_path / "events.csv", index=False)
    base = ["fit", str(tmp_path / "parents.csv"), "--kind", "entity", "--events", str(tmp_path / "events.csv"),
            "--key", "id", "--epsilon", "1", "--out", str(tmp_path / "m")]  # fmt: skip
    assert main([*base, "--time-column", "when", "--time-min", "2020-01-01 00:00"]) == 2
    err = capsys.readouterr().err
    assert "--time-min and --time-max, both" in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "m").exists()


def test_a_time_column_of_whole_numbers_gets_a_numeric_window_and_a_given_format_is_kept():
    parents, events = tables()
    days = events.assign(when=[str(10 + i % 300) for i in range(len(events))])  # a day number, as pbcseq's
    synth = fit(parents, days)
    low, high = synth.schema.time.bounds  # DP quantiles of days 10..309: the bulk inside, the tails maybe clamped
    assert synth.schema.time.format == "integer" and low <= 50 and high >= 250
    sampled = synth.sample(20, seed=0)[1]["when"]
    assert (sampled == sampled.round()).all()
    given = fit(parents, events, time_format=FORMAT)
    assert given.schema.time.format == FORMAT
    assert given.privacy_report()["dp_schema"][-1] == "the window of 'when'"
