"""Digit strings with a leading zero stay text: the cell rule, the class histogram's code cell, the
kind it decides (with neighbouring inputs), and a CSV round trip that keeps `02139`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpgan import TabularSynthesizer
from dpgan.tables.inference.column_kinds import CATEGORICAL, NUMERIC, PublicHints, class_counts, decide_kind
from dpgan.tables.inference.infer import infer_schema_private, infer_schema_without_privacy
from dpgan.tables.reading.conform import conform
from dpgan.tables.reading.table_io import read_private_table, read_table
from dpgan.tables.schema.cells import NUMBER, classify
from dpgan.tables.schema.codes import is_leading_zero_code
from dpgan.tables.schema.table import Schema


def zip_column(rows: int, seed: int = 0, leading_share: float = 0.1) -> pd.Series:
    """Text cells as a CSV read gives them: a tenth of US zip codes start with 0."""
    rng = np.random.default_rng(seed)
    leading = rng.random(rows) < leading_share
    numbers = np.where(leading, rng.integers(1000, 9999, rows), rng.integers(10000, 99999, rows))
    return pd.Series([f"{n:05d}" for n in numbers], dtype=object)


@pytest.mark.parametrize(
    "cell, code",
    [("02139", True), (" 007 ", True), ("00", True), ("0", False), ("10001", False), ("0.5", False),
     ("-01", False), ("0x1", False), ("", False), (7, False), (None, False)],
)  # fmt: skip
def test_a_code_is_two_or_more_digits_starting_with_zero(cell, code):
    assert is_leading_zero_code(cell) is code


def test_cells_flag_codes_and_still_read_them_as_numbers():
    """A schema that declares the column numeric reads `007` as 7: the flag adds, it does not take away."""
    cells = classify(pd.Series(["02139", "10001", "x", None, "0"], dtype=object))
    assert cells.codes.tolist() == [True, False, False, False, False]
    assert cells.kind[0] == NUMBER and cells.number[0] == 2139.0
    typed = classify(pd.Series([2139, 10001]))
    assert not typed.codes.any()


def test_codes_have_their_own_cell_of_the_class_histogram():
    counts = class_counts(pd.Series(["02139", "02140", "10001", "1.5", "abc", ""], dtype=object))
    assert (counts.null, counts.whole, counts.fractional, counts.text, counts.code) == (1, 1, 1, 1, 2)


@pytest.mark.parametrize("added", ["02139", "10001", "2.5", "word", None])
def test_class_histogram_sensitivity_stays_one(added):
    """Neighbouring tables (one row added) differ in one cell of the histogram, by one: the Gaussian
    release at its σ stays the same mechanism, whatever the added cell holds."""
    base = zip_column(200)
    neighbour = pd.concat([base, pd.Series([added], dtype=object)], ignore_index=True)
    difference = class_counts(neighbour).as_array() - class_counts(base).as_array()
    assert np.abs(difference).sum() == 1.0 and np.linalg.norm(difference) == 1.0


def test_a_zip_column_is_categorical_even_when_most_codes_have_no_leading_zero():
    """Before: 90 % of the cells are whole numbers, so the column was an integer and `02139` came
    back as 2139 (or null)."""
    counts = class_counts(zip_column(3000))
    assert decide_kind("zip", counts, sigma=0.0, hints=PublicHints()).kind == CATEGORICAL
    noisy = decide_kind("zip", counts, sigma=20.0, hints=PublicHints())
    assert noisy.kind == CATEGORICAL
    numbers = class_counts(pd.Series([str(n) for n in range(3000)], dtype=object))
    assert decide_kind("n", numbers, sigma=20.0, hints=PublicHints()).kind == NUMERIC


def test_the_kind_is_post_processing_of_the_noisy_counts_on_neighbouring_tables():
    """The decision reads only the released counts: equal noise on neighbouring tables gives the
    same kind unless the noisy counts sit on the rule's boundary (a one-row shift of one cell)."""
    base = zip_column(3000)
    neighbour = pd.concat([base, pd.Series(["02139"], dtype=object)], ignore_index=True)
    for seed in range(20):
        kinds = []
        for frame in (base, neighbour):
            noise = np.random.default_rng(seed).normal(0.0, 20.0, 5)
            released = class_counts(frame).as_array() + noise
            kinds.append(decide_kind("zip", type(class_counts(frame))(*released), sigma=20.0, hints=PublicHints()).kind)
        assert kinds[0] == kinds[1] == CATEGORICAL


def test_the_dp_schema_keeps_codes_as_text():
    frame = pd.DataFrame({"zip": np.random.default_rng(1).choice(["02139", "02140", "10001", "00501"], 4000)})
    schema, _ = infer_schema_private(
        frame, hints=PublicHints(), noise_multiplier=5.0, threshold_delta=1e-6, estimated_rows=4000,
        rng=np.random.default_rng(2),
    )  # fmt: skip
    spec = schema["zip"]
    assert spec.kind == "categorical" and {"02139", "02140", "00501"} <= set(spec.categories)
    exact, _ = infer_schema_without_privacy(frame)
    assert set(exact["zip"].categories) == {"02139", "02140", "10001", "00501"}


def test_a_schema_declaring_string_categories_keeps_the_zeros(tmp_path):
    schema = Schema.from_dict({"columns": [{"name": "zip", "kind": "categorical", "categories": ["02139", "10001"]},
                                           {"name": "n", "kind": "integer", "min": 0, "max": 9}]})  # fmt: skip
    path = tmp_path / "t.csv"
    path.write_text("zip,n\n02139,1\n10001,2\n")
    conformed = conform(read_private_table(path), schema)
    assert conformed.frame["zip"].tolist() == ["02139", "10001"] and not conformed.repairs.any()
    assert read_table(path, schema)["zip"].tolist() == ["02139", "10001"]  # evaluation's reader too


def test_a_csv_only_fit_round_trips_codes_with_their_zeros(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"zip": rng.choice(["02139", "02140", "01002", "10001"], 1500),
                          "amount": rng.integers(0, 100, 1500)})  # fmt: skip
    path = tmp_path / "codes.csv"
    frame.to_csv(path, index=False)
    synth = TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, seed=0)
    synth.fit(read_private_table(path), progress=False)
    assert synth.schema["zip"].kind == "categorical"
    out = tmp_path / "synthetic.csv"
    synth.sample_to(out, 200, seed=1)
    values = set(pd.read_csv(out, dtype=str)["zip"])
    assert values <= {"02139", "02140", "01002", "10001", "(other)"} and values & {"02139", "02140", "01002"}
