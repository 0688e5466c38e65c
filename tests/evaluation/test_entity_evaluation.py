"""The entity kind's evaluation (dpgan.evaluation.entities): referential integrity catches what a broken
synthesizer does, KS of events per entity, the two-sample test on entity summaries, membership on whole
entities, the parent-level TSTR, and `dpgan evaluate --kind entity` end to end and on bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpgan.cli import main
from dpgan.entities.facade import EntitySynthesizer
from dpgan.entities.schema import EntitySchema
from dpgan.errors import InputError
from dpgan.evaluation.entities.distributions import ks_distance
from dpgan.evaluation.entities.frames import entity_frames
from dpgan.evaluation.entities.integrity import integrity
from dpgan.evaluation.entities.membership import entity_membership
from dpgan.evaluation.entities.metrics import evaluate_entities
from dpgan.evaluation.entities.summaries import entity_summaries, summary_kinds
from dpgan.evaluation.entities.two_sample import two_sample_auc

FORMAT = "%Y-%m-%d %H:%M"
WINDOW = ("2020-01-01 00:00", "2020-03-01 00:00")
SCHEMA = EntitySchema.from_dict({
    "key": "id", "max_events": 4,
    "time": {"column": "when", "min": WINDOW[0], "max": WINDOW[1], "format": FORMAT},
    "parents": {"columns": [{"name": "kind", "kind": "categorical", "categories": ["a", "b", "c"]},
                            {"name": "age", "kind": "continuous", "min": 0, "max": 100}]},
    "events": {"columns": [{"name": "amount", "kind": "continuous", "min": -5, "max": 20},
                           {"name": "tag", "kind": "categorical", "categories": ["x", "y"]}]},
})  # fmt: skip
RATE = {"a": 1, "b": 3, "c": 8}


def entities(n: int, seed: int, shift: int = 0, prefix: str = "P") -> tuple[pd.DataFrame, pd.DataFrame]:
    """n entities whose kind sets their number of events (plus `shift`), events in time order."""
    rng = np.random.default_rng(seed)
    kinds = rng.choice(["a", "b", "c"], n)
    parents = pd.DataFrame({"id": [f"{prefix}{i}" for i in range(n)], "kind": kinds, "age": rng.uniform(20, 80, n)})
    rows = []
    for i, kind in enumerate(kinds):
        count = int(rng.poisson(RATE[kind])) + shift
        for minute in np.sort(rng.integers(0, 50 * 24 * 60, count)):
            when = pd.Timestamp("2020-01-01") + pd.Timedelta(minutes=int(minute))
            rows.append((f"{prefix}{i}", when.strftime(FORMAT), float(rng.normal(3 + (kind == "c"), 2)),
                         rng.choice(["x", "y"], p=[0.8, 0.2] if kind == "a" else [0.3, 0.7])))  # fmt: skip
    return parents, pd.DataFrame(rows, columns=["id", "when", "amount", "tag"])


def checked(parents: pd.DataFrame, events: pd.DataFrame) -> dict:
    return integrity(entity_frames(parents, events, SCHEMA, "synthetic"), SCHEMA)


# ------------------------------------------------------------------ integrity


def test_integrity_holds_on_well_formed_tables_and_catches_each_broken_promise():
    parents, events = entities(40, seed=0)
    assert checked(parents, events)["holds"]
    dangling = pd.concat([events, events.iloc[:1].assign(id="NOBODY")], ignore_index=True)
    assert checked(parents, dangling)["dangling_events"] == 1 and not checked(parents, dangling)["holds"]
    busy = events["id"].value_counts().index[0]
    rows = np.flatnonzero(events["id"] == busy)
    swapped = events.copy()
    swapped.loc[[rows[0], rows[-1]], "when"] = events.loc[[rows[-1], rows[0]], "when"].to_numpy()
    assert checked(parents, swapped)["entities_out_of_order"] == 1
    duplicated = pd.concat([parents, parents.iloc[:2]], ignore_index=True)
    assert checked(duplicated, events)["duplicate_parent_keys"] == 2
    late = events.copy()
    late.loc[0, "when"], late.loc[1, "when"] = "2021-06-01 00:00", "not a time"
    found = checked(parents, late)
    assert (found["times_outside_window"], found["unreadable_times"]) == (1, 1)


# ------------------------------------------------------------------ events per entity


def test_ks_of_events_per_entity_is_zero_for_identical_inputs_and_large_for_a_shifted_count():
    parents, events = entities(300, seed=1)
    _, shifted = entities(300, seed=1, shift=6)
    metrics = evaluate_entities((parents, events), (parents, events), entities(200, seed=2), SCHEMA,
                                models=["decision_tree"])  # fmt: skip
    assert metrics["events_per_entity"]["ks_train"] == 0.0
    shifted_metrics = evaluate_entities((parents, events), (parents, shifted), entities(200, seed=2), SCHEMA,
                                        models=["decision_tree"])  # fmt: skip
    assert shifted_metrics["events_per_entity"]["ks_train"] > 0.5
    assert shifted_metrics["events_per_entity"]["summary"]["synthetic"]["share_zero"] == 0.0
    assert ks_distance(np.arange(10), np.arange(10) + 100) == 1.0


# ------------------------------------------------------------------ entity summaries: two-sample test, membership


def summaries(parents: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    return entity_summaries(entity_frames(parents, events, SCHEMA, "real"), SCHEMA)


def test_entity_summaries_aggregate_each_entity_s_events():
    parents = pd.DataFrame({"id": ["A", "B"], "kind": ["a", "b"], "age": [30, 40]})
    events = pd.DataFrame({"id": ["A", "A", "A", "ORPHAN"], "when": ["2020-01-01 00:00", "2020-01-03 00:00",
                           "2020-01-05 00:00", "2020-01-02 00:00"], "amount": [1.0, 2.0, 6.0, 9.0],
                           "tag": ["x", "y", "y", "x"]})  # fmt: skip
    found = summaries(parents, events)
    assert found["events"].tolist() == [3, 0]
    assert found.loc[0, ["amount_mean", "tag_top", "first_time", "time_span"]].tolist() == [3.0, "y", 0.0, 4.0]
    assert found.loc[0, "tag_top_share"] == pytest.approx(2 / 3)
    assert np.isnan(found.loc[1, "amount_mean"]) and found.loc[1, "tag_top"] == "(none)"


def test_two_sample_auc_is_near_half_for_two_real_samples_and_high_against_a_broken_synthesizer():
    kinds = summary_kinds(SCHEMA)
    real = summaries(*entities(400, seed=3))
    other_real = summaries(*entities(400, seed=4))
    broken = summaries(*entities(400, seed=5, shift=5))
    assert abs(two_sample_auc(real, other_real, kinds)["auc"] - 0.5) < 0.1
    assert two_sample_auc(real, broken, kinds)["auc"] > 0.9


def test_membership_finds_copied_training_entities_and_not_fresh_ones():
    train, test = summaries(*entities(300, seed=6)), summaries(*entities(300, seed=7))
    copied = entity_membership(train, test, train)
    fresh = entity_membership(train, test, summaries(*entities(300, seed=8)))
    assert copied["auc"] > 0.9 and copied["tpr_at_fpr_0.01"] > 0.5 and copied["share_closer_to_train"] > 0.9
    assert abs(fresh["auc"] - 0.5) < 0.1


# ------------------------------------------------------------------ TSTR, the Python API


def test_the_synthesizer_is_evaluated_with_its_ledger_and_tstr_predicts_the_first_categorical_parent_column():
    real, test = entities(200, seed=9), entities(120, seed=10)
    synth = EntitySynthesizer(epsilon=3.0, seed=0).fit(*real, schema=SCHEMA)
    metrics = evaluate_entities(real, synth.sample(200, seed=0), test, synth, models=["random_forest"])
    assert metrics["integrity"]["synthetic"]["holds"]
    assert metrics["privacy"]["epsilon"] <= 3.0 + 1e-6
    assert metrics["tstr"]["target"] == "kind" and "events" in metrics["tstr"]["features"]
    assert metrics["tstr"]["mean"]["accuracy"]["trtr"] > 0.5  # the count and tags give the kind away
    json.dumps(metrics, allow_nan=False)  # metrics.json is strict JSON
    aggregates_only = evaluate_entities(real, real, test, SCHEMA, parent_columns=False, models=["decision_tree"])
    assert "age" not in aggregates_only["tstr"]["features"] and aggregates_only["privacy"] is None


def test_bad_library_input_is_one_line_naming_no_value():
    real, test = entities(30, seed=11), entities(30, seed=12)
    with pytest.raises(InputError, match="no key column 'id'"):
        evaluate_entities(real, (real[0], real[1].drop(columns="id")), test, SCHEMA)
    with pytest.raises(InputError, match="target 'nope' is not a parent column"):
        evaluate_entities(real, real, test, SCHEMA, target="nope")
    with pytest.raises(InputError, match="pair of tables"):
        evaluate_entities(real, real[0], test, SCHEMA)
    with pytest.raises(InputError, match="the synthetic parents table is empty"):
        evaluate_entities(real, (real[0].iloc[:0], real[1]), test, SCHEMA)


# ------------------------------------------------------------------ the command line


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A tiny fit and sample through the command line: the real, held-out and synthetic CSVs."""
    root = tmp_path_factory.mktemp("entities")
    for name, (parents, events) in {"real": entities(150, seed=13), "test": entities(80, seed=14)}.items():
        parents.to_csv(root / f"{name}_parents.csv", index=False)
        events.to_csv(root / f"{name}_events.csv", index=False)
    (root / "schema.json").write_text(json.dumps(SCHEMA.to_dict()))
    assert main(["fit", str(root / "real_parents.csv"), "--kind", "entity", "--events", str(root / "real_events.csv"),
                 "--schema", str(root / "schema.json"), "--epsilon", "3", "--seed", "0", "--out",
                 str(root / "model")]) == 0  # fmt: skip
    assert main(["sample", str(root / "model"), "-n", "150", "--seed", "0", "--out", str(root / "synthetic")]) == 0
    return root


