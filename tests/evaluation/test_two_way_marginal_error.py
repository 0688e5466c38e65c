"""The 2-way marginal error (the workload MST and AIM fit): its reference values."""

import numpy as np
import pandas as pd

from dpgan.evaluation.tables.fidelity import marginal_error, two_way_marginal_error
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.table import Schema


def test_two_way_marginal_error_is_zero_for_the_same_joint_and_one_for_disjoint_supports():
    schema = Schema(
        [ColumnSpec("x", "continuous", min=0.0, max=10.0), ColumnSpec("c", "categorical", categories=("a", "b"))]
    )
    frame = pd.DataFrame({"x": [0.5, 9.5, 9.6, np.nan], "c": ["a", "b", "b", "a"]})
    assert two_way_marginal_error(frame, frame.sample(frac=1.0, random_state=0), schema) == 0.0
    other = pd.DataFrame({"x": [5.5, 5.5, 5.5, 5.5], "c": ["b", "a", "a", "b"]})
    assert two_way_marginal_error(frame, other, schema) == 1.0
    # the same one-way marginals, pairs swapped: only the joint differs (c="a" moves to high x)
    swapped = pd.DataFrame({"x": [0.5, 9.5, 9.6, np.nan], "c": ["b", "a", "b", "a"]})
    assert two_way_marginal_error(frame, swapped, schema) == 0.5
    # values beyond the public bounds fall into the end bins, not into new cells
    assert two_way_marginal_error(frame, frame.assign(x=[-3.0, 12.0, 9.6, np.nan]), schema) == 0.0


def test_three_way_error_sees_a_joint_that_every_pair_misses():
    """x = a XOR b: every pair of (a, b, x) is independent and uniform, so a table with the same
    pairs but x independent of (a, b) has 2-way error 0 and 3-way error 0.5."""
    schema = Schema([ColumnSpec(n, "categorical", categories=("0", "1")) for n in ("a", "b", "x")])
    a, b = np.array([0, 0, 1, 1] * 50), np.array([0, 1, 0, 1] * 50)
    real = pd.DataFrame({"a": a, "b": b, "x": a ^ b}).astype(str)
    independent = real.assign(x=(a ^ b ^ np.array([0] * 100 + [1] * 100)).astype(str))
    assert two_way_marginal_error(real, independent, schema) == 0.0
    assert marginal_error(real, independent, schema, way=3) == 0.5
    assert marginal_error(real, real, schema, way=3) == 0.0
    # a cap at or above the number of sets scores every set; below it, the sets drawn by the seed
    assert marginal_error(real, independent, schema, way=2, max_sets=2) == 0.0
