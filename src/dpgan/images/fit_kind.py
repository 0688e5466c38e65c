"""The image kind in the fit pipeline (dpgan.fit): its data releases, networks, plug-ins, record.

The unit of privacy is one image with its label. The data releases, each charged to the ledger:
1. a PNG folder read without a declared shape: the shape released by partition selection over the
   shapes present (dpgan.images.labels.release_shape; SHAPE_SHARE of ε, extra δ); PNGs of other
   shapes dropped and counted;
2. one Gaussian release of the image tally (dpgan.images.labels): kept per label (or one kept cell),
   dropped per reason. It gives the count N̂ that sets the Poisson rate and the step count, the
   label shares the generator draws from (a public prior replaces them when given), the dropped
   counts (``training["units"]``) and, without a public class list, the label set itself (partition
   selection, extra δ in the ledger); images whose label is not released, or not in the class
   list, are dropped.
Then the plug-ins (the DP label guide, the public mode-seeking term) and the recipe's strategy:
DP-SGD on the critic, or the noise-layer GAN (dpgan.training.strategies): the GAN model
(dpgan.model). The "gaussian" recipe's model is a statistics model instead: each class's DP
Gaussian on all of ε left (dpgan.images.gaussian), with no network.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from dpgan.devices import to_device
from dpgan.errors import DPGanWarning, InputError
from dpgan.fit import KindData, Plugin, Strategy, register_kind
from dpgan.images.checks import ImageGroups, ImageSet, to_unit_range
from dpgan.images.details import ImageDetails, check_conv_shape
from dpgan.images.gaussian import ImageGaussianModel, ImageGaussianWarmStartPlugin
from dpgan.images.label_guide import ImageLabelGuideHook
from dpgan.images.labels import SECOND_LABEL_SHARE, ReleasedLabels, kept_codes, release_labels, release_shape
from dpgan.images.reading import check_images
from dpgan.images.settings import LABEL_GUIDE_BATCH, LABEL_SHARE, MODE_SEEKING_PAIRS, SHAPE_SHARE, ImageSettings
from dpgan.images.stream import ImageStream
from dpgan.images.stream_fit import release_stream
from dpgan.images.stream_run import public_stream
from dpgan.model import GANModel, Model, ReleasedModel
from dpgan.models.image_units import ImageUnitCritic, ImageUnitGenerator, mlp_critic
from dpgan.models.noise_layer import NoiseLayerCritic
from dpgan.privacy.unit_rule import ReleasedTally, none_usable_note
from dpgan.recipes.images import ImageRecipe
from dpgan.training.aux_classifier import AuxClassifier, fit_label_guide
from dpgan.training.config import TrainingConfig
from dpgan.training.context import FitContext
from dpgan.training.gan_loop import GeneratorHook
from dpgan.training.mode_seeking import ModeSeekingPlugin
from dpgan.training.strategies import STRATEGIES, NoiseLayerStrategy

UNIT = "one image (with its label)"
STATISTICS = "released-statistics"  # the recipes whose model is DP statistics alone (dpgan.recipes.images)
WARNING_STACK = 5  # the user's call of ImageSynthesizer.fit (a test checks)


def public_input(
    images: np.ndarray | list | tuple | ImageSet | ImageGroups | ImageStream,
    labels: np.ndarray | None,
    *,
    conditional: bool,
    declared_shape: tuple[int, int, int] | None,
    pixel_range: tuple[float, float] | None = None,
) -> ImageSet | ImageGroups | ImageStream:
    """The input as an ImageSet (an array's shape is public) or ImageGroups (a folder, or a list,
    read without a shape), refused on public structure only: labels given or not, the layout, the
    declared shape against an array's, a declared pixel range for 8-bit pixels. A list is read
    element by element (dpgan.images.lists), at the declared shape when there is one. An image
    stream (dpgan.images.stream.open_images) passes as it is, its public structure checked the same."""
    if isinstance(images, ImageStream):
        return public_stream(images, labels, conditional, declared_shape, pixel_range)
    if isinstance(images, (ImageSet, ImageGroups)):
        if labels is not None:
            raise InputError("an image set read by read_images carries its own labels: pass no labels")
        labelled = images.labelled if isinstance(images, ImageGroups) else images.labels is not None
        if conditional and not labelled:
            raise InputError(
                "a conditional model needs labelled images (label subfolders, or an .npz 'labels' array), "
                "or conditional=False"
            )
        read_at = images.pixel_range if isinstance(images, ImageSet) else None
        if pixel_range is not None and read_at is not None and read_at != pixel_range:
            raise InputError("the images were read with another pixel_range than the synthesizer's: give the same")
        data = images
    else:
        if conditional and labels is None:
            raise InputError("a conditional model needs labels (or conditional=False)")
        data = check_images(
            images, labels if conditional else None, pixel_range=pixel_range,
            shape=declared_shape if isinstance(images, (list, tuple)) else None,
        )  # fmt: skip
    if isinstance(data, ImageSet) and declared_shape is not None and data.shape != declared_shape:
        raise InputError("the images' shape (C, H, W) is not the declared image_shape")
    eight_bit = data.dtype == "uint8" if isinstance(data, ImageGroups) else data.images.dtype == np.uint8
    if pixel_range is not None and eight_bit:  # the dtype is public: a setting that would do nothing
        raise InputError("pixel_range is for float images: these are uint8 (or PNGs), 0-255 already")
    return data


def samples_form(data: ImageSet, declared_range: tuple[float, float] | None) -> tuple[str, tuple[float, float] | None]:
    """The samples' public form: the pixels' dtype of what was read ("uint8" or "float": an
    array's, uint8 for PNGs, float for a list; never one image's), and for float their range: the
    declared one, else the one the images were read with, else [0, 1] (None)."""
    if data.images.dtype == np.uint8:
        return "uint8", None
    return "float", declared_range if declared_range is not None else data.pixel_range


def none_usable_advice(input_dtype: str, pixel_range: tuple[float, float] | None, released: ReleasedTally) -> str:
    """What to check when few images were usable: the reasons whose noisy count stands out of the
    noise (post-processing of the release) and, for float pixels, their rule (public: the dtype and
    the declared range)."""
    shown = released.noticeable()
    parts = [f"dropped: {', '.join(f'about {c:,} ({r})' for r, c in shown.items())}"] if shown else []
    if input_dtype == "float" and pixel_range is None:
        parts.append(
            "float pixels must lie in [0, 1]: for floats in 0-255 pass pixel_range=(0, 255) "
            "(--pixel-range 0:255), or give uint8"
        )
    elif input_dtype == "float":
        assert pixel_range is not None
        parts.append(f"float pixels must lie in the declared pixel_range [{pixel_range[0]:g}, {pixel_range[1]:g}]")
    parts.append("check the image shape and, for a conditional model, the labels")
    return "; ".join(parts)


def public_labels(
    classes: Sequence[str] | None, label_prior: Sequence[float] | np.ndarray | None
) -> tuple[tuple[str, ...] | None, np.ndarray | None]:
    """The public class list (at least two distinct) and a prior over it (one non-negative weight
    per class, not all zero), checked."""
    names = None if classes is None else tuple(str(c) for c in classes)
    if names is not None and (len(names) < 2 or len(set(names)) != len(names)):
        raise InputError("classes must list at least two distinct labels")
    prior = None if label_prior is None else np.asarray(label_prior, dtype=np.float64)
    if prior is not None:
        if names is None or prior.shape != (len(names),):
            raise InputError("label_prior needs classes and one non-negative weight per class")
        if not (np.all(np.isfinite(prior)) and np.all(prior >= 0) and prior.sum()):
            raise InputError("label_prior needs one non-negative weight per class, not all zero")
    return names, prior


def image_generator(
    recipe: ImageRecipe, net: ImageSettings, noise_dim: int, shape, n_labels: int
) -> ImageUnitGenerator:  # noqa: ANN001
    """The GAN recipe's G."""
    return ImageUnitGenerator(
        shape,
        n_labels,
        architecture=recipe.architecture,
        noise_dim=noise_dim,
        width=net.conv_generator_width,
        hidden=net.mlp_generator_hidden,
        upsample=net.generator_upsampling == "upsample",
    )


