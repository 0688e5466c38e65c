"""Privacy audit of a saved model and of every recipe's default configuration (not run in CI).

Each line of the output is one audit: its options, `AuditResult.to_dict()` and the wall time.
Example (the numbers in docs/privacy.md, "Audit"):

    python bench/audit.py --model dpgan-demo/model --out bench/results/audit.jsonl
    python bench/audit.py --recipes --out bench/results/audit_recipes.jsonl

Single-threaded on purpose (`torch.set_num_threads(1)`): the audit's cost is many small steps.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from dpgan.evaluation.audit import audit_config, audit_model

RECIPES = ("dp-gan", "dp-wgan", "dp-cgan", "dtgan-d", "dtgan-g")
MODEL_RUNS = [
    {},
    {"ablate": "noise"},
    {"ablate": "clipping"},
    {"mode": "one-run"},
    {"mode": "one-run", "ablate": "noise"},
    {"mode": "black-box"},
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="saved model directory to audit in every mode")
    parser.add_argument("--recipes", action="store_true", help="audit each recipe's default configuration at ε=3")
    parser.add_argument("--epsilon", type=float, default=3.0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    jobs = []
    if args.model:
        jobs += [({"model": args.model}, options) for options in MODEL_RUNS]
    if args.recipes:
        for recipe in RECIPES:
            for ablate in (None, "noise", "clipping"):
                jobs.append(({"epsilon": args.epsilon, "recipe": recipe}, {"ablate": ablate}))
    with out.open("a") as handle:
        for what, options in jobs:
            started = time.perf_counter()
            if "model" in what:
                result = audit_model(what["model"], **options)
            else:
                result = audit_config(**what, **options)
            line = {"target": what, "options": options, "seconds": round(time.perf_counter() - started, 1)}
            line["result"] = result.to_dict()
            handle.write(json.dumps(line) + "\n")
            handle.flush()
            print(
                f"{what} {options}: claimed {result.epsilon_claimed:.3f}, lower bound {result.epsilon_lower_bound:.3f} "
                f"(ceiling {result.ceiling:.2f}), {line['seconds']} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
