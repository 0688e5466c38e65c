"""What per-unit clipping costs: the generic backend's DP critic step against the non-private WGAN-GP step.

For each critic, one batch of 64 units (real, GP partners, α drawn once, float32):
- DP step: `grad_sample.clipped_sum` (per-unit ∇θ[-D(x_i) + λ(‖∇ₓD(x̂_i)‖-1)²], joint clip to C)
  plus one Gaussian draw per parameter (what the private step adds before dividing);
- non-private step: autograd of the batch mean of the same loss, the penalty's input gradient
  taken with create_graph=True (what a WGAN-GP trainer without DP runs).
Neither includes the fake-only term or the optimizer step (the same in both). Rounds are
interleaved (every variant once per round, after warm-up), 1 thread; the table gives medians and
the ratio of medians (DP / non-private of the same critic), and for the LSTM also against the
non-private step of torch's fused nn.LSTM (what a non-private user would run) and the DP step of
nn.LSTM through vmap (which falls back to a per-unit loop: why models/recurrent.py exists).

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python bench/generic_step_speed.py > bench/results/generic_step_speed.md
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable

import torch
from torch import nn

from dpgan.models.conv import ConvCritic
from dpgan.models.recurrent import LSTMCritic
from dpgan.models.tabular import TabularCritic
from dpgan.privacy.grad_sample import CriticUnitLoss, clipped_sum

BATCH = 64
GP = 10.0
CLIP = 1.0
SIGMA = 1.0


class TorchLSTMCritic(nn.Module):
    """LSTMCritic's shape on torch's nn.LSTM (fused kernel): the non-private reference."""

    def __init__(self, n_features: int, hidden: int, head: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, batch_first=True)
        self.hidden, self.act, self.out = nn.Linear(hidden, head), nn.LeakyReLU(0.2), nn.Linear(head, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.act(self.hidden(self.lstm(x)[0][:, -1]))).squeeze(-1)


def make_loss(unit_shape: tuple[int, ...], seed: int, batch: int = BATCH) -> CriticUnitLoss:
    gen = torch.Generator().manual_seed(seed)
    real = torch.rand((batch, *unit_shape), generator=gen) * 2 - 1
    partners = torch.rand((batch, *unit_shape), generator=gen) * 2 - 1
    return CriticUnitLoss(real=real, partners=partners, alpha=torch.rand(batch, generator=gen), gp_weight=GP)


def dp_step(critic: nn.Module, loss: CriticUnitLoss, backend: str, noise: torch.Generator) -> Callable[[], None]:
    def run() -> None:
        summed = clipped_sum(critic, loss, CLIP, backend=backend).gradients
        for name, p in critic.named_parameters():
            summed[name] + torch.randn(p.shape, generator=noise, dtype=p.dtype) * (SIGMA * CLIP)

    return run


def nonprivate_step(critic: nn.Module, loss: CriticUnitLoss) -> Callable[[], None]:
    params = list(critic.parameters())

    def run() -> None:
        x_hat = loss.penalty_points().detach().requires_grad_(True)
        (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
        penalty = (g.flatten(1).pow(2).sum(1).add(1e-12).sqrt() - 1.0).pow(2)
        total = (-critic(loss.real)).mean() + GP * penalty.mean()
        torch.autograd.grad(total, params)

    return run


def variants(with_torch_lstm_dp: bool) -> dict[str, dict[str, Callable[[], None]]]:
    """critic label → {step label: callable}."""
    noise = torch.Generator().manual_seed(0)
    out: dict[str, dict[str, Callable[[], None]]] = {}
    conv = ConvCritic((1, 28, 28), width=32)
    image = make_loss((1, 28, 28), 1)
    out["conv 28×28×1 (width 32)"] = {
        "dp": dp_step(conv, image, "functorch", noise),
        "plain": nonprivate_step(conv, image),
    }
    for features in (3, 10):
        ours = LSTMCritic(features, hidden_size=32, head=32)
        series = make_loss((24, features), 2)
        theirs = TorchLSTMCritic(features, 32, 32)
        steps = {
            "dp": dp_step(ours, series, "functorch", noise),
            "plain": nonprivate_step(ours, series),
            "plain nn.LSTM": nonprivate_step(theirs, series),
        }
        if with_torch_lstm_dp and features == 3:
            steps["dp nn.LSTM"] = dp_step(theirs, series, "functorch", noise)
        out[f"LSTM T=24 F={features} (hidden 32)"] = steps
    mlp = TabularCritic(40, (256, 256))
    rows = make_loss((40,), 3)
    out["MLP 40→256→256→1"] = {
        "dp": dp_step(mlp, rows, "functorch", noise),
        "dp ghost": dp_step(mlp, rows, "mlp-ghost", noise),
        "plain": nonprivate_step(mlp, rows),
    }
    return out


def interleaved_times(
    table: dict[str, dict[str, Callable[[], None]]], rounds: int, warmup: int
) -> dict[tuple[str, str], list[float]]:
    """Each (critic, step) once per round, rounds interleaved so that drifts in the machine's load
    hit every variant alike; the first `warmup` rounds are not kept."""
    times: dict[tuple[str, str], list[float]] = {(c, s): [] for c, steps in table.items() for s in steps}
    for round_ in range(warmup + rounds):
        for critic, steps in table.items():
            for step, run in steps.items():
                started = time.perf_counter()
                run()
                if round_ >= warmup:
                    times[critic, step].append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--skip-torch-lstm-dp", action="store_true", help="skip the slow nn.LSTM DP reference")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message=".*performance drop.*")  # nn.LSTM's fallback, measured on purpose
    table = variants(not args.skip_torch_lstm_dp)
    times = interleaved_times(table, args.rounds, args.warmup)
    print("# Generic per-unit backend: DP critic step against the non-private WGAN-GP step\n")
    print(
        "Command: `OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python bench/generic_step_speed.py"
        f"{' --skip-torch-lstm-dp' if args.skip_torch_lstm_dp else ''}` "
        f"(torch {torch.__version__}, 1 thread, shared 2-core machine; batch {BATCH}, float32, "
        f"{args.rounds} interleaved rounds after {args.warmup} warm-up rounds; medians).\n"
    )
    print("| critic | parameters | step | median (ms) | ratio to its non-private step | ratio to nn.LSTM non-private |")
    print("|---|---|---|---|---|---|")
    counts = {
        "conv 28×28×1 (width 32)": sum(p.numel() for p in ConvCritic((1, 28, 28), width=32).parameters()),
        "MLP 40→256→256→1": sum(p.numel() for p in TabularCritic(40, (256, 256)).parameters()),
    }
    for features in (3, 10):
        counts[f"LSTM T=24 F={features} (hidden 32)"] = sum(p.numel() for p in LSTMCritic(features, 32).parameters())
    for critic, steps in table.items():
        plain = statistics.median(times[critic, "plain"])
        torch_plain = statistics.median(times[critic, "plain nn.LSTM"]) if "plain nn.LSTM" in steps else None
        for step in steps:
            median = statistics.median(times[critic, step])
            to_torch = f"{median / torch_plain:.2f}" if torch_plain else ""
            print(f"| {critic} | {counts[critic]} | {step} | {median * 1e3:.1f} | {median / plain:.2f} | {to_torch} |")


if __name__ == "__main__":
    main()
