"""What each rank of the data-parallel tests runs (a module, so torch.multiprocessing can spawn it).

`engine_releases` runs the same releases under any process-group context, so the test compares a
2-rank run with one process on equal terms; `fit_job` runs a whole tabular fit. Results go to
JSON and safetensors files (no pickle), one set per rank.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from dpgan.models.tabular import TabularCritic
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.adaptive_clipping import AdaptiveClipping
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.training.critic_step import CriticStepSettings, CriticUnits, critic_step

WIDTH, BATCH = 6, 13  # an odd batch: the two shares differ in size
NOISE_RELEASES = 60  # releases of pure noise for the variance check


def settings(**overrides: Any) -> CriticStepSettings:
    base = {
        "loss": "wgan-gp",
        "gp_weight": 10.0,
        "one_sided_penalty": False,
        "interpolation": "linear",
        "microbatches": 0,
        "feature_scale": 1.0,
    }
    return CriticStepSettings(**(base | overrides))


def _units(weight_scale: float = 1.0, microbatches: int = 0) -> CriticUnits:
    gen = torch.Generator().manual_seed(3)
    real = 3.0 * torch.randn(BATCH, WIDTH, generator=gen)
    partners = torch.randn(BATCH, WIDTH, generator=gen)
    alpha = torch.rand(BATCH, 1, generator=gen)
    groups = torch.randint(microbatches, (BATCH,), generator=gen) if microbatches else None
    return CriticUnits(real, weight_scale * torch.ones(BATCH), partners, alpha, groups, with_features=False)


def _release(step_settings: CriticStepSettings, context: ProcessGroupContext, units: CriticUnits, records: list):
    torch.manual_seed(11)
    critic = TabularCritic(WIDTH, (8,))
    step = critic_step(
        step_settings,
        units=100,
        sample_rate=0.1,
        noise_multiplier=1.0,
        max_norm=1.0,
        expected_batch_size=10.0,
        steps=NOISE_RELEASES,
        ledger=PrivacyLedger(),
        generator=torch.Generator().manual_seed(7),
        recorder=records.append,
        context=context,
    )
    return critic, step


def engine_releases(context: ProcessGroupContext) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Per-record, microbatch and adaptive releases, then pure-noise releases (zero-gradient units)."""
    tensors: dict[str, torch.Tensor] = {}
    values: dict[str, Any] = {}
    cases = {
        "per_record": (settings(), _units()),
        "microbatch": (settings(microbatches=4, gp_weight=0.0), _units(microbatches=4)),
        "adaptive": (settings(adaptive=AdaptiveClipping(0.5, count_noise=20.0)), _units()),
    }
    for name, (step_settings, units) in cases.items():
        records: list = []
        critic, step = _release(step_settings, context, units, records)
        release = step.release(critic, units, BATCH)
        for key, value in release.noisy_sum.items():
            tensors[f"{name}/{key}"] = value.detach().contiguous()
        values[name] = {
            "noise_std": records[0]["noise_std"],
            "units": records[0]["units"],
            "local_units": records[0]["local_units"],
            "max_norm_after": step.max_norm,
            "clip_fraction": release.clip_fraction,
        }
    # zero-gradient units: weight 0, no penalty, so every clipped sum is 0 and a release is its noise
    records = []
    critic, step = _release(settings(gp_weight=0.0), context, _units(weight_scale=0.0), records)
    units = _units(weight_scale=0.0)
    noise = [torch.cat([v.reshape(-1) for v in step.release(critic, units, BATCH).noisy_sum.values()])]
    noise += [
        torch.cat([v.reshape(-1) for v in step.release(critic, units, BATCH).noisy_sum.values()])
        for _ in range(NOISE_RELEASES - 1)
    ]
    tensors["noise"] = torch.stack(noise)
    values["noise_std"] = records[0]["noise_std"]
    return tensors, values


FIT_SETTINGS = {
    "recipe": "dp-wgan",
    "epsilon": 3.0,
    "epochs": 1,
    "batch_size": 50,
    "accountant": "rdp",
    "generator_hidden": (16,),
    "critic_hidden": (16,),
    "seed": 0,
}
# the default recipe (its 2-way anchor on): G's step and the fake term split across ranks too
GAN_FIT_SETTINGS = {**FIT_SETTINGS, "recipe": "dp-gan"}
PARQUET_DIR = "parquet"


def write_parquet_dir(out: Path) -> Path:
    """The fits' 300 Adult rows as a directory of two Parquet files (read in record batches)."""
    from dpgan import datasets

    table = datasets.load_adult()[0].sample(300, random_state=0).reset_index(drop=True)
    folder = out / PARQUET_DIR
    folder.mkdir(exist_ok=True)
    table.iloc[:170].to_parquet(folder / "part-0.parquet", index=False)
    table.iloc[170:].to_parquet(folder / "part-1.parquet", index=False)
    return folder


