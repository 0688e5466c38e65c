"""Series read from an .npy file in blocks (dpgan.sequences.series_file): the in-memory fit's
release and ledger, whatever the block size and the number of torchrun ranks; neighbouring files
give the same public facts; a bad file is refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch.multiprocessing as mp

import series_rank_worker as worker
from dpgan.errors import InputError
from dpgan.sequences.series_file import SeriesFile
from dpgan.synthesizers import SequenceSynthesizer

STATISTICS = ["gaussian-copula", "gaussian", "independent"]


def in_memory(model: str, values: np.ndarray, labels: np.ndarray, seed: int = 3) -> SequenceSynthesizer:
    return SequenceSynthesizer(epsilon=2.0, seed=seed, model=model).fit(values, labels=labels, progress=False)


@pytest.mark.parametrize("model", STATISTICS)
@pytest.mark.parametrize("block", [2000, 37])
def test_a_file_in_blocks_releases_the_in_memory_fit(tmp_path, model, block):
    values, labels = worker.series()
    path, label_path = worker.written(tmp_path)
    memory = in_memory(model, values, labels)
    filed = SequenceSynthesizer(epsilon=2.0, seed=3, model=model)
    filed.fit(SeriesFile.open(path, label_path, block=block), progress=False)
    assert filed.ledger.to_dict() == memory.ledger.to_dict()
    assert filed.schema == memory.schema  # the DP bounds and label set
    assert filed.training["units"] == memory.training["units"]  # the DP tally
    want, got = worker.arrays(memory), worker.arrays(filed)
    for key in want:
        if block == len(values):  # one block: the one-array sums, bit for bit
            np.testing.assert_array_equal(got[key], want[key])
        else:  # the same sums added in another order
            np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6)


def test_a_path_is_read_as_a_file_and_samples_as_an_array(tmp_path):
    path, label_path = worker.written(tmp_path)
    synth = SequenceSynthesizer(epsilon=2.0, seed=3).fit(str(path), labels=str(label_path), progress=False)
    values, labels = synth.sample(5, seed=1)
    assert values.shape == (5, 12, 2) and labels is not None and set(labels) <= {0, 1, 2}


def test_blocks_hold_at_most_the_block_size(tmp_path):
    path, label_path = worker.written(tmp_path)
    source = SeriesFile.open(path, label_path, block=37)
    synth = SequenceSynthesizer(epsilon=2.0, seed=3).fit(source, progress=False)
    sizes = [len(values) for values, _ in source.encoded(synth.schema).passes()]
    assert max(sizes) == 37 and sum(sizes) == 2000


@pytest.mark.parametrize("extra", ["extreme", "unreadable"])
def test_one_series_more_gives_the_same_public_facts(tmp_path, extra):
    values, labels = worker.series()
    added = np.full((1, 12, 2), 1e6) if extra == "extreme" else np.full((1, 12, 2), np.nan)
    facts, inputs = [], {"base": (values, labels), "more": (np.concatenate([values, added]), np.r_[labels, 7])}
    for name, (v, lab) in inputs.items():
        np.save(tmp_path / f"{name}.npy", v)
        np.save(tmp_path / f"{name}-labels.npy", lab)
        synth = SequenceSynthesizer(epsilon=2.0, seed=3)
        synth.fit(SeriesFile.open(tmp_path / f"{name}.npy", tmp_path / f"{name}-labels.npy", block=64), progress=False)
        shapes = {key: tuple(a.shape) for key, a in worker.arrays(synth).items()}
        facts.append((synth.ledger.to_dict(), shapes, synth.schema.length, len(synth.schema.values)))
    assert facts[0] == facts[1]


def test_two_ranks_release_the_one_process_model_and_ledger(tmp_path):
    path, label_path = worker.written(tmp_path)
    single = worker.fit(path, label_path, "gaussian-copula", 3)
    mp.spawn(worker.run, args=(2, str(tmp_path / "init"), str(tmp_path), "gaussian-copula", 3), nprocs=2, join=True)
    want = worker.arrays(single)
    for rank in range(2):
        got = np.load(tmp_path / f"gaussian-copula-3-{rank}.npz")
        assert got["ledger"].item() == repr(single.ledger.to_dict())
        assert got["schema"].item() == repr(single.schema)
        for key, value in want.items():
            np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-6)


def test_two_unseeded_ranks_make_one_release(tmp_path):
    worker.written(tmp_path)
    mp.spawn(worker.run, args=(2, str(tmp_path / "init2"), str(tmp_path), "gaussian", None), nprocs=2, join=True)
    first, second = (np.load(tmp_path / f"gaussian-None-{rank}.npz") for rank in range(2))
    assert first["ledger"].item() == second["ledger"].item()
    for key in set(first.files) - {"ledger", "schema"}:  # the same noise on both ranks: one release
        np.testing.assert_allclose(first[key], second[key], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (np.zeros((4, 3, 2, 2)), "(N, T) or (N, T, F)"),
        (np.array([[1, "a"]], dtype=object), "object array"),
        (np.array([[1 + 1j, 2]]), "real numbers"),
        (None, "not a readable .npy"),
    ],
)
def test_a_bad_file_is_refused_in_one_line(tmp_path, content, words):
    path = tmp_path / "bad.npy"
    if content is None:
        path.write_text("id,value\n1,2.5\n")
    else:
        np.save(path, content, allow_pickle=True)
    with pytest.raises(InputError) as caught:
        SequenceSynthesizer(epsilon=2.0).fit(path, progress=False)
    message = str(caught.value)
    assert words in message and "\n" not in message and "2.5" not in message


@pytest.mark.parametrize("damage", ["truncated", "fortran"])
def test_a_short_or_fortran_file_is_refused_by_its_header_in_one_line(tmp_path, damage):
    """The header's promise is checked before any read (dpgan.npy_blocks): a file cut short, or in
    Fortran order, is refused in one line naming the reason, never a value."""
    path = tmp_path / "bad.npy"
    values = np.full((40, 12, 2), 12345.5)
    np.save(path, values if damage == "truncated" else np.asfortranarray(values))
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(InputError) as caught:
        SequenceSynthesizer(epsilon=2.0).fit(path, progress=False)
    message = str(caught.value)
    words = "shorter than its header" if damage == "truncated" else "C-ordered"
    assert words in message and "\n" not in message and "12345" not in message


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc (Linux)")
def test_a_fitted_file_is_not_kept_mapped(tmp_path):
    """Blocks are plain reads: after a fit, neither file is mapped into the process (a map's touched
    pages would count in the resident memory, issue 53's flat-memory claim)."""
    path, label_path = worker.written(tmp_path)
    source = SeriesFile.open(path, label_path, block=300)
    SequenceSynthesizer(epsilon=2.0, seed=3).fit(source, progress=False)
    maps = Path("/proc/self/maps").read_text()
    assert str(path) not in maps and str(label_path) not in maps


def test_labels_of_another_length_and_a_gan_are_refused_before_reading(tmp_path):
    path, _ = worker.written(tmp_path)
    with pytest.raises(InputError, match="one label per series"):
        SequenceSynthesizer(epsilon=2.0).fit(path, labels=np.zeros(3), progress=False)
    with pytest.raises(InputError, match="holds its series in memory"):
        SequenceSynthesizer(epsilon=2.0, model="gan").fit(path, progress=False)


def test_an_in_memory_fit_under_torchrun_is_refused(monkeypatch):
    values, labels = worker.series()
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(InputError, match="reads an .npy file"):
        SequenceSynthesizer(epsilon=2.0).fit(values, labels=labels, progress=False)


def test_the_cli_fits_an_npy_and_refuses_a_bad_one_in_one_line(tmp_path, capsys):
    from dpgan.cli import main

    path, _ = worker.written(tmp_path)
    out = tmp_path / "model"
    assert main(["fit", str(path), "--kind", "sequence", "--epsilon", "2", "--seed", "1", "--out", str(out)]) == 0
    assert (out / "statistics.safetensors").is_file()
    np.save(tmp_path / "four.npy", np.zeros((4, 3, 2, 2)))
    capsys.readouterr()
    four = ["fit", str(tmp_path / "four.npy"), "--kind", "sequence", "--epsilon", "2", "--out", str(tmp_path / "m2")]
    assert main(four) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "(N, T) or (N, T, F)" in err and "Traceback" not in err
