"""The "gaussian" image model: each class's DP Gaussian in a public low-frequency basis, on all of ε.

DP statistics first, the idea that let tables beat MST: before any GAN, release what a few numbers
per class can say. Each image (pixels in [-1, 1], d = C·H·W) adds to its class's count, its pixel
sum (Δ √d: the class mean at full resolution) and the second moments of its centred coefficients in
a public DCT basis of the m lowest frequencies, clipped to norm c (Δ c²): dpgan.statistics.gaussian,
where the privacy argument is written next to the mechanism. The basis depends on the image shape
alone, and c is a public share of √d, so nothing here is chosen from the images. The model is then
the released Gaussian (dpgan.images.released_gaussian, a statistics model: no network, no GAN
steps, nothing more charged).

With `gaussian_warm_start` a GAN recipe's G learns from the same release first (at
`gaussian_warm_start_fraction` of ε): the released Gaussian becomes a teacher, and G is fitted to
its draws, class by class, by a sliced Wasserstein distance before the first private step (and,
with `gaussian_anchor` > 0, held to it in every generator step). The teacher is post-processing of
the release, so the warm start and the anchor cost nothing more; the critic's DP-SGD then spends
the rest of ε on what the Gaussian misses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from dpgan.errors import InputError
from dpgan.images.released_gaussian import ReleasedImageGaussian
from dpgan.images.settings import ImageSettings
from dpgan.model import KindData, ReleasedModel
from dpgan.privacy.calibration import ShareTarget
from dpgan.statistics.bases import low_frequency_basis, low_frequency_size
from dpgan.statistics.blocks import VectorBlocks
from dpgan.statistics.copula import DPGaussianCopula
from dpgan.statistics.gaussian import DPGaussian
from dpgan.statistics.matched import DPMatchedMarginals
from dpgan.statistics.mixture import DPGaussianMixture
from dpgan.training.context import FitContext
from dpgan.training.gan_loop import GeneratorHook
from dpgan.training.progress import FitProgressFn

EVENT = "Gaussian mean and low-frequency covariance of images per class"
Release = DPGaussian | DPGaussianMixture | DPGaussianCopula  # what release_image_gaussian gives back
MAX_COEFFICIENTS = 4096  # m: the covariance is m × m per class; more would take gigabytes
WARM_START_LR = 1e-3  # Adam's step for fitting G to the teacher (public draws: no privacy at stake)


def image_basis(shape: tuple[int, int, int], fraction: float) -> np.ndarray:
    """The public (C·H·W, m) basis: the low-frequency corner of each channel's 2-D DCT."""
    channels, height, width = shape
    return low_frequency_basis((height, width), fraction, channels=channels)


def basis_size(shape: tuple[int, int, int], fraction: float) -> int:
    """m, the basis' size (read from the public shape alone, without building the basis)."""
    channels, height, width = shape
    return low_frequency_size((height, width), fraction, channels=channels)


def noise_size(shape: tuple[int, int, int], fraction: float, components: int) -> int:
    """G's noise for the "gaussian" recipe: m coefficients, and one for the cell with K > 1."""
    return basis_size(shape, fraction) + (1 if components > 1 else 0)


def check_basis_size(architecture: str, shape: tuple[int, int, int], fraction: float, components: int = 1) -> None:
    """Refuse, from the public shape and settings alone, a basis too large to hold per class: at
    most MAX_COEFFICIENTS² covariance entries per class, over its `components` cells."""
    if architecture != "gaussian":
        return
    m = basis_size(shape, fraction)
    if m > MAX_COEFFICIENTS:
        raise InputError(
            f"the gaussian recipe keeps more than {MAX_COEFFICIENTS:,} coefficients at this image shape: "
            "set a smaller gaussian_basis"
        )
    if components * m * m > MAX_COEFFICIENTS**2:
        raise InputError(
            f"the gaussian recipe's {components} components of {m:,} coefficients each are too large to hold: "
            "set fewer gaussian_components or a smaller gaussian_basis"
        )


def coefficient_clip(shape: tuple[int, int, int], fraction: float) -> float:
    """c: `fraction` of √d, the largest norm of an image scaled to [-1, 1]."""
    return fraction * math.sqrt(math.prod(shape))


