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
    worker.write_parquet_dir(tmp)
    spawn(tmp, ("engine", "fit", "killed", "fit-gan", "stream"))
    spawn(tmp, ("resumed",))
    return tmp


def single_process_fit(settings: dict) -> tuple[dict[str, torch.Tensor], dict]:
    table = datasets.load_adult()[0].sample(300, random_state=0).reset_index(drop=True)
    synth = TabularSynthesizer(**settings).fit(table, schema=Schema.from_json(datasets.adult_schema_path()))
    return worker.fit_summary(synth)


@pytest.fixture(scope="module")
def single_fit():
    return single_process_fit(worker.FIT_SETTINGS)


def test_the_shares_partition_the_batch_and_keep_microbatches_whole():
    assert sorted(torch.cat([shard_positions(7, r, 3) for r in range(3)]).tolist()) == list(range(7))
    groups = torch.tensor([0, 3, 1, 2, 3, 0, 1])
    shares = [shard_positions(7, r, 2, groups) for r in range(2)]
    assert sorted(torch.cat(shares).tolist()) == list(range(7))
    assert all(len(set((groups[s] % 2).tolist())) <= 1 for s in shares)  # a microbatch on one rank only


def test_a_share_of_fake_rows_is_those_rows_of_the_whole_batch_and_draws_the_same():
    from dpgan.models.output_spans import OutputSpan
    from dpgan.models.tabular import TabularGenerator
    from dpgan.training.config import TrainingConfig
    from dpgan.training.fake_rows import FakeRows

    spans = [OutputSpan("tanh", 0, 1, "a"), OutputSpan("softmax", 1, 3, "b"), OutputSpan("softmax", 4, 2, "c")]
    torch.manual_seed(0)
    G = TabularGenerator(8, (16,), spans)
    config = TrainingConfig(noise_dim=8)
    whole_gen = torch.Generator().manual_seed(3)
    whole = FakeRows(G, config, None, whole_gen)(7)
    rank_gens = [torch.Generator().manual_seed(3) for _ in range(2)]  # each rank's copy of the stream
    shares = [FakeRows(G, config, None, g)(7, rows=shard_positions(7, r, 2)) for r, g in enumerate(rank_gens)]
    # the same rows (the same Gumbel noise), up to a matmul's rounding on a smaller batch
    torch.testing.assert_close(torch.cat([whole[0::2], whole[1::2]]), torch.cat(shares), rtol=1e-5, atol=1e-6)
    # every rank's stream advanced by the whole batch's draws: the ranks stay in lockstep
    assert all(torch.equal(whole_gen.get_state(), g.get_state()) for g in rank_gens)


def test_the_fake_term_shares_add_up_to_the_whole_mean_and_one_process_keeps_it_whole():
    from dpgan.models.tabular import TabularCritic
    from dpgan.training.dp_critic import fake_share, fake_term_gradient

    torch.manual_seed(1)
    D = TabularCritic(3, (4,))
    fakes, weight = torch.randn(9, 3), torch.rand(9)
    for clip in (None, 0.1):
        whole = fake_term_gradient(D, fakes, weight, clip)
        parts = [
            fake_term_gradient(D, fakes[i], weight[i], clip, 9) for i in (shard_positions(9, r, 2) for r in (0, 1))
        ]
        for name, g in whole.items():
            torch.testing.assert_close(parts[0][name] + parts[1][name], g)
    assert fake_share(SINGLE_PROCESS, 9) is None and fake_share(ProcessGroupContext(2, 1), 1) is None
    assert fake_share(ProcessGroupContext(2, 1), 5).tolist() == [1, 3]


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


@pytest.mark.parametrize("job", ["fit", "fit-gan"])
def test_a_two_process_fit_has_the_single_process_ledger_and_weights(ran, single_fit, job):
    # "fit-gan" (the default recipe, 2-way anchor on) splits G's step and the fake term as well
    ref_tensors, ref_values = single_fit if job == "fit" else single_process_fit(worker.GAN_FIT_SETTINGS)
    for tensors, values in results(ran, job):
        assert values["pair_anchor"] == ref_values["pair_anchor"] and (values["pair_anchor"] or job == "fit")
        assert values["ledger"] == ref_values["ledger"]
        assert values["epsilon"] == pytest.approx(ref_values["epsilon"], rel=1e-12)
        assert values["training"]["world_size"] == WORLD and ref_values["training"]["world_size"] == 1
        assert set(tensors) == set(ref_tensors) and any(k.startswith("L/") for k in tensors)
        for key, ref in ref_tensors.items():
            torch.testing.assert_close(tensors[key], ref, rtol=1e-3, atol=1e-4)


def test_a_streamed_parquet_directory_fits_under_two_ranks_with_the_single_process_ledger(ran):
    """Streaming × data-parallel: every rank streams the same files in lockstep; the ledger and ε
    are the one-process streamed fit's, the weights equal up to the order of float additions."""
    schema = Schema.from_json(datasets.adult_schema_path())
    single = TabularSynthesizer(**worker.GAN_FIT_SETTINGS).fit(ran / worker.PARQUET_DIR, schema=schema)
    ref_tensors, ref_values = worker.fit_summary(single)
    assert ref_values["training"]["streamed"] and ref_values["training"]["world_size"] == 1
    for tensors, values in results(ran, "stream"):
        assert values["ledger"] == ref_values["ledger"]
        assert values["epsilon"] == pytest.approx(ref_values["epsilon"], rel=1e-12)
        assert values["training"]["streamed"] and values["training"]["world_size"] == WORLD
        assert set(tensors) == set(ref_tensors)
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


def test_every_block_is_owned_by_exactly_one_rank():
    """The one share rule of every reader in blocks (buckets, a file's blocks, a stream's batches):
    the ranks' shares partition the blocks, and `owns` agrees with `owned`."""
    for world in (1, 2, 3, 5):
        shares = [list(ProcessGroupContext(world, rank).owned(11)) for rank in range(world)]
        assert sorted(b for share in shares for b in share) == list(range(11))
        for rank, share in enumerate(shares):
            assert [b for b in range(11) if ProcessGroupContext(world, rank).owns(b)] == share
