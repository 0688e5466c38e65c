"""The tables' "marginals" statistics model through the facade and the command line: its releases in
the ledger within ε, the same public facts for neighbouring tables, save/load without pickle that
samples the same rows, and bad settings as one line."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file, save_file

from dpgan import InputError, ModelFileError, Schema, TabularSynthesizer
from dpgan.cli import main
from dpgan.serialization import HASH_KEY, content_hash
from dpgan.statistics.tables.class_tree import CLASS_PAIRS_EVENT, TRIPLES_EVENT
from dpgan.statistics.tables.tree_marginals import ONE_WAY_EVENT, PAIRS_EVENT, PICK_EVENT

torch.set_num_threads(1)


def table(rows: int = 1500, seed: int = 0) -> pd.DataFrame:
    """A small table whose label depends on a category and a number."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, rows)
    amount = np.round(rng.gamma(2.0 + group, 10.0), 2)
    label = np.where(rng.random(rows) < 0.2 + 0.25 * group, "yes", "no")
    age = rng.integers(18, 90, rows).astype(float)
    age[rng.random(rows) < 0.05] = np.nan
    return pd.DataFrame({"group": [f"g{g}" for g in group], "amount": amount, "age": age, "label": label})


SCHEMA = {
    "target": "label",
    "columns": [
        {"name": "group", "kind": "categorical", "categories": ["g0", "g1", "g2"]},
        {"name": "amount", "kind": "continuous", "min": 0, "max": 200, "bins": 8},
        {"name": "age", "kind": "integer", "min": 18, "max": 90, "nullable": True},  # one bin: cut in cells
        {"name": "label", "kind": "categorical", "categories": ["no", "yes"]},
    ],
}


def fit(frame: pd.DataFrame, schema: dict | None = None, seed: int = 0, target: str | None = "label",
        **kwargs) -> TabularSynthesizer:  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(model="marginals", epsilon=1.0, seed=seed, **kwargs)
        if schema is not None and target is None:
            schema = {key: value for key, value in schema.items() if key != "target"}
        return synth.fit(frame, None if schema is None else Schema.from_dict(schema), target=target)


@pytest.mark.parametrize("schema", [None, SCHEMA], ids=["csv-only", "schema"])
@pytest.mark.parametrize("target", ["label", None], ids=["class-tree", "mst"])
def test_every_release_is_a_ledger_entry_within_epsilon(schema, target):
    """With a target: the (target, x) tables, d − 2 picks, the (target, a, b) tables; without: MST's
    1-way tables, d − 1 picks, the 2-way tables."""
    synth = fit(table(), schema, target=target)
    report = synth.privacy_report()
    assert report["epsilon"] <= 1.0 * (1 + 1e-9)
    names = [e["name"] for e in report["events"]]
    record = synth.training["marginals"]
    variables = len(record["levels"])
    if target is None:
        assert record["target"] is None
        assert names[names.index(ONE_WAY_EVENT) :] == [ONE_WAY_EVENT, *[PICK_EVENT] * (variables - 1), PAIRS_EVENT]
    else:
        assert record["target"] == variables - 1  # the label is the last column, one variable
        expected = [CLASS_PAIRS_EVENT, *[PICK_EVENT] * (variables - 2), TRIPLES_EVENT]
        assert names[names.index(CLASS_PAIRS_EVENT) :] == expected
    assert synth.training["steps"] == 0 and synth.generator is not None
    frame = synth.sample(400, seed=1)
    assert list(frame.columns) == ["group", "amount", "age", "label"]
    assert set(frame["label"]) <= {"no", "yes", "(other)"}