def release_image_gaussian(
    ctx: FitContext, data: KindData, settings: ImageSettings, shape: tuple[int, int, int], n_labels: int,
    target: ShareTarget,
) -> tuple[Release, np.ndarray]:  # fmt: skip
    """Each class's DP Gaussian (or mixture of `gaussian_components`) of the kept images' pixels
    (in [-1, 1]), calibrated so that the ledger reaches `target`; and the public basis it was
    released in."""
    values: np.ndarray | VectorBlocks
    if isinstance(data.units, VectorBlocks):  # read in blocks (dpgan.images.stream_fit): labels in the blocks
        values, labels = data.units, None
    else:
        pixels = math.prod(shape)
        units = data.units.detach()
        values = units[:, :pixels].cpu().numpy().astype(np.float64)
        labels = units[:, pixels:].argmax(dim=1).cpu().numpy() if n_labels else None
    basis = image_basis(shape, settings.gaussian_basis)
    clip = coefficient_clip(shape, settings.gaussian_clip)
    note = (
        f"per class: count (Δ 1), pixel sum (Δ √d), centred coefficients' second moments"
        f" (m = {basis.shape[1]}, clipped to c = {clip:.3g}: Δ c²); classes in parallel"
    )
    shape_options = {"basis": basis, "clip": clip, "shrink": settings.gaussian_shrink}
    model: DPGaussian | DPGaussianMixture
    if settings.mixture_size > 1:
        model = DPGaussianMixture(
            -1.0,
            1.0,
            components=settings.mixture_size,
            iterations=settings.gaussian_lloyd_steps,
            steering_scale=settings.gaussian_steering_scale,
            **shape_options,  # type: ignore[arg-type]
        )
        note = (
            f"{settings.mixture_size} cells per class by DP Lloyd steps on the centred coefficients"
            f" (count Δ 1, sum Δ c each); {note}, then per cell"
        )
    else:
        model = DPGaussian(-1.0, 1.0, **shape_options)  # type: ignore[arg-type]
    matched = bool(settings.gaussian_match_marginals)
    if settings.gaussian_copula or matched:
        # the pixels' histogram first, then the same model of normal scores (copula) or of the pixels
        # themselves, its draws matched to the histogram (matched marginals)
        copula = (
            DPMatchedMarginals(
                -1.0, 1.0, bins=settings.gaussian_copula_bins, model=model, source_bins=settings.marginal_source_bins
            )
            if matched
            else DPGaussianCopula(-1.0, 1.0, bins=settings.gaussian_copula_bins, scores_model=model)
        )
        what = "the pixels, draws matched to" if matched else "the pixels' normal scores through"
        copula.fit(
            values, labels, n_labels, ctx.rng, ledger=ctx.ledger,
            histogram_target=ctx.target(settings.gaussian_copula_fraction), target=target, event=EVENT,
            note=f"{note}; of {what} each class's DP histogram",
        )  # fmt: skip
        return copula, basis
    model.fit(values, labels, n_labels, ctx.rng, ledger=ctx.ledger, target=target, event=EVENT, note=note)
    return model, basis


@dataclass(frozen=True)
class ImageGaussianModel:
    """The "gaussian" recipe's statistics model (dpgan.model.Model): each class's DP Gaussian on all
    of ε that is left is the model; the label shares are the released tally's (or the public prior)."""

    settings: ImageSettings
    shape: tuple[int, int, int]
    n_labels: int
    shares: np.ndarray | None  # the labels' shares (None: one class)

    def release(self, ctx: FitContext, data: KindData, progress: FitProgressFn | None) -> ReleasedModel:
        whole = ctx.budget.whole_target()
        gaussian, basis = release_image_gaussian(ctx, data, self.settings, self.shape, self.n_labels, whole)
        shares = torch.ones(1) if self.shares is None else torch.tensor(self.shares, dtype=torch.float32)
        model = ReleasedImageGaussian.from_release(
            gaussian, basis, shape=self.shape, n_labels=self.n_labels, shares=shares
        )
        return ReleasedModel(model, None, {"steps": 0})


