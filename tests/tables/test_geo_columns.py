"""Geo columns (Boob et al.; issue 14, option 6): a latitude/longitude pair as one 2-D column, and
points inside public region boxes. Both are functions of the public schema; the tests check the
coding is exact, that anything decodes inside the public box, that the anchors see the pair as one
variable with the releases they charge for, and the library and CLI paths with bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from dpgan import Schema, TabularSynthesizer
from dpgan.cli import main
from dpgan.errors import InputError
from dpgan.statistics.tables.marginals import MarginalAnchor
from dpgan.statistics.tables.pair_marginals import PAIRS_EVENT, PairAnchor, span_pairs
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.codec.geo import GeoTransform, region_points
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.table import with_geo

TINY = {"generator_hidden": (32,), "critic_hidden": (32,), "noise_dim": 8}
CITIES = {"north": (47.0, 8.0), "south": (41.0, -3.0), "east": (45.0, 12.0)}  # public centres, made up


def _schema(nullable: bool = False, bins: int = 6) -> Schema:
    return Schema(
        (
            ColumnSpec("city", "categorical", categories=tuple(CITIES)),
            ColumnSpec("lon", "continuous", min=-10.0, max=20.0, bins=bins, nullable=nullable),
            ColumnSpec("lat", "continuous", min=35.0, max=55.0, bins=bins, nullable=nullable),
        ),
        geo=(("lat", "lon"),),
    )


def _rows(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Points scattered around each city's centre: latitude and longitude go together."""
    rng = np.random.default_rng(seed)
    city = rng.choice(list(CITIES), n)
    centre = np.array([CITIES[c] for c in city])
    return pd.DataFrame(
        {"city": city, "lon": centre[:, 1] + rng.normal(0, 0.4, n), "lat": centre[:, 0] + rng.normal(0, 0.4, n)}
    )


def test_the_pair_is_one_transform_with_two_positions_and_a_grid():
    encoder = TableEncoder(_schema())
    geo = [t for t in encoder.transforms if isinstance(t, GeoTransform)]
    assert len(encoder.transforms) == 2 and len(geo) == 1 and geo[0].names == ["lat", "lon"]
    spans = [(s.activation, s.width, s.column, s.value_modes) for s in encoder.spans]
    assert spans[:2] == [("softmax", 3, "city", 0), ("tanh", 2, "lat+lon", 0)]
    assert spans[2] == ("softmax", 36, "lat+lon", 36)


def test_points_round_trip_and_the_cell_holds_both_coordinates():
    encoder = TableEncoder(_schema())
    rows = _rows(200)
    encoded = encoder.encode(rows)
    back = encoder.decode(encoded, np.random.default_rng(0))
    assert list(back.columns) == ["city", "lon", "lat"]
    np.testing.assert_allclose(back["lat"], rows["lat"], atol=1e-4)
    np.testing.assert_allclose(back["lon"], rows["lon"], atol=1e-4)
    cells = encoded[:, 5:].argmax(axis=1)  # after city (3) and the two positions
    lat_bin = np.floor((rows["lat"] - 35.0) / 20.0 * 6).clip(0, 5).to_numpy()
    lon_bin = np.floor((rows["lon"] + 10.0) / 30.0 * 6).clip(0, 5).to_numpy()
    assert (cells == lat_bin * 6 + lon_bin).all()
    assert len(np.unique(cells)) <= 6  # three clusters: a handful of the 36 cells, not a product of margins


def test_any_output_decodes_inside_the_public_box_and_nulls_go_together():
    encoder = TableEncoder(_schema(nullable=True))
    noise = np.random.default_rng(2).uniform(-3, 3, size=(4000, encoder.width)).astype(np.float32)
    noise[:, 5:] = np.abs(noise[:, 5:])  # softmax probabilities are non-negative
    out = encoder.decode(noise, np.random.default_rng(0))
    assert (out["lat"].isna() == out["lon"].isna()).all() and out["lat"].isna().any()
    assert out["lat"].dropna().between(35, 55).all() and out["lon"].dropna().between(-10, 20).all()
    frame = _rows(4)
    frame.loc[1, "lon"] = np.nan  # one coordinate missing: the location is missing
    back = encoder.decode(encoder.encode(frame), np.random.default_rng(0))
    assert back["lat"].isna().tolist() == [False, True, False, False]


