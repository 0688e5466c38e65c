"""dp-GAN's first experiment (Frigerio et al. 2019, Fig. 1-2): six 2-D Gaussians of equal variance,
a non-private GAN against DP-SGD on the critic at ε = 8 with and without clipping decay.

The GAN is dpgan's DP-critic loop (WGAN-GP, per-example clipping of the real term and the gradient
penalty together, Poisson batches) with the tabular MLPs on two tanh outputs; the non-private run
has σ = 0 and no clipping. Every `--monitor-every` critic steps the released generator (its
average) draws 1,000 points and the exact 2-D Wasserstein-1 distance to 1,000 fresh real points
is computed (an assignment problem, scipy). Writes bench/figures/mixture_kde.png (kernel densities,
Fig. 1), bench/figures/mixture_wd.png (W1 over training, Fig. 2) and one JSON line per run.

    python bench/mixture_2d.py --epsilon 8 --seed 0
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import replace
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402
from scipy.stats import gaussian_kde  # noqa: E402

from dpgan.models.output_spans import TANH, OutputSpan  # noqa: E402
from dpgan.privacy.accounting import PrivacyLedger  # noqa: E402
from dpgan.privacy.calibration import FitBudget, sigma_and_steps  # noqa: E402
from dpgan.training.config import TrainingConfig  # noqa: E402
from dpgan.training.dp_critic import train_dp_critic  # noqa: E402
from dpgan.training.schedule import gan_schedule_for  # noqa: E402

BENCH = Path(__file__).resolve().parent
CENTRES = 6
RADIUS, SPREAD = 0.6, 0.06  # in the tanh box [-1, 1]²
DELTA = 1e-5
SPANS = [OutputSpan(TANH, 0, 1, "x"), OutputSpan(TANH, 1, 1, "y")]


def mixture(n: int, rng: np.random.Generator) -> np.ndarray:
    angles = 2 * np.pi * rng.integers(0, CENTRES, n) / CENTRES
    centres = RADIUS * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return (centres + rng.normal(0, SPREAD, (n, 2))).astype(np.float32)


def wasserstein_2d(a: np.ndarray, b: np.ndarray) -> float:
    cost = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2))
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].mean())


def draw(G: torch.nn.Module, n: int, seed: int, noise_dim: int) -> np.ndarray:
    with torch.no_grad():
        z = torch.randn(n, noise_dim, generator=torch.Generator().manual_seed(seed))
        return G.sample_encoded(z).numpy()


def run(name: str, data: torch.Tensor, config: TrainingConfig, epsilon: float | None, seed: int, every: int) -> dict:
    schedule = gan_schedule_for(config, len(data), "critic")
    ledger, sigma, steps = None, 0.0, schedule.steps
    if epsilon is not None:
        budget = FitBudget(epsilon, DELTA, "pld")
        calibrated = sigma_and_steps(sample_rate=schedule.sample_rate, steps=schedule.steps, budget=budget)
        sigma, steps = calibrated.noise_multiplier, calibrated.steps
        ledger = PrivacyLedger(budget=budget.ledger_budget())
    curve: list[tuple[int, float]] = []
    reference = mixture(1000, np.random.default_rng(10_000 + seed))

    def monitor(step: int, G: torch.nn.Module) -> None:
        curve.append((step, wasserstein_2d(draw(G, 1000, step, config.noise_dim), reference)))

    torch.manual_seed(seed)
    started = time.time()
    result = train_dp_critic(
        data,
        SPANS,
        config,
        sample_rate=schedule.sample_rate,
        expected_batch_size=schedule.expected_batch_size,
        noise_multiplier=sigma,
        steps=steps,
        generator=torch.Generator().manual_seed(seed),
        ledger=ledger,
        monitor=monitor,
        monitor_every=every,
    )
    seconds = time.time() - started
    points = draw(result.generator, 5000, 99, config.noise_dim)
    spent = None if ledger is None else ledger.epsilon(DELTA, "pld")
    return {
        "run": name,
        "seed": seed,
        "epsilon": spent,
        "noise_multiplier": sigma,
        "steps": steps,
        "clip_decay": config.clip_decay,
        "batch_size": config.batch_size,
        "max_sample_rate": config.max_sample_rate,
        "final_w1": curve[-1][1] if curve else None,
        "curve": curve,
        "seconds": round(seconds, 1),
        "points": points.tolist(),
    }


def figures(rows: list[dict], real: np.ndarray, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    grid = np.linspace(-1, 1, 120)
    xx, yy = np.meshgrid(grid, grid)
    panels = [("real", real)] + [(r["run"], np.array(r["points"])) for r in rows]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.2))
    for ax, (title, points) in zip(axes, panels):
        density = gaussian_kde(points.T)(np.vstack([xx.ravel(), yy.ravel()])).reshape(xx.shape)
        ax.contourf(xx, yy, density, levels=20, cmap="viridis")
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(out_dir / "mixture_kde.png", dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for r in rows:
        steps, values = zip(*r["curve"])
        ax.plot(steps, values, label=r["run"])
    ax.set_xlabel("critic steps")
    ax.set_ylabel("W1 to real points")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "mixture_wd.png", dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=8.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--epochs", type=float, default=60.0)
    parser.add_argument("--monitor-every", type=int, default=100)
    parser.add_argument("--out", default=str(BENCH / "results" / "mixture_2d.jsonl"))
    parser.add_argument("--figures", default=str(BENCH / "figures"))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="TrainingConfig field")
    args = parser.parse_args()
    torch.set_num_threads(1)
    real = mixture(args.rows, np.random.default_rng(args.seed))
    data = torch.from_numpy(real)
    base = TrainingConfig(
        batch_size=256, epochs=args.epochs, noise_dim=8, generator_hidden=(64, 64), critic_hidden=(64, 64)
    )
    for item in args.set:
        key, _, value = item.partition("=")
        base = replace(base, **{key: json.loads(value)})
    generator_steps = gan_schedule_for(base, len(data), "critic").steps / base.n_critic
    decay = math.exp(math.log(0.1) / generator_steps)  # C falls from 1 to 0.1 over the run
    runs = [
        ("non-private", replace(base, max_grad_norm=math.inf), None),
        (f"DP ε={args.epsilon:g}", base, args.epsilon),
        (f"DP ε={args.epsilon:g}, clipping decay", replace(base, clip_decay=decay), args.epsilon),
    ]
    rows = []
    for name, config, epsilon in runs:
        row = run(name, data, config, epsilon, args.seed, args.monitor_every)
        rows.append(row)
        brief = {k: v for k, v in row.items() if k not in ("points", "curve")}
        print(json.dumps(brief), flush=True)
        with open(args.out, "a") as handle:
            handle.write(json.dumps({k: v for k, v in row.items() if k != "points"}) + "\n")
    figures(rows, real[:5000], Path(args.figures))


if __name__ == "__main__":
    main()
