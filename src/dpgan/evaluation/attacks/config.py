"""Cost knobs of the privacy attacks, with small defaults (minutes on Adult, seconds on toys).

The shadow-model attack dominates the cost: it trains
`n_targets · 2 · (n_shadow + n_test_runs)` synthesizers, so the defaults keep those counts low;
raise them for tighter estimates (Stadler et al. used about 10 shadows and 5 targets).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from dpgan.errors import InputError

ATTACKS = ("dcr", "attribute", "membership", "logan")


@dataclass(frozen=True)
class AttackConfig:
    """Settings of `run_attacks`. Keyword-only; every count is a number of rows, sets or fits."""

    seed: int = 0
    run: tuple[str, ...] = ATTACKS
    # Distance to closest record: rows searched (train, holdout, synthetic; sampled when there are more)
    # and query rows (synthetic rows for the share; members and non-members for the ROC).
    dcr_max_rows: int = 20000
    dcr_max_queries: int = 5000
    # Attribute inference (Stadler MLE-AI): the sensitive column (None: the first numeric column
    # that is not the target, else the target) and what counts as a correct numeric guess.
    sensitive: str | None = None
    attribute_max_rows: int = 5000
    attribute_tolerance: float = 0.05  # a numeric guess is correct within ± this share of the column's range
    # Shadow-model membership inference (Stadler et al.).
    n_targets: int = 2  # a crafted outlier, then the most isolated training records
    n_shadow: int = 6  # shadow training sets per target (each fitted with and without the target)
    n_test_runs: int = 2  # fresh training sets per target for testing the attack model
    n_syn_sets: int = 10  # synthetic sets sampled from every fitted synthesizer (cheap: no training)
    shadow_train_size: int = 1000  # rows in every shadow/test training set
    synthetic_size: int | None = None  # rows per synthetic set (None: shadow_train_size)
    attack_trees: int = 100  # random-forest size of the attack model
    # Shadow and LOGAN fits use the model's configuration, except for these cost overrides.
    epochs: float | None = None  # None: the model's epochs
    accountant: str | None = "rdp"  # σ calibration of the fits; None: the model's (PLD is slower)
    match_sample_rate: bool = True  # scale the batch so the fits keep the model's sampling rate q
    # LOGAN (white-box): rows of the real training table the stand-in model is trained on.
    logan_train_size: int | None = 2000  # None: all of them

    def __post_init__(self) -> None:
        if isinstance(self.run, str):
            object.__setattr__(self, "run", (self.run,))
        unknown = [name for name in self.run if name not in ATTACKS]
        if unknown:
            raise InputError(f"unknown attacks {unknown}; choose from {', '.join(ATTACKS)}")
        for name in (
            "dcr_max_rows",
            "dcr_max_queries",
            "attribute_max_rows",
            "n_targets",
            "n_shadow",
            "n_test_runs",
            "n_syn_sets",
            "shadow_train_size",
            "attack_trees",
        ):
            check_positive_int(getattr(self, name), name)
        for name in ("synthetic_size", "logan_train_size"):
            if getattr(self, name) is not None:
                check_positive_int(getattr(self, name), name)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not (0 < self.attribute_tolerance < 1):
            raise InputError("attribute_tolerance must be in (0, 1)")
        if self.epochs is not None and not (self.epochs > 0 and math.isfinite(self.epochs)):
            raise InputError("epochs must be a positive number")
        if self.accountant is not None and self.accountant not in ("pld", "rdp", "rdp-classic"):
            raise InputError(f"accountant must be pld, rdp, rdp-classic or None, not {self.accountant!r}")

    @property
    def syn_rows(self) -> int:
        return self.synthetic_size or self.shadow_train_size

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["run"] = list(self.run)
        return out


def check_positive_int(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
