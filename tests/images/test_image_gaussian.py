"""The "gaussian" image recipe: each class's DP Gaussian (dpgan.images.gaussian) as the model."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from dpgan.errors import InputError
from dpgan.images.gaussian import EVENT, basis_size, coefficient_clip, image_basis
from dpgan.images.labels import LABELS_EVENT
from dpgan.synthesizers import ImageSynthesizer, load_model

CLASSES = [str(d) for d in range(10)]


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    data = load_digits()
    return np.round(data.images * 255 / 16).astype(np.uint8), data.target.astype(str)


def _fit(images, labels, epsilon=3.0, **settings) -> ImageSynthesizer:
    return ImageSynthesizer(epsilon=epsilon, seed=0, recipe="gaussian", classes=CLASSES, **settings).fit(images, labels)


def test_the_gaussian_is_the_model_on_all_of_epsilon(digits):
    synth = _fit(*digits)
    assert [e.name for e in synth.ledger.entries] == [LABELS_EVENT, EVENT]
    assert synth.ledger.entries[1].count == 3
    report = synth.privacy_report()
    assert report["epsilon"] == pytest.approx(3.0, rel=2e-3) and report["epsilon"] <= 3.0 * (1 + 1e-9)
    assert synth.training["steps"] == 0 and report["recipe"] == "gaussian"
    images, labels = synth.sample(50, seed=1)
    assert images.shape == (50, 8, 8) and images.dtype == np.uint8 and set(labels) <= set(CLASSES)
    imposed, imposed_labels = synth.sample(5, seed=1, label="3")
    assert list(imposed_labels) == ["3"] * 5


def test_save_and_load_give_the_same_images(digits, tmp_path):
    synth = _fit(*digits)
    first = synth.sample(30, seed=4)
    synth.save(tmp_path / "model")
    loaded = load_model(tmp_path / "model")
    again = loaded.sample(30, seed=4)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])


def test_at_a_large_epsilon_each_class_mean_comes_back(digits):
    images, labels = digits
    synth = _fit(images, labels, epsilon=1e4)
    drawn, drawn_labels = synth.sample(20000, seed=2)
    for name in ("0", "7"):
        real = images[labels == name].astype(float).mean(0)
        fake = drawn[drawn_labels == name].astype(float).mean(0)
        assert np.abs(real - fake).mean() < 6.0  # of 255 (pixels clip into the box, so not exactly)
    # and the images vary within a class, as the real ones do
    assert drawn[drawn_labels == "0"].astype(float).std(0).mean() > 10.0


def test_neighbouring_sets_release_the_same_public_facts(digits):
    images, labels = digits
    changed = images.copy()
    changed[0] = 255  # one image far from every class
    a, b = _fit(images, labels), _fit(changed, labels)
    assert [(e.name, e.noise_multiplier, e.count) for e in a.ledger.entries] == [
        (e.name, e.noise_multiplier, e.count) for e in b.ledger.entries
    ]
    assert a.generator.noise_size == b.generator.noise_size == basis_size((1, 8, 8), 0.4)


def test_basis_and_clip_come_from_the_shape_alone():
    assert basis_size((1, 28, 28), 1.0) == 784 and basis_size((1, 28, 28), 0.36) < 784 // 3
    assert basis_size((3, 8, 8), 0.5) == 3 * basis_size((1, 8, 8), 0.5)
    assert coefficient_clip((1, 28, 28), 0.5) == pytest.approx(14.0)
    for shape, fraction in (((1, 28, 28), 0.4), ((3, 8, 6), 0.5), ((1, 8, 8), 1.0), ((2, 5, 7), 0.1)):
        assert basis_size(shape, fraction) == image_basis(shape, fraction).shape[1]  # counted, not built


@pytest.mark.parametrize("setting", [{"gaussian_basis": 0.0}, {"gaussian_basis": 1.5}, {"gaussian_clip": True}])
def test_bad_settings_are_refused_in_one_line(digits, setting):
    with pytest.raises(InputError, match="gaussian_basis and gaussian_clip"):
        _fit(*digits, **setting)


def test_unlabelled_float_images(digits):
    images, _ = digits
    unit = images[:300].astype(np.float32) / 255.0
    synth = ImageSynthesizer(epsilon=2.0, seed=0, recipe="gaussian", conditional=False).fit(unit)
    out, labels = synth.sample(6, seed=0)
    assert out.dtype == np.float32 and labels is None and 0.0 <= out.min() and out.max() <= 1.0


def test_the_warm_start_fits_g_to_the_released_gaussian_at_its_share(digits):
    """gaussian_warm_start on dcgan: the Gaussian is released at its share (before the guide and the
    critic, the ledger still lands on ε), and G's sliced distance to the teacher falls in the warm start."""
    import torch

    from dpgan.images.gaussian import GaussianWarmStartHook, sliced_distance
    from dpgan.images.released_gaussian import ReleasedImageGaussian
    from dpgan.models.image_units import ImageUnitGenerator

    images, labels = digits
    fast = {"epochs": 1.0, "batch_size": 64, "max_sample_rate": 0.1, "width": 4, "max_steps": 5}
    synth = ImageSynthesizer(recipe="dcgan", epsilon=3.0, seed=0, classes=CLASSES, gaussian_warm_start=True, **fast)
    synth.fit(images[:400], labels[:400])
    names = [e.name for e in synth.ledger.entries]
    assert names[:2] == [LABELS_EVENT, EVENT] and len(names) == 4
    assert synth.privacy_report()["epsilon"] <= 3.0 * (1 + 1e-9)
    with pytest.raises(InputError, match="has no setting 'gaussian_warm_start'"):  # refused before any read
        ImageSynthesizer(epsilon=3.0, recipe="noise-layer-sound", gaussian_warm_start=True)

    torch.manual_seed(0)
    G = ImageUnitGenerator((1, 8, 8), 2, noise_dim=8, width=4)
    means = torch.stack([torch.full((64,), -0.6), torch.full((64,), 0.5)])
    basis = torch.linalg.qr(torch.randn(64, 3, generator=torch.Generator().manual_seed(1)))[0]
    arrays = {"label_shares": torch.ones(2) / 2, "means": means, "factors": 0.3 * torch.eye(3).repeat(2, 1, 1)}
    teacher = ReleasedImageGaussian(shape=(1, 8, 8), n_labels=2, components=1, arrays=arrays | {"basis": basis})
    hook = GaussianWarmStartHook(
        teacher, steps=150, weight=0.0, batch=64, lr=1e-2, generator=torch.Generator().manual_seed(2)
    )
    before = float(hook.loss(G).detach())
    hook.warm_start(G, None)
    after = float(hook.loss(G).detach())
    assert after < 0.2 * before
    same = torch.randn(50, 64, generator=torch.Generator().manual_seed(3))
    directions = torch.nn.functional.normalize(torch.randn(64, 16), dim=0)
    assert float(sliced_distance(same, same[torch.randperm(50)], directions)) < 1e-10  # order-free


