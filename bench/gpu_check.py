"""GPU check (issue 17, part 3): every data kind fitted on cuda, its ledger against the CPU run's, the
saved model loaded for the CPU, and the DP critic step against the non-private one on the GPU.

    PYTHONPATH=src python bench/gpu_check.py [--device cuda] [--out bench/results/gpu_check.md]
    PYTHONPATH=src python bench/gpu_check.py --device cpu --out /tmp/gpu_check.md   # the script's own smoke run

For each kind (a table: 600 Adult rows; series: 60 sine series; images: 400 8×8 digits) it fits a
tiny seeded model on the CPU and on the device, checks that both ledgers are equal (same events,
σ, q, counts: the plan depends on the released counts, drawn from NumPy, never on the device),
saves the device-fitted model, loads it and samples on the CPU. Then it times the DP critic step
(the engine's release: per-record clipped sums, noise from a generator on the device) against the
non-private WGAN-GP step on the device, with bench/step_speed.py's step functions. Without a GPU it
exits with one line and status 2.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).parent))
from dpgan import Schema, datasets  # noqa: E402
from dpgan.devices import resolve_device  # noqa: E402
from dpgan.errors import InputError  # noqa: E402
from dpgan.models.tabular import TabularCritic  # noqa: E402
from dpgan.sequences import SequenceSchema, ValueColumn  # noqa: E402
from dpgan.synthesizers import ImageSynthesizer, SequenceSynthesizer, TabularSynthesizer, load_model  # noqa: E402
from dpgan.training.config import TrainingConfig  # noqa: E402
from dpgan.training.dp_critic import make_optimizer  # noqa: E402
from step_speed import Shape, dp_step, nonprivate_step  # noqa: E402


def _table():
    frame, _ = datasets.load_adult()
    return frame.head(600).reset_index(drop=True), Schema.from_json(datasets.adult_schema_path())


def _series():
    rng = np.random.default_rng(0)
    rows = [(i, t, float(np.sin(t + i) + rng.normal(0, 0.1))) for i in range(60) for t in range(6)]
    schema = SequenceSchema(id="id", time="t", length=6, values=(ValueColumn("v", -2.0, 2.0),))
    return pd.DataFrame(rows, columns=["id", "t", "v"]), schema


def _digits():
    from sklearn.datasets import load_digits

    data = load_digits()
    return np.round(data.images[:400] * 255 / 16).astype(np.uint8), data.target[:400]


def kinds():
    """(name, build(device), fit(synth), sample(loaded)) for each data kind."""
    table, schema = _table()
    series, series_schema = _series()
    images, labels = _digits()
    classes = [str(d) for d in range(10)]
    return [
        (
            "table",
            lambda d: TabularSynthesizer(epsilon=3.0, epochs=1, batch_size=64, seed=0, device=d),
            lambda s: s.fit(table, schema),
            lambda m: len(m.sample(100, seed=1)),
        ),
        (
            "sequence",
            lambda d: SequenceSynthesizer(epsilon=3.0, seed=0, model="gan", epochs=2, batch_size=16, device=d),
            lambda s: s.fit(series, series_schema),
            lambda m: len(m.sample(10, seed=1)),
        ),
        (
            "image",
            lambda d: ImageSynthesizer(
                epsilon=3.0, seed=0, recipe="dcgan", classes=classes, epochs=1.0, batch_size=64, device=d
            ),
            lambda s: s.fit(images, labels),
            lambda m: len(m.sample(10, seed=1)[0]),
        ),
    ]


def check_kinds(device: torch.device) -> list[str]:
    lines = [
        "| kind | fit on CPU (s) | fit on device (s) | ledger equal | loaded on CPU, rows sampled |",
        "|---|---|---|---|---|",
    ]
    for name, build, fit, sample in kinds():
        t0 = time.perf_counter()
        on_cpu = fit(build("cpu"))
        t1 = time.perf_counter()
        on_device = fit(build(str(device)))
        t2 = time.perf_counter()
        equal = on_cpu.ledger.to_dict() == on_device.ledger.to_dict()
        with tempfile.TemporaryDirectory() as tmp:
            on_device.save(Path(tmp) / "m")
            loaded = load_model(Path(tmp) / "m")
            assert all(t.device.type == "cpu" for t in loaded.generator.state_dict().values())
            drawn = sample(loaded)
        lines.append(f"| {name} | {t1 - t0:.1f} | {t2 - t1:.1f} | {'yes' if equal else 'NO'} | {drawn} |")
        if not equal:
            print(f"{name}: the ledgers differ", file=sys.stderr)
    return lines


def sync(device: torch.device) -> None:
    """Wait for the device's queued work (a timer reads the clock after it)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_name(device: torch.device) -> str:
    """The GPU's name, or a CPU run labelled as the script's smoke run."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU (smoke run, not a GPU figure)"


def time_critic_steps(device: torch.device, rounds: int = 20, steps: int = 10) -> list[str]:
    """Median seconds per critic step, DP (B) and non-private (A), on `device`, as step_speed.py."""
    config = TrainingConfig()
    lines = ["| shape | non-private step (ms) | DP step (ms) | ratio DP / non-private |", "|---|---|---|---|"]
    for shape in (Shape("adult-like", 108, (128, 128), 1024), Shape("wide", 108, (256, 256), 4096)):
        with torch.device(device):
            gen = torch.Generator(device=device).manual_seed(0)
            real = torch.rand(shape.batch, shape.width, generator=gen, device=device) * 2 - 1
            fake = torch.rand(shape.batch, shape.width, generator=gen, device=device) * 2 - 1
            alpha = torch.rand(shape.batch, 1, generator=gen, device=device)
            batch = (real, fake, alpha, torch.Generator(device=device).manual_seed(1))
            critics = [TabularCritic(shape.width, shape.hidden) for _ in range(2)]
            critics[1].load_state_dict(critics[0].state_dict())
            opts = [make_optimizer(config, c.parameters(), config.critic_lr) for c in critics]
            funcs = [nonprivate_step(config), dp_step(config, shape.batch)]
            times: list[list[float]] = [[], []]
            for r in range(rounds + 2):
                for k in range(2):
                    sync(device)
                    start = time.perf_counter()
                    for _ in range(steps):
                        funcs[k](critics[k], opts[k], batch)
                    sync(device)
                    if r >= 2:  # warm-up rounds
                        times[k].append((time.perf_counter() - start) / steps)
        a, b = statistics.median(times[0]), statistics.median(times[1])
        ratio = statistics.median([y / x for x, y in zip(times[0], times[1])])
        lines.append(
            f"| {shape.name} d={shape.width} {shape.hidden} B={shape.batch} "
            f"| {a * 1e3:.2f} | {b * 1e3:.2f} | {ratio:.2f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", default="bench/results/gpu_check.md")
    args = parser.parse_args(argv)
    try:
        device = resolve_device(args.device)
    except InputError as exc:
        print(f"gpu_check: {exc}", file=sys.stderr)
        return 2
    name = device_name(device)
    lines = [
        "# GPU check (issue 17, part 3)",
        "",
        f"Command: `PYTHONPATH=src python bench/gpu_check.py --device {args.device}`; "
        f"device: {name}; torch {torch.__version__}.",
        "",
        "## Every kind fitted on the device: ledger against the CPU run, model loaded on the CPU",
        "",
        *check_kinds(device),
        "",
        "## Critic step on the device: DP (engine release) against non-private WGAN-GP",
        "",
        *time_critic_steps(device),
        "",
    ]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if "| NO |" not in "\n".join(lines) else 1


if __name__ == "__main__":
    sys.exit(main())
