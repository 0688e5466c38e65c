"""Fit one SmartNoise Synth synthesizer (MST, AIM, DP-CTGAN or PATE-CTGAN) on a CSV with dpgan's PUBLIC
schema; runs in bench/.venv-peers (bench/peers/setup.sh; the CTGAN pair in bench/.venv-ctgan,
bench/peers/setup_ctgan.sh) and imports nothing from dpgan.

The peer gets the same public domain dpgan gets and reads nothing else from the data: each
categorical column is coded by the schema's category list (a value outside it, or missing, gets
its own code in a nullable column), each numeric column is cut into `--bins` equal-width bins of
the schema's bounds (missing: its own code in a nullable column). The transformer is fitted on a
frame that lists every code of the public domain (no private row), so `preprocessor_eps` is 0 and
all of ε goes to the peer's measurements.
Sampled codes are decoded back: a category, or a value drawn uniformly inside its bin (an integer
column rounded), or missing.

    .venv-peers/bin/python peers/run_peer.py --synth mst --train T.csv --schema S.json \
        --epsilon 1 --rows 1000 --seed 0 --out SYNTH.csv
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd


def domain_codes(frame: pd.DataFrame, schema: dict, bins: int) -> tuple[pd.DataFrame, dict[str, int]]:
    """Every column as integer codes of its public domain, and each column's domain size."""
    codes, sizes = {}, {}
    for column in schema["columns"]:
        name, values = column["name"], frame[column["name"]]
        if column["kind"] in ("continuous", "integer"):
            low, high = float(column["min"]), float(column["max"])
            numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
            cut = np.clip(np.floor((numbers - low) / ((high - low) / bins or 1.0)), 0, bins - 1)
            # a missing value has its own code only in a nullable column (the schema says which)
            nullable = bool(column.get("nullable", False))
            codes[name] = np.where(np.isnan(numbers), bins if nullable else 0, cut).astype(int)
            sizes[name] = bins + int(nullable)
        else:
            labels = [str(c) for c in (column.get("categories") or ["0", "1"])]
            index = {label: i for i, label in enumerate(labels)}
            text = values.astype(object).where(values.notna(), None)
            extra = len(labels) if column.get("nullable", False) else 0  # missing or outside the list
            codes[name] = np.array([index.get(str(v), extra) if v is not None else extra for v in text])
            sizes[name] = len(labels) + int(bool(column.get("nullable", False)))
    return pd.DataFrame(codes), sizes


def decode(codes: pd.DataFrame, schema: dict, bins: int, rng: np.random.Generator) -> pd.DataFrame:
    out = {}
    for column in schema["columns"]:
        name, code = column["name"], codes[column["name"]].to_numpy().astype(int)
        if column["kind"] in ("continuous", "integer"):
            low, high = float(column["min"]), float(column["max"])
            width = (high - low) / bins
            values = low + (np.minimum(code, bins - 1) + rng.random(len(code))) * width
            if column["kind"] == "integer":
                values = np.clip(np.round(values), low, high)
            out[name] = np.where(code >= bins, np.nan, values)
        else:
            labels = [str(c) for c in (column.get("categories") or ["0", "1"])]
            out[name] = [labels[c] if c < len(labels) else None for c in code]
    return pd.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--synth", choices=["mst", "aim", "dpctgan", "patectgan"], required=True)
    parser.add_argument("--train", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("--epsilon", type=float, required=True)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bins", type=int, default=10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    from snsynth import Synthesizer
    from snsynth.transform import TableTransformer
    from snsynth.transform.label import LabelTransformer

    schema = json.loads(open(args.schema).read())
    train = pd.read_csv(args.train, dtype=str, keep_default_na=False, na_values=[""])
    codes, sizes = domain_codes(train, schema, args.bins)
    # the public domain: every code of every column, and no private row
    public = pd.DataFrame({name: np.arange(max(sizes.values())) % size for name, size in sizes.items()})
    if args.synth in ("dpctgan", "patectgan"):  # the GAN peers take one-hot codes of the same public domain
        from snsynth.transform import ChainTransformer, OneHotEncoder

        columns = [ChainTransformer([LabelTransformer(nullable=False), OneHotEncoder()]) for _ in codes.columns]
        transformer = TableTransformer(columns)
    else:
        transformer = TableTransformer([LabelTransformer(nullable=False) for _ in codes.columns])
    transformer.fit(public[codes.columns])
    np.random.seed(args.seed)
    if args.synth in ("dpctgan", "patectgan"):
        import torch

        torch.manual_seed(args.seed)
    started = time.time()
    synth = Synthesizer.create(args.synth, epsilon=args.epsilon, delta=args.delta, verbose=False)
    synth.fit(codes, transformer=transformer, preprocessor_eps=0.0)
    fit_seconds = time.time() - started
    sampled = synth.sample(args.rows)
    decode(pd.DataFrame(sampled, columns=codes.columns), schema, args.bins, np.random.default_rng(args.seed)).to_csv(
        args.out, index=False
    )
    with open(args.out + ".json", "w") as handle:
        json.dump({"fit_seconds": fit_seconds, "epsilon": args.epsilon, "delta": args.delta, "bins": args.bins}, handle)


if __name__ == "__main__":
    main()
