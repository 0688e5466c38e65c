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
from dataclasses import dataclass, replace
from pathlib import Path

import torch

import sequences_water as bench
from dpgan.evaluation.sequences import metrics as sequence_evaluation
from dpgan.sequences.codec import label_names, unscale
from dpgan.sequences.fit_kind import SequenceKind
from dpgan.synthesizers.sequence import SequenceSynthesizer
from dpgan.training.config import TrainingConfig
from dpgan.training.dp_critic import train_dp_critic
from dpgan.training.schedule import gan_schedule_for
from dpgan.training.strategies import StrategyResult

OUT = Path(__file__).resolve().parent / "results" / "gaussian_base_diagnostic.jsonl"


@dataclass(frozen=True)
class NonPrivateCriticStrategy:
    """A stand-in for the DP critic's strategy: σ = 0, no clipping, the same schedule, no ledger (not DP)."""

    seed: int
    config: TrainingConfig

    def train(self, ctx, units, rows, generator, critic, hooks, progress):  # noqa: ANN001, ANN201
        config = replace(self.config, max_grad_norm=math.inf)
        plan = gan_schedule_for(config, rows, "critic")
        result = train_dp_critic(
            units, [], config, sample_rate=plan.sample_rate, expected_batch_size=plan.expected_batch_size,
            noise_multiplier=0.0, steps=plan.steps, generator=torch.Generator().manual_seed(self.seed), ledger=None,
            critic=critic, generator_net=generator, hooks=hooks,
        )  # fmt: skip
        record = {"noise_multiplier": 0.0, "sample_rate": plan.sample_rate, "steps": result.steps}
        return StrategyResult(result.generator, result.critic, record)


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
    if args.nonprivate_critic:  # the sequence kind's strategy, replaced for this diagnostic

        def strategy(kind: SequenceKind, generator: torch.nn.Module) -> NonPrivateCriticStrategy:
            return NonPrivateCriticStrategy(args.seed, replace(kind.config, noise_dim=generator.noise_dim))

        SequenceKind.strategy = strategy  # type: ignore[method-assign]
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
