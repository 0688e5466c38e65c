"""Why does dpgan's GAN learn nearly independent columns, even without privacy? (issue 14)

The non-private control (bench/nonprivate.py's setting: the library's GAN and loop, σ = 0, no clipping,
no label model so that the GAN alone is measured) is fitted on a bench table's TRAINING split and its
sample (len(train) rows) is scored against the VALIDATION split with `dpgan.evaluation.fidelity`
(association difference = Frobenius norm of real − synthetic association matrices). Two references
per table, on the same validation split:
  floor    the real training rows themselves (what a perfect synthesizer could reach);
  ceiling  the training rows with every column shuffled independently (perfect marginals, no association).
Also recorded: the strongest real pairs (largest |Pearson| numeric pair, Theil's U categorical pair,
η mixed pair, chosen on the training split) as the validation split, the shuffle and the sample give
them, and `z_use`: per softmax output of G (categorical columns and numeric bin/null modes),
1 − mean row entropy / entropy of the mean row. 0 means G emits the same probabilities for every z
(the column is drawn independently of everything else at sampling time), 1 means one-hot outputs.

One factor at a time is varied from the defaults (`--config NAME`, see CONFIGS): the schedule
(steps, batch), capacity, encoding (bins = 1, no point masses), the categorical activation (Gumbel
vs plain softmax), EMA and learning rates. The test splits are never read.

Commands that produced bench/results/association_probe.jsonl (in this order, one process at a time):

    export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=src:bench
    python bench/association_probe.py --tables chile churn --configs control library softmax
    python bench/association_probe.py --tables loans adult5k --configs control library softmax
    python bench/association_probe.py --tables churn adult5k chile --configs steps4000 softmax_steps2000 bins1 \
        bins1_softmax tau1 wide ema0 lr1e-3
    python bench/association_probe.py --tables churn adult5k --configs softmax_steps4000
    python bench/association_probe.py --tables churn adult5k --configs library steps4000 softmax_steps2000 --seeds 1
    python bench/association_probe.py --tables loans --configs steps4000 softmax_steps2000
    python bench/association_probe.py --summary      # the table in bench/results/association_probe.md
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan import Schema
from dpgan.evaluation.tables.fidelity import association_matrix, column_kinds, fidelity, is_numeric_kind
from dpgan.models.output_spans import SOFTMAX
from dpgan.tables.codec.encoder import TableEncoder, public_dtypes
from dpgan.tables.reading.conform import conform, validate_table
from dpgan.training.config import TrainingConfig
from dpgan.training.dp_critic import train_dp_critic
from dpgan.training.schedule import gan_schedule_for
from tables import schema_path, split

RESULTS = Path(__file__).resolve().parent / "results" / "association_probe.jsonl"

# name -> (TrainingConfig overrides, schedule, schema edit). schedule: "control" = bench/nonprivate.py's
# (batch min(1024, n), 60 epochs); "library" = the fit's (gan_schedule_for: q ≤ 0.05, 60 epochs);
# ("steps", T, B) = T critic steps at expected batch B (capped at n/2).
CONFIGS: dict[str, tuple[dict[str, Any], Any, str]] = {
    "control": ({}, "control", ""),
    "library": ({}, "library", ""),
    "steps2000": ({}, ("steps", 2000, 256), ""),
    "steps4000": ({}, ("steps", 4000, 256), ""),
    "softmax": ({"categorical_activation": "softmax"}, "library", ""),
    "softmax_steps4000": ({"categorical_activation": "softmax"}, ("steps", 4000, 256), ""),
    "softmax_steps2000": ({"categorical_activation": "softmax"}, ("steps", 2000, 256), ""),
    "bins1": ({}, "library", "bins1"),
    "bins1_softmax": ({"categorical_activation": "softmax"}, "library", "bins1"),
    "wide": ({"generator_hidden": (512, 512), "critic_hidden": (256, 256)}, "library", ""),
    "deep": ({"generator_hidden": (256, 256, 256), "critic_hidden": (256, 256, 256)}, "library", ""),
    "ema0": ({"ema_decay": 0.0}, "library", ""),
    "lr2e-4": ({"generator_lr": 2e-4, "critic_lr": 2e-4}, "library", ""),
    "lr1e-3": ({"generator_lr": 1e-3, "critic_lr": 1e-3}, "library", ""),
    "tau1": ({"gumbel_tau": 1.0}, "library", ""),
    "ncritic1": ({"n_critic": 1}, "library", ""),
}


def load_splits(table: str) -> tuple[pd.DataFrame, pd.DataFrame, Schema]:
    """Training and validation splits (never test); adult5k = 5,000 of Adult's training split."""
    if table == "adult5k":
        parts = split("adult", max_train_rows=5000, max_eval_rows=5000)
        name = "adult"
    else:
        parts = split(table)
        name = table
    schema = Schema.from_json(schema_path(name))
    # cells outside the public schema (loans' free-text emp_title) are mapped into it as a fit does
    train = conform(parts["train"], schema).frame.reset_index(drop=True)
    return train, parts["validation"], schema


