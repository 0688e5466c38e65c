"""The image kind's commands (registered in dpgan.images.registration): its fit flags, `dpgan
fit|sample|evaluate` with image models.

Same rules as the other commands: every argument is checked before PyTorch or the images are loaded, and the
model's destination before any private image is read. Loaded by the registry (dpgan.kinds) when a
command first needs the image kind.

The fit reads its images by the unit rule (dpgan.privacy.unit_rule): the folder is read with the
layout the flags declare (labelled unless --unconditional) and at the declared --image-shape, so
no image decides either; an image that cannot be used is dropped and counted in the fit's DP
tally, whose noisy counts are the only counts printed. Without --image-shape a folder's shape is
released with DP (dpgan.images.labels.release_shape).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpgan.cli.arguments import chosen_model
from dpgan.cli.output import ProgressBar
from dpgan.errors import InputError
from dpgan.recipes.images import DEFAULT_IMAGE_RECIPE
from dpgan.serialization import check_model_destination

IMAGE_SUFFIXES = (".npz",)  # or a folder (no suffix): one PNG per image, one subfolder per label


def check_image_source(path: str) -> Path:
    """An .npz or .npy file or a folder of PNGs that exists (its content is checked when read)."""
    source = Path(path)
    if not source.exists():
        raise InputError(f"no such file or folder: {source}")
    if source.is_file() and source.suffix.lower() not in (*IMAGE_SUFFIXES, ".npy"):
        raise InputError(f"images come as an .npz or .npy file or a folder of PNGs, not {source.name!r}")
    return source


def check_image_destination(path: str, overwrite: bool = False) -> Path:
    """An .npz path, or a folder path (no suffix) for PNGs, that does not exist yet, or (with
    `overwrite`) one to replace: an .npz file, or a folder of nothing but PNGs (dpgan.images.files)."""
    out = Path(path)
    if out.suffix and out.suffix.lower() not in IMAGE_SUFFIXES:
        raise InputError(f"image output must be an .npz file or a folder, not {out.name!r}")
    if out.exists() and not overwrite:
        raise InputError(f"{out} exists; pass --overwrite to replace it")
    if out.exists() and out.is_dir() != (not out.suffix):
        raise InputError(f"{out} is a {'folder' if out.is_dir() else 'file'}; refusing to replace it")
    return out


def parse_image_shape(text: str | None) -> tuple[int, int, int] | None:
    """`--image-shape CxHxW` (e.g. 1x28x28, 3x32x32) as (C, H, W): a public setting."""
    if text is None:
        return None
    parts = text.lower().replace("×", "x").split("x")
    if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
        raise InputError("--image-shape is CxHxW, e.g. 1x28x28 (grayscale) or 3x32x32 (colour)")
    from dpgan.images.checks import check_shape

    c, h, w = check_shape(tuple(int(p) for p in parts))
    return c, h, w


def parse_pixel_range(text: str | None) -> tuple[float, float] | None:
    """`--pixel-range LO:HI` (e.g. 0:255) as (low, high): the public range of float pixels."""
    if text is None:
        return None
    parts = text.split(":")
    try:
        low, high = (float(p) for p in parts)
    except ValueError:
        low = high = float("nan")
    if len(parts) != 2 or not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise InputError("--pixel-range is LO:HI with LO < HI, e.g. 0:255 (a negative LO as --pixel-range=-1:1)")
    return low, high


def _classes(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [c.strip() for c in text.split(",")]
    if len(names) < 2 or any(not c for c in names) or len(set(names)) != len(names):
        raise InputError("--classes lists at least two distinct, non-empty labels: --classes 0,1,2")
    return names


def add_fit_flags(images: argparse._ArgumentGroup, add_settings: Callable[[], None]) -> None:
    """The fit help's images section: the settings' flags, then the images' public description."""
    add_settings()
    images.add_argument(
        "--classes", help="the public label list A,B,... (free); without it the label set is released with DP"
    )
    images.add_argument("--unconditional", action="store_true", help="ignore labels (an unconditional GAN)")
    images.add_argument(
        "--image-shape",
        metavar="CxHxW",
        help="the public image shape, e.g. 1x28x28; PNGs of another shape are dropped and counted "
        "(without it a folder's shape is released with DP)",
    )
    images.add_argument(
        "--pixel-range",
        metavar="LO:HI",
        help="the public range of an .npz's float pixels, e.g. 0:255 (default 0:1; uint8 and PNGs are 0-255); "
        "samples come back in it; a negative LO as --pixel-range=-1:1",
    )


