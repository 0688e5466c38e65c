"""Every fit kind reports progress (issue 31): (step, total, ε spent so far) from the ledger's own
accountant, ending on the fit's ε; the uncertified noise layer reports no ε (NaN); the CLI shows
one bar for every --kind and --quiet hides it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpgan.cli import main
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.synthesizers.image import ImageSynthesizer
from dpgan.synthesizers.sequence import SequenceSynthesizer

T = 8
STEPS = 4


def _series(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {"sid": np.repeat(np.arange(n), T), "hour": np.tile(np.arange(T), n), "flow": rng.uniform(0, 10, n * T)}
    )


SCHEMA = SequenceSchema(id="sid", time="hour", length=T, values=(ValueColumn("flow", 0.0, 10.0),))


def _images(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (n, 8, 8), dtype=np.uint8), rng.choice(["a", "b"], n)


def _calls(fit) -> list[tuple[int, int, float]]:
    calls: list[tuple[int, int, float]] = []
    fit(lambda step, total, epsilon: calls.append((step, total, epsilon)))
    return calls


def _check(calls: list[tuple[int, int, float]], epsilon: float) -> None:
    assert calls and calls[0][0] == 1 and calls[-1][0] == calls[-1][1] == STEPS
    spent = [e for _, _, e in calls]
    assert spent == sorted(spent) and spent[-1] == pytest.approx(epsilon, rel=1e-9)


def test_a_series_fit_reports_its_steps_and_the_ledgers_epsilon():
    synth = SequenceSynthesizer(epsilon=2.0, seed=0, accountant="rdp", model="gan", max_steps=STEPS, critic_hidden=(8,))
    calls = _calls(lambda progress: synth.fit(_series(), SCHEMA, progress=progress))
    _check(calls, synth.ledger.epsilon(synth.delta, synth.accountant))


@pytest.mark.parametrize("recipe", ["dcgan", "noise-layer-sound", "noise-layer"])
def test_an_image_fit_reports_its_steps_and_epsilon_or_none(recipe):
    images, labels = _images()
    synth = ImageSynthesizer(
        epsilon=3.0, seed=0, accountant="rdp", recipe=recipe, classes=["a", "b"], max_steps=STEPS, width=4
    )
    calls = _calls(lambda progress: synth.fit(images, labels, progress=progress))
    if recipe == "noise-layer":  # the published form: no ε is claimed, none is shown
        assert [s for s, _, _ in calls][-1] == STEPS and all(math.isnan(e) for _, _, e in calls)
    else:
        _check(calls, synth.ledger.epsilon(synth.delta, synth.accountant))


def test_the_cli_shows_one_bar_for_series_and_images_and_quiet_hides_it(tmp_path, capsys):
    _series().to_csv(tmp_path / "s.csv", index=False)
    images, labels = _images()
    np.savez(tmp_path / "i.npz", images=images, labels=labels)
    common = ["--epsilon", "2", "--accountant", "rdp", "--max-steps", str(STEPS), "--seed", "0"]
    series = ["fit", str(tmp_path / "s.csv"), "--kind", "sequence", "--model", "gan", "--id-column", "sid"]
    series += ["--time-column", "hour"]
    series += ["--length", str(T), "--bounds", "flow=0:10", *common]
    image = ["fit", str(tmp_path / "i.npz"), "--kind", "image", "--recipe", "dcgan", "--classes", "a,b", *common]
    for name, args in (("s", series), ("i", image)):
        assert main([*args, "--out", str(tmp_path / f"{name}1")]) == 0
        err = capsys.readouterr().err
        assert "DP training" in err and "ε spent" in err
        assert main([*args, "--out", str(tmp_path / f"{name}2"), "--quiet"]) == 0
        assert "DP training" not in capsys.readouterr().err
