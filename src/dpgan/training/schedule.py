"""How many private steps a fit takes, at which sampling rate: one rule for every caller.

The synthesizer, the privacy audit (which rebuilds a configuration's steps) and the accounting
benches all ask here, so what is calibrated, audited and benchmarked is what a fit runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpgan.training.config import TrainingConfig

POISSON = "poisson"
ONE_OF_SHARDS = "one-of-shards"  # the same names as dpgan.privacy.accounting's samplings


@dataclass(frozen=True)
class Schedule:
    """q (the Poisson rate, or 1/N_d for one shard per step), T, the expected batch L, and how steps sample."""

    sample_rate: float
    steps: int
    expected_batch_size: float
    sampling: str = POISSON


def expected_batch(batch_size: int, max_sample_rate: float, rows: float) -> float:
    """The expected Poisson batch L = q·N̂: the configured size, but never more than `max_sample_rate`
    of the (noisy) table. On a small table a batch of 1,024 is most of the table: a few steps per
    epoch, little amplification by sampling, and too few steps for a GAN to learn; capping q keeps
    the number of steps per epoch, and so the schedule, the same for every table size."""
    return max(1.0, min(float(batch_size), max_sample_rate * float(rows), float(rows)))


def capped_steps(steps: float, *, batch: float, max_steps: int, max_examples: int) -> int:
    """⌈steps⌉, at least one, at most `max_steps` when that is set and at most ⌈max_examples / batch⌉
    when that is (0: no cap; `batch` is the expected batch L). Why caps: on a large set a fixed
    number of epochs is tens of thousands of steps (hours), each with a little more noise at the
    same ε, and longer did not score better (Fashion-MNIST's validation split: 7,503 steps below
    3,752; bench/RESULTS.md §17d). Why a budget of per-example gradients as well as a step count: it
    leaves the batch free, and the same compute as fewer, larger batches scored higher there (1,024 ×
    1,000 above 256 × 4,000, §17e–f), since the noise on the mean gradient, σC/L, falls faster than
    σ rises. Privacy: T depends on the settings and the noisy N̂ only, and σ is calibrated for the T
    that runs."""
    whole = max(1, int(math.ceil(steps)))
    if max_steps:
        whole = min(whole, max_steps)
    if max_examples:
        whole = min(whole, max(1, int(math.ceil(max_examples / batch))))
    return whole


def epochs_schedule(
    batch_size: int, max_sample_rate: float, epochs: float, rows: float, max_steps: int = 0, max_examples: int = 0
) -> Schedule:
    """Poisson DP-SGD for `epochs` passes: q = L/N̂, T = ⌈epochs·N̂/L⌉, capped by `max_steps` and
    `max_examples` (a classifier, a critic)."""
    batch = expected_batch(batch_size, max_sample_rate, rows)
    steps = capped_steps(epochs * rows / batch, batch=batch, max_steps=max_steps, max_examples=max_examples)
    return Schedule(batch / rows, steps, batch)


def gan_schedule(
    *,
    batch_size: int,
    max_sample_rate: float,
    epochs: float,
    rows: float,
    dp_on: str,
    n_critic: int,
    num_discriminators: int,
    max_steps: int = 0,
    max_examples: int = 0,
) -> Schedule:
    """The GAN's private steps. DP on the critic: one step per critic update. DP on the generator
    (dtgan-g): one step per generator update, each through one of N_d shards' critics."""
    if dp_on == "generator":
        batch = expected_batch(batch_size, max_sample_rate, rows)
        steps = capped_steps(
            epochs * rows / (batch * n_critic), batch=batch, max_steps=max_steps, max_examples=max_examples
        )
        return Schedule(1.0 / num_discriminators, steps, batch, ONE_OF_SHARDS)
    return epochs_schedule(batch_size, max_sample_rate, epochs, rows, max_steps, max_examples)


def gan_schedule_for(config: TrainingConfig, rows: float, dp_on: str) -> Schedule:
    """`gan_schedule` with a configuration's batch size, rate cap, epochs, step caps, n_critic and N_d."""
    return gan_schedule(
        batch_size=config.batch_size,
        max_sample_rate=config.max_sample_rate,
        epochs=config.epochs,
        rows=rows,
        dp_on=dp_on,
        n_critic=config.n_critic,
        num_discriminators=config.num_discriminators,
        max_steps=config.max_steps,
        max_examples=config.max_examples,
    )