def sliced_distance(fake: torch.Tensor, real: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """Sliced Wasserstein-2² of two equal-size batches (n, d) along unit `directions` (d, P): each
    projection's sorted values matched, the squared gaps averaged."""
    a = (fake @ directions).sort(dim=0).values
    b = (real @ directions).sort(dim=0).values
    return ((a - b) ** 2).mean()


class GaussianWarmStartHook:
    """G fitted to the released Gaussian's draws (the teacher), class by class: a warm start of
    `steps` Adam steps before the first private step, then (`weight` > 0) the same loss's gradient
    in each generator step. Reads only the release (dpgan.training.gan_loop.GeneratorHook)."""

    def __init__(
        self, teacher: ReleasedImageGaussian, *, steps: int, weight: float, batch: int, lr: float,
        generator: torch.Generator, directions: int = 128,
    ) -> None:  # fmt: skip
        self.teacher, self.steps, self.weight, self.batch, self.lr = teacher, steps, weight, batch, lr
        self.generator, self.directions = generator, directions

    def loss(self, G: torch.nn.Module) -> torch.Tensor:
        device = self.generator.device
        z = torch.randn(self.batch, G.noise_dim, generator=self.generator, device=device)  # type: ignore[arg-type]
        codes = G.draw_codes(self.batch, self.generator)  # type: ignore[operator]
        fake = G.images(z, codes).reshape(self.batch, -1)  # type: ignore[operator]
        groups = self.teacher.factors.shape[0]
        index = codes if codes is not None else torch.zeros(self.batch, dtype=torch.long, device=device)
        with torch.no_grad():
            normals = torch.randn(self.batch, self.teacher.noise_size, generator=self.generator, device=device)
            real = self.teacher.draw(normals, index if codes is not None else None)
        directions = torch.randn(fake.shape[1], self.directions, generator=self.generator, device=device)
        directions = directions / directions.norm(dim=0, keepdim=True)
        total = fake.new_zeros(())
        for label in range(groups):
            rows = index == label
            if int(rows.sum()) > 1:
                total = total + sliced_distance(fake[rows], real[rows], directions) * rows.float().mean()
        return total

    def warm_start(self, G: torch.nn.Module, draw_inputs) -> None:  # noqa: ANN001
        optimizer = torch.optim.Adam(G.parameters(), lr=self.lr, betas=(0.5, 0.9))
        for _ in range(self.steps):
            optimizer.zero_grad(set_to_none=True)
            self.loss(G).backward()
            optimizer.step()

    def add_gradient(self, G: torch.nn.Module, draw_inputs) -> None:  # noqa: ANN001
        if self.weight > 0:
            (self.weight * self.loss(G)).backward()

    def released(self) -> list[torch.Tensor]:
        return [self.teacher.means, self.teacher.factors]


@dataclass(frozen=True)
class ImageGaussianWarmStartPlugin:
    """Release each class's DP Gaussian at its `share` of ε and warm-start (and anchor) a GAN's G on it."""

    settings: ImageSettings
    shape: tuple[int, int, int]
    n_labels: int
    share: float
    batch: int

    def release(self, ctx: FitContext, data: KindData, generator: torch.nn.Module) -> Sequence[GeneratorHook]:
        net = self.settings
        gaussian, basis = release_image_gaussian(ctx, data, net, self.shape, self.n_labels, ctx.target(self.share))
        device = next(generator.parameters()).device
        shares = torch.ones(max(1, self.n_labels))  # the teacher draws the student's labels: its own go unused
        teacher = ReleasedImageGaussian.from_release(
            gaussian, basis, shape=self.shape, n_labels=self.n_labels, shares=shares
        ).to(device)
        hook = GaussianWarmStartHook(
            teacher,
            steps=net.gaussian_warm_start_steps,
            weight=net.gaussian_anchor,
            batch=self.batch,
            lr=WARM_START_LR,
            generator=ctx.torch_generator(),
        )
        return (hook,)


__all__ = [
    "EVENT",
    "MAX_COEFFICIENTS",
    "check_basis_size",
    "GaussianWarmStartHook",
    "ImageGaussianModel",
    "ImageGaussianWarmStartPlugin",
    "basis_size",
    "noise_size",
    "coefficient_clip",
    "image_basis",
    "release_image_gaussian",
    "sliced_distance",
]
