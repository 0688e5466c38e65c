"""Where a gaussian_base GAN's score comes from (issue 15): one fit on the water district-days at ε = 3,
scored as trained and again with its gate set to 0 (the released DP Gaussian alone, the same draws).

The difference between the two rows is what the critic taught. `--nonprivate-critic` is a diagnostic
upper bound, not a DP fit: the Gaussian base is released as in a fit, then the critic trains with no
noise and no clipping on the same schedule (its steps are not in any ledger).

    python bench/gaussian_base_diagnostic.py --seed 0 --set gaussian_base=true --set epochs=20 [--nonprivate-critic]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import replace
from pathlib import Path

import torch

import dpgan.synthesizers.sequence as sequence_module
import sequences_water as bench
from dpgan.evaluation import sequences as sequence_evaluation
from dpgan.sequences.codec import label_names, unscale
from dpgan.synthesizers.critic_fit import CriticFit
from dpgan.synthesizers.sequence import SequenceSynthesizer
from dpgan.training.dp_critic import train_dp_critic
from dpgan.training.schedule import gan_schedule_for

OUT = Path(__file__).resolve().parent / "results" / "gaussian_base_diagnostic.jsonl"


def _nonprivate_fit(seed: int):
    """A stand-in for fit_dp_critic: σ = 0, no clipping, the same schedule, no ledger (not DP)."""

    def fit(synth, units, config, *, rows, ledger, rng, critic, generator_net, hooks=()):  # noqa: ANN001, ANN202
        config = replace(config, max_grad_norm=math.inf)
        plan = gan_schedule_for(config, rows, "critic")
        result = train_dp_critic(
            units, [], config, sample_rate=plan.sample_rate, expected_batch_size=plan.expected_batch_size,
            noise_multiplier=0.0, steps=plan.steps, generator=torch.Generator().manual_seed(seed), ledger=None,
            critic=critic, generator_net=generator_net,
        )  # fmt: skip
        return CriticFit(result, plan, _Budget())  # type: ignore[arg-type]

    return fit


class _Budget:
    noise_multiplier = 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--nonprivate-critic", action="store_true")
    parser.add_argument("--dtw-series", type=int, default=1000)
    args = parser.parse_args()
    settings = {key: json.loads(value) for key, _, value in (item.partition("=") for item in args.set)}
    sequence_evaluation.MAX_DTW_SERIES = args.dtw_series
    bench.SCALE = "log"
    torch.set_num_threads(1)
    if args.nonprivate_critic:
        sequence_module.fit_dp_critic = _nonprivate_fit(args.seed)
    parts, labels = bench.load()
    schema = bench.schema_for(labels, False)
    real, real_labels = bench.arrays(parts["train"], schema)
    held_out, held_out_labels = bench.arrays(parts["validation"], schema)
    started = time.time()
    synth = SequenceSynthesizer(epsilon=3.0, seed=args.seed, **settings).fit(parts["train"][schema.columns], schema)
    seconds = time.time() - started
    G = synth.generator
    gate = float(G.gate.detach())
    for variant in ("trained", "gate 0 (the base alone)"):
        if variant != "trained":
            with torch.no_grad():
                G.gate.zero_()
        values, codes = G.sample(len(real), torch.Generator().manual_seed(args.seed))
        metrics = sequence_evaluation.evaluate_sequences(
            real, unscale(values.numpy(), schema), held_out, real_labels=real_labels,
            synthetic_labels=label_names(codes.numpy(), schema), test_labels=held_out_labels, seed=args.seed,
        )  # fmt: skip
        dtw = metrics["dtw_nearest"]
        row = {
            "variant": variant,
            "critic": "non-private (diagnostic)" if args.nonprivate_critic else "DP",
            "settings": settings,
            "epsilon": 3.0,
            "seed": args.seed,
            "split": "validation",
            "dtw_series": args.dtw_series,
            "learned_gate": gate,
            "fit_seconds": round(seconds, 1),
            "dtw_ratio": dtw["ratio_to_floor"],
            "dtw_median_ratio": dtw["synthetic_median"] / dtw["heldout_median"],
            "tstr_accuracy": metrics["label_tstr"]["accuracy"]["tstr"],
        }
        print(json.dumps(row), flush=True)
        with open(OUT, "a") as handle:
            handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