def evaluate_args(root, **changes) -> list[str]:
    flags = {"--real": "real_parents.csv", "--real-events": "real_events.csv", "--test": "test_parents.csv",
             "--test-events": "test_events.csv", "--synthetic": "synthetic", "--model": "model"} | changes  # fmt: skip
    args = ["evaluate", "--kind", "entity", "--quiet", "--jobs", "1", "--out", str(root / "report")]
    for flag, value in flags.items():
        if value is not None:
            args += [flag, str(root / value)]
    return args


def test_the_command_line_evaluates_an_entity_model_and_writes_the_report(files, capsys):
    assert main(evaluate_args(files)) == 0
    said = capsys.readouterr().out
    assert "integrity holds" in said and "membership AUC" in said and "headline quality" in said
    metrics = json.loads((files / "report" / "metrics.json").read_text())
    assert metrics["privacy"]["model_dir"] == str(files / "model")
    assert 0 <= metrics["headline"]["score"] <= 1 and len(metrics["headline"]["components"]) == 4
    page = (files / "report" / "report.html").read_text()
    for section in ("Headline quality", "Referential integrity", "Events per entity", "Marginals of both tables",
                    "Two-sample test", "the parent column from the entity", "Membership inference on whole entities",
                    "Privacy guarantee"):  # fmt: skip
        assert section in page
    assert main(evaluate_args(files, **{"--model": None, "--schema": "schema.json"})) == 0  # a schema, no ledger


@pytest.mark.parametrize(
    "changes, said",
    [
        ({"--real-events": None}, "needs each side's events table: --real-events"),
        ({"--test-events": "absent.csv"}, "not found"),
        ({"--test-events": "test_parents.csv"}, "held-out events table has no key column 'id'"),
        ({"--synthetic": "real_events.csv"}, "no events.csv beside"),
        ({"--model": None}, "needs the entity schema"),
    ],
)
def test_the_command_line_refuses_bad_input_in_one_line(files, capsys, changes, said):
    if "--test-events" in changes and changes["--test-events"] == "test_parents.csv":
        pd.read_csv(files / "test_events.csv").drop(columns="id").to_csv(files / "keyless.csv", index=False)
        changes = {"--test-events": "keyless.csv"}
    assert main(evaluate_args(files, **changes)) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1 and "Traceback" not in err