def edit_schema(schema: Schema, edit: str) -> Schema:
    """`bins1`: every numeric column as one tanh value (min-max or log scale kept), no point masses."""
    if edit != "bins1":
        return schema
    columns = [replace(c, bins=1, point_masses=()) if c.is_numeric else c for c in schema.columns]
    return replace(schema, columns=columns) if hasattr(schema, "columns") else schema


def shuffled(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: frame[c].to_numpy()[rng.permutation(len(frame))] for c in frame.columns})


def strong_pairs(matrix: np.ndarray, names: list[str], kinds: dict[str, str]) -> list[tuple[str, int, int]]:
    """The strongest pair of each kind in the real training association matrix."""
    best: dict[str, tuple[float, int, int]] = {}
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                continue
            na, nb = is_numeric_kind(kinds[a]), is_numeric_kind(kinds[b])
            kind = "pearson" if na and nb else "theils_u" if not (na or nb) else "eta"
            value = abs(matrix[i, j])
            if kind not in best or value > best[kind][0]:
                best[kind] = (value, i, j)
    return [(k, i, j) for k, (_, i, j) in sorted(best.items())]


def z_use(encoded: np.ndarray, spans: list) -> float:
    """Mean over softmax spans of 1 − E[H(row)] / H(mean row): how much G's probabilities vary with z."""
    scores = []
    for span in spans:
        if span.activation != SOFTMAX or span.width < 2:
            continue
        p = np.clip(encoded[:, span.start : span.stop], 1e-12, 1.0)
        row_h = float(-(p * np.log(p)).sum(axis=1).mean())
        m = p.mean(axis=0)
        h = float(-(m * np.log(m)).sum())
        if h > 1e-6:
            scores.append(1.0 - row_h / h)
    return float(np.mean(scores)) if scores else float("nan")


def fit_and_sample(
    train: pd.DataFrame, schema: Schema, config: TrainingConfig, schedule: Any, seed: int
) -> tuple[pd.DataFrame, dict[str, Any]]:
    config = replace(config, max_grad_norm=math.inf)  # no label model: the probe fits G alone
    encoder = TableEncoder(schema, public_dtypes(schema))
    encoded = torch.from_numpy(encoder.encode(validate_table(train, schema)))
    n = len(train)
    if schedule == "control":
        batch = float(min(config.batch_size, n))
        steps = int(math.ceil(config.epochs * n / batch))
    elif schedule == "library":
        plan = gan_schedule_for(config, n, "critic")
        batch, steps = plan.expected_batch_size, plan.steps
    else:
        _, steps, batch = schedule
        batch = float(min(batch, n / 2))
    start = time.perf_counter()
    result = train_dp_critic(
        encoded,
        encoder.spans,
        config,
        sample_rate=batch / n,
        expected_batch_size=batch,
        noise_multiplier=0.0,
        steps=steps,
        generator=torch.Generator().manual_seed(seed),
        ledger=None,
    )
    fit_s = time.perf_counter() - start
    z = torch.randn(n, config.noise_dim, generator=torch.Generator().manual_seed(seed + 100))
    out = result.generator.sample_encoded(z).numpy()
    frame = encoder.decode(out, np.random.default_rng(seed + 100))
    return frame, {
        "steps": steps,
        "batch": round(batch, 1),
        "fit_s": round(fit_s, 1),
        "z_use": z_use(out, encoder.spans),
    }


