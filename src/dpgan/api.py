"""What every synthesizer does, whatever the data kind (tables now; series and images next).

A synthesizer holds one privacy ledger and a target (ε, δ): `fit` charges every read of the
private data to that ledger and never passes the target; `sample` is post-processing of the
released model (free); `privacy_report` states what the ledger earned; `save`/`load` write and
read a model directory (safetensors + JSON, no pickle). Each data kind's facade (dpgan.synthesizers
for tables) implements fit, sample, save, load and the kind-specific lines of the report.
"""

from __future__ import annotations

import copy
import math
import secrets
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from dpgan.devices import resolve_device
from dpgan.errors import InputError
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.epsilon_range import check_target_epsilon
from dpgan.privacy.ledger import DEFAULT_ACCOUNTANT, PrivacyLedger, check_accountant, check_epsilon_delta
from dpgan.privacy.unit_rule import ReleasedTally
from dpgan.threads import resolve_threads

SEED_NOTE = "trained with a fixed seed: for experiments only, not for a release"


SettingsT = TypeVar("SettingsT")


class Synthesizer(ABC):
    """The shared part of every facade: the target, the ledger, the report and the fitted check.

    `seed` makes runs reproducible for experiments only (production noise comes from OS entropy);
    `noise_multiplier`, if given, fixes σ and the fit trains until the next step would pass ε.
    `device` ("cpu", "cuda", "cuda:N" or "auto") is where fit trains: the same code path on each."""

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float,
        accountant: str = DEFAULT_ACCOUNTANT,
        seed: int | None = None,
        noise_multiplier: float | None = None,
        device: str | torch.device = "cpu",
        threads: int | str | None = None,
    ) -> None:
        check_target_epsilon(epsilon)  # first: an infinite ε is told the supported range too
        check_epsilon_delta(epsilon, delta)
        check_accountant(accountant)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise InputError(f"seed must be a non-negative integer, got {seed!r}")
        if noise_multiplier is not None and not (noise_multiplier > 0 and math.isfinite(noise_multiplier)):
            raise InputError("noise_multiplier must be positive")
        # the fit's one budget, built here from the numbers the user passed and read by everything
        # below: the pipeline, the kinds, the ledger's cap and the engine's calibrations (dpgan.fit)
        self.budget = FitBudget(
            float(epsilon), float(delta), accountant, noise_multiplier, None if seed is None else int(seed)
        )
        # where fit trains (dpgan.devices), checked now, before any data is read; the released model
        # is always moved back to the CPU, so sample, save and load never depend on it
        self.device = resolve_device(device)
        # CPU threads of the fit (dpgan.threads): None is auto (the cores other jobs leave free)
        self.threads = resolve_threads(threads)
        self.ledger = PrivacyLedger()
        # the released model (dpgan.model): a GAN's generator, or a statistics model; either samples
        self.generator: Any = None
        self.training: dict[str, Any] = {}

    @abstractmethod
    def fit(self, data: Any, *args: Any, **kwargs: Any) -> "Synthesizer": ...

    @abstractmethod
    def sample(self, n: int, *args: Any, **kwargs: Any) -> Any: ...

    @abstractmethod
    def save(self, path: str | Path, *, overwrite: bool = False) -> Path: ...

    @classmethod
    @abstractmethod
    def load(cls, path: str | Path) -> "Synthesizer": ...

    def _report_details(self) -> dict[str, Any]:
        """The data kind's own lines of the report (recipe, what the guarantee covers, ...)."""
        return {}

    def _repr_details(self) -> dict[str, Any]:
        """The data kind's settings that tell two synthesizers apart at a glance (its recipe, ...),
        shown first by `repr`."""
        return {}

    def __repr__(self) -> str:
        """`TabularSynthesizer(recipe='dp-gan', epsilon=3.0, delta=1e-05, fitted: ε=2.998)`: the
        target and, once fitted, the ε the ledger spent (by the synthesizer's accountant)."""
        settings = [f"{key}={value!r}" for key, value in self._repr_details().items()]
        settings += [f"epsilon={self.epsilon!r}", f"delta={self.delta!r}"]
        if self.generator is None:
            state = "not fitted"
        elif not getattr(self, "certified", True):
            state = "fitted: NOT certified, no ε claimed"
        else:
            state = f"fitted: ε={self._spent_epsilon():.4g}"
        return f"{type(self).__name__}({', '.join(settings)}, {state})"

    @property
    def epsilon(self) -> float:
        """The target ε (the budget's)."""
        return self.budget.epsilon

    @property
    def delta(self) -> float:
        return self.budget.delta

    @property
    def accountant(self) -> str:
        return self.budget.accountant

    @property
    def noise_multiplier(self) -> float | None:
        """A fixed σ, or None: calibrated to land on ε."""
        return self.budget.noise_multiplier

    @property
    def seed(self) -> int | None:
        return self.budget.seed

    def _per_ledger(self, name: str, compute: Any) -> Any:
        """`compute(delta, accountant)` on the ledger, kept until the ledger, δ or the accountant
        changes (a PLD composition is not free; repr, save and the command line each ask)."""
        key = (id(self.ledger), len(self.ledger.entries), self.delta, self.accountant)
        cached = getattr(self, name, None)
        if cached is None or cached[0] != key:
            cached = (key, compute(self.delta, self.accountant))
            setattr(self, name, cached)
        return cached[1]

    def _spent_epsilon(self) -> float:
        """The ledger's ε at δ, computed once per ledger."""
        return self._per_ledger("_epsilon_cache", self.ledger.epsilon)

    def _ledger_report(self) -> dict[str, Any]:
        """The ledger's report at δ, computed once per ledger (each entry's ε alone is a PLD of its own)."""
        return self._per_ledger("_report_cache", self.ledger.report)

    def privacy_report(self) -> dict[str, Any]:
        """ε(δ) by the chosen accountant, by RDP and PLD, the ledger with the budget split, and the
        data kind's details."""
        self._require_fitted()
        report = copy.deepcopy(self._ledger_report())
        report["target_epsilon"] = self.epsilon
        report.update(self._report_details())
        if self.training.get("seeded"):
            report["seed_note"] = SEED_NOTE
        report["training"] = dict(self.training)
        if isinstance(self.training.get("units"), dict):  # the readers' DP tally (dpgan.privacy.unit_rule)
            report["units_summary"] = ReleasedTally.from_dict(self.training["units"]).describe()
        return report

    def _require_fitted(self) -> None:
        if self.generator is None:
            raise InputError("the synthesizer is not fitted yet: call fit() or load() first")