def fit_image(args: argparse.Namespace, settings: dict[str, Any]) -> int:
    """`dpgan fit --kind image`: an .npz (arrays `images`, optional `labels`) or a folder of PNGs;
    `settings`: the loop's and the images' settings flags the user gave."""
    source = check_image_source(args.data)
    out = check_model_destination(args.out, args.overwrite)  # before any private image is read
    recipe = chosen_model(args) or DEFAULT_IMAGE_RECIPE  # checked against the image models (dpgan.cli.fit)
    classes = _classes(args.classes)
    shape = parse_image_shape(args.image_shape)
    pixel_range = parse_pixel_range(args.pixel_range)
    if pixel_range is not None and source.is_dir():
        raise InputError("--pixel-range is for an .npz of float images: PNGs are 8-bit (0-255)")

    from dpgan.images.io import read_images
    from dpgan.images.stream import open_images
    from dpgan.privacy.distributed import rank_session
    from dpgan.synthesizers.image import ImageSynthesizer

    synth = ImageSynthesizer(
        epsilon=args.epsilon,
        delta=args.delta,
        accountant=args.accountant,
        seed=args.seed,
        noise_multiplier=args.noise_multiplier,
        model=recipe,
        conditional=not args.unconditional,
        classes=classes,
        image_shape=shape,
        pixel_range=pixel_range,
        device=args.device,
        threads=args.threads,
        **settings,
    )
    # a folder or an .npy is opened to be read in blocks (the gaussian model: flat memory, torchrun's
    # ranks; a GAN recipe reads it whole), an .npz read whole (its arrays cannot be read in blocks)
    read = read_images if source.suffix.lower() in IMAGE_SUFFIXES else open_images
    with rank_session() as context:  # under torchrun: every rank fits, rank 0 alone prints and writes
        images = read(source, shape=shape, labelled=not args.unconditional, pixel_range=pixel_range)
        synth.fit(images, progress=ProgressBar(not args.quiet and context.is_main, args.accountant))
    if not context.is_main:
        return 0
    synth.save(out, overwrite=args.overwrite)
    report = synth.privacy_report()
    if report.get("certified") is False:
        print(f"saved model to {out}: NOT certified, no ε claimed ({report['reason']})")
    else:
        print(f"saved model to {out}: ε={report['epsilon']:.4f}, δ={report['delta']:g} ({report['accountant']})")
    print(f"unit of privacy: {report['unit_of_privacy']}; labels: {report['label_source']}")
    print(f"images (noisy counts): {synth.released_units.describe()}")
    return 0


def sample_command(args: argparse.Namespace) -> int:
    """`dpgan sample` on an image model: --out is checked before the model and PyTorch load."""
    out = check_image_destination(args.out, args.overwrite)
    from dpgan.synthesizers import load_model

    return sample_image(load_model(args.model), out, args)


def sample_image(synth, out: Path, args: argparse.Namespace) -> int:  # noqa: ANN001 (an ImageSynthesizer)
    """`dpgan sample` for an image model: -n images to `out` (an .npz or a PNG folder, checked by
    `check_image_destination` before the model loaded) and a contact sheet."""
    if args.region_points:
        raise InputError("--region-points applies to table models")
    label = None
    if args.condition:
        if len(args.condition) > 1 or "=" not in args.condition[0]:
            raise InputError("an image model takes one --condition label=NAME")
        label = args.condition[0].split("=", 1)[1]
    # streamed a chunk at a time (memory flat in -n); an .npz keeps the samples' form (uint8, or
    # float in the model's range); PNGs are 8-bit
    sheet = synth.sample_to(out, args.n, seed=args.seed, label=label, overwrite=getattr(args, "overwrite", False))
    print(f"wrote {args.n} images to {out} and a contact sheet to {sheet}")
    return 0