def test_the_anchors_see_one_variable_and_charge_two_moments_per_coordinate():
    spans = TableEncoder(_schema()).spans
    pairs = span_pairs(spans)
    assert [(a.column, b.column) for a, b in pairs] == [("city", "lat+lon")]
    assert PairAnchor.releases(spans, None) == 1
    # city's table, the cell table, and per coordinate the sums of position and its square
    assert MarginalAnchor.releases(spans, None) == 2 + 2 * 2
    encoded = torch.from_numpy(TableEncoder(_schema()).encode(_rows(300)))
    anchor = MarginalAnchor.measure(encoded, spans, None, 0.5, np.random.default_rng(0))
    assert sorted(m.offset for m in anchor.positions) == [0, 1]


@pytest.mark.parametrize(
    "change,geo",
    [
        ({"lat": {"min": -95.0}}, (("lat", "lon"),)),
        ({"lon": {"kind": "integer", "min": -10, "max": 20}}, (("lat", "lon"),)),
        ({"lat": {"nullable": True}}, (("lat", "lon"),)),
        ({"lat": {"bins": 64}, "lon": {"bins": 32}}, (("lat", "lon"),)),
        ({}, (("lat", "lat"),)),
        ({}, (("lat", "lon"), ("lon", "lat"))),
        ({}, (("lat", "height"),)),
        ({"lat": {"scale": "log"}}, (("lat", "lon"),)),
        ({"lat": {"bins": 2, "bin_edges": [40.0]}}, (("lat", "lon"),)),  # the grid's cells are equal
    ],
)
def test_impossible_geo_pairs_are_refused_with_one_line(change, geo):
    columns = []
    for spec in _schema().columns:
        data = spec.to_dict() | change.get(spec.name, {})
        columns.append(ColumnSpec.from_dict(data))
    with pytest.raises(InputError) as caught:
        Schema(tuple(columns), geo=geo)
    assert "\n" not in str(caught.value)


def test_geo_and_boxes_survive_the_schema_file():
    boxes = tuple((name, lat - 1, lat + 1, lon - 1, lon + 1) for name, (lat, lon) in CITIES.items())
    city = ColumnSpec("city", "categorical", categories=tuple(CITIES), boxes=boxes, placement="centre")
    schema = Schema((city,) + _schema().columns[1:], geo=(("lat", "lon"),))
    data = json.loads(json.dumps(schema.to_dict()))
    assert data["geo"] == [{"latitude": "lat", "longitude": "lon"}]
    assert data["columns"][0]["boxes"]["north"] == [46.0, 48.0, 7.0, 9.0]
    assert Schema.from_dict(data) == schema
    with pytest.raises(InputError):  # a box for a category the column does not have
        ColumnSpec("city", "categorical", categories=("north",), boxes=(("west", 0, 1, 0, 1),))
    with pytest.raises(InputError):  # south above north
        ColumnSpec("city", "categorical", categories=("north",), boxes=(("north", 2, 1, 0, 1),))


def test_with_geo_drops_learned_log_scales_and_refuses_unknown_columns():
    columns = list(_schema().columns)
    columns[2] = ColumnSpec(
        "lat", "continuous", min=35.0, max=55.0, bins=3, bin_edges=(40.0, 45.0), scale="log", point_masses=(40.0,)
    )
    plain = Schema(tuple(columns))
    paired = with_geo(plain, (("lat", "lon"),))
    assert paired.geo == (("lat", "lon"),) and paired["lat"].scale == "linear" and not paired["lat"].point_masses
    assert not paired["lat"].bin_edges
    with pytest.raises(InputError, match="not a column"):
        with_geo(plain, (("lat", "height"),))


