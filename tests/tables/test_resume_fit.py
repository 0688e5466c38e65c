"""`fit(checkpoint=DIR)`: a killed fit, called again, resumes and ends where an uninterrupted fit
ends (same samples, same ε, same step count), never resumes another table's or setting's fit, and
leaves no checkpoint (secret material) behind once it succeeds."""

from __future__ import annotations

import hashlib

import pytest

from dpgan import TabularSynthesizer
from dpgan.errors import InputError
from dpgan.training.checkpoint import STATE_FILE

SETTINGS = {"epsilon": 3.0, "epochs": 2, "accountant": "rdp", "generator_hidden": (16,), "critic_hidden": (16,)}


class Killed(Exception):
    pass


def kill_at(step: int):
    def progress(done: int, total: int, epsilon: float) -> None:
        if done >= step:
            raise Killed

    return progress


def sample_hash(synth: TabularSynthesizer) -> str:
    return hashlib.sha256(synth.sample(300, seed=1).to_csv(index=False).encode()).hexdigest()


@pytest.fixture(scope="module")
def table(adult_small):
    return adult_small.iloc[:600].reset_index(drop=True)


@pytest.mark.parametrize("recipe", ["dp-gan", "dtgan-g"])
def test_killed_then_resumed_fit_equals_the_uninterrupted_fit(recipe, table, adult_schema, tmp_path):
    whole = TabularSynthesizer(recipe=recipe, seed=0, **SETTINGS).fit(table, schema=adult_schema)
    with pytest.raises(Killed):
        TabularSynthesizer(recipe=recipe, seed=0, **SETTINGS).fit(
            table, schema=adult_schema, checkpoint=tmp_path, checkpoint_every=2, progress=kill_at(5)
        )
    assert (tmp_path / STATE_FILE).exists()
    resumed = TabularSynthesizer(recipe=recipe, seed=0, **SETTINGS).fit(
        table, schema=adult_schema, checkpoint=tmp_path, checkpoint_every=2
    )
    assert not (tmp_path / STATE_FILE).exists()  # deleted once the fit succeeded
    assert sample_hash(resumed) == sample_hash(whole)
    assert resumed.ledger.to_dict() == whole.ledger.to_dict()
    assert resumed.training["steps"] == whole.training["steps"]


def test_an_unseeded_fit_keeps_its_entropy_in_the_checkpoint_and_is_not_marked_seeded(table, adult_schema, tmp_path):
    with pytest.raises(Killed):
        TabularSynthesizer(**SETTINGS).fit(
            table, schema=adult_schema, checkpoint=tmp_path, checkpoint_every=2, progress=kill_at(5)
        )
    resumed = TabularSynthesizer(**SETTINGS).fit(table, schema=adult_schema, checkpoint=tmp_path, checkpoint_every=2)
    assert resumed.training["seeded"] is False
    assert "seed" not in str(resumed.privacy_report().get("notes", "")).lower()
    assert resumed.ledger.epsilon(1e-5, "rdp") <= 3.0 * (1 + 1e-9)
    assert not (tmp_path / STATE_FILE).exists()


def test_a_neighbouring_table_or_other_settings_cannot_resume_the_checkpoint(table, adult_schema, tmp_path):
    with pytest.raises(Killed):
        TabularSynthesizer(seed=0, **SETTINGS).fit(
            table, schema=adult_schema, checkpoint=tmp_path, checkpoint_every=2, progress=kill_at(5)
        )
    neighbour = table.drop(index=17).reset_index(drop=True)  # one row fewer
    with pytest.raises(InputError, match="another fit") as refused:
        TabularSynthesizer(seed=0, **SETTINGS).fit(neighbour, schema=adult_schema, checkpoint=tmp_path)
    assert str(table.iloc[17]["age"]) not in str(refused.value).split()  # no private value in the message
    with pytest.raises(InputError, match="another fit"):
        TabularSynthesizer(seed=0, **{**SETTINGS, "epsilon": 2.0}).fit(table, schema=adult_schema, checkpoint=tmp_path)
    with pytest.raises(InputError, match="another fit"):
        TabularSynthesizer(seed=1, **SETTINGS).fit(table, schema=adult_schema, checkpoint=tmp_path)
    assert (tmp_path / STATE_FILE).exists()  # a refusal leaves the checkpoint for the right fit


def test_a_checkpoint_path_that_is_a_file_is_refused(table, adult_schema, tmp_path):
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    with pytest.raises(InputError, match="not a checkpoint directory"):
        TabularSynthesizer(seed=0, **SETTINGS).fit(table, schema=adult_schema, checkpoint=path)


def test_another_fits_checkpoint_is_refused_before_the_table_is_read(table, adult_schema, tmp_path, monkeypatch):
    import dpgan.tables.fit.kind as fit_kind

    with pytest.raises(Killed):
        TabularSynthesizer(seed=0, **SETTINGS).fit(
            table, schema=adult_schema, checkpoint=tmp_path, checkpoint_every=2, progress=kill_at(5)
        )
    reads: list[int] = []
    original = fit_kind.prepare_table
    monkeypatch.setattr(fit_kind, "prepare_table", lambda *a, **k: reads.append(1) or original(*a, **k))
    with pytest.raises(InputError, match="another fit"):
        TabularSynthesizer(seed=0, **SETTINGS).fit(table.iloc[1:], schema=adult_schema, checkpoint=tmp_path)
    assert reads == []


