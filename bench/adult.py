"""dp-GAN's protocol on UCI Adult: fit at several ε, sample |train| rows, random forest on them.

Balanced classes in train and test (both down-sampled to the minority class), accuracy on the
real test set; plus plain train-on-synthetic accuracy. ε = inf trains the same GAN without DP
(no clipping, no noise) as the paper's "non-private GAN" row.

    python bench/adult.py --epsilons 1 3 7 inf --seeds 0 1 2 --out bench/results/adult.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import torch

from dpgan import Schema, TabularSynthesizer, datasets
from dpgan.evaluation.tables.utility import balanced_rf_accuracy, tstr_accuracy
from dpgan.training.config import TrainingConfig
from nonprivate import NonPrivateGAN


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilons", nargs="+", default=["1", "3", "7", "inf"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--accountant", default="pld")
    parser.add_argument("--config", default="{}", help="JSON overrides of TrainingConfig")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default="bench/results/adult.jsonl")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    overrides = json.loads(args.config)
    train, test = datasets.load_adult()
    schema = Schema.from_json(datasets.adult_schema_path())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    real_bal = balanced_rf_accuracy(train, test, "income", seed=0)
    real_acc = tstr_accuracy(train, test, "income", seed=0)
    print(json.dumps({"real_balanced_rf": real_bal, "real_rf": real_acc}), flush=True)
    for eps_text in args.epsilons:
        epsilon = math.inf if eps_text == "inf" else float(eps_text)
        for seed in args.seeds:
            started = time.time()
            config = TrainingConfig.from_dict({**TrainingConfig().to_dict(), **overrides})
            if math.isinf(epsilon):
                synthetic = NonPrivateGAN(config, seed).fit(train, schema).sample(len(train), seed=seed)
                spent = math.inf
            else:
                synth = TabularSynthesizer(
                    epsilon=epsilon, delta=args.delta, accountant=args.accountant, seed=seed, config=config
                )
                synth.fit(train, schema=schema)
                synthetic = synth.sample(len(train), seed=seed)
                spent = synth.privacy_report()["epsilon"]
            fit_seconds = time.time() - started
            row = {
                "epsilon": eps_text,
                "epsilon_spent": spent,
                "seed": seed,
                "fit_seconds": round(fit_seconds, 1),
                "balanced_rf_synthetic": balanced_rf_accuracy(synthetic, test, "income", seed=seed),
                "balanced_rf_real": real_bal,
                "rf_synthetic": tstr_accuracy(synthetic, test, "income", seed=seed),
                "rf_real": real_acc,
                "share_high_income": float((synthetic["income"] == ">50K").mean()),
                "config": config.to_dict(),
            }
            print(json.dumps(row), flush=True)
            with out.open("a") as handle:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
