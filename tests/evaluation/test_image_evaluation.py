"""The image section of the evaluation suite on scikit-learn's 8×8 digits, where the answers are
known: students trained on real images score high and on shuffled labels score chance; a missing
class still scores; nearest_real finds copies at 0 and equals brute force; the report has every
section and decodes in a real browser."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from dpgan.errors import InputError
from dpgan.evaluation.images.metrics import (
    evaluate_images,
    heldout_floor,
    macro_ovr_auroc,
    memorisation,
    nearest_real,
    student_scores,
)
from dpgan.evaluation.images.report import render_image_report, write_image_report
from headless_browser import decoded_images

K = 10
IMG = re.compile(r'<img class="plot" alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)">')


@pytest.fixture(scope="module")
def digits(digits_unit_split) -> dict[str, np.ndarray]:
    return digits_unit_split


@pytest.fixture(scope="module")
def real_scores(digits) -> dict[str, dict[str, float | None]]:
    return student_scores(digits["x"], digits["y"], digits["test_x"], digits["test_y"], K, seed=0)


def test_students_trained_on_real_digits_score_high(real_scores):
    assert set(real_scores) == {"logreg", "mlp", "cnn"}
    for name in ("logreg", "mlp"):
        assert real_scores[name]["accuracy"] > 0.93 and real_scores[name]["auroc"] > 0.99
    assert real_scores["cnn"]["accuracy"] > 0.85 and real_scores["cnn"]["auroc"] > 0.98


def test_students_trained_on_shuffled_labels_score_chance(digits):
    shuffled = np.random.default_rng(1).permutation(digits["y"])
    scores = student_scores(digits["x"], shuffled, digits["test_x"], digits["test_y"], K, cnn_epochs=3)
    for name, score in scores.items():
        assert score["auroc"] < 0.65 and score["accuracy"] < 0.2, name


def test_macro_auroc_is_sklearns_one_vs_rest_when_every_class_is_present(digits):
    flat = digits["x"].reshape(len(digits["x"]), -1)[:300]
    probabilities = LogisticRegression(max_iter=1000).fit(flat, digits["y"][:300])
    probabilities = probabilities.predict_proba(digits["test_x"].reshape(len(digits["test_x"]), -1))
    ours = macro_ovr_auroc(digits["test_y"], probabilities)
    assert ours == pytest.approx(roc_auc_score(digits["test_y"], probabilities, multi_class="ovr"), abs=1e-12)
    assert macro_ovr_auroc(np.zeros(5, dtype=int), probabilities[:5]) is None  # one class: no AUC


def test_a_class_missing_from_training_still_gives_finite_scores(digits, real_scores):
    keep = digits["y"] != 3
    scores = student_scores(digits["x"][keep], digits["y"][keep], digits["test_x"], digits["test_y"], K, cnn_epochs=4)
    share_of_threes = float((digits["test_y"] == 3).mean())
    for name, score in scores.items():
        assert np.isfinite(score["accuracy"]) and np.isfinite(score["auroc"]), name
        assert score["accuracy"] <= 1.0 - share_of_threes + 1e-12  # no student can name a class it never saw
    assert 0.8 < scores["logreg"]["accuracy"] < real_scores["logreg"]["accuracy"]
    only = digits["y"] == 5  # a single class: the constant predictor
    single = student_scores(digits["x"][only], digits["y"][only], digits["test_x"], digits["test_y"], K)
    for score in single.values():
        assert score["auroc"] == 0.5 and score["accuracy"] == pytest.approx(float((digits["test_y"] == 5).mean()))


def test_the_cnn_is_seeded_and_leaves_the_callers_rng_alone(digits):
    def run(seed: int) -> dict:
        x, y = digits["x"][:300], digits["y"][:300]
        return student_scores(x, y, digits["test_x"], digits["test_y"], K, students=("cnn",), seed=seed, cnn_epochs=2)

    torch.manual_seed(123)
    first = run(0)
    after = torch.rand(3)
    torch.manual_seed(123)
    assert torch.equal(torch.rand(3), after)  # the student drew nothing from the global generator
    assert run(0) == first and run(1) != first
    assert torch.get_num_threads() >= 1


def test_nearest_real_finds_copies_at_zero_and_equals_brute_force(digits):
    train, queries = digits["x"][:700], digits["test_x"][:150].copy()
    flat = train.reshape(len(train), -1).astype(np.float64)
    unique = next(i for i in range(len(train)) if (np.abs(flat - flat[i]).sum(axis=1) == 0).sum() == 1)
    queries[7] = train[unique]
    distances, indices = nearest_real(queries, train, k=3, chunk=64)  # chunks that split both sides
    assert distances.shape == indices.shape == (150, 3)
    assert distances[7, 0] == 0.0 and indices[7, 0] == unique
    brute = np.sqrt(((queries.reshape(150, 1, -1).astype(np.float64) - flat[None]) ** 2).sum(axis=2))
    assert np.allclose(distances, np.sort(brute, axis=1)[:, :3], rtol=0, atol=1e-9)
    assert np.allclose(np.take_along_axis(brute, indices, axis=1), distances, rtol=0, atol=1e-9)
    assert (np.diff(distances, axis=1) >= 0).all()
    floor = heldout_floor(digits["test_x"][:150], train)
    assert floor.shape == (150,) and floor.min() > 0.0  # digits' held-out images are not copies


def test_memorisation_tells_copies_from_fresh_images(digits):
    train, test = digits["x"][:600], digits["test_x"]
    copies = memorisation(train[:300], train, test)
    fresh = memorisation(digits["x"][600:900], train, test)
    assert copies["exact_copies"] == 300 and copies["ratio_to_floor"] == 0.0 and copies["membership_auc"] > 0.65
    assert fresh["exact_copies"] == 0 and 0.8 < fresh["ratio_to_floor"] < 1.2
    assert abs(fresh["membership_auc"] - 0.5) < 0.1
    hist = fresh["histogram"]
    assert sum(hist["synthetic"]) == 300 and sum(hist["heldout"]) == len(test) and len(hist["edges"]) == 31


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda x, y: (x * 255.0, y), "outside [0, 1]"),
        (lambda x, y: ((x * 255).astype(np.uint8), y), "float in [0, 1]"),
        (lambda x, y: (np.where(x > 0.5, np.nan, x), y), "NaN"),
        (lambda x, y: (x[:, 0], y), "(N, C, H, W)"),
        (lambda x, y: (x, y[:-1]), "one label per image"),
        (lambda x, y: (x, y + 7), "outside 0..9"),
        (lambda x, y: (x, y.astype(float)), "integer class codes"),
    ],
)
def test_bad_input_gets_one_line_without_a_value(digits, change, message):
    x, y = change(digits["x"][:50].copy(), digits["y"][:50].copy())
    with pytest.raises(InputError, match=re.escape(message)) as error:
        student_scores(x, y, digits["test_x"], digits["test_y"], K, students=("logreg",))
    assert "\n" not in str(error.value) and "255.0" not in str(error.value) and "16" not in str(error.value)


@pytest.fixture(scope="module")
def report(digits, tmp_path_factory) -> tuple[str, dict]:
    synthetic_x, synthetic_y = digits["x"][:400], digits["y"][:400].copy()
    synthetic_y[synthetic_y == 9] = 8  # the "generator" never makes a nine
    metrics = evaluate_images(
        digits["x"], digits["y"], synthetic_x, synthetic_y, digits["test_x"], digits["test_y"], K,
        students=("logreg", "mlp"),
    )  # fmt: skip
    metrics["privacy"] = {"epsilon": 9.6, "delta": 1e-5, "accountant": "rdp", "warning": "<b>not bold</b>"}
    names = [f"digit {c}" for c in range(9)] + ["<i>nine</i>"]
    path = write_image_report(
        tmp_path_factory.mktemp("image_report") / "report.html",
        metrics, digits["x"], digits["y"], synthetic_x, synthetic_y, class_names=names,
    )  # fmt: skip
    return path.read_text(), metrics


def test_metrics_are_strict_json_with_both_student_sides(report):
    _, metrics = report
    loaded = json.loads(json.dumps(metrics, allow_nan=False))
    assert set(loaded["students"]) == {"synthetic", "real"} and set(loaded["students"]["real"]) == {"logreg", "mlp"}
    assert loaded["class_counts"]["synthetic"][9] == 0 and sum(loaded["class_counts"]["test"]) == 597
    assert loaded["nearest"]["exact_copies"] == 400  # the synthetic set is training images
    frechet = loaded["frechet"]  # 597 test images: halves of 298, synthetic subsampled to match
    assert frechet["images"] == 298 and frechet["features"] == 64 and frechet["feature_net_accuracy"] > 0.8
    assert frechet["synthetic"] > 0 and frechet["heldout"] > 0
    assert loaded["students"]["synthetic"]["logreg"]["accuracy"] < loaded["students"]["real"]["logreg"]["accuracy"]


def test_the_report_has_every_section_and_escapes_text(report):
    html, metrics = report
    images = IMG.findall(html)
    assert len(images) == html.count("<img") == 4  # two sample grids, nearest images, distance histogram
    for data in images:
        assert base64.b64decode(data, validate=True).startswith(b"\x89PNG\r\n\x1a\n")
    for heading in ("Privacy guarantee", "Utility: students", "Realism: Fréchet", "Samples", "Memorisation"):
        assert f"<h2>{heading}" in html
    assert "9.6000" in html and "No model was given" not in html
    assert f"{metrics['students']['real']['mlp']['auroc']:.4f}" in html
    assert f"{metrics['frechet']['synthetic']:.4f}" in html and f"{metrics['frechet']['heldout']:.4f}" in html
    assert "&lt;b&gt;not bold&lt;/b&gt;" in html and "&lt;i&gt;nine&lt;/i&gt;" in html and "<i>" not in html
    assert "no image of class &lt;i&gt;nine" in html  # the missing class is named
    assert "<script" not in html and not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    tiny = [np.zeros((4, 1, 8, 8), np.float32), np.arange(4)] * 2
    assert "Fréchet" not in render_image_report({**metrics, "frechet": None}, *tiny)  # evaluated with frechet=False
    bare = render_image_report({**metrics, "privacy": None}, *tiny)
    assert "No model was given" in bare


def test_the_report_decodes_in_a_headless_browser(report, tmp_path):
    html, _ = report
    assert decoded_images(html, tmp_path) == 4


def test_colour_images_plot_and_bad_settings_are_refused(digits):
    from dpgan.evaluation.images.figures import nearest_figure, sample_grid

    rng = np.random.default_rng(0)
    colour, labels = rng.random((30, 3, 12, 12), dtype=np.float32), np.arange(30) % 3
    for figure in (sample_grid(colour, labels, 3, per_class=4), nearest_figure(colour[:5], colour, n=3)):
        assert base64.b64decode(figure).startswith(b"\x89PNG")
    x, y = digits["x"][:50], digits["y"][:50]
    with pytest.raises(InputError, match="unknown student 'svm'"):
        student_scores(x, y, x, y, K, students=("svm",))
    with pytest.raises(InputError, match="n_classes"):
        student_scores(x, y, x, y, 1)
    with pytest.raises(InputError, match="same image shape"):
        nearest_real(x, colour)