def image_critic(
    recipe: ImageRecipe, net: ImageSettings, shape: tuple[int, int, int], n_labels: int
) -> torch.nn.Module:
    """The DP-critic recipes' critic: an MLP, or the conv critic (GroupNorm, never BatchNorm)."""
    if recipe.architecture == "mlp":
        return mlp_critic(shape, n_labels, net.mlp_critic_hidden)
    return ImageUnitCritic(shape, n_labels, width=net.width, norm=net.critic_norm, projection=net.critic_projection)


def image_units(data: ImageSet, released: ReleasedLabels) -> torch.Tensor:
    """One row per kept image: its pixels in [-1, 1], then its label one-hot (labelled sets)."""
    shape = data.shape
    unit_range = to_unit_range(data.images, data.pixel_range)  # float32 input comes back as the caller's own array:
    scaled = torch.from_numpy(unit_range)  # scale a copy of it, in place only what is already a copy
    scaled = scaled.mul(2.0) if np.may_share_memory(unit_range, data.images) else scaled.mul_(2.0)
    pixels = scaled.sub_(1.0).reshape(len(data), math.prod(shape))
    del unit_range, scaled
    if data.labels is None:
        return pixels
    assert data.label_names is not None
    keep, codes = kept_codes(data.label_names, data.labels, released)
    one_hot = torch.nn.functional.one_hot(torch.from_numpy(codes), len(released.names)).to(pixels.dtype)
    return torch.cat([pixels[torch.from_numpy(keep)], one_hot], dim=1)