def fit_summary(synth: Any) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    tensors = {f"G/{k}": v.detach().clone().contiguous() for k, v in synth.generator.state_dict().items()}
    tensors.update(
        {f"D/{k}": v.detach().clone().contiguous() for k, v in synth.critic_for_evaluation.state_dict().items()}
    )
    if synth.label_model is not None:  # DP-SGD on the label model: its sums split too
        tensors.update({f"L/{k}": v.detach().clone().contiguous() for k, v in synth.label_model.tensors().items()})
    report = synth.privacy_report()
    values = {"epsilon": report["epsilon"], "ledger": synth.ledger.to_dict(), "training": synth.training}
    values["pair_anchor"] = synth.settings.pair_anchor
    return tensors, values


MARGINALS_BATCH_ROWS = 64  # several record batches per file: each rank adds a share of them
SAMPLED_MAX_EXAMPLES = 120  # the marginals model's row budget below the 300 rows: a sample at q ≈ 0.4


def marginals_stream_fit(out: Path, max_examples: int | None = None) -> Any:
    """The marginals model (its class tree on income) fitted on `write_parquet_dir`'s files; with
    `max_examples` below the rows, on its Poisson sample of them (dpgan.tables.fit.row_sample)."""
    from dpgan import ParquetSource, Schema, TabularSynthesizer, datasets

    schema = Schema.from_json(datasets.adult_schema_path())
    source = ParquetSource(out / PARQUET_DIR, batch_rows=MARGINALS_BATCH_ROWS)
    budget = {} if max_examples is None else {"max_examples": max_examples}
    return TabularSynthesizer(model="marginals", epsilon=1.0, seed=0, **budget).fit(source, schema=schema)


def marginals_summary(synth: Any) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The released tables (the model's buffers), the ledger and a seeded sample as CSV text."""
    tensors = {k: v.detach().clone().contiguous() for k, v in synth.generator.state_dict().items()}
    values = {
        "epsilon": synth.privacy_report()["epsilon"],
        "ledger": synth.ledger.to_dict(),
        "training": synth.training,
    }
    values["sample"] = synth.sample(200, seed=1).to_csv(index=False)
    return tensors, values


def run(rank: int, world_size: int, init_file: str, out: str, jobs: tuple[str, ...]) -> None:
    """One rank: join the gloo group through a file, run each job, write rank-suffixed results."""
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        from dpgan.privacy.distributed import process_group_context

        context = process_group_context()
        for job in jobs:
            tensors, values = engine_releases(context) if job == "engine" else fit_job(job, Path(out))
            values["rank"], values["world_size"] = context.rank, context.world_size
            save_file(tensors or {"empty": torch.zeros(1)}, str(Path(out) / f"{job}-{rank}.safetensors"))
            (Path(out) / f"{job}-{rank}.json").write_text(json.dumps(values, default=str))
    finally:
        dist.destroy_process_group()


def fit_job(job: str, out: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """ "fit": a whole fit (checkpointing as it goes); "killed": the same fit killed after step 3;
    "resumed": that fit resumed from its checkpoint; "fit-gan": the default dp-gan recipe's fit,
    without a checkpoint; "stream": that fit on the table written as a Parquet directory
    (`write_parquet_dir`); "stream-marginals": the marginals model on that directory. The model is
    saved (by rank 0 only)."""
    from dpgan import Schema, TabularSynthesizer, datasets

    table = datasets.load_adult()[0].sample(300, random_state=0).reset_index(drop=True)
    schema = Schema.from_json(datasets.adult_schema_path())
    if job == "stream-marginals":  # the marginals model on the same files: each rank counts its share
        return marginals_summary(marginals_stream_fit(out))
    if job == "stream-marginals-sampled":  # ... of the same Poisson sample of the rows on every rank
        return marginals_summary(marginals_stream_fit(out, SAMPLED_MAX_EXAMPLES))
    if job == "stream":  # a directory of Parquet files, read in record batches by every rank
        synth = TabularSynthesizer(**GAN_FIT_SETTINGS).fit(out / PARQUET_DIR, schema=schema)
        return fit_summary(synth)
    if job == "fit-gan":
        synth = TabularSynthesizer(**GAN_FIT_SETTINGS).fit(table, schema=schema)
        return fit_summary(synth)
    synth = TabularSynthesizer(**FIT_SETTINGS)
    checkpoint = out / ("checkpoint-fit" if job == "fit" else "checkpoint-killed")
    kwargs: dict[str, Any] = {"checkpoint": checkpoint, "checkpoint_every": 2}
    if job == "killed":
        kwargs["progress"] = _kill_at(3)
    try:
        synth.fit(table, schema=schema, **kwargs)
    except KeyboardInterrupt:
        return {}, {"killed": True}
    tensors, values = fit_summary(synth)
    synth.save(out / f"model-{job}")
    return tensors, values


def _kill_at(step: int):
    def progress(done: int, total: int, epsilon: float) -> None:
        if done >= step:
            raise KeyboardInterrupt

    return progress


__all__ = ["FIT_SETTINGS", "GAN_FIT_SETTINGS", "SINGLE_PROCESS", "engine_releases", "fit_summary",
           "marginals_stream_fit", "marginals_summary", "run", "write_parquet_dir"]  # fmt: skip
