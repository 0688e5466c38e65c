"""Positive control for the white-box and distance attacks: an overfitted non-private GAN.

A 100-row Adult slice, batch 50, 2,000 epochs, no EMA: the regime where a GAN memorises. LOGAN
(critic of a model trained the same way) and DCR run on it, and on the same recipe with DP.

    python bench/attacks_overfit.py --out bench/results/attacks_overfit.jsonl
    python bench/attacks_overfit.py --epsilon 1 --out bench/results/attacks_overfit.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from attacks_adult import without_curves
from dpgan import Schema, TabularSynthesizer, datasets
from dpgan.evaluation.attacks import AttackConfig, run_attacks
from dpgan.training.config import TrainingConfig
from nonprivate import NonPrivateGAN


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--epochs", type=float, default=2000.0)
    parser.add_argument("--epsilon", type=float, help="omit for the non-private GAN")
    parser.add_argument("--out", default="bench/results/attacks_overfit.jsonl")
    args = parser.parse_args()
    torch.set_num_threads(2)
    train, test = datasets.load_adult()
    schema = Schema.from_json(datasets.adult_schema_path())
    members = train.sample(args.rows, random_state=0).reset_index(drop=True)
    reference = test.sample(args.rows, random_state=0).reset_index(drop=True)
    config = TrainingConfig(batch_size=50, epochs=args.epochs, ema_decay=0.0)

    def factory(*, rows: int, seed: int):
        if args.epsilon is None:
            return NonPrivateGAN(config, seed)
        return TabularSynthesizer(epsilon=args.epsilon, accountant="rdp", config=config, seed=seed)

    started = time.time()
    synthetic = factory(rows=args.rows, seed=0).fit(members, schema=schema).sample(args.rows, seed=0)
    result = run_attacks(
        members,
        reference,
        synthetic,
        target="income",
        schema=schema,
        config=AttackConfig(run=("logan", "dcr"), logan_train_size=None),
        synthesizer_factory=factory,
    )
    row = {"rows": args.rows, "epochs": args.epochs, "epsilon": args.epsilon, "seconds": round(time.time() - started)}
    row.update({name: without_curves(result[name]) for name in ("logan", "dcr")})
    print(json.dumps(row), flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as handle:
        handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