def test_a_basis_too_large_for_the_shape_is_refused_before_any_read():
    # 3 × 96 × 96 at the default share keeps over 4,096 coefficients: one line, nothing released
    images = np.zeros((20, 3, 96, 96), dtype=np.uint8)
    synth = ImageSynthesizer(epsilon=1.0, seed=0, recipe="gaussian", conditional=False)
    with pytest.raises(InputError, match="smaller gaussian_basis"):
        synth.fit(images)
    assert synth.ledger.entries == []
    # at 3 × 512 × 512 the basis would be a (786,432 × ~250,000) matrix: refused from its count alone
    with pytest.raises(InputError, match="smaller gaussian_basis"):
        synth.fit(np.zeros((4, 3, 512, 512), dtype=np.uint8))
    small = ImageSynthesizer(epsilon=1.0, seed=0, recipe="gaussian", conditional=False, gaussian_basis=0.1)
    small.fit(images)  # a smaller share fits the same shape
    assert small.sample(2, seed=0)[0].shape == (2, 3, 96, 96)


def test_a_mixture_per_class_lands_on_epsilon_and_round_trips(digits, tmp_path):
    images, labels = digits
    synth = _fit(images, labels, gaussian_components=3)
    names = [e.name for e in synth.ledger.entries]
    assert names == [LABELS_EVENT, EVENT, EVENT]  # the label count, the steering releases, the cells
    assert [e.count for e in synth.ledger.entries[1:]] == [3 + 2 * 2, 3]
    assert synth.privacy_report()["epsilon"] == pytest.approx(3.0, rel=2e-3)
    body = synth.generator  # the released model: arrays, no network
    assert basis_size((1, 8, 8), 0.4) + 1 == body.noise_size
    assert body.means.shape[0] == 30 and torch.allclose(body.cell_weights.sum(dim=1), torch.ones(10))
    first = synth.sample(40, seed=3)
    synth.save(tmp_path / "model")
    again = load_model(tmp_path / "model").sample(40, seed=3)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    changed = images.copy()
    changed[0] = 255  # a neighbouring set: the same entries, σ and shapes
    other = _fit(changed, labels, gaussian_components=3)
    assert [(e.noise_multiplier, e.count) for e in synth.ledger.entries] == [
        (e.noise_multiplier, e.count) for e in other.ledger.entries
    ]


