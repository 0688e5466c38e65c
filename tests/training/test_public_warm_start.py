"""Warm start on public data (dpgan.training.public_warm_start): it changes the networks but no
ledger entry, it is recorded (name, SHA-256, rows, steps) in the model, the report and the resume
identity, bad public tables are one InputError line, and the CLI flag reaches the fit."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
import torch

from dpgan import TabularSynthesizer
from dpgan.cli import main
from dpgan.errors import InputError
from dpgan.training.checkpoint import STATE_FILE

SMALL = {
    "epsilon": 1.0,
    "epochs": 1,
    "seed": 0,
    "generator_hidden": (16,),
    "critic_hidden": (16,),
    "label_model": False,
}


@pytest.fixture(scope="module")
def private(adult):
    return adult[0].iloc[:500].reset_index(drop=True)


@pytest.fixture(scope="module")
def public(adult):
    """Rows of Adult's other file: disjoint from the private rows (a stand-in for a public table)."""
    return adult[1].iloc[:300].reset_index(drop=True)


def weights(synth: TabularSynthesizer) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in synth.generator.parameters()])


@pytest.mark.parametrize("recipe", ["dp-gan", "dtgan-g"])
def test_the_warm_start_changes_the_generator_but_no_ledger_entry(recipe, private, public, adult_schema):
    extra = {"condition": "income", "marginal_warmup_steps": 10} if recipe == "dtgan-g" else {}
    plain = TabularSynthesizer(recipe=recipe, **SMALL, **extra).fit(private, schema=adult_schema)
    warm = TabularSynthesizer(recipe=recipe, **SMALL, **extra).fit(
        private, schema=adult_schema, public_data=public, public_warm_start_steps=20
    )
    assert warm.ledger.to_dict() == plain.ledger.to_dict()
    assert warm.ledger.epsilon(1e-5) == plain.ledger.epsilon(1e-5)
    assert not torch.equal(weights(warm), weights(plain))
    record = warm.training["public_data"]
    assert record["rows"] == 300 and record["warm_start_steps"] == 20 and record["source"] == "DataFrame"
    assert "public_data" not in plain.training


def test_the_public_record_round_trips_through_the_model_file_and_the_report(private, public, adult_schema, tmp_path):
    path = tmp_path / "public.csv"
    public.to_csv(path, index=False)
    synth = TabularSynthesizer(**SMALL).fit(private, schema=adult_schema, public_data=path, public_warm_start_steps=10)
    record = synth.training["public_data"]
    assert record["source"] == "public.csv" and record["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert synth.privacy_report()["public_data"] == record
    model = synth.save(tmp_path / "m")
    assert sorted(p.suffix for p in model.iterdir()) == [".json", ".safetensors"]  # no pickle
    assert json.loads((model / "model.json").read_text())["training"]["public_data"] == record
    loaded = TabularSynthesizer.load(model)
    assert loaded.privacy_report()["public_data"] == record
    assert loaded.sample(50, seed=1).equals(synth.sample(50, seed=1))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.assign(extra=1), "public data: columns not in the schema: extra"),
        (lambda t: t.assign(age="old"), "public data: column 'age' holds values that are not numbers"),
        (lambda t: t.assign(age=np.nan), "public data: column 'age' has missing values"),
        (lambda t: t.iloc[:0], "public data: the table is empty"),
    ],
    ids=["unknown-column", "wrong-kind", "nan-in-complete-column", "empty"],
)
def test_a_bad_public_table_is_one_line(change, message, private, public, adult_schema):
    with pytest.raises(InputError) as refused:
        TabularSynthesizer(**SMALL).fit(private, schema=adult_schema, public_data=change(public))
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)


def test_another_public_table_cannot_resume_the_checkpoint(private, public, adult_schema, tmp_path):
    class Killed(Exception):
        pass

    def kill(done: int, total: int, epsilon: float) -> None:
        if done >= 3:
            raise Killed

    settings = {**SMALL, "accountant": "rdp"}
    fit = {"schema": adult_schema, "checkpoint": tmp_path, "checkpoint_every": 2, "public_warm_start_steps": 10}
    with pytest.raises(Killed):
        TabularSynthesizer(**settings).fit(private, public_data=public, progress=kill, **fit)
    with pytest.raises(InputError, match="another fit"):
        TabularSynthesizer(**settings).fit(private, public_data=public.iloc[:299], **fit)
    with pytest.raises(InputError, match="another fit"):
        TabularSynthesizer(**settings).fit(private, **fit)
    whole = TabularSynthesizer(**settings).fit(
        private, schema=adult_schema, public_data=public, public_warm_start_steps=10
    )
    resumed = TabularSynthesizer(**settings).fit(private, public_data=public, **fit)
    assert not (tmp_path / STATE_FILE).exists()
    assert resumed.sample(50, seed=1).equals(whole.sample(50, seed=1))
    assert resumed.ledger.to_dict() == whole.ledger.to_dict()


def test_cli_public_data_flags_reach_the_fit(private, public, adult_schema, tmp_path, capsys):
    data, pub, schema = tmp_path / "private.csv", tmp_path / "pub.csv", tmp_path / "schema.json"
    private.iloc[:300].to_csv(data, index=False)
    public.to_csv(pub, index=False)
    schema.write_text(json.dumps(adult_schema.to_dict()))
    args = ["fit", str(data), "--schema", str(schema), "--epsilon", "1", "--epochs", "1", "--quiet", "--seed", "0"]
    assert main([*args, "--out", str(tmp_path / "m"), "--public-data", str(pub), "--public-warm-start-steps", "7"]) == 0
    record = json.loads((tmp_path / "m" / "model.json").read_text())["training"]["public_data"]
    assert (record["source"], record["rows"], record["warm_start_steps"]) == ("pub.csv", 300, 7)
    public.assign(extra=1).to_csv(pub, index=False)
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "m2"), "--public-data", str(pub)]) != 0
    err = capsys.readouterr().err
    assert "public data: columns not in the schema: extra" in err and err.strip().count("\n") == 0
    assert not (tmp_path / "m2").exists()
