"""The thread policy (issue 31, dpgan.threads): auto (the cores other jobs leave free, re-read as
the fit runs) unless a number is given; set for the fit and restored after it; bad values one line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import TabularSynthesizer
from dpgan.cli import main
from dpgan.errors import InputError
from dpgan.threads import AUTO_CAP, ENVIRONMENT, RECHECK_SECONDS, FreeCores, Governor, fit_threads, resolve_threads


def test_the_count_comes_from_the_argument_then_the_environment_then_auto(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    assert resolve_threads(None) is None and resolve_threads("auto") is None
    assert resolve_threads(3) == 3 and resolve_threads("2") == 2
    monkeypatch.setenv(ENVIRONMENT, "2")
    assert resolve_threads(None) == 2 and resolve_threads(4) == 4
    monkeypatch.setenv(ENVIRONMENT, "AUTO")
    assert resolve_threads(None) is None
    for bad_env in ("two", "0", "-1", "1.5"):
        monkeypatch.setenv(ENVIRONMENT, bad_env)
        with pytest.raises(InputError, match=ENVIRONMENT):
            resolve_threads(None)
    for bad in (0, -2, True, 1.0, "x", 10**6):
        with pytest.raises(InputError, match="threads"):
            resolve_threads(bad)


def test_a_fixed_setting_holds_inside_and_is_restored_after():
    before = torch.get_num_threads()
    target = 2 if before != 2 else 1
    with fit_threads(target) as started:
        assert started == target and torch.get_num_threads() == target
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError), fit_threads(target):
        raise RuntimeError("a failing fit restores the caller's setting too")
    assert torch.get_num_threads() == before


class _Meter(FreeCores):
    """Free cores as a test says, on a machine of `cores`."""

    def __init__(self, readings: list[float | None], cores: int = 8) -> None:
        self.readings, self.cores, self.last = list(readings), cores, (0.0, 0.0, 0.0)

    def free(self) -> float | None:
        return self.readings.pop(0)


def test_auto_takes_the_free_cores_and_follows_them_at_most_every_interval():
    clock = [0.0]
    governor = Governor(_Meter([1.6, 0.4, 5.7, 20.0, None], cores=8), clock=lambda: clock[0])
    assert governor.start() == 2  # 1.6 free cores: two threads
    before = torch.get_num_threads()
    try:
        governor.recheck()  # not yet: the interval has not passed, the meter is not read
        assert governor.threads == 2 and len(governor.meter.readings) == 4
        clock[0] += RECHECK_SECONDS
        governor.recheck()  # another job took a core and more: one thread
        assert governor.threads == 1 and torch.get_num_threads() == 1
        clock[0] += RECHECK_SECONDS
        governor.recheck()
        assert governor.threads == AUTO_CAP  # 5.7 free, capped
        clock[0] += RECHECK_SECONDS
        governor.recheck()
        assert governor.threads == AUTO_CAP
        clock[0] += RECHECK_SECONDS
        governor.recheck()  # no reading: keep what it has
        assert governor.threads == AUTO_CAP and governor.changes == 2
    finally:
        torch.set_num_threads(before)
    assert Governor(_Meter([0.9], cores=1)).start() == 1


def test_the_machine_meter_reads_free_cores_within_the_machine():
    meter = FreeCores()
    if not meter.available:
        pytest.skip("no /proc here")
    sum(i * i for i in range(200_000))  # some time passes
    free = meter.free()
    assert free is None or 0.0 <= free <= meter.cores


def _table(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(["a", "b"], n)})


def test_a_fit_runs_on_its_threads_and_gives_the_callers_back(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    before = torch.get_num_threads()
    for threads, allowed in ((1, {1}), (None, set(range(1, AUTO_CAP + 1)))):
        seen: list[int] = []
        synth = TabularSynthesizer(epsilon=1.0, seed=0, epochs=1, max_steps=2, accountant="rdp", threads=threads)
        synth.fit(
            _table(),
            categorical=["c"],
            bounds={"x": (-4.0, 4.0)},
            progress=lambda *a, seen=seen: seen.append(torch.get_num_threads()),
        )
        assert seen and set(seen) <= allowed
        assert torch.get_num_threads() == before
    with pytest.raises(InputError, match="threads"):
        TabularSynthesizer(epsilon=1.0, threads=0)


def test_the_cli_takes_threads_and_verbose_says_what_it_chose(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    _table().to_csv(tmp_path / "t.csv", index=False)
    args = ["fit", str(tmp_path / "t.csv"), "--epsilon", "1", "--max-steps", "2", "--accountant", "rdp"]
    args += ["--categorical", "c", "--bounds", "x=-4:4", "--seed", "0", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "m"), "--threads", "2", "--verbose"]) == 0
    assert "CPU threads: 2 (fixed" in capsys.readouterr().err
    assert main([*args, "--out", str(tmp_path / "m1"), "--verbose"]) == 0
    assert "CPU threads: auto" in capsys.readouterr().err
    assert main([*args, "--out", str(tmp_path / "m2"), "--threads", "0"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    monkeypatch.setenv(ENVIRONMENT, "lots")
    assert main([*args, "--out", str(tmp_path / "m3")]) == 2
    assert not (tmp_path / "m2").exists() and not (tmp_path / "m3").exists()