def _codes(names: list[str] | None, labels, classes: list[str]):  # noqa: ANN001, ANN202
    """Label codes in the class order of `classes` (each image's label name must be one of them)."""
    import numpy as np

    if labels is None or names is None:
        raise InputError("image evaluation needs labelled real, synthetic and test images")
    position = {name: i for i, name in enumerate(classes)}
    mapped = np.array([position.get(name, -1) for name in names], dtype=np.int64)
    if np.any(mapped < 0):
        raise InputError("the images carry labels outside the model's (or --classes') label list")
    return mapped[labels]


def evaluate_image(args: argparse.Namespace) -> int:
    """`dpgan evaluate --kind image`: students trained on synthetic vs real images, tested on the
    real test images; the Fréchet feature distance; the memorisation check; metrics.json and report.html."""
    sources = [check_image_source(p) for p in (args.real, args.synthetic, args.test)]
    if args.model is None and args.classes is None:
        raise InputError("--kind image needs the label list: --model MODEL_DIR or --classes A,B,...")
    classes = _classes(args.classes)

    from dpgan.evaluation.evaluate import save_metrics
    from dpgan.evaluation.headline import headline_line
    from dpgan.evaluation.images.metrics import evaluate_images
    from dpgan.evaluation.images.report import write_image_report
    from dpgan.images.io import read_images, to_unit_range
    from dpgan.synthesizers import ImageSynthesizer, load_model

    model = load_model(args.model) if args.model is not None else None
    if model is not None and not isinstance(model, ImageSynthesizer):
        raise InputError("--model is not an image model")
    if classes is None:
        assert model is not None
        classes = list(model.label_names)
    shape = None if model is None else model.image_shape
    pixel_range = None if model is None else model.pixel_range  # a float model's range (its samples' too)
    arrays, codes = [], []
    for source in sources:
        data = read_images(source, shape=shape, labelled=True, pixel_range=pixel_range)
        arrays.append(to_unit_range(data.images, data.pixel_range))
        codes.append(_codes(data.label_names, data.labels, classes))
    metrics = evaluate_images(
        arrays[0], codes[0], arrays[1], codes[1], arrays[2], codes[2], len(classes), seed=args.seed
    )
    if model is not None:
        metrics["privacy"] = model.privacy_report() | {"model_dir": str(args.model)}
    out = Path(args.out)
    metrics_path = save_metrics(metrics, out / "metrics.json")
    report_path = write_image_report(
        out / "report.html", metrics, arrays[0], codes[0], arrays[1], codes[1], class_names=classes
    )
    print(f"wrote {metrics_path} and {report_path}")
    print(headline_line(metrics))
    students = metrics["students"]
    short = lambda v: "n/a" if v is None else f"{v:.4f}"  # noqa: E731
    for name, scores in students["synthetic"].items():
        real = students["real"][name]
        print(
            f"{name}: synthetic accuracy {short(scores['accuracy'])} AuROC {short(scores['auroc'])}; "
            f"real {short(real['accuracy'])} / {short(real['auroc'])}"
        )
    frechet = metrics.get("frechet")
    if frechet and frechet["synthetic"] is not None:
        floor = short(frechet["heldout"])
        print(f"Fréchet feature distance {short(frechet['synthetic'])} (real held-out floor {floor})")
    return 0


__all__ = [
    "add_fit_flags",
    "check_image_destination",
    "check_image_source",
    "evaluate_image",
    "fit_image",
    "parse_image_shape",
    "parse_pixel_range",
    "sample_command",
    "sample_image",
]
