"""The table fit's shape (issue 50): one budget object from the facade to the engine, and a flow
that goes down the spine without going back up into a file it left. Checked at the first noise
draw (the first call into dpgan/privacy/noise.py, the one place DP noise is drawn), where the fit
is stopped: bench/budget_path.py counts the same for every kind's Quickstart fit."""

from __future__ import annotations

import gc
import os
import sys
import types
import warnings

import numpy as np
import pandas as pd
import pytest

from dpgan import TabularSynthesizer

EPSILON = 2.718281828  # no default, constant or share of the code equals it
PACKAGE = os.sep + "dpgan" + os.sep
NOISE_FILE = os.path.join("dpgan", "privacy", "noise.py")


class FirstNoise(BaseException):
    """Raised at the first noise draw (a BaseException: no `except Exception` on the way stops it)."""


def at_first_noise(fit) -> dict:
    """Run `fit()` until its first noise draw: the dpgan files on the stack (outermost first, a
    file's consecutive frames merged), the pipeline's context and the objects holding ε."""
    seen: dict = {}

    def tracer(frame: types.FrameType, event: str, arg: object):
        code = frame.f_code
        if event != "call" or not code.co_filename.endswith(NOISE_FILE) or code.co_name == "<module>":
            return None
        files: list[str] = []
        current: types.FrameType | None = frame
        while current is not None:
            name = current.f_code.co_filename
            if PACKAGE in name and current.f_code.co_name != "<module>":
                short = name.split(PACKAGE, 1)[1]
                if not files or files[-1] != short:
                    files.append(short)
                if current.f_code.co_name == "run_fit":
                    seen["ctx"] = current.f_locals["ctx"]
            current = current.f_back
        seen["stack"] = files[::-1]
        with warnings.catch_warnings():  # reading every object's attributes wakes deprecated aliases
            warnings.simplefilter("ignore")
            seen["holders"] = sorted(type(o).__name__ for o in gc.get_objects() if _holds_epsilon(o))
        raise FirstNoise

    sys.settrace(tracer)
    try:
        fit()
    except FirstNoise:
        pass
    finally:
        sys.settrace(None)
    return seen


def _holds_epsilon(value: object) -> bool:
    if isinstance(value, (type, types.ModuleType, dict, list, tuple)):
        return False
    try:
        fields = vars(value)
    except TypeError:
        return False
    return any(isinstance(item, float) and item == EPSILON for item in fields.values())


@pytest.mark.parametrize("schema_given", [False, True])
def test_the_table_fit_holds_one_budget_and_enters_no_file_twice(schema_given):
    """The pipeline's context holds the facade's own budget object (not a copy), only it and the
    ledger's cap (built by it) hold ε, and no file is on the stack twice at the first noise draw
    (before: tables/fit/kind.py started the pipeline, which called back into it)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.integers(0, 5, 300).astype(str), "y": rng.integers(0, 2, 300).astype(str)})
    synth = TabularSynthesizer(epsilon=EPSILON, seed=0, max_steps=1, batch_size=32)
    schema = None
    if schema_given:
        from dpgan.tables.schema.columns import ColumnSpec
        from dpgan.tables.schema.table import Schema

        schema = Schema(tuple(ColumnSpec(name, "categorical", categories=("0", "1", "2", "3", "4")) for name in "xy"))
    seen = at_first_noise(lambda: synth.fit(frame, schema=schema))
    stack = seen["stack"]
    assert len(stack) == len(set(stack)), stack
    assert stack.index("fit.py") < stack.index("tables/fit/kind.py")  # the pipeline calls the kind, once
    assert seen["holders"] == ["Budget", "FitBudget"]
    assert seen["ctx"].budget is synth.budget
