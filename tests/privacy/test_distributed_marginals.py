"""The tables' marginals model streamed under torchrun (2 CPU processes on gloo) against one process:
each rank adds its share of the record batches to the count tables, the tables are summed over the
ranks once before any noise, so every rank releases the one-process tables with the same ledger
and samples the same rows (no tolerance: integer counts, the same noise from the shared seed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from safetensors.torch import load_file

import distributed_worker as worker

WORLD = 2
JOB = "stream-marginals"
SAMPLED = "stream-marginals-sampled"  # past its row budget: every rank reads the same Poisson sample


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("distributed-marginals")
    worker.write_parquet_dir(tmp)
    mp.spawn(worker.run, args=(WORLD, str(tmp / "init"), str(tmp), (JOB, SAMPLED)), nprocs=WORLD, join=True)
    return tmp


@pytest.mark.parametrize("job", [JOB, SAMPLED])
def test_two_ranks_release_the_one_process_tables_ledger_and_rows(ran, job):
    budget = worker.SAMPLED_MAX_EXAMPLES if job == SAMPLED else None
    single_tensors, single = worker.marginals_summary(worker.marginals_stream_fit(ran, budget))
    assert single["training"]["streamed"] and single["training"]["world_size"] == 1
    assert single["training"]["marginals"]["target"] is not None  # the class tree: (y, a, b) tables
    assert ("rows_read_rate" in single["training"]["marginals"]) == (job == SAMPLED)
    for rank in range(WORLD):
        tensors = load_file(str(ran / f"{job}-{rank}.safetensors"))
        values = json.loads((ran / f"{job}-{rank}.json").read_text())
        assert values["training"]["world_size"] == WORLD
        assert values["ledger"] == single["ledger"] and values["epsilon"] == single["epsilon"]
        assert values["training"]["marginals"] == single["training"]["marginals"]
        assert tensors.keys() == single_tensors.keys()
        for key, value in single_tensors.items():
            assert torch.equal(tensors[key], value), key
        assert values["sample"] == single["sample"]
