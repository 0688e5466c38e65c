"""The shared synthesizer base (dpgan.api): what every data kind's facade inherits."""

from __future__ import annotations

import pytest

from dpgan.api import Synthesizer
from dpgan.errors import InputError
from dpgan.privacy.accounting import LedgerEntry
from dpgan.synthesizers import TabularSynthesizer


class Minimal(Synthesizer):
    """A stand-in data kind: one ledger entry as its 'fit'."""

    def fit(self, data, *args, **kwargs):
        self.ledger.add(LedgerEntry("a release", 2.0))
        self.generator = object()  # type: ignore[assignment]
        self.training = {"seeded": self.seed is not None}
        return self

    def sample(self, n, *args, **kwargs):
        return list(range(n))

    def save(self, path, *, overwrite=False):
        raise NotImplementedError

    @classmethod
    def load(cls, path):
        raise NotImplementedError

    def _report_details(self):
        return {"kind": "minimal"}


def test_a_facade_must_implement_fit_sample_save_and_load():
    class Incomplete(Synthesizer):
        def fit(self, data, *args, **kwargs):
            return self

    with pytest.raises(TypeError):
        Incomplete(epsilon=1.0, delta=1e-5)  # type: ignore[abstract]


@pytest.mark.parametrize(
    "kwargs",
    [{"epsilon": 0.0}, {"epsilon": -1.0}, {"delta": 1.0}, {"seed": -1}, {"seed": True}, {"noise_multiplier": 0.0}],
)
def test_the_base_refuses_bad_targets_for_every_kind(kwargs):
    with pytest.raises(InputError):
        Minimal(**{"epsilon": 1.0, "delta": 1e-5, **kwargs})


def test_the_report_is_the_ledgers_and_needs_a_fitted_model():
    synth = Minimal(epsilon=1.0, delta=1e-5, seed=3)
    with pytest.raises(InputError, match="not fitted"):
        synth.privacy_report()
    report = synth.fit(None).privacy_report()
    assert report["epsilon"] == pytest.approx(synth.ledger.epsilon(1e-5, synth.accountant))
    assert report["target_epsilon"] == 1.0 and report["kind"] == "minimal"
    assert "seed_note" in report and report["training"] == {"seeded": True}


def test_the_tabular_facade_is_a_synthesizer():
    assert issubclass(TabularSynthesizer, Synthesizer)