@dataclass
class ImageLabelGuidePlugin:
    """A DP-SGD classifier of the label (one record per image), trained before the critic, whose
    cross-entropy on G's images joins G's loss (dpgan.images.label_guide). Keeps its classifier
    for the bench's measure (never saved)."""

    share: float
    n_labels: int
    settings: ImageSettings
    config: TrainingConfig
    classifier: AuxClassifier | None = None

    def release(self, ctx: FitContext, data: KindData, generator: torch.nn.Module) -> Sequence[GeneratorHook]:
        units, net = data.units, self.settings
        pixels = units.shape[1] - self.n_labels
        self.classifier = fit_label_guide(
            ctx,
            units[:, :pixels],
            units[:, pixels:].argmax(dim=1),
            self.n_labels,
            rows=data.rows,
            epochs=net.label_guide_epochs,
            hidden=net.label_guide_hidden,
            config=self.config,
            share=self.share,
            note="Poisson; each image's cross-entropy gradient clipped",
        )
        hook = ImageLabelGuideHook(self.classifier, net.label_guide_weight, LABEL_GUIDE_BATCH, ctx.torch_generator())
        return (hook,)


class ImageKind:
    """Images of one recipe: the fit pipeline's image kind."""

    name = "image"

    def __init__(
        self,
        recipe: ImageRecipe,
        networks: ImageSettings,
        config: TrainingConfig,
        *,
        conditional: bool,
        declared_shape: tuple[int, int, int] | None = None,
        classes: Sequence[str] | None = None,
        label_prior: Sequence[float] | None = None,
        pixel_range: tuple[float, float] | None = None,
    ) -> None:
        self.recipe, self.networks, self.config = recipe, networks, config
        self.conditional, self.declared_shape, self.pixel_range = conditional, declared_shape, pixel_range
        self.classes, self.label_prior = classes, label_prior
        self.certified = recipe.certified
        self.label_guide: ImageLabelGuidePlugin | None = None

    def release_data(self, ctx: FitContext, data: ImageSet | ImageGroups | ImageStream) -> KindData:
        if isinstance(data, ImageStream):  # read in blocks: the statistics model's flat-memory path
            return release_stream(self, ctx, data)
        if isinstance(data, ImageSet):  # an array's shape, or a folder read at a declared shape
            images, shape_source = data, "public" if self.declared_shape is None else "declared"
        elif self.declared_shape is not None:
            images, shape_source = data.select(self.declared_shape), "declared"
        else:
            chosen = release_shape(data.counts(), target=ctx.target(SHAPE_SHARE), ledger=ctx.ledger, rng=ctx.rng)
            check_conv_shape(self.recipe, chosen, self.networks)  # post-processing of the DP release
            images, shape_source = data.select(chosen), "dp"
            ctx.spend(SHAPE_SHARE)
        if not self.conditional:
            images = replace(images, labels=None, label_names=None)
        input_dtype, pixel_range = samples_form(images, self.pixel_range)  # public: before any count is read
        released = self.release_tally(
            ctx, images.label_names, images.labels, len(images.images), images.reasons, images.dropped,
            (input_dtype, pixel_range),
        )  # fmt: skip
        units = to_device(image_units(images, released))  # read from NumPy on the CPU: onto the fit's device
        details = ImageDetails(images.shape, shape_source, released, input_dtype, pixel_range)
        return KindData(units, released.total, details)

    def release_tally(
        self, ctx: FitContext, label_names: list[str] | None, codes: np.ndarray | None, images: int,
        reasons: tuple[str, ...], dropped: dict[str, int], form: tuple[str, tuple[float, float] | None],
        label_counts: np.ndarray | None = None,
    ) -> ReleasedLabels:  # fmt: skip
        """The tally's release (dpgan.images.labels) from the kept images' labels (codes, or counts
        per name when read in blocks) and the drops; `form` the samples' public dtype and range,
        for the advice a near-empty release prints."""

        def advice(tally: ReleasedTally) -> str:
            return none_usable_advice(*form, tally)

        released = release_labels(
            label_names,
            codes,
            images,
            reasons=reasons,
            dropped=dropped,
            classes=self.classes,
            target=ctx.target(LABEL_SHARE),
            ledger=ctx.ledger,
            rng=ctx.rng,
            second_cap=ctx.budget.at(ctx.spent_share + LABEL_SHARE + SECOND_LABEL_SHARE),
            empty_advice=advice,
            label_counts=label_counts,
        )
        ctx.spend(LABEL_SHARE + (SECOND_LABEL_SHARE if released.second_chance else 0.0))
        note = none_usable_note(released.tally, advice(released.tally))
        if note is not None:  # post-processing of the released count: the fit runs, and says so
            warnings.warn(note, DPGanWarning, stacklevel=WARNING_STACK)
        return released

    def model(self, data: KindData) -> Model:
        """The "gaussian" recipe's statistics model, or the GAN model of the parts below."""
        if self.recipe.strategy == STATISTICS:
            details: ImageDetails = data.details
            shares = self.label_prior if self.label_prior is not None else details.released.shares
            return ImageGaussianModel(
                self.networks, details.shape, details.n_labels, shares if details.n_labels else None
            )
        return GANModel(self)

    def generator(self, data: KindData) -> torch.nn.Module:
        details: ImageDetails = data.details
        G = image_generator(self.recipe, self.networks, self.config.noise_dim, details.shape, details.n_labels)
        if details.n_labels:
            prior = self.label_prior if self.label_prior is not None else details.released.shares
            G.set_label_shares(torch.tensor(prior, dtype=torch.float32))
        return G

    def plugins(self, data: KindData) -> Sequence[Plugin]:
        """The DP label guide (the user's switch, else the recipe's; labelled sets) and the public
        mode-seeking term (the user's λ, else the recipe's): for the DP-critic recipes."""
        net, n_labels = self.networks, data.details.n_labels
        if self.recipe.strategy == "noise-layer":
            return ()
        found: list[Plugin] = []
        if net.gaussian_warm_start:
            share = net.gaussian_warm_start_fraction
            found.append(ImageGaussianWarmStartPlugin(net, data.details.shape, n_labels, share, LABEL_GUIDE_BATCH * 4))
        wanted = self.recipe.plugins.get("label_guide", False) if net.label_guide is None else net.label_guide
        if wanted and not n_labels and net.label_guide is not None:
            raise InputError("label_guide needs labels (a conditional model)")
        if wanted and n_labels:
            self.label_guide = ImageLabelGuidePlugin(net.label_guide_fraction, n_labels, net, self.config)
            found.append(self.label_guide)
        weight = self.recipe.plugins.get("mode_seeking", 0.0) if net.mode_seeking is None else net.mode_seeking
        if weight:
            found.append(ModeSeekingPlugin(weight, MODE_SEEKING_PAIRS))
        return found

    def critic(self, data: KindData) -> torch.nn.Module:
        details: ImageDetails = data.details
        net, shape, labels = self.networks, details.shape, details.n_labels
        if self.recipe.strategy == "noise-layer":
            return NoiseLayerCritic.build(shape, labels, width=net.width)
        return image_critic(self.recipe, net, shape, labels)

    def strategy(self, generator: torch.nn.Module) -> Strategy:
        config = replace(self.config, noise_dim=generator.noise_dim)  # type: ignore[arg-type]
        if self.recipe.strategy == "noise-layer":  # its networks' activation bound and claim
            return NoiseLayerStrategy(config, self.certified, self.networks.activation_bound)
        return STRATEGIES[self.recipe.strategy](config)  # type: ignore[call-arg]

    def finish(self, ctx: FitContext, data: KindData, trained: ReleasedModel) -> ReleasedModel:
        return trained  # nothing to choose or post-process

    def record(self, data: KindData, trained: ReleasedModel) -> dict[str, Any]:
        details: ImageDetails = data.details
        released = details.released
        return {
            "recipe": self.recipe.name,
            "certified": self.certified,
            "estimated_images": released.total,
            "label_source": released.source,
            "shape_source": details.shape_source,
            "units": released.tally.to_dict(),
            "unit": UNIT,
            **trained.record,
        }


register_kind(ImageKind.name, ImageKind)

__all__ = [
    "ImageDetails",
    "ImageKind",
    "ImageLabelGuidePlugin",
    "check_conv_shape",
    "image_critic",
    "image_generator",
    "image_units",
]
