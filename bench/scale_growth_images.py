"""Issue 53, images: the LIBRARY's image fit (data steps included) at ×1, ×10 and ×100 images, in blocks.

Unlike bench/scale_growth_kinds.py (which feeds the statistics model from an .npy directly), every
fit here is `ImageSynthesizer(epsilon=3, seed=0).fit(...)` with the default "gaussian" model and no
class list: the label set released by DP, the tally, the per-image checks and the model's passes.

- base set: MNIST-5k's 4,000 training digits (28×28 uint8, ten labels), ×1 / ×10 / ×100 = 4,000 /
  40,000 / 400,000 images; each copy after the first with its own small noise (±8 grey levels,
  rounded and clipped to 0-255), labels repeated;
- modes: `npy` (dpgan.images.open_images on NAME.npy + NAME.labels.npy, read by offsets), `png`
  (open_images on a folder of label subfolders: the shape released by DP, each PNG decoded per pass;
  ×1 and ×10, writing 400,000 PNGs is too slow here), `memory` (the same images as one uint8 array
  in memory, as before the block reader: ×1 and ×10);
- every fit in a child process of its own with one thread (OMP_NUM_THREADS=1, DPGAN_THREADS=1),
  reporting its fit's wall time, its peak resident memory (ru_maxrss, which includes the imports)
  and its resident memory after the imports (baseline); rounds interleaved.

    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/scale_growth_images.py --rounds 2 \
        --out bench/results/scale_growth_images.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

EPSILON = 3.0
COPY_NOISE = 8  # grey levels: each copy's own noise
SCORED = 2_000  # synthetic images scored per fit (--score)
SCORE_VARIABLE = "DPGAN_BENCH_SCORE"  # --score, passed to the fits' child processes


def write_scaled(scale: int, folder: Path, png: bool) -> dict:
    """×`scale` copies of MNIST-5k's training digits to NAME.npy (+ labels), and a PNG folder if asked."""
    from dpgan import datasets
    from dpgan.images import write_images

    images, labels = datasets.load_mnist_5k("train")
    n = len(images)
    path = folder / f"images-{scale}.npy"
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint8, shape=(n * scale, *images.shape[1:]))
    for copy in range(scale):
        noise = np.random.default_rng(copy).integers(-COPY_NOISE, COPY_NOISE + 1, images.shape) if copy else 0
        out[copy * n : (copy + 1) * n] = np.clip(images.astype(np.int16) + noise, 0, 255).astype(np.uint8)
    out.flush()
    np.save(folder / f"images-{scale}.labels.npy", np.tile(labels.astype(np.int64), scale))
    made = {"npy": str(path)}
    if png:
        target = folder / f"png-{scale}"
        for copy in range(scale):  # a sub-folder per copy would change the layout: one write, copy by copy
            part = np.asarray(out[copy * n : (copy + 1) * n])
            write_images(folder / f"png-{scale}-{copy}", part, labels)
            for label_dir in (folder / f"png-{scale}-{copy}").iterdir():
                (target / label_dir.name).mkdir(parents=True, exist_ok=True)
                for file in label_dir.iterdir():
                    file.rename(target / label_dir.name / f"{copy:04d}-{file.name}")
        made["png"] = str(target)
    del out
    return made


def fit(mode: str, path: str) -> dict:
    """The child: the library's image fit on `path` in `mode`."""
    import resource

    import torch

    from dpgan.images import open_images
    from dpgan.synthesizers.image import ImageSynthesizer

    torch.set_num_threads(1)
    baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    synth = ImageSynthesizer(epsilon=EPSILON, seed=0, threads=1)
    if mode == "memory":
        images, labels = np.load(path), np.load(path.replace(".npy", ".labels.npy"))
        synth.fit(images, labels)
    else:
        synth.fit(open_images(path, labelled=True))
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    epsilon = round(float(synth.ledger.epsilon(1e-5, "pld")), 4)
    row = {"mode": mode, "fit_s": round(seconds, 2), "baseline_mb": round(baseline_kb / 1024, 1),
           "peak_mb": round(peak_kb / 1024, 1), "estimated_images": round(synth.training["estimated_images"]),
           "labels": len(synth.label_names), "epsilon": epsilon}  # fmt: skip
    if os.environ.get(SCORE_VARIABLE):
        row |= headline_score(synth)
    return row