def test_the_cell_of_a_draw_follows_its_label_weights():
    from dpgan.images.released_gaussian import ReleasedImageGaussian

    means = torch.arange(6, dtype=torch.float32)[:, None].repeat(1, 4) / 10.0  # cell c's pixels are c / 10
    weights = torch.tensor([[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    arrays = {"label_shares": torch.ones(2) / 2, "means": means, "factors": torch.zeros(6, 2, 2),
              "basis": torch.zeros(4, 2)}  # fmt: skip
    form = {"image_shape": [1, 2, 2], "n_labels": 2, "components": 3}
    body = ReleasedImageGaussian.from_files(form, arrays | {"cell_weights": weights})
    z = torch.randn(4000, 3, generator=torch.Generator().manual_seed(0))
    first = body.draw(z, torch.zeros(4000, dtype=torch.long))
    assert torch.allclose(first, torch.full_like(first, 0.2))  # label 0: always its third cell
    second = body.draw(z, torch.ones(4000, dtype=torch.long))[:, 0]
    assert set(torch.round(second * 10).int().tolist()) == {3, 4}  # label 1: its first two cells, half each
    assert abs(float((second < 0.35).float().mean()) - 0.5) < 0.03
    with pytest.raises(ValueError, match="cell_weights"):  # a mixture's file without its weights: refused
        ReleasedImageGaussian.from_files(form, arrays)


@pytest.mark.parametrize("value", [0, 33, 2.5, True])
def test_bad_component_counts_are_refused_in_one_line(digits, value):
    with pytest.raises(InputError, match="gaussian_components must be from 1 to 32"):
        _fit(*digits, gaussian_components=value)


def test_too_many_components_for_the_basis_are_refused_from_the_shape():
    from dpgan.images.gaussian import check_basis_size

    check_basis_size("gaussian", (1, 28, 28), 1.0, components=27)  # 27 · 784² fits under 4,096²
    with pytest.raises(InputError, match="fewer gaussian_components"):
        check_basis_size("gaussian", (1, 28, 28), 1.0, components=28)


def test_unset_components_follow_the_public_epsilon_and_are_saved(digits, tmp_path):
    from dpgan.images.settings import MIXTURE_COMPONENTS, MIXTURE_EPSILON, mixture_components

    assert mixture_components(MIXTURE_EPSILON) == MIXTURE_COMPONENTS > 1
    assert mixture_components(MIXTURE_EPSILON * 0.99) == 1 and mixture_components(None) == 1
    images, labels = digits
    high = _fit(images, labels, epsilon=MIXTURE_EPSILON)
    assert high.networks.gaussian_components == MIXTURE_COMPONENTS
    assert high.generator.means.shape[0] == 10 * MIXTURE_COMPONENTS
    assert _fit(images, labels, epsilon=3.0).networks.gaussian_components == 1
    assert _fit(images, labels, epsilon=MIXTURE_EPSILON, gaussian_components=1).generator.components == 1
    dcgan = ImageSynthesizer(epsilon=MIXTURE_EPSILON, recipe="dcgan", classes=CLASSES)
    assert dcgan.networks.gaussian_components == 1  # the rule is the gaussian recipe's: a warm start keeps one
    high.save(tmp_path / "model")
    assert load_model(tmp_path / "model").networks.gaussian_components == MIXTURE_COMPONENTS


@pytest.mark.parametrize("components", [1, 3])
def test_the_copula_charges_the_histogram_then_the_scores_and_round_trips(digits, tmp_path, components):
    """gaussian_copula: each class's pixel histogram (one entry), then the same Gaussian or mixture
    of normal scores; the ledger lands on ε, G maps scores through the released CDFs (the release's
    own map), and a saved model draws the same images."""
    from dpgan.statistics.copula import HISTOGRAM_EVENT, DPGaussianCopula

    images, labels = digits
    synth = _fit(images, labels, gaussian_copula=True, gaussian_components=components)
    names = [e.name for e in synth.ledger.entries]
    assert names[:3] == [LABELS_EVENT, HISTOGRAM_EVENT, EVENT] and len(names) == 2 + (2 if components > 1 else 1)
    assert synth.privacy_report()["epsilon"] == pytest.approx(3.0, rel=2e-3)
    body = synth.generator
    assert body.marginal_cdfs.shape == (10, 33) and torch.all(body.marginal_cdfs[:, -1] == 1.0)
    # the module's map is the release's: a copula holding its CDFs maps the same scores the same way
    copula = DPGaussianCopula(-1.0, 1.0, bins=32)
    copula.cdfs = [cdf[None, :].double().numpy() for cdf in body.marginal_cdfs]
    scores = np.random.default_rng(0).uniform(-1, 1, (40, 64))
    codes = np.arange(40) % 10
    with torch.no_grad():
        from dpgan.models.marginal_map import inverse_cdf

        mapped = inverse_cdf(
            torch.tensor(scores, dtype=torch.float32)[:, None, :], body.marginal_cdfs[torch.tensor(codes)][:, None, :],
            body.edges, body.marginal_scale,
        )[:, 0, :]  # fmt: skip
    np.testing.assert_allclose(mapped.double().numpy(), copula.values(scores, codes), atol=1e-4)
    first = synth.sample(40, seed=3)
    synth.save(tmp_path / "model")
    again = load_model(tmp_path / "model").sample(40, seed=3)
    np.testing.assert_array_equal(first[0], again[0])
    # the background: real digits' corner pixels are 0, and so are nearly all drawn ones
    drawn, _ = synth.sample(400, seed=5)
    assert np.mean(drawn[:, 0, 0] == 0) > 0.9
    changed = images.copy()
    changed[0] = 255  # a neighbouring set: the same entries, σ and buffer shapes
    other = _fit(changed, labels, gaussian_copula=True, gaussian_components=components)
    assert [(e.name, e.noise_multiplier, e.count) for e in synth.ledger.entries] == [
        (e.name, e.noise_multiplier, e.count) for e in other.ledger.entries
    ]
    assert other.generator.marginal_cdfs.shape == body.marginal_cdfs.shape


@pytest.mark.parametrize("setting", [{"gaussian_copula_bins": 1}, {"gaussian_copula_fraction": 0.5}])
def test_bad_copula_settings_are_refused_in_one_line(digits, setting):
    with pytest.raises(InputError, match="gaussian_copula"):
        _fit(*digits, gaussian_copula=True, **setting)


def test_matched_marginals_charge_the_copulas_entries_map_as_the_release_and_round_trip(digits, tmp_path):
    """gaussian_match_marginals: the copula's histogram entry, then the mixture of the pixels
    themselves; G maps its draws through the model's own marginal table and the released CDF (the
    release's numpy map), a saved model draws the same images, and a neighbouring set the same facts."""
    from dpgan.images.settings import MATCH_SOURCE_BINS
    from dpgan.models.marginal_map import cdf_at, quantile_values
    from dpgan.statistics.copula import HISTOGRAM_EVENT
    from dpgan.statistics.matched import DPMatchedMarginals

    images, labels = digits
    synth = _fit(images, labels, gaussian_match_marginals=True, gaussian_components=3)
    names = [e.name for e in synth.ledger.entries]
    assert names[:3] == [LABELS_EVENT, HISTOGRAM_EVENT, EVENT]
    assert synth.privacy_report()["epsilon"] == pytest.approx(3.0, rel=2e-3)
    body = synth.generator
    assert body.source.shape == (10, MATCH_SOURCE_BINS + 1) and body.marginal_cdfs.shape == (10, 35)
    release = DPMatchedMarginals(-1.0, 1.0, bins=32)
    release.cdfs = [cdf[None, :].double().numpy() for cdf in body.marginal_cdfs]
    release.source_cdfs = [cdf[None, :].double().numpy() for cdf in body.source]
    drawn = np.random.default_rng(0).uniform(-1, 1, (40, 64))
    codes = np.arange(40) % 10
    with torch.no_grad():
        index = torch.tensor(codes)
        quantiles = cdf_at(torch.tensor(drawn, dtype=torch.float32), body.source[index], body.source_edges)
        mapped = quantile_values(quantiles[:, None, :], body.marginal_cdfs[index][:, None, :], body.edges)
    np.testing.assert_allclose(mapped[:, 0, :].double().numpy(), release.values(drawn, codes), atol=1e-4)
    first = synth.sample(40, seed=3)
    synth.save(tmp_path / "model")
    again = load_model(tmp_path / "model").sample(40, seed=3)
    np.testing.assert_array_equal(first[0], again[0])
    # black is a cell of its own: far more drawn pixels are exactly black than the plain mixture's
    # (real digits: 0.49 of all pixels, every corner)
    samples, _ = synth.sample(400, seed=5)
    plain, _ = _fit(images, labels, gaussian_components=3).sample(400, seed=5)
    assert np.mean(samples == 0) > np.mean(plain == 0) + 0.1 and np.mean(samples[:, 0, 0] == 0) > 0.6
    changed = images.copy()
    changed[0] = 255
    other = _fit(changed, labels, gaussian_match_marginals=True, gaussian_components=3)
    assert [(e.name, e.noise_multiplier, e.count) for e in synth.ledger.entries] == [
        (e.name, e.noise_multiplier, e.count) for e in other.ledger.entries
    ]
    assert other.generator.source.shape == body.source.shape


def test_the_copula_and_matched_marginals_together_are_refused_in_one_line(digits):
    with pytest.raises(InputError, match="choose one"):
        _fit(*digits, gaussian_copula=True, gaussian_match_marginals=True)


def test_unset_matching_follows_the_public_epsilon_and_an_older_file_loads_without_it(digits, tmp_path):
    """The gaussian recipe matches its draws to a DP pixel histogram from ε = 10 on, unless the
    copula is asked for (a rule of the public ε, resolved before any read and saved); a model file
    written before the option has no key and loads as it was fitted: without matching."""
    import json

    from dpgan.images.settings import MATCH_EPSILON, match_marginals
    from dpgan.serialization import HASH_KEY, content_hash
    from dpgan.statistics.copula import HISTOGRAM_EVENT

    assert match_marginals(MATCH_EPSILON) and not match_marginals(MATCH_EPSILON * 0.99) and not match_marginals(None)
    images, labels = digits
    high = _fit(images, labels, epsilon=MATCH_EPSILON)
    assert high.networks.gaussian_match_marginals is True and HISTOGRAM_EVENT in [e.name for e in high.ledger.entries]
    assert _fit(images, labels, epsilon=3.0).networks.gaussian_match_marginals is False
    copula = ImageSynthesizer(epsilon=MATCH_EPSILON, recipe="gaussian", classes=CLASSES, gaussian_copula=True)
    assert copula.networks.gaussian_match_marginals is False
    assert (
        ImageSynthesizer(epsilon=MATCH_EPSILON, recipe="dcgan", classes=CLASSES).networks.gaussian_match_marginals
        is False
    )
    plain = _fit(images, labels, epsilon=MATCH_EPSILON, gaussian_match_marginals=False)
    plain.save(tmp_path / "old")
    meta = json.loads((tmp_path / "old" / "model.json").read_text())
    del meta["networks"]["gaussian_match_marginals"]
    meta[HASH_KEY] = content_hash(meta, (tmp_path / "old" / "statistics.safetensors").read_bytes())  # as written then
    (tmp_path / "old" / "model.json").write_text(json.dumps(meta))
    loaded = load_model(tmp_path / "old")
    assert loaded.networks.gaussian_match_marginals is False
    np.testing.assert_array_equal(loaded.sample(20, seed=1)[0], plain.sample(20, seed=1)[0])
