"""The label model alone, across public tables: its share of ε and its schedule (validation splits).

The label model (dpgan.tables.sampling.label_model) redraws the target of every sampled row, so it
decides most of what a classifier trained on synthetic rows learns. This probe fits it the way a
fit does (a TabularSynthesizer with its hand-written schema; the GAN gets a token schedule) and
scores its predicted probabilities of the real validation rows' target: one-vs-rest ROC AUC
(macro) and accuracy, against the majority class. Tables: the bench tables with a class target
and Adult, whose "validation" is the last 20% of its training file (its test file is not read).

    python bench/label_model_probe.py --seeds 0 1 --epsilon 1
"""

from __future__ import annotations

import argparse
import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.metrics import roc_auc_score

from dpgan import Schema, TabularSynthesizer, datasets
from tables import TABLES, schema_path, split

RESULTS = Path(__file__).resolve().parent / "results" / "label_model_probe.jsonl"


def classification_tables() -> dict[str, tuple[pd.DataFrame, pd.DataFrame, Schema]]:
    out = {}
    for name, spec in TABLES.items():
        if spec.held_out:  # chooses a default: never a held-out table
            continue
        if spec.task == "regression":
            continue
        parts = split(name, 20000, 20000)
        out[name] = (parts["train"], parts["validation"], Schema.from_json(schema_path(name)))
    adult, _ = datasets.load_adult()  # the test file is never read here
    cut = int(0.8 * len(adult))
    out["adult"] = (adult.iloc[:cut], adult.iloc[cut:], Schema.from_json(datasets.adult_schema_path()))
    return out


def score(synth: TabularSynthesizer, validation: pd.DataFrame, schema: Schema) -> dict[str, float]:
    from dpgan.tables.reading.conform import conform

    clean = conform(validation, schema).frame
    encoded = torch.from_numpy(synth.encoder.encode(clean))
    model = synth.label_model
    probs = model.probabilities(encoded).numpy()
    truth = encoded[:, model.start : model.stop].argmax(dim=1).numpy()
    present = np.unique(truth)
    majority = float(np.mean(truth == np.bincount(truth).argmax()))
    accuracy = float(np.mean(probs.argmax(axis=1) == truth))
    if len(present) == 2:
        auc = roc_auc_score(truth == present[1], probs[:, present[1]])
    else:
        cols = probs[:, present] / probs[:, present].sum(axis=1, keepdims=True)
        auc = roc_auc_score(truth, cols, multi_class="ovr", labels=present)
    return {"auc": float(auc), "accuracy": accuracy, "majority": majority}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--tables", nargs="+")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    grid = list(itertools.product((0.1, 0.25), (1.0, 0.1), (10.0, 30.0)))
    tables = classification_tables()
    for name in args.tables or list(tables):
        train, validation, schema = tables[name]
        for seed, (share, rate, epochs) in itertools.product(args.seeds, grid):
            synth = TabularSynthesizer(
                epsilon=args.epsilon,
                seed=seed,
                epochs=0.05,
                label_model_budget_fraction=share,
                label_model_max_sample_rate=rate,
                label_model_epochs=epochs,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                synth.fit(train, schema=schema)
            row = {
                "table": name,
                "seed": seed,
                "epsilon": args.epsilon,
                "share": share,
                "max_rate": rate,
                "epochs": epochs,
                "rows": len(train),
                **score(synth, validation, schema),
            }
            print(json.dumps(row), flush=True)
            with Path(args.out).open("a") as handle:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