def headline_score(synth) -> dict:  # noqa: ANN001
    """The image headline (dpgan.evaluation.headline: the students' macro AuROC, here the logistic
    regression alone, no Fréchet distance) of SCORED synthetic images, trained on them and tested on
    MNIST-5k's 1,000 held-out test digits, beside the same student trained on the 4,000 real
    training digits (the base set's originals): the score's real ceiling."""
    from dpgan import datasets
    from dpgan.evaluation.images.metrics import evaluate_images

    start = time.perf_counter()
    train_x, train_y = datasets.load_mnist_5k("train")
    test_x, test_y = datasets.load_mnist_5k("test")
    images, labels = synth.sample(SCORED, seed=0)
    codes = np.asarray([int(label) for label in labels])
    unit = lambda x: np.asarray(x, dtype=np.float32).reshape(len(x), *train_x.shape[1:]) / 255.0  # noqa: E731
    metrics = evaluate_images(
        unit(train_x), train_y, unit(images), codes, unit(test_x), test_y, 10, students=("logreg",), frechet=False
    )
    headline = metrics["headline"]
    return {"headline": round(headline["score"], 4), "headline_real": round(headline["real"], 4),
            "score_s": round(time.perf_counter() - start, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scales", nargs="+", type=int, default=[1, 10, 100])
    parser.add_argument("--png-scales", nargs="+", type=int, default=[1, 10])
    parser.add_argument("--memory-scales", nargs="+", type=int, default=[1, 10])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--score", action="store_true", help="also the headline score of each fit (after its timing)")
    parser.add_argument("--out", type=Path, default=None, help="a .md for the table (and a .jsonl beside it)")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--prepare", nargs=3, metavar=("SCALE", "FOLDER", "PNG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(fit(*args.child)))
        return
    if args.prepare:  # in a child too: Linux children inherit their parent's peak RSS (ru_maxrss)
        scale, folder, png = args.prepare
        print(json.dumps(write_scaled(int(scale), Path(folder), png == "1")))
        return
    env = os.environ | {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    env |= {"DPGAN_THREADS": "1"} | ({SCORE_VARIABLE: "1"} if args.score else {})
    rows = []

    def child(*arguments: str) -> dict:
        done = subprocess.run([sys.executable, __file__, *arguments], env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(done.stderr[-3000:])
        return json.loads(done.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory(prefix="scale-growth-images-") as tmp:
        files = {s: child("--prepare", str(s), tmp, "1" if s in args.png_scales else "0") for s in args.scales}
        jobs = [(s, "npy") for s in args.scales]
        jobs += [(s, "png") for s in args.scales if s in args.png_scales]
        jobs += [(s, "memory") for s in args.scales if s in args.memory_scales]
        for round_ in range(args.rounds):
            for scale, mode in jobs:
                path = files[scale]["png" if mode == "png" else "npy"]
                row = child("--child", mode, path) | {"scale": scale, "images": 4000 * scale, "round": round_}
                print(json.dumps(row), flush=True)
                rows.append(row)
        if args.out:  # before the temporary folder (hundreds of thousands of PNGs) is removed
            write_results(rows, args)


def write_results(rows: list[dict], args: argparse.Namespace) -> None:
    args.out.with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = [
        "# Images at ×1, ×10, ×100: the library's fit (data steps included) of the default gaussian model",
        "",
        "Command (one thread per fit: OMP_NUM_THREADS=1, DPGAN_THREADS=1; the 2-core machine shared with other jobs):",
        "",
        "    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/scale_growth_images.py " + " ".join(sys.argv[1:]),
        "",
        "`npy`/`png`: dpgan.images.open_images (blocks of 5,349 images: 2^22 pixel values); `memory`: one "
        "uint8 array in memory. Fit time and peak RSS per child process (median time over rounds, largest "
        "peak); peak RSS includes the imports (`baseline`). ε = 3, δ = 1e-5, no class list (the label "
        "set released with DP).",
        "",
        "| mode | scale | images | fit s (median) | fit s per 100k images | peak RSS MB | baseline RSS MB | N̂ "
        "| labels | ε |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, scale in sorted({(r["mode"], r["scale"]) for r in rows}):
        group = [r for r in rows if (r["mode"], r["scale"]) == (mode, scale)]
        seconds = float(np.median([r["fit_s"] for r in group]))
        first = group[0]
        lines.append(
            f"| {mode} | ×{scale} | {first['images']:,} | {seconds:.2f} | {seconds / first['images'] * 1e5:.2f} | "
            f"{max(r['peak_mb'] for r in group):.0f} | {first['baseline_mb']:.0f} | {first['estimated_images']:,} | "
            f"{first['labels']} | {first['epsilon']} |"
        )
    scored = [r for r in rows if "headline" in r]
    if scored:  # --score: each fit's headline (logistic-regression student on MNIST-5k's test digits)
        lines += [
            "",
            "| mode | scale | headline (synthetic) | headline (real training digits) | score s |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['mode']} | ×{r['scale']} | {r['headline']:.3f} | {r['headline_real']:.3f} | {r['score_s']} |"
            for r in scored
        ]
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
