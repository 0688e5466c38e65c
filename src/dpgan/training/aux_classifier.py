"""A DP-SGD-trained auxiliary classifier for the DTGAN generator's classification loss (Kunar et al. 2021).

The classifier predicts the label column from the other encoded columns of *private* rows, so it
is trained with DP-SGD: each step draws a Poisson batch (every row joins with probability q),
clips each row's whole gradient to L2 norm C, adds N(0, σ²C²I) to the clipped sum and divides by
the expected batch size q·N, never by the realised one (whose size would itself leak). Each step
is therefore one Poisson-subsampled Gaussian event with the same σ; the caller records
`LedgerEntry("DP-SGD on the auxiliary classifier", σ, sampling_rate=q, count=steps)`. Adam on the
noisy gradients and everything done with the returned (frozen) classifier is post-processing.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from dpgan.errors import InputError
from dpgan.models.tabular import leaky_mlp
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.privacy.dpsgd import Grads, clip_per_example, per_example_gradients, per_example_norms
from dpgan.privacy.step import PrivateStep
from dpgan.training.conditions import ConditionPrior
from dpgan.training.config import TrainingConfig
from dpgan.training.context import FitContext
from dpgan.training.schedule import epochs_schedule

RecordLoss = Callable[[Grads, torch.Tensor, torch.Tensor], torch.Tensor]


# the ledger entry of a classifier of the label that guides a generator (series and images)
GUIDE_EVENT = "DP-SGD on the label classifier (G's guide)"


class AuxClassifier(nn.Module):
    """MLP: encoded features (label span removed) -> class logits. No normalisation across rows.

    Batch statistics would mix rows, so one record could change another's gradient and the
    per-example clipping bound would no longer be the sensitivity.
    """

    def __init__(self, input_dim: int, num_classes: int, hidden: tuple[int, ...] = (128,)) -> None:
        super().__init__()
        self.net = leaky_mlp(input_dim, hidden, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def reset_parameters(self, generator: torch.Generator) -> None:
        """nn.Linear's default initialisation, drawn from `generator` so training is reproducible."""
        for layer in self.net:
            if isinstance(layer, nn.Linear):
                nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
                bound = 1.0 / math.sqrt(layer.in_features) if layer.in_features > 0 else 0.0
                nn.init.uniform_(layer.bias, -bound, bound, generator=generator)


