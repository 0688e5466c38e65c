"""Entity tables in Parquet read in buckets (dpgan.entities.parquet): the in-memory fit's ledger, tally
and released arrays (equal up to float rounding, the noise seeded), whatever the parts, the buckets and
the ranks; an entity whose rows sit in several parts is one unit; one entity more changes no public
fact; the k-of-n draw is uniform and keyed per entity; bad input is one line; sampling streams to
files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch.multiprocessing as mp

import entity_rank_worker as worker
from dpgan.cli import main
from dpgan.entities.facade import EntitySynthesizer
from dpgan.entities.parquet import EntityParquet
from dpgan.entities.reader import keyed_priorities, priority_rank, read_entities
from dpgan.errors import InputError


def assert_same_release(one: EntitySynthesizer, other: EntitySynthesizer) -> None:
    assert one.ledger.to_dict() == other.ledger.to_dict()
    assert one.training["units"] == other.training["units"] and one.training["flags"] == other.training["flags"]
    assert one.schema == other.schema and one.generator.form() == other.generator.form()
    want, got = worker.arrays(one), worker.arrays(other)
    assert set(got) == set(want)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12, atol=1e-15, err_msg=key)


@pytest.mark.parametrize("model", ["linked", "independent"])
def test_buckets_release_the_in_memory_fit(tmp_path, model):
    parents, events = worker.tables()
    memory = EntitySynthesizer(epsilon=3.0, seed=3, model=model).fit(parents, events, **worker.PUBLIC)
    blocked = worker.fit_parquet(*worker.written(tmp_path, parents, events), model=model)
    assert "entity link column (exponential mechanism)" in [e.name for e in memory.ledger.entries]  # summed tables
    assert_same_release(memory, blocked)
    sampled_parents, sampled_events = blocked.sample(50, seed=1)
    assert set(sampled_events["id"]) <= set(sampled_parents["id"])


def test_the_parts_and_the_number_of_buckets_do_not_matter(tmp_path):
    parents, events = worker.tables()
    one = worker.fit_parquet(*worker.written(tmp_path / "a", parents, events, parts=(1, 1)), buckets=1)
    many = worker.fit_parquet(*worker.written(tmp_path / "b", parents, events, parts=(3, 7)), buckets=64)
    assert_same_release(one, many)


def test_the_rows_order_changes_nothing_public_and_no_count(tmp_path):
    parents, events = worker.tables()
    one = worker.fit_parquet(*worker.written(tmp_path / "a", parents, events))
    shuffled = [t.sample(frac=1.0, random_state=5).reset_index(drop=True) for t in (parents, events)]
    other = worker.fit_parquet(*worker.written(tmp_path / "b", *shuffled))
    assert one.ledger.to_dict() == other.ledger.to_dict() and one.training["units"] == other.training["units"]
    assert {k: v.shape for k, v in worker.arrays(one).items()} == {k: v.shape for k, v in worker.arrays(other).items()}


def test_an_entity_whose_rows_sit_in_several_parts_is_one_unit(tmp_path):
    """P0's parent row in the last parents' part, its events in the first and last events' parts:
    the exact tally (before any noise) keeps every parent once and drops only the real orphans."""
    parents, events = worker.tables(n=40)
    parents = pd.concat([parents.iloc[1:], parents.iloc[:1]], ignore_index=True)
    mine = events[events["id"] == "P0"]
    assert len(mine) >= 2
    events = pd.concat([mine.iloc[:1], events[events["id"] != "P0"], mine.iloc[1:]], ignore_index=True)
    source = EntityParquet.open(*worker.written(tmp_path, parents, events, parts=(3, 4)), buckets=3)
    synth = EntitySynthesizer(epsilon=3.0, seed=0)
    synth.fit(parents, events, **worker.PUBLIC)  # the schema the blocks read with
    reads = source.reads(synth.schema, 16, 7)
    exact = reads.sum(lambda r: {"tally": r.tally.vector(), "counts": np.array([r.counts.sum()], dtype=float)})
    unique = parents["id"].nunique()
    assert exact["tally"].tolist() == [unique - 1, 2, 1]  # kept, orphans (2 keys), duplicates (P7)
    kept_events = events["id"].isin(parents["id"]) & (events["id"] != "P7")
    assert exact["counts"][0] == kept_events.sum()


def test_one_entity_more_in_other_parts_gives_the_same_public_facts(tmp_path):
    parents, events = worker.tables()
    heavy_parent = pd.DataFrame({"id": ["HEAVY"], "kind": ["c"], "region": ["s"], "age": [50]})
    heavy = pd.DataFrame({"id": "HEAVY", "when": "2020-02-01 10:00", "amount": 19.0, "tag": "z"}, index=range(400))
    more = (pd.concat([parents, heavy_parent], ignore_index=True),
            pd.concat([heavy.iloc[:200], events, heavy.iloc[200:]], ignore_index=True))  # fmt: skip
    facts = []
    for name, (p, e) in {"base": (parents, events), "more": more}.items():
        synth = worker.fit_parquet(*worker.written(tmp_path / name, p, e))
        facts.append((synth.ledger.to_dict(), synth.schema, synth.generator.form(),
                      {k: v.shape for k, v in worker.arrays(synth).items()}))  # fmt: skip
    assert facts[0] == facts[1]


def test_two_ranks_release_the_one_process_model_and_ledger(tmp_path):
    parents, events = worker.tables()
    single = worker.fit_parquet(*worker.written(tmp_path, parents, events))
    mp.spawn(worker.run, args=(2, str(tmp_path / "init"), str(tmp_path)), nprocs=2, join=True)
    for rank in range(2):
        got = np.load(tmp_path / f"entities-{rank}.npz")
        assert got["ledger"].item() == repr(single.ledger.to_dict())
        assert got["units"].item() == repr(single.training["units"])
        for key, value in worker.arrays(single).items():
            np.testing.assert_allclose(got[key], value, rtol=1e-12, atol=1e-15, err_msg=key)


def test_the_cli_fits_folders_of_parts_on_two_ranks_as_on_one(tmp_path, capsys):
    parents, events = worker.tables()
    worker.written(tmp_path, parents, events)
    assert main(worker.cli_arguments(tmp_path, tmp_path / "single")) == 0
    single = EntitySynthesizer.load(tmp_path / "single")
    mp.spawn(worker.run_cli, args=(2, str(tmp_path / "init"), str(tmp_path)), nprocs=2, join=True)
    assert [(tmp_path / f"exit-{r}").read_text() for r in range(2)] == ["0", "0"]
    assert (tmp_path / "model-0").is_dir() and not (tmp_path / "model-1").exists()  # rank 0 alone writes
    ranked = EntitySynthesizer.load(tmp_path / "model-0")
    assert_same_release(single, ranked)


def test_the_k_of_n_draw_is_uniform_and_keyed_per_entity():
    keys, k = np.array(["a", "b"], dtype=object), 4
    owner = np.array([0] * 10 + [1] * 3)
    counts = np.bincount(owner)
    chosen = np.zeros(len(owner))
    for seed in range(2000):
        chosen += priority_rank(owner, counts, keyed_priorities(keys, owner, counts, seed)) < k
    np.testing.assert_allclose(chosen[:10] / 2000, 0.4, atol=0.05)  # each of a's 10 events: k/n
    assert (chosen[10:] == 2000).all()  # b has fewer than k: all read
    # an entity's draw is its own: another entity beside it (before it in the input) changes nothing
    before = np.array(["z"] + list(keys), dtype=object)
    alone = keyed_priorities(keys, owner, counts, 11)
    beside = keyed_priorities(before, np.concatenate([[0, 0], owner + 1]), np.array([2, 10, 3]), 11)
    np.testing.assert_array_equal(beside[2:], alone)


def test_bad_input_is_one_line(tmp_path):
    parents, events = worker.tables(n=20)
    parents_dir, events_dir = worker.written(tmp_path, parents, events)
    synth = EntitySynthesizer(epsilon=3.0)
    (tmp_path / "events.csv").write_text("id,when\n")
    cases = {
        "not a Parquet file or folder": (parents_dir, tmp_path / "events.csv"),
        "as DataFrames, or both as Parquet": (parents_dir, events),
    }
    for words, (p, e) in cases.items():
        with pytest.raises(InputError, match=words):
            synth.fit(p, e, **worker.PUBLIC)
    no_key = worker.write_parts(parents.rename(columns={"id": "name"}), tmp_path / "nokey", 2)
    with pytest.raises(InputError, match="the parents table has no key column 'id'"):
        synth.fit(no_key, events_dir, **worker.PUBLIC)
    with pytest.raises(InputError, match="would be bought with DP"):
        synth.fit(parents_dir, events_dir, key="id")
    with pytest.raises(InputError, match="the gan model holds its entities in memory"):
        EntitySynthesizer(epsilon=3.0, model="gan").fit(parents_dir, events_dir, **worker.PUBLIC)
    (tmp_path / "broken.parquet").write_text("not parquet")
    with pytest.raises(InputError, match="broken.parquet"):
        synth.fit(parents_dir, tmp_path / "broken.parquet", **worker.PUBLIC)


def test_the_cli_refuses_a_csv_beside_a_folder_in_one_line(tmp_path, capsys):
    parents, events = worker.tables(n=20)
    worker.written(tmp_path, parents, events)
    events.to_csv(tmp_path / "events.csv", index=False)
    arguments = worker.cli_arguments(tmp_path, tmp_path / "model")
    arguments[arguments.index("--events") + 1] = str(tmp_path / "events.csv")
    assert main(arguments) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "events.csv" in err and "Traceback" not in err


def test_sampling_streams_both_tables_in_chunks(tmp_path, capsys):
    parents, events = worker.tables(n=60)
    synth = EntitySynthesizer(epsilon=3.0, seed=0).fit(parents, events, **worker.PUBLIC)
    n = 45_000  # three chunks of at most 20,000 entities
    rows = synth.sample_to(tmp_path / "p.parquet", tmp_path / "e.csv", n, seed=4)
    got_parents, got_events = pd.read_parquet(tmp_path / "p.parquet"), pd.read_csv(tmp_path / "e.csv")
    assert rows == (len(got_parents), len(got_events)) and len(got_parents) == n
    assert got_parents["id"].tolist() == list(range(1, n + 1))
    assert set(got_events["id"]) <= set(got_parents["id"]) and got_events["id"].is_monotonic_increasing
    first, first_events = synth.sample(100, seed=4)  # up to a chunk: sample's rows
    synth.sample_to(tmp_path / "p100.csv", tmp_path / "e100.csv", 100, seed=4)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "p100.csv"), first, check_dtype=False)
    assert len(pd.read_csv(tmp_path / "e100.csv")) == len(first_events)


def test_an_input_with_no_value_outside_its_schema_flags_no_entity():
    """The mapped flag counts entities, never the rows a non-boolean array would index (it flagged the
    first events' entities, once per bucket read)."""
    parents, events = worker.tables()
    synth = EntitySynthesizer(epsilon=3.0, seed=0).fit(parents, events, **worker.PUBLIC)
    read = read_entities(parents, events, synth.schema, 16, np.random.default_rng(0))
    assert read.flags.tolist() == [0.0, 0.0]
    events.loc[events["id"] == "P3", "amount"] = 99.0  # outside [-5, 20]: P3 alone is mapped
    assert read_entities(parents, events, synth.schema, 16, np.random.default_rng(0)).flags.tolist() == [0.0, 1.0]


def test_under_torchrun_tables_in_memory_are_refused_in_one_line(tmp_path, monkeypatch, capsys):
    parents, events = worker.tables(n=20)
    monkeypatch.setenv("WORLD_SIZE", "2")  # as torchrun sets it: the refusal comes before any group is joined
    with pytest.raises(InputError, match="reads Parquet tables in buckets"):
        EntitySynthesizer(epsilon=3.0).fit(parents, events, **worker.PUBLIC)
    parents.to_csv(tmp_path / "parents.csv", index=False)
    events.to_parquet(tmp_path / "events.parquet", index=False)
    arguments = ["fit", str(tmp_path / "parents.csv"), "--kind", "entity", "--events", str(tmp_path / "events.parquet"),
                 "--key", "id", "--epsilon", "3", "--out", str(tmp_path / "model")]  # fmt: skip
    assert main(arguments) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "under torchrun" in err and "parents.csv" in err
