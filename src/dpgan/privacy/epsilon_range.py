"""The range of target ε dpgan fits at, checked where a user gives one (a synthesizer, `dpgan
schema`, an audit, the command line's --epsilon) before any private read. Imports nothing heavy, so
the command line can check --epsilon before PyTorch or dp-accounting load.

Why a range (issue 49). Below MIN_EPSILON the ledger's PLD grid (a step of 1e-4 in privacy loss,
rounded pessimistically) cannot certify the shares a fit splits ε into: a tenth of ε = 1e-3 is one
grid step. Above MAX_EPSILON every release is nearly noiseless: a Gaussian's privacy loss spans
about 1/σ² nats, the grid that keeps its PLD small widens as 1/σ² (pld_accounting.py), and near
ε = 1e7 the step passes what dp-accounting can build. At ε = 1e6 the noise is already negligible
(docs/privacy.md), so a larger ε would buy nothing. The check reads ε alone, a public number: the
refusal never depends on the data.
"""

from __future__ import annotations

import math

from dpgan.errors import InputError

MIN_EPSILON = 1e-3
MAX_EPSILON = 1e6


def check_target_epsilon(epsilon: float, name: str = "epsilon") -> None:
    """InputError unless `epsilon` (the user's target, named `name` in the message) is a number in
    [MIN_EPSILON, MAX_EPSILON]. The shares of it that calibration aims at may be smaller than
    MIN_EPSILON (the row count's share of ε = 1e-3 is 1e-4); they are not checked here."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or math.isnan(epsilon):
        raise InputError(f"{name} must be a number, got {epsilon!r}")
    if not MIN_EPSILON <= epsilon <= MAX_EPSILON:
        raise InputError(
            f"{name} must be between {MIN_EPSILON:g} and {MAX_EPSILON:g}, not {epsilon:g}: the range dpgan's "
            "accountant certifies (at 1e+06 the noise is already negligible; docs/privacy.md)"
        )
