"""Learning curves for tuning: fit once, score the generator every k steps on public data.

Scores use the real TEST split (never the training rows): logistic-regression TSTR ROC AUC on
the income label and the mean JSD of categorical marginals against the test split.

    python bench/tune_curve.py --epsilon 3 --config '{"epochs": 30}' --every 400
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from dpgan import Schema, datasets
from dpgan.evaluation.tables.utility import one_hot_features
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import calibrate_noise_multiplier
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.reading.conform import validate_table
from dpgan.training.config import TrainingConfig
from dpgan.training.dp_critic import train_dp_critic


def score(synthetic: pd.DataFrame, test: pd.DataFrame) -> dict:
    half = len(test) // 2
    fit_part, eval_part = test.iloc[:half], test.iloc[half:]
    jsd = []
    for col in test.columns:
        if test[col].dtype == object:
            p = fit_part[col].value_counts(normalize=True)
            q = synthetic[col].value_counts(normalize=True).reindex(p.index, fill_value=0.0)
            m = 0.5 * (p + q)
            kl = lambda a, b: float(np.sum(a[a > 0] * np.log2(a[a > 0] / b[a > 0])))  # noqa: E731
            jsd.append(0.5 * kl(p.values, m.values) + 0.5 * kl(q.values, m.values))
    out = {"jsd": float(np.mean(jsd)), "high": float((synthetic["income"] == ">50K").mean())}
    if synthetic["income"].nunique() == 2:
        X, y = one_hot_features(synthetic, "income")
        Xt, yt = one_hot_features(eval_part, "income", X.columns)
        scale = X.abs().max().replace(0, 1)
        model = LogisticRegression(max_iter=300).fit(X / scale, y)
        out["auc"] = float(
            roc_auc_score(yt == ">50K", model.predict_proba(Xt / scale)[:, list(model.classes_).index(">50K")])
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epsilon", type=float, default=3.0)
    parser.add_argument("--config", default="{}")
    parser.add_argument("--every", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    train, test = datasets.load_adult()
    schema = Schema.from_json(datasets.adult_schema_path())
    config = TrainingConfig.from_dict({**TrainingConfig().to_dict(), **json.loads(args.config)})
    encoder = TableEncoder(schema, {c: str(train[c].dtype) for c in train.columns})
    data = torch.from_numpy(encoder.encode(validate_table(train, schema)))
    batch = float(config.batch_size)
    q = batch / len(train)
    steps = int(math.ceil(config.epochs * len(train) / batch))
    if math.isinf(args.epsilon):
        sigma = 0.0
        config = TrainingConfig.from_dict({**config.to_dict(), "max_grad_norm": math.inf})
    else:
        sigma = calibrate_noise_multiplier(
            sample_rate=q, steps=steps, epsilon=args.epsilon, delta=1e-5, accountant="rdp"
        )
    started = time.time()
    rng = np.random.default_rng(0)

    def monitor(step: int, G) -> None:
        G.eval()
        z = torch.randn(8000, config.noise_dim, generator=torch.Generator().manual_seed(1))
        synthetic = encoder.decode(G.sample_encoded(z).numpy(), rng)
        G.train()
        print(json.dumps({"step": step, "sec": round(time.time() - started), **score(synthetic, test)}), flush=True)

    print(json.dumps({"sigma": sigma, "steps": steps, "config": json.loads(args.config)}), flush=True)
    train_dp_critic(
        data,
        encoder.spans,
        config,
        sample_rate=q,
        expected_batch_size=batch,
        noise_multiplier=sigma,
        steps=steps,
        generator=torch.Generator().manual_seed(args.seed),
        ledger=PrivacyLedger(),
        monitor=monitor,
        monitor_every=args.every,
    )


if __name__ == "__main__":
    main()