def test_region_points_lie_in_their_box_uniformly_or_at_the_centre():
    boxes = tuple((name, lat - 1, lat + 1, lon - 2, lon + 2) for name, (lat, lon) in CITIES.items())
    schema = Schema((ColumnSpec("city", "categorical", categories=tuple(CITIES), boxes=boxes, nullable=True),))
    frame = pd.DataFrame({"city": ["north", "south", None] * 400})
    points = region_points(frame, schema, "city", np.random.default_rng(0))
    assert list(points.columns) == ["city", "city_latitude", "city_longitude"]
    north = points[points["city"] == "north"]
    assert north["city_latitude"].between(46, 48).all() and north["city_longitude"].between(6, 10).all()
    assert north["city_latitude"].std() > 0.4  # spread over the box, not one point
    assert points.loc[points["city"].isna(), "city_latitude"].isna().all()
    centre = region_points(frame, schema, "city", np.random.default_rng(0), placement="centre")
    assert (centre.loc[centre["city"] == "south", ["city_latitude", "city_longitude"]] == [41.0, -3.0]).all().all()
    with pytest.raises(InputError, match="not a region column"):
        region_points(
            frame.assign(x=1), Schema((ColumnSpec("x", "integer", min=0, max=3),)), "x", np.random.default_rng(0)
        )


def test_a_fit_with_a_geo_pair_keeps_points_in_the_box_and_reloads(tmp_path):
    schema = Schema(_schema().columns)  # the pair is declared at fit time, as --geo does
    kwargs = {"epsilon": 3.0, "epochs": 2, "batch_size": 64, "seed": 0, "label_model": False, **TINY}
    synth = TabularSynthesizer(geo_pairs=(("lat", "lon"),), pair_warmup_steps=50, **kwargs).fit(_rows(), schema=schema)
    assert synth.schema.geo == (("lat", "lon"),)
    report = synth.privacy_report()
    entry = next(e for e in report["events"] if e["name"] == PAIRS_EVENT)
    assert entry["count"] == PairAnchor.releases(synth.encoder.spans, None) == 1
    assert report["epsilon"] <= 3.0 * (1 + 1e-9)
    rows = synth.sample(500, seed=1)
    assert rows["lat"].between(35, 55).all() and rows["lon"].between(-10, 20).all()
    synth.save(tmp_path / "m")
    pd.testing.assert_frame_equal(TabularSynthesizer.load(tmp_path / "m").sample(40, seed=2), synth.sample(40, seed=2))
    assert TabularSynthesizer(**kwargs).fit(_rows(), schema=schema).schema.geo == ()


def test_neighbouring_tables_get_the_same_coding():
    kwargs = {"epsilon": 3.0, "epochs": 1, "batch_size": 64, "seed": 0, "label_model": False, **TINY}
    rows = _rows()
    first = TabularSynthesizer(geo_pairs=(("lat", "lon"),), **kwargs).fit(rows, schema=_schema())
    second = TabularSynthesizer(geo_pairs=(("lat", "lon"),), **kwargs).fit(rows.iloc[1:], schema=_schema())
    assert first.encoder.spans == second.encoder.spans and first.schema == second.schema


def test_cli_geo_and_region_points(tmp_path, capsys):
    boxes = tuple((name, lat - 1, lat + 1, lon - 1, lon + 1) for name, (lat, lon) in CITIES.items())
    columns = (ColumnSpec("city", "categorical", categories=tuple(CITIES), boxes=boxes),) + _schema().columns[1:]
    Schema(columns).to_json(tmp_path / "s.json")
    _rows(300).to_csv(tmp_path / "t.csv", index=False)
    base = ["fit", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"), "--epsilon", "2", "--epochs", "1"]
    assert main(base + ["--out", str(tmp_path / "m"), "--geo", "lat,lon", "--no-label-model"]) == 0
    assert (
        main(["sample", str(tmp_path / "m"), "-n", "50", "--out", str(tmp_path / "s.csv"), "--region-points", "city"])
        == 0
    )
    sampled = pd.read_csv(tmp_path / "s.csv")
    assert {"city_latitude", "city_longitude", "lat", "lon"} <= set(sampled.columns)
    capsys.readouterr()
    assert main(base + ["--out", str(tmp_path / "bad"), "--geo", "lat"]) != 0
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "--geo" in err and not (tmp_path / "bad").exists()
    assert (
        main(["sample", str(tmp_path / "m"), "-n", "5", "--out", str(tmp_path / "x.csv"), "--region-points", "lat"])
        != 0
    )
    assert "not a region column" in capsys.readouterr().err and not (tmp_path / "x.csv").exists()