def test_dependence_survives_at_a_large_epsilon():
    """The label's rate per group (0.2, 0.45, 0.7) comes back from the tree at ε = 50."""
    frame = table(6000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = TabularSynthesizer(model="marginals", epsilon=50.0, seed=0).fit(frame, Schema.from_dict(SCHEMA))
    drawn = synth.sample(20_000, seed=2)
    rates = drawn.groupby("group")["label"].apply(lambda s: (s == "yes").mean())
    np.testing.assert_allclose(rates.to_numpy(), [0.2, 0.45, 0.7], atol=0.05)
    assert drawn["age"].isna().mean() == pytest.approx(0.05, abs=0.02)
    assert drawn["age"].dropna().between(18, 90).all()


def test_neighbouring_tables_give_the_same_public_facts():
    """One row added (an odd one: a category outside the schema, a value past the bounds) changes no
    public fact: the variables and their levels, the number of picks, the ledger's entries."""
    frame = table()
    odd = pd.DataFrame({"group": ["zz"], "amount": [1e9], "age": [200.0], "label": ["yes"]})
    facts = []
    for data in (frame, pd.concat([frame, odd], ignore_index=True)):
        synth = fit(data, SCHEMA)
        record = synth.training["marginals"]
        entries = [(e["name"], e["count"]) for e in synth.privacy_report()["events"]]
        facts.append((record["levels"], len(record["edges"]), entries, synth.privacy_report()["epsilon"]))
    assert facts[0][:3] == facts[1][:3]
    assert facts[0][3] == pytest.approx(facts[1][3])


@pytest.mark.parametrize("target", ["label", None], ids=["class-tree", "mst"])
def test_save_load_samples_the_same_rows_without_pickle(tmp_path, target):
    synth = fit(table(), SCHEMA, target=target)
    synth.save(tmp_path / "m")
    files = sorted(p.name for p in (tmp_path / "m").iterdir())
    assert not any(name.endswith((".pt", ".pkl", ".pickle")) for name in files)
    loaded = TabularSynthesizer.load(tmp_path / "m")
    pd.testing.assert_frame_equal(loaded.sample(300, seed=5), synth.sample(300, seed=5))
    assert loaded.training["marginals"] == synth.training["marginals"]


def test_a_tampered_table_is_refused_in_one_line(tmp_path):
    fit(table(), SCHEMA).save(tmp_path / "m")
    weights = next(p for p in (tmp_path / "m").iterdir() if p.suffix == ".safetensors")
    tensors = load_file(weights)
    tensors["joint_0"] = -tensors["joint_0"]
    save_file(tensors, weights)
    meta = tmp_path / "m" / "model.json"
    data = json.loads(meta.read_text())
    data[HASH_KEY] = content_hash(data, weights.read_bytes())  # re-signed: the model's own check must refuse it
    meta.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="joint_0") as caught:
        TabularSynthesizer.load(tmp_path / "m")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"epochs": 3}, "has no setting 'epochs'"),
        ({"condition": "group"}, "not conditional"),
        ({"label_model": False}, "has no setting 'label_model'"),
    ],
)
def test_bad_settings_are_one_line(kwargs, words):
    with pytest.raises(InputError, match=words) as caught:
        TabularSynthesizer(model="marginals", epsilon=1.0, **kwargs)
    assert "\n" not in str(caught.value)


def test_command_line_fits_samples_and_evaluates(tmp_path, capsys):
    frame = table(1200)
    frame.iloc[:900].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[900:].to_csv(tmp_path / "test.csv", index=False)
    model, synthetic = tmp_path / "model", tmp_path / "synthetic.csv"
    args = ["fit", str(tmp_path / "train.csv"), "--model", "marginals", "--epsilon", "1", "--seed", "0"]
    assert main([*args, "--target", "label", "--out", str(model)]) == 0
    assert main(["sample", str(model), "-n", "500", "--out", str(synthetic), "--seed", "1"]) == 0
    assert len(pd.read_csv(synthetic)) == 500
    code = main(
        ["evaluate", "--real", str(tmp_path / "train.csv"), "--synthetic", str(synthetic), "--test",
         str(tmp_path / "test.csv"), "--target", "label", "--out", str(tmp_path / "eval"), "--quiet"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "eval" / "metrics.json").read_text())


def test_audit_of_a_marginals_model_is_one_line(tmp_path, capsys):
    fit(table(), SCHEMA).save(tmp_path / "m")
    assert main(["audit", str(tmp_path / "m")]) != 0
    err = capsys.readouterr().err.strip()
    assert "no DP-SGD step to audit" in err and "\n" not in err
