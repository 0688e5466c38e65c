"""Privacy attacks on small Adult slices (DTGAN Table 5 / dp-GAN Fig. 5–6 protocol, scaled down).

Target table: 1,000 Adult training rows; the attacker's reference data: 1,000 other rows (from
the test file). Each configuration runs dpgan's four attacks (shadow-model membership inference
and attribute inference after Stadler et al., LOGAN white-box, distance to closest record). The
non-private configurations use the same GAN with clipping and noise off, at two training lengths,
to show whether attack success rises with training; the DP one is the released recipe at ε=1.

    python bench/attacks_adult.py --out bench/results/attacks.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import torch

from dpgan import Schema, TabularSynthesizer, datasets
from dpgan.evaluation.attacks import AttackConfig, run_attacks
from dpgan.training.config import TrainingConfig
from nonprivate import NonPrivateGAN


def without_curves(value):
    """The attack results minus ROC point lists and notes (kept short for the JSON lines)."""
    if isinstance(value, dict):
        return {k: without_curves(v) for k, v in value.items() if k not in ("roc", "notes", "note")}
    if isinstance(value, list):
        return [without_curves(v) for v in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="bench/results/attacks.jsonl")
    parser.add_argument("--runs", help="JSON list of [label, epsilon or null, epochs]; default: the three below")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    train, test = datasets.load_adult()
    schema = Schema.from_json(datasets.adult_schema_path())
    target_table = train.sample(args.rows, random_state=0).reset_index(drop=True)
    reference = test.sample(args.rows, random_state=0).reset_index(drop=True)
    base = TrainingConfig(batch_size=args.batch_size)
    runs = [
        ("no DP, 5 epochs", None, 5.0),
        ("no DP, 30 epochs", None, 30.0),
        ("DP ε=1, 30 epochs", 1.0, 30.0),
    ]
    if args.runs:
        runs = [tuple(r) for r in json.loads(args.runs)]
    attack_config = AttackConfig(n_shadow=3, n_test_runs=2, shadow_train_size=args.rows, logan_train_size=None)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for label, epsilon, epochs in runs:
        config = replace(base, epochs=epochs)

        def factory(*, rows: int, seed: int, epsilon=epsilon, config=config):
            if epsilon is None:
                return NonPrivateGAN(config, seed)
            return TabularSynthesizer(epsilon=epsilon, delta=1e-5, accountant="rdp", config=config, seed=seed)

        started = time.time()
        model = factory(rows=len(target_table), seed=0).fit(target_table, schema=schema)
        synthetic = model.sample(len(target_table), seed=0)
        result = run_attacks(
            target_table,
            reference,
            synthetic,
            target="income",
            schema=schema,
            config=attack_config,
            synthesizer_factory=factory,
        )
        row = {"run": label, "epsilon": epsilon, "epochs": epochs, "seconds": round(time.time() - started)}
        row.update({name: without_curves(result.get(name)) for name in ("membership", "logan", "dcr", "attribute")})
        print(json.dumps(row), flush=True)
        with out.open("a") as handle:
            handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
