"""Critic step speed: the DP critic step against the non-private WGAN-GP step, in one process.

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=src python bench/step_speed.py \
        [--rounds 30] [--steps 5] [--out bench/results/step_speed.jsonl] [--label after]
    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/step_speed.py --fit-hashes   # pure speed-up check

What is timed (float32, one thread, `torch.set_num_threads(1)`), per shape (input width d, critic
hidden widths, batch B); both steps see the same real batch x (B rows), fake batch x̃ (B rows) and α:

- **non-private WGAN-GP step** (A): loss = mean(-D(x)) + mean(D(x̃)) + λ·mean(pen(x̂)) with
  x̂ = α x + (1-α) x̃, pen = max(0, ‖∇ₓD(x̂)‖ - 1)² (one-sided, as dpgan's default), ∇ₓD by
  `torch.autograd.grad(create_graph=True)`; `backward()`; Adam step.
- **DP critic step** (B): exactly one iteration of `train_dp_critic`'s critic update with the default
  configuration: `critic_release` through the engine's step (per-record clipped sum of ∇θ[-D(x_i) + λ·pen(x̂_i)],
  Gaussian noise, ÷ qN) with the GP partners x̃ (the loop draws them separately: same shape, same
  cost), + `fake_term_gradient` on x̃ clipped per row (config.clip_fake_term), p.grad = sum, Adam.

Generating fakes is not part of either step. Each step has its own critic copy and optimizer (same
start). Rounds are interleaved (A, B, A, B, ...) after a warm-up; each round times `--steps` steps
of A then of B, and the round's ratio is B/A. Reported: medians and IQR over rounds of the per-step
wall-clock times and of the ratio, and the ratio in process CPU time (less sensitive to other jobs
on a shared host). Shapes: Adult's default (encoded width of the bundled Adult schema, critic
(128, 128), B = 1024 = expected batch), and 108→256→256→1 with B = 64 and B = 512.

`--fit-hashes` prints the SHA-256 of `TabularSynthesizer(recipe=r, epsilon=3, epochs=1,
batch_size=64, seed=0).fit(first 600 Adult training rows, schema).sample(50, seed=1)` as CSV
for the critic-side recipes (dp-gan, dp-wgan, dp-cgan, dtgan-d): run it before and after a
change that claims to compute the same thing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from dpgan import Schema, datasets
from dpgan.models.tabular import TabularCritic
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.training.config import TrainingConfig
from dpgan.training.critic_step import CriticStepSettings, critic_release, critic_step
from dpgan.training.dp_critic import fake_term_gradient, make_optimizer

COMMAND = (
    "OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=src python bench/step_speed.py"
    " --rounds {rounds} --steps {steps} --label {label}"
)


@dataclass(frozen=True)
class Shape:
    name: str
    width: int
    hidden: tuple[int, ...]
    batch: int


def adult_width() -> int:
    return TableEncoder(Schema.from_json(datasets.adult_schema_path())).width


def shapes() -> list[Shape]:
    config = TrainingConfig()
    return [
        Shape("adult-default", adult_width(), tuple(config.critic_hidden), 1024),
        Shape("108-256-256-b64", 108, (256, 256), 64),
        Shape("108-256-256-b512", 108, (256, 256), 512),
    ]


def nonprivate_step(config: TrainingConfig) -> Callable[[TabularCritic, torch.optim.Optimizer, tuple], None]:
    """The plain WGAN-GP critic step (A)."""
    lam = config.gp_weight

    def step(critic: TabularCritic, opt: torch.optim.Optimizer, batch: tuple) -> None:
        real, fake, alpha, _ = batch
        opt.zero_grad(set_to_none=True)
        x_hat = (alpha * real + (1.0 - alpha) * fake).requires_grad_(True)
        (grad_x,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
        excess = grad_x.norm(dim=1) - 1.0
        pen = excess.clamp_min(0.0).pow(2) if config.one_sided_penalty else excess.pow(2)
        loss = -critic(real).mean() + critic(fake).mean() + lam * pen.mean()
        loss.backward()
        opt.step()

    return step


def dp_step(config: TrainingConfig, batch_size: int) -> Callable[[TabularCritic, torch.optim.Optimizer, tuple], None]:
    """One critic update of `train_dp_critic` (B), default configuration, σ = 1, through the engine
    (dpgan.privacy.step) with the batch injected; the ledger is a bench-only stand-in."""
    settings = CriticStepSettings.from_config(config)
    clip = config.max_grad_norm

    built: dict[int, object] = {}

    def step(critic: TabularCritic, opt: torch.optim.Optimizer, batch: tuple) -> None:
        real, fake, _, generator = batch
        if id(generator) not in built:  # one engine step per run, as train_dp_critic builds it
            built[id(generator)] = critic_step(
                settings,
                units=batch_size,
                sample_rate=1.0,
                noise_multiplier=1.0,
                max_norm=clip,
                expected_batch_size=float(batch_size),
                steps=10**9,
                ledger=PrivacyLedger([]),
                generator=generator,
            )
        private_step = built[id(generator)]
        weight = torch.ones(real.shape[0])
        release = critic_release(
            private_step, critic, real, weight, fake, settings, max_norm=clip, with_features=False, generator=generator
        )
        private = release.gradient(critic)
        fake_weight = torch.ones(fake.shape[0])
        fake_grads = fake_term_gradient(critic, fake, fake_weight, clip if config.clip_fake_term else None)
        for name, p in critic.named_parameters():
            p.grad = private[name] + fake_grads[name]
        opt.step()

    return step


def time_steps(step, critic, opt, batch, n: int) -> tuple[float, float]:
    """Seconds per step: wall clock, and the process's CPU time (less sensitive to other jobs on a shared host)."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        step(critic, opt, batch)
    return (time.perf_counter() - wall) / n, (time.process_time() - cpu) / n


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def measure(shape: Shape, rounds: int, steps: int, warmup: int) -> dict:
    config = TrainingConfig()
    gen = torch.Generator().manual_seed(0)
    real = torch.rand(shape.batch, shape.width, generator=gen) * 2 - 1
    fake = torch.rand(shape.batch, shape.width, generator=gen) * 2 - 1
    alpha = torch.rand(shape.batch, 1, generator=gen)
    batch = (real, fake, alpha, torch.Generator().manual_seed(1))
    torch.manual_seed(0)  # bench only: the critic's init; the library never seeds globally
    critic_a = TabularCritic(shape.width, shape.hidden)
    critic_b = TabularCritic(shape.width, shape.hidden)
    critic_b.load_state_dict(critic_a.state_dict())
    opt_a = make_optimizer(config, critic_a.parameters(), config.critic_lr)
    opt_b = make_optimizer(config, critic_b.parameters(), config.critic_lr)
    step_a, step_b = nonprivate_step(config), dp_step(config, shape.batch)
    for _ in range(warmup):
        step_a(critic_a, opt_a, batch)
        step_b(critic_b, opt_b, batch)
    wall_a, wall_b, cpu_a, cpu_b = [], [], [], []
    for _ in range(rounds):
        ta, ca = time_steps(step_a, critic_a, opt_a, batch, steps)
        tb, cb = time_steps(step_b, critic_b, opt_b, batch, steps)
        wall_a.append(ta)
        wall_b.append(tb)
        cpu_a.append(ca)
        cpu_b.append(cb)
    return {
        "shape": shape.name,
        "width": shape.width,
        "hidden": list(shape.hidden),
        "batch": shape.batch,
        "nonprivate_ms": [1e3 * v for v in quartiles(wall_a)],
        "dp_ms": [1e3 * v for v in quartiles(wall_b)],
        "ratio": list(quartiles([b / a for a, b in zip(wall_a, wall_b)])),
        "nonprivate_cpu_ms": [1e3 * v for v in quartiles(cpu_a)],
        "dp_cpu_ms": [1e3 * v for v in quartiles(cpu_b)],
        "cpu_ratio": list(quartiles([b / a for a, b in zip(cpu_a, cpu_b)])),
    }


