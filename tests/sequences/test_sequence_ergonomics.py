"""Series a new user can describe (issue 31): composite ids, chosen value columns, value columns
without bounds, and arrays without a schema."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpgan.cli import main
from dpgan.errors import InputError
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.sequences.codec import read_long, write_long
from dpgan.sequences.schema import schema_for_array, schema_from_options
from dpgan.synthesizers.sequence import SequenceSynthesizer

T = 6
TINY = {"accountant": "rdp"}  # the default model: no GAN loop, no networks' settings (it would refuse them)


def _districts(days: int = 40) -> pd.DataFrame:
    """Water-like days: each district's days are numbered 0..days-1, so a day alone names no series."""
    rng = np.random.default_rng(0)
    rows = []
    for district, level in (("A", 5.0), ("B", 20.0)):
        for day in range(days):
            for hour in range(T):
                rows.append((district, day, hour, level + rng.normal(), "x"))
    return pd.DataFrame(rows, columns=["district", "day", "hour", "inflow", "note"])


def test_a_value_column_needs_no_bounds():
    column = ValueColumn("inflow")
    assert column.min is None and column.max is None and not column.known


def test_a_composite_id_names_a_series_by_several_columns_and_the_label_may_be_one():
    schema = SequenceSchema(
        id=("district", "day"),
        time="hour",
        length=T,
        values=(ValueColumn("inflow", 0.0, 40.0),),
        label="district",
        categories=("A", "B"),
    )
    assert schema.id_columns == ("district", "day") and schema.columns == ["district", "day", "hour", "inflow"]
    assert SequenceSchema.from_dict(json.loads(json.dumps(schema.to_dict()))) == schema
    frame = _districts().drop(columns=["note"])
    series = read_long(frame, schema)
    assert series.tally.kept == 80  # by day alone it would be 40 series of 12 readings, all dropped
    back = write_long(series.values[:3], series.labels[:3], schema)
    assert list(back.columns) == ["district", "day", "hour", "inflow"] and set(back["district"]) <= {"A", "B"}
    assert back.groupby(["district", "day"]).size().eq(T).all()
    assert SequenceSchema(id=("day",), time="hour", length=T, values=(ValueColumn("v"),)).id == "day"
    with pytest.raises(InputError):
        SequenceSchema(id=("day", "hour"), time="hour", length=T, values=(ValueColumn("v"),))


def test_value_columns_can_be_chosen_and_other_columns_are_not_read():
    columns = ["district", "day", "hour", "inflow", "note"]
    schema = schema_from_options(
        columns, id=["district", "day"], time="hour", length=T, bounds={}, label="district", value_columns=["inflow"]
    )
    assert schema.value_names == ["inflow"] and schema.values[0].min is None
    everything = schema_from_options(columns, id=["district", "day"], time="hour", length=T, bounds={})
    assert everything.value_names == ["inflow", "note"]  # without the option: every column left over
    for bad in (["hour"], ["missing"]):
        with pytest.raises(InputError):
            schema_from_options(columns, id="day", time="hour", length=T, bounds={}, value_columns=bad)


def test_the_cli_takes_a_composite_id_and_value_columns(tmp_path, capsys):
    _districts().to_csv(tmp_path / "w.csv", index=False)
    args = ["fit", str(tmp_path / "w.csv"), "--kind", "sequence", "--epsilon", "3", "--accountant", "rdp"]
    args += ["--id-column", "district,day", "--time-column", "hour", "--length", str(T)]
    args += ["--label-column", "district", "--categories", "district=A,B", "--bounds", "inflow=0:40"]
    args += ["--value-columns", "inflow", "--seed", "0", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "m")]) == 0
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["schema"]["id"] == ["district", "day"] and [v["name"] for v in meta["schema"]["values"]] == ["inflow"]
    out = tmp_path / "s.csv"
    assert main(["sample", str(tmp_path / "m"), "-n", "3", "--out", str(out)]) == 0
    assert list(pd.read_csv(out).columns) == ["district", "day", "hour", "inflow"]
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "m2"), "--id-column", "day,day"]) == 2
    assert "distinct" in capsys.readouterr().err


def test_an_array_needs_no_schema():
    rng = np.random.default_rng(0)
    data = rng.uniform(4.5, 5.5, (1500, T, 2))  # minima and maxima in a few bins: DP bounds show at ε = 5
    labels = rng.choice(["a", "b"], 1500)
    synth = SequenceSynthesizer(epsilon=5.0, seed=0, **TINY).fit(data, labels=labels)
    assert synth.schema.value_names == ["value_0", "value_1"] and synth.schema.length == T
    assert set(synth.privacy_report()["dp_schema"]) == {"bounds", "labels"}
    values, names = synth.sample(4, seed=0)
    assert values.shape == (4, T, 2) and set(names) <= {"a", "b"}
    assert schema_for_array((5, T), labelled=False).values == (ValueColumn("value_0"),)
    with pytest.raises(InputError, match="schema"):
        SequenceSynthesizer(epsilon=1.0, **TINY).fit(_districts())
