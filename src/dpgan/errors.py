"""User-facing errors: one class, so the CLI can print a one-line message instead of a traceback."""

from __future__ import annotations


class DPGanError(Exception):
    """Base class for every error dpgan raises on purpose (bad input, bad model files, budget)."""


class InputError(DPGanError, ValueError):
    """The data, schema or a parameter given by the user is not acceptable."""


class ModelFileError(DPGanError):
    """A model directory is missing, incomplete, corrupt or was not written by dpgan."""


class BudgetError(DPGanError):
    """The privacy budget cannot pay for what was asked (e.g. preprocessing alone exceeds ε)."""


class DPGanWarning(UserWarning):
    """Something the user should hear about a fit (a small table, repaired cells); never a private value."""