def test_cli_fit_killed_by_sigkill_resumes_to_the_uninterrupted_model(tmp_path, adult_small, adult_schema):
    """The real thing: `dpgan fit --checkpoint` killed with SIGKILL once a checkpoint is on disk,
    then the same command again; its model samples what an uninterrupted fit's model samples."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    data, schema = tmp_path / "t.csv", tmp_path / "schema.json"
    adult_small.to_csv(data, index=False)
    adult_schema.to_json(schema)
    common = [str(data), "--schema", str(schema), "--epsilon", "2", "--epochs", "4", "--batch-size", "32"]
    common += ["--seed", "3", "--accountant", "rdp", "--quiet"]
    command = [sys.executable, "-m", "dpgan.cli", "fit", *common]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    subprocess.run([*command, "--out", str(tmp_path / "whole")], check=True, env=env, capture_output=True)

    checkpoint = tmp_path / "checkpoint"
    resumable = [*command, "--out", str(tmp_path / "resumed"), "--checkpoint", str(checkpoint)]
    process = subprocess.Popen([*resumable, "--checkpoint-every", "3"], env=env, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not (checkpoint / STATE_FILE).exists() and process.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL  # killed mid-fit, not finished
    assert not (tmp_path / "resumed").exists()  # nothing half-written
    finished = subprocess.run([*resumable, "--checkpoint-every", "3"], env=env, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    assert not (checkpoint / STATE_FILE).exists()

    def model(name: str) -> dict:
        return json.loads((tmp_path / name / "model.json").read_text())

    assert model("resumed")["ledger"] == model("whole")["ledger"]
    assert (tmp_path / "resumed" / "generator.safetensors").read_bytes() == (
        tmp_path / "whole" / "generator.safetensors"
    ).read_bytes()


def test_a_bad_checkpoint_interval_is_refused_before_the_table_is_read(table, adult_schema, tmp_path, monkeypatch):
    import dpgan.tables.fit.kind as fit_kind

    reads: list[int] = []
    original = fit_kind.prepare_table
    monkeypatch.setattr(fit_kind, "prepare_table", lambda *a, **k: reads.append(1) or original(*a, **k))
    for bad in (0, -5, 2.5):
        with pytest.raises(InputError, match="checkpoint_every"):
            TabularSynthesizer(seed=0, **SETTINGS).fit(
                table, schema=adult_schema, checkpoint=tmp_path, checkpoint_every=bad
            )
    assert reads == [] and not (tmp_path / STATE_FILE).exists()


def _fit_printing(table, schema, directory, progress=None) -> tuple[TabularSynthesizer | None, list[str]]:
    """An unseeded checkpointed fit; what it printed (dpgan's warnings); None if it was killed."""
    import warnings

    from dpgan.errors import DPGanWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            synth = TabularSynthesizer(**SETTINGS).fit(
                table, schema=schema, checkpoint=directory, checkpoint_every=1000, progress=progress
            )
        except Killed:
            synth = None
    return synth, [str(w.message) for w in caught if issubclass(w.category, DPGanWarning)]


def test_a_fit_killed_before_its_first_checkpoint_replays_the_noisy_values_it_printed(table, adult_schema, tmp_path):
    """Killed after it printed N̂ (a release) but before any checkpoint, an unseeded fit rerun with the
    same directory prints the same N̂: the release is replayed, so the final ledger, which counts it
    once, covers everything printed. The start says what a restart elsewhere would cost."""
    table = table.iloc[:200]  # N̂·ε stays far below the small-table note's 2000: N̂ is printed
    killed, printed = _fit_printing(table, adult_schema, tmp_path, kill_at(1))
    assert killed is None and not (tmp_path / STATE_FILE).exists()
    noisy = [line for line in printed if "noisy count" in line]  # every printed release, replayed below
    # the small-table note prints N̂; other notes with noisy counts (the repairs') appear or not as
    # their noise falls in this unseeded fit, so N̂'s line is found by its words, not its place
    table_size = [line for line in noisy if "the table has about" in line]
    assert len(table_size) == 1
    resumed, reprinted = _fit_printing(table, adult_schema, tmp_path)
    assert resumed is not None
    assert [line for line in reprinted if "noisy count" in line] == noisy
    assert any("a new fit" in line and "ε adds up" in line for line in printed)
    assert any("resuming" in line for line in reprinted)
    assert f"about {resumed.training['estimated_rows']} rows" in table_size[0]
    assert [e.name for e in resumed.ledger.entries].count("row count") == 1
    assert not list(tmp_path.iterdir())  # the pinned seed is deleted with the checkpoint


def test_the_command_line_says_a_restart_elsewhere_is_a_new_release(table, adult_schema, tmp_path, capsys):
    from dpgan.cli import main

    data, schema = tmp_path / "t.csv", tmp_path / "schema.json"
    table.to_csv(data, index=False)
    adult_schema.to_json(schema)
    argv = ["fit", str(data), "--schema", str(schema), "--epsilon", "3", "--epochs", "1", "--batch-size", "64"]
    argv += ["--accountant", "rdp", "--quiet", "--out", str(tmp_path / "m"), "--checkpoint", str(tmp_path / "c")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "a new fit" in err and "ε adds up" in err and str(tmp_path / "c") in err
