"""The HTML reports as a person reads them: the guarantee worded for the unit of privacy of each
kind (a row, a series or an entity, an image), no dangling cell for what a kind does not have,
noisy counts rounded and never negative, and a headline quality score in [0, 1] at the top, next
to the same score for real held-out data (also in metrics.json)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from dpgan.evaluation.evaluate import evaluate
from dpgan.evaluation.headline import auc_score, distance_score, headline_line, ratio_score
from dpgan.evaluation.images.metrics import evaluate_images
from dpgan.evaluation.images.report import render_image_report
from dpgan.evaluation.report_core import privacy_section, readable_setting
from dpgan.evaluation.sequences.metrics import evaluate_sequences
from dpgan.evaluation.sequences.report import render_sequence_report
from dpgan.evaluation.tables.report import render_report
from dpgan.sequences.schema import SequenceSchema, ValueColumn
from dpgan.synthesizers import ImageSynthesizer, SequenceSynthesizer
from dpgan.tables.fit.preparation import repairs_summary

ROW_WORDS = ("person's row", "one row", "one record", "add/remove one record")
TINY_IMAGES = {"epochs": 1.0, "batch_size": 16, "max_sample_rate": 0.3, "max_steps": 2, "width": 4}


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.fixture(scope="module")
def series_privacy() -> dict:
    schema = SequenceSchema(id="sid", time="t", length=6, values=(ValueColumn("v", -3.0, 3.0),))
    synth = SequenceSynthesizer(epsilon=1.0, seed=0)
    return synth.fit(np.random.default_rng(0).normal(size=(60, 6)), schema).privacy_report()


@pytest.fixture(scope="module")
def image_privacy() -> dict:
    images = np.random.default_rng(0).integers(0, 256, size=(60, 8, 8), dtype=np.uint8)
    synth = ImageSynthesizer(recipe="dcgan", epsilon=2.0, seed=0, conditional=False, label_guide=False, **TINY_IMAGES)
    return synth.fit(images).privacy_report()


def test_the_table_guarantee_is_about_one_row(fitted):
    text = text_of(privacy_section(fitted.privacy_report(), "table"))
    assert "adding or removing one row can change what the model releases" in text
    assert "person's row" not in text and "guarantee covers the schema True" in text


@pytest.mark.parametrize("kind", ["sequence", "image"])
def test_series_and_image_guarantees_name_their_unit_and_no_row(kind, series_privacy, image_privacy):
    privacy = series_privacy if kind == "sequence" else image_privacy
    unit = "one series" if kind == "sequence" else "one image with its label"
    text = text_of(privacy_section(privacy, kind))
    assert f"adding or removing {unit} can change what the model releases" in text
    assert not any(words in text for words in ROW_WORDS), text
    assert "guarantee covers the schema" not in text  # a kind without the row: no dangling "–"
    html = privacy_section(privacy, kind)
    assert "<td>–</td>" not in html and "estimated_dropped_units" not in html  # the tally line says it
    assert "Input read (noisy counts). about" in text  # the readers' tally, as units_summary says it
    bare = text_of(privacy_section(None, kind))
    assert f"adding or removing {unit}" in bare and not any(words in bare for words in ROW_WORDS)


def test_an_entity_unit_is_named_with_its_series():
    privacy = {"unit_of_privacy": "one 'home' entity with all its series (at most 3 of them used, clipped as one unit)"}
    text = text_of(privacy_section(privacy | {"epsilon": 1.0}, "sequence"))
    assert "adding or removing one &#x27;home&#x27; entity with all its series can change" in text


def test_noisy_counts_are_rounded_and_never_negative(fitted):
    repairs = {"unknown category": 240.4, "not a number": -236.09, "infinite value": 3.2}
    line = repairs_summary(repairs, std=10.0)
    assert line.startswith("about 240 rows had a cell with an unknown category")
    assert "-" not in line and "236" not in line and "none beyond the noise (±30 rows)" in line
    shown = readable_setting("preprocessing_repairs", repairs)
    assert "about 0" in shown and "-236" not in shown and "." not in shown.replace("(noisy counts)", "")
    assert readable_setting("estimated_rows", 32561.37) == "about 32,561 (noisy count)"
    assert readable_setting("estimated_images", -2.4) == "about 0 (noisy count)"
    units = {"unit": "image", "units": "images", "kept": 59, "dropped": {"bad": 0}, "noise_std": 2.0}
    assert readable_setting("units", units).startswith("about 59 images kept")
    report = fitted.privacy_report()
    assert "beyond the noise" in report["repairs_summary"] or "rows had a cell" in report["repairs_summary"]
    html = privacy_section(report, "table")
    assert "preprocessing_repairs" not in html  # said once, as a line above, not as a raw dict
    assert not re.search(r"<td>-\d", html)  # no negative count anywhere in the tables


def test_the_table_report_opens_with_a_headline_score(adult_small):
    real, test = adult_small.iloc[:400], adult_small.iloc[400:]
    same = evaluate(real, real, test, "income", models=["decision_tree"])
    top = same["headline"]
    assert 0.0 <= top["score"] <= 1.0 and 0.0 <= top["real"] <= 1.0 and top["method"]
    marginals, associations = (c["synthetic"] for c in top["components"][1:])
    assert marginals == associations == 1.0  # the training rows themselves: identical marginals and associations
    shuffled = pd.DataFrame({c: real[c].sample(frac=1, random_state=i).to_numpy() for i, c in enumerate(real)})
    metrics = evaluate(real, shuffled, test, "income", models=["decision_tree"])
    worse = metrics["headline"]
    assert worse["score"] < top["score"]  # independent columns lose the associations and the utility
    html = render_report(metrics)
    assert html.index("<h2>Headline quality") < html.index("<h2>Privacy guarantee")
    assert f"{worse['score']:.2f}" in html and "how it is computed" in html
    assert headline_line(metrics).startswith(f"headline quality {worse['score']:.2f} (real held-out data")


def test_the_series_report_opens_with_a_headline_score():
    rng = np.random.default_rng(0)
    wave = np.sin(np.linspace(0, 2 * np.pi, 12))[None, :, None]
    real, test = wave + rng.normal(0, 0.2, (40, 12, 1)), wave + rng.normal(0, 0.2, (30, 12, 1))
    good = evaluate_sequences(real, wave + rng.normal(0, 0.2, (30, 12, 1)), test)["headline"]
    noise = evaluate_sequences(real, rng.normal(0, 1.0, (30, 12, 1)), test)
    assert 0.0 <= noise["headline"]["score"] < good["score"] <= 1.0 and 0.0 <= good["real"] <= 1.0
    html = render_sequence_report(noise, real, rng.normal(0, 1.0, (30, 12, 1)), test, ["v"])
    assert html.index("<h2>Headline quality") < html.index("<h2>Privacy guarantee")


def test_the_image_report_opens_with_a_headline_score(digits_unit_split):
    d = digits_unit_split
    x, y, tx, ty = d["x"][:300], d["y"][:300], d["test_x"][:200], d["test_y"][:200]
    options = {"students": ("logreg",), "frechet": False, "max_nearest": 100}
    same = evaluate_images(x, y, x[:200], y[:200], tx, ty, 10, **options)
    noise = np.random.default_rng(0).random(x[:200].shape, dtype=np.float32)
    worse = evaluate_images(x, y, noise, y[:200], tx, ty, 10, **options)
    assert 0.0 <= worse["headline"]["score"] < same["headline"]["score"] <= 1.0
    assert 0.0 <= same["headline"]["real"] <= 1.0
    html = render_image_report(worse, x, y, noise, y[:200])
    assert html.index("<h2>Headline quality") < html.index("<h2>Privacy guarantee")


def test_score_maps_stay_in_the_unit_interval():
    assert auc_score(0.5) == 0.0 and auc_score(1.0) == 1.0 and auc_score(0.2) == 0.0 and auc_score(None) is None
    assert distance_score(0.25) == 0.75 and distance_score(3.0) == 0.0 and distance_score(float("nan")) is None
    assert ratio_score(2.0, 4.0) == 0.5 and ratio_score(2.0, 1.0) == 1.0 and ratio_score(1.0, 0.0) == 1.0
    frame = pd.DataFrame({"a": ["x", "y"] * 30, "b": np.arange(60.0), "y": ["0", "1"] * 30})
    assert evaluate(frame, frame, frame, "y", models=["decision_tree"])["headline"]["score"] == pytest.approx(1.0)


def test_the_table_report_names_its_kind_and_shows_its_measures_in_one_format(adult_small):
    """Like the series' and images' reports, the title names the kind; the utility and fidelity tables
    show every measure with 4 fixed decimals (never 5.539e-05 beside 0.8162, nor -0.0004987)."""
    real, test = adult_small.iloc[:400], adult_small.iloc[400:]
    shuffled = pd.DataFrame({c: real[c].sample(frac=1, random_state=i).to_numpy() for i, c in enumerate(real)})
    metrics = evaluate(real, shuffled, test, "income", models=["decision_tree"])
    metrics["fidelity"]["per_column"]["age"]["wd"] = 5.539e-05  # the kinds of numbers the issue saw
    metrics["utility"]["decision_tree"]["accuracy"]["diff"] = -0.0004987
    html = render_report(metrics)
    assert "<h1>dpgan evaluation report: table</h1>" in html and "<title>dpgan table evaluation</title>" in html
    measures = html[html.index("<h2>Utility") :]
    cells = re.findall(r"<td>(-?[\d.,e+-]+)</td>", measures)
    numbers = [c for c in cells if any(ch in c for ch in ".e")]
    assert numbers and all(re.fullmatch(r"-?\d+\.\d{4}", c) for c in numbers), numbers
    assert "<td>0.0001</td>" in measures and "<td>-0.0005</td>" in measures