def fit_hashes(recipes: tuple[str, ...] = ("dp-gan", "dp-wgan", "dp-cgan", "dtgan-d")) -> None:
    from dpgan.synthesizers import TabularSynthesizer

    train, _ = datasets.load_adult()
    schema = Schema.from_json(datasets.adult_schema_path())
    for recipe in recipes:
        synth = TabularSynthesizer(recipe=recipe, epsilon=3, epochs=1, batch_size=64, seed=0)
        sample = synth.fit(train.iloc[:600], schema).sample(50, seed=1)
        print(recipe, hashlib.sha256(sample.to_csv(index=False).encode()).hexdigest(), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--steps", type=int, default=5, help="steps per timed block")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default="")
    parser.add_argument("--fit-hashes", action="store_true", help="print seeded fits' sample hashes and stop")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.fit_hashes:
        fit_hashes()
        return
    command = COMMAND.format(rounds=args.rounds, steps=args.steps, label=args.label or "-")
    print(f"# {command}")
    print(f"# torch {torch.__version__}, {platform.processor() or platform.machine()}, threads=1")
    print(f"{'shape':<18}{'B':>6}{'non-private ms':>22}{'DP ms':>22}{'DP/non-private':>24}{'(CPU time)':>24}")
    rows = []
    for shape in shapes():
        row = measure(shape, args.rounds, args.steps, args.warmup)
        row.update(
            label=args.label,
            command=command,
            rounds=args.rounds,
            steps=args.steps,
            torch=torch.__version__,
            loadavg=os.getloadavg()[0],
        )
        rows.append(row)
        a, b, r, c = row["nonprivate_ms"], row["dp_ms"], row["ratio"], row["cpu_ratio"]
        print(
            f"{shape.name:<18}{shape.batch:>6}"
            f"{a[1]:>10.2f} [{a[0]:.2f},{a[2]:.2f}]"
            f"{b[1]:>10.2f} [{b[0]:.2f},{b[2]:.2f}]"
            f"{r[1]:>12.3f} [{r[0]:.3f},{r[2]:.3f}]"
            f"{c[1]:>12.3f} [{c[0]:.3f},{c[2]:.3f}]",
            flush=True,
        )
    print("# medians [IQR] over rounds of wall-clock ms per step; ratio = per-round DP time / non-private time")
    print(f"# load average at the end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if args.out:
        with open(args.out, "a") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
