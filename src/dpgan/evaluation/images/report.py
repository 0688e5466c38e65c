"""The evaluation of synthetic images as one self-contained HTML page (the report's image section).

Sections: the headline quality score beside real held-out images' (dpgan.evaluation.headline); the
privacy guarantee, worded for its unit (one image), from the model's privacy report, passed in;
the students trained on synthetic next to the same trained on real images (accuracy, macro
one-vs-rest AuROC); the Fréchet
feature distance against its real-image floor (when the metrics carry one); a sample
grid per class, synthetic and real; memorisation: generated images next to their nearest real
training images, the distance histogram against the held-out floor, and the summary numbers.
Every text from the data goes through `html.escape`; images are embedded PNGs, no scripts.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from dpgan.evaluation.images.figures import distance_histogram, nearest_figure, sample_grid
from dpgan.evaluation.report_core import CSS, headline_section, html_table, img, note, privacy_section, write_html

STUDENT_NAMES = {"logreg": "logistic regression", "mlp": "MLP", "cnn": "CNN"}
PER_CLASS = 10
NEAREST_EXAMPLES = 8


def _students_section(students: dict[str, dict[str, dict[str, float | None]]]) -> str:
    synthetic, real = students.get("synthetic", {}), students.get("real", {})
    order = [n for n in STUDENT_NAMES if n in synthetic or n in real]
    order += sorted((synthetic.keys() | real.keys()) - set(order))
    rows = [
        [
            f"{STUDENT_NAMES.get(name, name)}: {shown}",
            synthetic.get(name, {}).get(metric),
            real.get(name, {}).get(metric),
        ]
        for name in order
        for metric, shown in (("accuracy", "accuracy"), ("auroc", "AuROC (macro one-vs-rest)"))
    ]
    return "\n".join(
        [
            "<h2>Utility: students tested on real images</h2>",
            html_table(["student", "trained on synthetic", "trained on real"], rows),
            note(
                "Each student is trained on the synthetic images (left) or on the real training images "
                "(right, the ceiling) and tested on the same real held-out images. AuROC is the mean of the "
                "one-vs-rest ROC AUCs over classes (the DP-CGAN paper's measure); 0.5 is chance."
            ),
        ]
    )


def _memorisation_section(nearest: dict[str, Any], synthetic_x: np.ndarray, real_x: np.ndarray) -> str:
    rows = [
        ["mean L2 distance to the nearest training image: synthetic", nearest["synthetic_mean"]],
        ["mean L2 distance to the nearest training image: held-out real (floor)", nearest["heldout_mean"]],
        ["ratio to the floor", nearest["ratio_to_floor"]],
        ["5th percentile: synthetic", nearest["synthetic_p5"]],
        ["5th percentile: held-out real", nearest["heldout_p5"]],
        ["synthetic images closer than 95% of held-out ones", nearest["share_below_heldout_p5"]],
        ["exact copies of training images", nearest["exact_copies"]],
        ["membership attack by distance (AUC; 0.5 = no signal)", nearest["membership_auc"]],
    ]
    counts = nearest["images"]
    return "\n".join(
        [
            "<h2>Memorisation: nearest real training images</h2>",
            f"<p>{counts['synthetic']} synthetic and {counts['heldout']} held-out real images against all "
            f"{counts['train']} real training images (L2 distance on pixels in [0, 1]).</p>",
            html_table(["measure", "value"], rows),
            note(
                "A synthetic image much closer to a training image than held-out real images are (ratio well "
                "below 1, many below the held-out 5th percentile, any exact copy) suggests the generator "
                "copies training images; far above 1 means it misses what real images look like."
            ),
            '<div class="wide">',
            img(nearest_figure(synthetic_x, real_x, NEAREST_EXAMPLES), "nearest real images"),
            "</div>",
            '<div class="grid">',
            img(distance_histogram(nearest["histogram"]), "distance histogram"),
            "</div>",
        ]
    )


def _frechet_section(frechet: dict[str, Any] | None) -> str:
    if not frechet:
        return ""
    rows = [
        ["synthetic against real held-out images", frechet["synthetic"]],
        ["real held-out against real held-out (floor)", frechet["heldout"]],
        ["ratio to the floor", frechet["ratio_to_floor"]],
        ["the feature network's accuracy on real held-out images", frechet["feature_net_accuracy"]],
    ]
    return "\n".join(
        [
            "<h2>Realism: Fréchet feature distance</h2>",
            f"<p>{frechet['images']} images per side, in the {frechet['features']} features of a small CNN "
            "trained to classify the real training images (FID's formula; not comparable with published "
            "FIDs, which use an Inception network).</p>",
            html_table(["Fréchet distance", "value"], rows),
            note(
                "Lower is better. The floor is what a second sample of real images scores at the same size "
                "(the estimate grows as samples shrink). The students above can score well on images that "
                "only carry each class's typical features; this distance compares the whole spread of "
                "features, variety within a class included, though in features a classifier learnt."
            ),
        ]
    )


def render_image_report(
    metrics: dict[str, Any],
    real_x: np.ndarray,
    real_y: np.ndarray,
    synthetic_x: np.ndarray,
    synthetic_y: np.ndarray,
    *,
    class_names: Sequence[str] | None = None,
    privacy: dict[str, Any] | None = None,
) -> str:
    """The page as a string, from `evaluate_images`' metrics plus the real training and synthetic
    images (for the grids and the nearest-image figure). `privacy` is the model's privacy report
    (default: metrics["privacy"]); without one the page says it cannot state a guarantee."""
    n_classes = int(metrics["n_classes"])
    names = list(class_names) if class_names is not None else [str(c) for c in range(n_classes)]
    counts = metrics["class_counts"]
    shape = "×".join(str(s) for s in metrics["image_shape"])
    missing = [names[c] for c, n in enumerate(counts["synthetic"]) if n == 0]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>dpgan image evaluation</title>',
        f"<style>{CSS}</style></head><body>",
        "<h1>dpgan evaluation report: images</h1>",
        f"<p>{sum(counts['real_train'])} real training images, {sum(counts['synthetic'])} synthetic, "
        f"{sum(counts['test'])} held-out real; images {escape(shape)} (channels × height × width); "
        f"{n_classes} classes: {escape(', '.join(names))}.</p>",
        headline_section(metrics.get("headline")),
        privacy_section(privacy if privacy is not None else metrics.get("privacy"), "image"),
        _students_section(metrics["students"]),
        _frechet_section(metrics.get("frechet")),
    ]
    if missing:
        parts.append(note(f"The synthetic set has no image of class {', '.join(missing)}.", "warn"))
    parts += [
        "<h2>Samples</h2>",
        '<div class="tables">',
        img(sample_grid(synthetic_x, synthetic_y, n_classes, PER_CLASS, class_names=names, title="synthetic"),
             "synthetic samples per class"),
        img(sample_grid(real_x, real_y, n_classes, PER_CLASS, class_names=names, title="real training"),
             "real samples per class"),
        "</div>",
        _memorisation_section(metrics["nearest"], synthetic_x, real_x),
        "</body></html>",
    ]  # fmt: skip
    return "\n".join(parts)


def write_image_report(path: str | Path, *args: Any, **kwargs: Any) -> Path:
    """Write `render_image_report(*args, **kwargs)` to path (UTF-8), creating its folder."""
    return write_html(path, render_image_report(*args, **kwargs))


__all__ = ["render_image_report", "write_image_report"]