def check_sample_count(n: Any, most: int) -> int:
    """`n` to sample: a whole number from 1 to `most` (one clear line otherwise)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= most:
        raise InputError(f"n must be a whole number from 1 to {most:,}")
    return int(n)


def imposed_labels(label: Any, names: Sequence[str], n: int, unlabelled: str) -> torch.Tensor | None:
    """Every sample's label code fixed to `label` (None: drawn by the generator); `unlabelled` is the
    refusal for a model without labels."""
    if label is None:
        return None
    if not names:
        raise InputError(unlabelled)
    if str(label) not in names:
        raise InputError(f"{label!r} is not a label of this model; choose one of {', '.join(names)}")
    return torch.full((n,), list(names).index(str(label)), dtype=torch.long)


def sampling_generator(seed: int | None) -> torch.Generator:
    """The CPU generator of a sample call: seeded, or fresh randomness."""
    return torch.Generator(device="cpu").manual_seed(seed if seed is not None else secrets.randbits(63))


def network_settings(cls: type[SettingsT], settings: dict[str, Any], **given: Any) -> SettingsT:
    """Take the settings dataclass `cls`'s fields out of `settings` (the rest are the loop's) and
    build it, checked."""
    keys = {key: settings.pop(key) for key in list(settings) if key in cls.__dataclass_fields__}  # type: ignore[attr-defined]
    built = cls(**given, **keys)
    built.check()  # type: ignore[attr-defined]
    return built