def run(table: str, config_name: str, seed: int) -> dict[str, Any]:
    train, validation, schema = load_splits(table)
    overrides, schedule, edit = CONFIGS[config_name]
    kinds = column_kinds(train, schema)
    names = list(train.columns)
    real_train = association_matrix(train, kinds)
    pairs = strong_pairs(real_train, names, kinds)
    fits = {
        "floor": fidelity(validation, train, kinds),
        "ceiling": fidelity(validation, shuffled(train, seed), kinds),
    }
    synth, info = fit_and_sample(train, edit_schema(schema, edit), TrainingConfig(**overrides), schedule, seed)
    fits["synthetic"] = fidelity(validation, synth, kinds)
    row: dict[str, Any] = {"table": table, "config": config_name, "seed": seed, "train_rows": len(train)}
    row["validation_rows"] = len(validation)
    row.update(info)
    for key, f in fits.items():
        row[f"assoc_{key}"] = round(f["association_diff"], 3)
        row[f"jsd_{key}"] = None if f["jsd_mean"] is None else round(f["jsd_mean"], 4)
        row[f"wd_{key}"] = None if f["wd_mean"] is None else round(f["wd_mean"], 4)
    row["pairs"] = []
    for kind, i, j in pairs:
        entry = {"kind": kind, "pair": [names[i], names[j]], "train": round(float(real_train[i, j]), 3)}
        entry["validation"] = round(float(fits["floor"]["association_real"]["matrix"][i][j]), 3)
        entry["shuffle"] = round(float(fits["ceiling"]["association_synthetic"]["matrix"][i][j]), 3)
        entry["synthetic"] = round(float(fits["synthetic"]["association_synthetic"]["matrix"][i][j]), 3)
        row["pairs"].append(entry)
    return row


def summary(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    print(
        "| table | config | seed | steps | batch | fit s | assoc floor | assoc synth | assoc ceiling | z_use | pairs |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        pairs = "; ".join(
            f"{p['pair'][0]}~{p['pair'][1]} ({p['kind']}) {p['validation']}/{p['synthetic']}" for p in r["pairs"]
        )
        print(
            f"| {r['table']} | {r['config']} | {r['seed']} | {r['steps']} | {r['batch']} | {r['fit_s']} | "
            f"{r['assoc_floor']} | {r['assoc_synthetic']} | {r['assoc_ceiling']} | {r['z_use']:.2f} | "
            f"{r['jsd_synthetic']} | {r['wd_synthetic']} | {pairs} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=["chile"])
    parser.add_argument("--configs", nargs="+", default=["control"], choices=sorted(CONFIGS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if args.summary:
        summary(RESULTS)
        return
    torch.set_num_threads(1)
    for table in args.tables:
        for config_name in args.configs:
            for seed in args.seeds:
                row = run(table, config_name, seed)
                with RESULTS.open("a") as handle:
                    handle.write(json.dumps(row) + "\n")
                pairs = [(p["pair"], p["validation"], p["synthetic"]) for p in row["pairs"]]
                print(
                    f"{table} {config_name} s{seed}: steps {row['steps']} batch {row['batch']} {row['fit_s']}s "
                    f"assoc floor {row['assoc_floor']} synth {row['assoc_synthetic']} ceiling "
                    f"{row['assoc_ceiling']} z_use {row['z_use']:.2f} {pairs}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
