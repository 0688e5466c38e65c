"""Data-parallel DP-SGD (dpgan.privacy.distributed) with 2 CPU processes on gloo, against one process.

Properties: the same ε and ledger entries; the same final generator and critic (up to the order of
float additions); the noise drawn once per release with the single-process std, so every rank holds
the same noisy sum and pure-noise releases have the single-process variance (not K times it); the
clipped sums split so that the ranks' unit counts add up to the batch; only rank 0 writes; a killed
distributed fit resumes from its checkpoint to the uninterrupted result.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from safetensors.torch import load_file

import distributed_worker as worker
from dpgan import Schema, TabularSynthesizer, datasets
from dpgan.errors import InputError
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext, shard_positions

WORLD = 2
TOL = {"rtol": 1e-4, "atol": 1e-5}  # float sums in another order


def spawn(tmp: Path, jobs: tuple[str, ...]) -> None:
    init = tmp / f"init-{jobs[0]}"
    mp.spawn(worker.run, args=(WORLD, str(init), str(tmp), jobs), nprocs=WORLD, join=True)


def results(tmp: Path, job: str) -> list[tuple[dict[str, torch.Tensor], dict]]:
    return [
        (load_file(str(tmp / f"{job}-{r}.safetensors")), json.loads((tmp / f"{job}-{r}.json").read_text()))
        for r in range(WORLD)
    ]


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("distributed")
    spawn(tmp, ("engine", "fit", "killed"))
    spawn(tmp, ("resumed",))
    return tmp


@pytest.fixture(scope="module")
def single_fit():
    table = datasets.load_adult()[0].sample(300, random_state=0).reset_index(drop=True)
    synth = TabularSynthesizer(**worker.FIT_SETTINGS).fit(table, schema=Schema.from_json(datasets.adult_schema_path()))
    return worker.fit_summary(synth)


def test_the_shares_partition_the_batch_and_keep_microbatches_whole():
    assert sorted(torch.cat([shard_positions(7, r, 3) for r in range(3)]).tolist()) == list(range(7))
    groups = torch.tensor([0, 3, 1, 2, 3, 0, 1])
    shares = [shard_positions(7, r, 2, groups) for r in range(2)]
    assert sorted(torch.cat(shares).tolist()) == list(range(7))
    assert all(len(set((groups[s] % 2).tolist())) <= 1 for s in shares)  # a microbatch on one rank only


def test_the_single_process_context_does_nothing():
    tensors = {"a": torch.ones(3)}
    assert SINGLE_PROCESS.all_reduce_sum(tensors)["a"].equal(tensors["a"])
    assert SINGLE_PROCESS.shared_seed(5) == 5 and SINGLE_PROCESS.agree(1) and SINGLE_PROCESS.is_main
    with pytest.raises(InputError):
        ProcessGroupContext(world_size=2, rank=2)


def test_each_release_equals_the_single_process_release_on_every_rank(ran):
    ref_tensors, ref_values = worker.engine_releases(SINGLE_PROCESS)
    ranks = results(ran, "engine")
    for name in ("per_record", "microbatch", "adaptive"):
        for tensors, values in ranks:
            for key, ref in ref_tensors.items():
                if key.startswith(name + "/"):
                    torch.testing.assert_close(tensors[key], ref, **TOL)
            assert values[name]["noise_std"] == pytest.approx(ref_values[name]["noise_std"], rel=1e-12)
            assert values[name]["max_norm_after"] == pytest.approx(ref_values[name]["max_norm_after"], rel=1e-5)
        # the clipped sums are split: each rank's units add up to the batch, none is read twice
        local = [values[name]["local_units"] for _, values in ranks]
        assert sum(local) == worker.BATCH and all(0 < n < worker.BATCH for n in local)
    assert ref_values["adaptive"]["clip_fraction"] is not None


def test_noise_is_drawn_once_per_release_not_once_per_rank(ran):
    (a, values), (b, _) = results(ran, "engine")
    assert torch.equal(a["noise"], b["noise"])  # every rank holds the same noisy sum
    std = values["noise_std"]
    assert std == worker.engine_releases(SINGLE_PROCESS)[1]["noise_std"]
    noise = a["noise"].double()
    n = noise.numel()
    # pure-noise releases: variance σ²C² (one draw), not K·σ²C² (one per rank, summed)
    variance = noise.pow(2).mean().item()
    bound = 5 * std**2 * math.sqrt(2 / n)
    assert abs(variance - std**2) < bound
    assert abs(variance - WORLD * std**2) > 5 * bound  # the two hypotheses are told apart


def test_a_two_process_fit_has_the_single_process_ledger_and_weights(ran, single_fit):
    ref_tensors, ref_values = single_fit
    for tensors, values in results(ran, "fit"):
        assert values["ledger"] == ref_values["ledger"]
        assert values["epsilon"] == pytest.approx(ref_values["epsilon"], rel=1e-12)
        assert values["training"]["world_size"] == WORLD and ref_values["training"]["world_size"] == 1
        assert set(tensors) == set(ref_tensors) and any(k.startswith("L/") for k in tensors)
        for key, ref in ref_tensors.items():
            torch.testing.assert_close(tensors[key], ref, rtol=1e-3, atol=1e-4)


def test_only_rank_0_writes_and_inspect_reports_the_world_size(ran):
    from dpgan.inspection import inspect_model

    assert (ran / "model-fit" / "model.json").exists()
    assert inspect_model(ran / "model-fit")["training"]["world_size"] == WORLD
    assert not (ran / "checkpoint-fit" / "fit-checkpoint.safetensors").exists()  # deleted after the fit


def test_a_killed_distributed_fit_resumes_to_the_uninterrupted_one(ran):
    assert all(values.get("killed") for _, values in results(ran, "killed"))
    (fit, fit_values), _ = results(ran, "fit")
    for tensors, values in results(ran, "resumed"):
        assert values["ledger"] == fit_values["ledger"]
        for key, ref in fit.items():
            torch.testing.assert_close(tensors[key], ref, rtol=0, atol=0)