def drop_span(encoded: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """The encoded rows without columns [start, stop) (the label's one-hot)."""
    if encoded.dim() != 2:
        raise InputError(f"encoded rows must be a 2-D tensor, got shape {tuple(encoded.shape)}")
    if not 0 <= start < stop <= encoded.shape[1]:
        raise InputError(f"label span [{start}, {stop}) does not fit {encoded.shape[1]} encoded columns")
    return torch.cat([encoded[:, :start], encoded[:, stop:]], dim=1)


def classifier_record_loss(model: AuxClassifier) -> RecordLoss:
    """The per-record loss (params, x_i, y_i) -> cross-entropy, in the form torch.func needs.

    DP-SGD's unit is one record: this is the loss whose gradient is clipped to C per row.
    """

    def record_loss(params: Grads, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = functional_call(model, params, (x.unsqueeze(0),))
        return F.cross_entropy(logits, y.unsqueeze(0))

    return record_loss


def classifier_clipped_sum(model: AuxClassifier):
    """The classifier step's backend: per-record gradients of the cross-entropy by torch.func
    (dpgan.privacy.dpsgd), each clipped to C with one norm over all parameters, summed."""
    record_loss = classifier_record_loss(model)

    def clipped_sum(classifier: nn.Module, units: tuple[torch.Tensor, torch.Tensor], max_norm: float):
        params = {name: p.detach() for name, p in classifier.named_parameters()}
        grads = per_example_gradients(record_loss, params, *units)
        norms = per_example_norms(grads)
        clipped = clip_per_example(grads, max_norm)
        return {k: g.sum(dim=0) for k, g in clipped.items()}, norms

    return clipped_sum


def _validate(
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    sample_rate: float,
    expected_batch_size: float,
    steps: int,
    noise_multiplier: float,
    max_grad_norm: float,
    lr: float,
) -> None:
    if features.dim() != 2 or not features.is_floating_point():
        raise InputError(f"features must be a 2-D float tensor, got {features.dtype} of shape {tuple(features.shape)}")
    if labels.dim() != 1 or labels.dtype != torch.long:
        raise InputError(f"labels must be a 1-D long tensor, got {labels.dtype} of shape {tuple(labels.shape)}")
    if features.shape[0] != labels.shape[0]:
        raise InputError(f"features have {features.shape[0]} rows but labels have {labels.shape[0]}")
    if num_classes < 2:
        raise InputError(f"num_classes must be at least 2, got {num_classes}")
    # zero rows are legal: every batch is empty and each step releases pure noise (see PoissonSampler)
    if labels.numel() and (labels.min() < 0 or labels.max() >= num_classes):
        raise InputError(f"labels must lie in [0, {num_classes}), got range [{labels.min()}, {labels.max()}]")
    if not 0.0 < sample_rate <= 1.0:
        raise InputError(f"sample_rate must be in (0, 1], got {sample_rate}")
    if not (expected_batch_size > 0 and math.isfinite(expected_batch_size)):
        raise InputError(f"expected_batch_size must be a positive number, got {expected_batch_size}")
    if steps < 0 or int(steps) != steps:
        raise InputError(f"steps must be a non-negative integer, got {steps}")
    if not (noise_multiplier >= 0 and math.isfinite(noise_multiplier)):
        raise InputError(f"noise_multiplier must be >= 0 (0: non-private baseline), got {noise_multiplier}")
    if not (max_grad_norm > 0 and math.isfinite(max_grad_norm)):
        raise InputError(f"max_grad_norm must be a positive number, got {max_grad_norm}")
    if not (lr > 0 and math.isfinite(lr)):
        raise InputError(f"lr must be a positive number, got {lr}")


def train_dp_classifier(
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    *,
    sample_rate: float,
    expected_batch_size: float,
    steps: int,
    noise_multiplier: float,
    max_grad_norm: float = 1.0,
    lr: float = 1e-3,
    hidden: tuple[int, ...] = (128,),
    generator: torch.Generator,
    ledger: PrivacyLedger,
    label: str,
    note: str = "",
    recorder=None,
    context: ProcessGroupContext = SINGLE_PROCESS,
) -> AuxClassifier:
    """Run exactly `steps` DP-SGD steps (the accounted count) and return the frozen classifier.

    `expected_batch_size` is q·N (or q·N̂ with a noisy row count); it is the divisor of every
    step. `noise_multiplier` = 0 is the non-private baseline and must not be accounted as DP.
    The result is in eval mode with requires_grad False: the generator's loss may flow through
    its inputs but must never update it. `context` splits each release's clipped sums over a
    lockstep process group (dpgan.privacy.distributed).
    """
    _validate(
        features, labels, num_classes, sample_rate, expected_batch_size, steps, noise_multiplier, max_grad_norm, lr
    )
    features = features.float()
    model = AuxClassifier(features.shape[1], num_classes, tuple(hidden))
    model.reset_parameters(generator)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    step = PrivateStep(
        units=features.shape[0],
        sample_rate=sample_rate,
        noise_multiplier=noise_multiplier,
        max_norm=max_grad_norm,
        expected_batch_size=expected_batch_size,
        steps=int(steps),
        ledger=ledger,
        label=label,
        note=note,
        clipped_sum=classifier_clipped_sum(model),
        generator=generator,
        recorder=recorder,
        context=context,
    )
    for _ in range(int(steps)):
        index = step.sample()
        noisy_mean = step.release(model, (features[index], labels[index]), len(index)).gradient(model)
        for name, p in model.named_parameters():
            p.grad = noisy_mean[name]
        optimizer.step()
    model.zero_grad(set_to_none=True)  # drop the last noisy gradient: nothing may step it again
    model.eval()
    model.requires_grad_(False)
    return model


__all__ = [
    "GUIDE_EVENT",
    "AuxClassifier",
    "classifier_record_loss",
    "drop_span",
    "classifier_clipped_sum",
    "fit_label_guide",
    "train_dp_classifier",
]


def fit_private_classifier(
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    *,
    rows: int,
    epochs: float,
    batch_size: int,
    max_sample_rate: float,
    lr: float,
    hidden: tuple[int, ...],
    max_grad_norm: float,
    share: ShareTarget,
    ledger: PrivacyLedger,
    generator: torch.Generator,
    mechanism: str,
    note: str,
    context: ProcessGroupContext = SINGLE_PROCESS,
) -> AuxClassifier:
    """A classifier trained with DP-SGD at the σ that brings the ledger to `share` (its steps are
    one ledger entry, charged by the private step as they run)."""
    schedule = epochs_schedule(batch_size, max_sample_rate, epochs, rows)
    sigma = share.sigma(schedule.sample_rate, schedule.steps, ledger.entries)
    return train_dp_classifier(
        features,
        labels,
        num_classes,
        sample_rate=schedule.sample_rate,
        expected_batch_size=schedule.expected_batch_size,
        steps=schedule.steps,
        noise_multiplier=sigma,
        max_grad_norm=max_grad_norm,
        lr=lr,
        hidden=hidden,
        generator=generator,
        ledger=ledger,
        label=mechanism,
        note=note,
        context=context,
    )


def fit_aux_classifier(
    encoded: torch.Tensor,
    condition: ConditionPrior,
    config: TrainingConfig,
    *,
    epochs: float,
    rows: int,
    share: ShareTarget,
    ledger: PrivacyLedger,
    generator: torch.Generator,
    context: ProcessGroupContext = SINGLE_PROCESS,
) -> AuxClassifier:
    """DTGAN's auxiliary classifier of the condition (`epochs` over the rows, the loop's batch
    and clipping norm): its loss guides the generator."""
    start, stop = condition.slice
    return fit_private_classifier(
        drop_span(encoded, start, stop),
        condition.codes_of_encoded(encoded),
        stop - start,
        rows=rows,
        epochs=epochs,
        batch_size=config.batch_size,
        max_sample_rate=config.max_sample_rate,
        lr=1e-3,
        hidden=(128,),
        max_grad_norm=config.max_grad_norm,
        share=share,
        ledger=ledger,
        generator=generator,
        mechanism="DP-SGD on the auxiliary classifier",
        note=f"predicts {condition.column!r}; its loss guides the generator",
        context=context,
    )


def fit_label_guide(
    ctx: FitContext,
    values: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    *,
    rows: float,
    epochs: float,
    hidden: tuple[int, ...],
    config: TrainingConfig,
    share: float,
    note: str,
) -> AuxClassifier:
    """A label guide's classifier (series and images): DP-SGD on (values, label), one record per
    unit, at the loop's batch, rate cap and clipping norm, calibrated so that the ledger reaches the
    fit's spent share plus `share` of ε (its steps one ledger entry, GUIDE_EVENT)."""
    return fit_private_classifier(
        values,
        labels,
        num_classes,
        rows=max(int(round(rows)), 1),
        epochs=epochs,
        batch_size=config.batch_size,
        max_sample_rate=config.max_sample_rate,
        lr=1e-3,
        hidden=hidden,
        max_grad_norm=config.max_grad_norm,
        share=ctx.target(share),
        ledger=ctx.ledger,
        generator=ctx.torch_generator(),
        mechanism=GUIDE_EVENT,
        note=note,
    )
