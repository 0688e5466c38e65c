"""The generator's loss terms. The generator never reads private rows: every term here is a
function of the critic, of DP statistics, or of the DP-trained auxiliary classifier."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn import functional as F

from dpgan.models.tabular import TabularCritic
from dpgan.training.aux_classifier import AuxClassifier, drop_span
from dpgan.training.conditions import ConditionPrior


def adversarial_loss(loss: str, critic_out: torch.Tensor) -> torch.Tensor:
    """Per fake row: -D(x̃) for WGAN losses, softplus(-D(x̃)) (non-saturating) for BCE."""
    return F.softplus(-critic_out) if loss == "bce" else -critic_out


def information_loss(fake_features: torch.Tensor, real_mean: torch.Tensor, real_std: torch.Tensor) -> torch.Tensor:
    """‖mean_f(real) − mean_f(fake)‖₂ + ‖sd_f(real) − sd_f(fake)‖₂ over critic features (CTAB-GAN/DTGAN)."""
    fake_mean = fake_features.mean(dim=0)
    fake_std = fake_features.std(dim=0, unbiased=False)
    return torch.linalg.vector_norm(real_mean - fake_mean) + torch.linalg.vector_norm(real_std - fake_std)


def feature_moments_from_noisy_sums(
    noisy_sum: torch.Tensor, scale: float, expected_batch_size: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and sd of the real features from the noisy sum of β·[f, f²] (DP post-processing)."""
    width = noisy_sum.shape[0] // 2
    moments = noisy_sum / (scale * expected_batch_size)
    mean, second = moments[:width], moments[width:]
    return mean, torch.sqrt((second - mean.pow(2)).clamp_min(1e-8))


@dataclass
class GeneratorObjective:
    """Adversarial + information + classification terms, weighted as the recipe says."""

    loss: str
    info_weight: float = 0.0
    classifier_weight: float = 0.0
    classifier: AuxClassifier | None = None
    condition: ConditionPrior | None = None

    def batch_loss(
        self,
        critic: TabularCritic,
        fakes: torch.Tensor,
        codes: torch.Tensor | None,
        real_moments: tuple[torch.Tensor, torch.Tensor] | None,
    ) -> torch.Tensor:
        """The generator's loss on a batch of fakes: mean adversarial and classification terms over
        rows, plus the information loss on the batch's feature moments."""
        total = adversarial_loss(self.loss, critic(fakes)).mean()
        if self.info_weight > 0 and real_moments is not None:
            total = total + self.info_weight * information_loss(critic.features(fakes), *real_moments)
        if self.classifier_weight > 0 and self.classifier is not None and self.condition is not None:
            start, stop = self.condition.slice
            logits = self.classifier(drop_span(fakes, start, stop))
            total = total + self.classifier_weight * F.cross_entropy(logits, codes)
        return total


def spherical_interpolate(x: torch.Tensor, y: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """Slerp from y (α=0) to x (α=1), row by row; linear where the rows are (nearly) parallel.
    Row i depends on x_i and y_i only, so the gradient penalty stays a per-record term."""
    x_norm = x.norm(dim=1, keepdim=True).clamp_min(1e-8)
    y_norm = y.norm(dim=1, keepdim=True).clamp_min(1e-8)
    cos = ((x * y).sum(dim=1, keepdim=True) / (x_norm * y_norm)).clamp(-1.0 + 1e-6, 1.0 - 1e-6)
    omega = torch.arccos(cos)
    sin = torch.sin(omega)
    slerp = (torch.sin(alpha * omega) * x + torch.sin((1.0 - alpha) * omega) * y) / sin
    linear = alpha * x + (1.0 - alpha) * y
    return torch.where(sin > 1e-2, slerp, linear)
