"""The DTGAN auxiliary classifier: it learns, and its training is DP-SGD as accounted."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from dpgan.errors import InputError
from dpgan.privacy import dpsgd
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.step import PrivateStep
from dpgan.training.aux_classifier import (
    AuxClassifier,
    classifier_clipped_sum,
    classifier_record_loss,
    drop_span,
    train_dp_classifier,
)

C = 1.0


def _separable(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """label = 1[w·x > 0] on 5 Gaussian features: linearly separable."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    w = torch.tensor([1.0, -2.0, 0.5, 1.5, -1.0])
    return x, (x @ w > 0).long()


def _accuracy(model: AuxClassifier, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


def private_classifier_gradient(
    model: AuxClassifier,
    features: torch.Tensor,
    labels: torch.Tensor,
    *,
    max_grad_norm: float,
    noise_multiplier: float,
    expected_batch_size: float,
    generator: torch.Generator,
) -> dict[str, torch.Tensor]:
    """One release of the classifier's private step on exactly these rows (q = 1)."""
    step = PrivateStep(
        units=features.shape[0],
        sample_rate=1.0,
        noise_multiplier=noise_multiplier,
        max_norm=max_grad_norm,
        expected_batch_size=expected_batch_size,
        steps=1,
        ledger=PrivacyLedger() if noise_multiplier > 0 else None,
        label="test",
        clipped_sum=classifier_clipped_sum(model),
        generator=generator,
    )
    return step.release(model, (features, labels), features.shape[0]).gradient(model)


def _train(x: torch.Tensor, y: torch.Tensor, sigma: float, steps: int = 300, seed: int = 0, **kw) -> AuxClassifier:
    q = kw.pop("sample_rate", 0.05)
    kw.setdefault("ledger", PrivacyLedger() if sigma > 0 else None)
    kw.setdefault("label", "DP-SGD on a test classifier")
    return train_dp_classifier(
        x,
        y,
        2,
        sample_rate=q,
        expected_batch_size=q * x.shape[0],
        steps=steps,
        noise_multiplier=sigma,
        max_grad_norm=C,
        lr=kw.pop("lr", 1e-2),
        generator=torch.Generator().manual_seed(seed),
        **kw,
    )


@pytest.mark.parametrize("sigma", [0.5, 0.0])
def test_learns_a_separable_problem_under_dp_sgd(sigma: float) -> None:
    x, y = _separable(2000, seed=0)
    x_test, y_test = _separable(1000, seed=1)
    model = _train(x, y, sigma)
    assert _accuracy(model, x_test, y_test) > 0.85


def test_untrained_classifier_is_not_accurate() -> None:
    """Guards the accuracy test: zero steps must not already pass it."""
    x, y = _separable(1000, seed=1)
    assert _accuracy(_train(x, y, 0.5, steps=0), x, y) < 0.85


def test_same_generator_gives_the_same_classifier() -> None:
    x, y = _separable(500, seed=0)
    a, b = _train(x, y, 0.5, steps=20, seed=3), _train(x, y, 0.5, steps=20, seed=3)
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.equal(pa, pb)


def test_record_loss_is_the_cross_entropy_of_one_row() -> None:
    torch.manual_seed(0)
    model = AuxClassifier(5, 3)
    x, y = torch.randn(5), torch.tensor(2)
    params = dict(model.named_parameters())
    expected = F.cross_entropy(model(x.unsqueeze(0)), y.unsqueeze(0))
    assert torch.allclose(classifier_record_loss(model)(params, x, y), expected)


def test_clipped_per_example_gradients_have_norm_at_most_c() -> None:
    torch.manual_seed(0)
    model = AuxClassifier(5, 2)
    x, y = 50 * torch.randn(64, 5), torch.randint(0, 2, (64,))
    params = {k: v.detach() for k, v in model.named_parameters()}
    raw = dpsgd.per_example_gradients(classifier_record_loss(model), params, x, y)
    assert dpsgd.per_example_norms(raw).max() > 2 * C  # clipping has work to do
    clipped = dpsgd.clip_per_example(raw, C)
    assert dpsgd.per_example_norms(clipped).max() <= C + 1e-6


def test_trainer_feeds_only_clipped_gradients_into_the_noisy_sum() -> None:
    """The trainer's own step, seen by its recorder: rows' raw gradients exceed C (clipping is
    active, not vacuous), yet each release's clipped sum is at most C per row."""
    records: list[dict] = []
    x, y = _separable(400, seed=0)
    _train(50 * x, y, 0.5, steps=10, sample_rate=0.1, recorder=records.append)
    assert len(records) == 10
    raw = torch.cat([r["norms"] for r in records])
    assert raw.numel() > 100 and raw.max() > 10 * C
    for record in records:
        total = torch.sqrt(sum(v.pow(2).sum() for v in record["clipped"].values()))
        assert total <= record["units"] * C + 1e-5


def test_noisy_sum_of_neighbouring_datasets_differs_by_at_most_c() -> None:
    """Add one (extreme) row: with σ = 0 the sum before division moves by ≤ C in L2."""
    torch.manual_seed(0)
    model = AuxClassifier(5, 2)
    x, y = _separable(100, seed=0)
    extra_x = 1000 * torch.ones(1, 5)
    with torch.no_grad():
        extra_y = model(extra_x).argmin(dim=1)  # a confidently wrong row: a huge raw gradient

    def noisy_sum(features, labels):
        grads = private_classifier_gradient(
            model,
            features,
            labels,
            max_grad_norm=C,
            noise_multiplier=0.0,
            expected_batch_size=1.0,  # no division: the released sum itself
            generator=torch.Generator().manual_seed(0),
        )
        return torch.cat([g.flatten() for g in grads.values()])

    params = {k: v.detach() for k, v in model.named_parameters()}
    raw = dpsgd.per_example_gradients(classifier_record_loss(model), params, extra_x, extra_y)
    assert dpsgd.per_example_norms(raw).item() > 10 * C  # unclipped, the neighbour would move it far
    diff = noisy_sum(torch.cat([x, extra_x]), torch.cat([y, extra_y])) - noisy_sum(x, y)
    assert diff.norm() <= C + 1e-5
    assert diff.norm() > 0.5 * C


def test_full_batch_gradient_is_the_mean_clipped_gradient() -> None:
    """σ = 0, q = 1: the step's gradient equals a per-row loop of clip-then-average."""
    torch.manual_seed(0)
    model = AuxClassifier(5, 2, hidden=(8,))
    x, y = _separable(40, seed=0)
    x = 5 * x
    got = private_classifier_gradient(
        model,
        x,
        y,
        max_grad_norm=C,
        noise_multiplier=0.0,
        expected_batch_size=1.0 * x.shape[0],
        generator=torch.Generator().manual_seed(0),
    )
    names = [n for n, _ in model.named_parameters()]
    total = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
    clipped_any = False
    for i in range(x.shape[0]):
        model.zero_grad()
        F.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        grads = [p.grad.clone() for p in model.parameters()]
        norm = torch.sqrt(sum(g.pow(2).sum() for g in grads))
        clipped_any |= bool(norm > C)
        scale = min(1.0, C / (norm.item() + 1e-12))
        for n, g in zip(names, grads):
            total[n] += g * scale
    assert clipped_any
    for n in names:
        assert torch.allclose(got[n], total[n] / x.shape[0], atol=1e-6)


def test_trainer_divides_by_the_expected_batch_size_not_the_realised_one() -> None:
    records: list[dict] = []
    x, y = _separable(200, seed=0)
    _train(x, y, 0.5, steps=30, sample_rate=0.05, recorder=records.append)
    assert len(records) == 30
    assert {r["units"] for r in records} != {10}  # Poisson batches vary in size ...
    assert all(r["divisor"] == pytest.approx(10.0) for r in records)  # ... the divisor does not
    assert all(r["noise_std"] == pytest.approx(0.5 * C) for r in records)


def test_trainer_charges_one_ledger_step_per_release() -> None:
    ledger = PrivacyLedger()
    x, y = _separable(200, seed=0)
    _train(x, y, 0.5, steps=12, sample_rate=0.05, ledger=ledger, label="DP-SGD on a test classifier")
    (entry,) = ledger.entries
    assert (entry.name, entry.count, entry.noise_multiplier, entry.sampling_rate) == (
        "DP-SGD on a test classifier",
        12,
        0.5,
        0.05,
    )


def test_empty_poisson_batches_are_handled() -> None:
    x, y = _separable(20, seed=0)
    model = _train(x, y, 1.0, steps=20, sample_rate=0.01)  # most batches are empty
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_result_is_frozen_and_in_eval_mode() -> None:
    x, y = _separable(200, seed=0)
    model = _train(x, y, 0.5, steps=2)
    assert not model.training
    assert all(not p.requires_grad for p in model.parameters())
    # a generator's loss can still flow through the classifier's inputs
    inputs = x[:4].clone().requires_grad_(True)
    F.cross_entropy(model(inputs), y[:4]).backward()
    assert inputs.grad is not None and all(p.grad is None for p in model.parameters())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"labels": torch.zeros(9, dtype=torch.long)}, "rows"),
        ({"labels": torch.full((10,), 2, dtype=torch.long)}, "labels must lie"),
        ({"labels": torch.full((10,), -1, dtype=torch.long)}, "labels must lie"),
        ({"labels": torch.zeros(10)}, "long"),
        ({"features": torch.zeros(10)}, "2-D"),
        ({"steps": -1}, "steps"),
        ({"sample_rate": 0.0}, "sample_rate"),
        ({"sample_rate": 1.5}, "sample_rate"),
        ({"expected_batch_size": 0.0}, "expected_batch_size"),
        ({"noise_multiplier": -1.0}, "noise_multiplier"),
        ({"max_grad_norm": 0.0}, "max_grad_norm"),
    ],
)
def test_bad_inputs_raise_input_error(change: dict, message: str) -> None:
    args = {
        "features": torch.zeros(10, 3),
        "labels": torch.zeros(10, dtype=torch.long),
        "num_classes": 2,
        "sample_rate": 0.5,
        "expected_batch_size": 5.0,
        "steps": 1,
        "noise_multiplier": 1.0,
        "generator": torch.Generator().manual_seed(0),
        "ledger": PrivacyLedger(),
        "label": "test",
    }
    args.update(change)
    features, labels, k = args.pop("features"), args.pop("labels"), args.pop("num_classes")
    with pytest.raises(InputError, match=message):
        train_dp_classifier(features, labels, k, **args)


def test_drop_span_removes_exactly_the_label_columns() -> None:
    encoded = torch.arange(24.0).reshape(3, 8)
    out = drop_span(encoded, 2, 5)
    assert torch.equal(out, encoded[:, [0, 1, 5, 6, 7]])
    assert torch.equal(drop_span(encoded, 0, 2), encoded[:, 2:])
    assert torch.equal(drop_span(encoded, 6, 8), encoded[:, :6])
    with pytest.raises(InputError):
        drop_span(encoded, 5, 5)
    with pytest.raises(InputError):
        drop_span(encoded, 6, 9)
