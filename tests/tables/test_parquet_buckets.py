"""Rows hashed by their unit's key into bucket files (dpgan.tables.reading.parquet_buckets): every row in
exactly one bucket, a key's rows all in one, read back in the input's order, and parts whose stored
types differ (a missing key makes pandas write float64) bucketed, not refused."""

from __future__ import annotations

import pandas as pd

from dpgan.tables.reading.parquet_buckets import bucket_of, read_bucket, write_buckets


def parts(tmp_path):
    first = pd.DataFrame({"id": [1, 2, 3, 1], "x": ["a", "b", "c", "d"]})  # int64 keys
    second = pd.DataFrame({"id": [2.0, None, 1.0], "x": ["e", "f", "g"]})  # a missing key: float64
    paths = [tmp_path / "part-0.parquet", tmp_path / "part-1.parquet"]
    first.to_parquet(paths[0], index=False)
    second.to_parquet(paths[1], index=False)
    return paths


def test_one_bucket_reads_every_row_back_in_the_input_order(tmp_path):
    folder = tmp_path / "buckets"
    folder.mkdir()
    write_buckets(parts(tmp_path), ["id", "x"], ["id"], 1, [0], folder)
    assert read_bucket(folder, 0, ["id", "x"])["x"].tolist() == list("abcdefg")


def test_a_key_is_in_one_bucket_whatever_its_stored_type(tmp_path):
    folder = tmp_path / "buckets"
    folder.mkdir()
    write_buckets(parts(tmp_path), ["id", "x"], ["id"], 5, range(5), folder)
    seen = [(x, b) for b in range(5) for x in read_bucket(folder, b, ["id", "x"])["x"]]
    where = dict(seen)
    assert sorted(x for x, _ in seen) == list("abcdefg")  # every row once
    assert where["a"] == where["d"] == where["g"] and where["b"] == where["e"]  # 1, 1.0 / 2, 2.0: one key
    assert (
        bucket_of(pd.DataFrame({"id": [1, 2]}), ["id"], 5).tolist()
        == bucket_of(pd.DataFrame({"id": ["1", "2.0"]}), ["id"], 5).tolist()
    )


def test_only_this_ranks_buckets_are_written(tmp_path):
    folder = tmp_path / "buckets"
    folder.mkdir()
    write_buckets(parts(tmp_path), ["id", "x"], ["id"], 4, [1, 3], folder)
    assert {int(p.stem.split("-")[0]) for p in folder.glob("*.parquet")} <= {1, 3}
