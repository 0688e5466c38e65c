"""ImageSynthesizer: DP synthetic images (DP-CGAN, a DCGAN-style conv GAN, the noise-layer GAN).

The unit of privacy is one image with its label, and no image decides a public fact
(dpgan.privacy.unit_rule): whether the fit runs, the image shape, the label names and their
order, and what model.json records depend on public inputs (the array's dtype and non-N shape,
the declared `image_shape` and `classes`, the folder's layout) and on DP releases in the ledger.
The flow, each private read charged to one ledger:
1. the images are checked by public rules and a rule per image (dpgan.images.checks, .io): an
   image with a pixel outside [0, 1], an unusable label or an unreadable PNG is dropped and
   counted, never a reason to refuse the set; uint8 scaled by /255, then all to [-1, 1];
2. a PNG folder read without a declared shape: the shape released by partition selection over the
   shapes present (dpgan.images.labels.release_shape; SHAPE_SHARE of ε, extra δ); PNGs of other
   shapes dropped and counted;
3. one Gaussian release of the image tally (dpgan.images.labels): kept per label (or one kept cell),
   dropped per reason. It gives the count N̂ that sets the Poisson rate and the step count, the
   label shares the generator draws from (a public prior replaces them when given), the dropped
   counts (``training["units"]``) and, without a public class list, the label set itself (partition
   selection, extra δ in the ledger); images whose label is not released, or not in the class
   list, are dropped;
4. the GAN, by recipe (dpgan.recipes.images): WGAN-GP or BCE with DP-SGD on the critic through the
   engine (dpgan.training.dp_critic: Poisson sampling of images, the real term and the gradient
   penalty clipped together per image, one ledger event per critic step), or the noise-layer GAN
   (dpgan.training.noise_layer), whose published form claims no ε.
The generator (its average) is released; sampling from it is post-processing.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from dpgan.api import Synthesizer
from dpgan.devices import on_device, released_on_cpu, seeded_generator, to_device
from dpgan.errors import BudgetError, InputError, ModelFileError
from dpgan.images.checks import INPUT_RULE, ImageGroups, ImageSet, check_images, check_shape, to_unit_range
from dpgan.images.label_guide import ImageLabelGuideHook
from dpgan.images.labels import SECOND_LABEL_SHARE, ReleasedLabels, kept_codes, release_labels, release_shape
from dpgan.models.conv import PROJECTION_GRIDS, halvings
from dpgan.models.image_units import ImageUnitCritic, ImageUnitGenerator, mlp_critic
from dpgan.models.noise_layer import NoiseLayerCritic
from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import BudgetShares
from dpgan.privacy.feature_release import calibrate_feature_release, release_entry
from dpgan.privacy.unit_rule import ReleasedTally
from dpgan.recipes.images import NOT_CERTIFIED, ImageRecipe, get_image_recipe
from dpgan.serialization import check_model_destination, read_model_dir, write_model_dir
from dpgan.synthesizers.critic_fit import critic_config, fit_dp_critic
from dpgan.threads import fit_threads
from dpgan.training.aux_classifier import GUIDE_EVENT, fit_private_classifier
from dpgan.training.config import TrainingConfig
from dpgan.training.mode_seeking import ModeSeekingHook
from dpgan.training.noise_layer import train_noise_layer_gan
from dpgan.training.progress import FitProgressFn, StepReporter
from dpgan.training.schedule import gan_schedule_for

KIND = "image"
LABEL_SHARE = 0.02  # of ε, for the image tally (kept per label, dropped per reason)
SHAPE_SHARE = 0.01  # of ε, for the image shape of a PNG folder read without a declared shape
MAX_SAMPLE = 1_000_000
MODE_SEEKING_PAIRS = 64  # noise pairs per generator step for the mode-seeking term
LABEL_GUIDE_BATCH = 64  # generated images per generator step for the label guide
# the tabular loop's defaults with a faster average; 200 epochs (4,000 steps at the 0.05 rate cap)
# and one critic step per G step were chosen on the validation split of the digits at ε = 3 and 10,
# 3 seeds (bench/RESULTS.md §17). On larger sets 200 epochs would be tens of thousands of steps, and
# longer scored lower: a budget of about a million per-image gradients caps them, spent as batches
# of 1,024 (1,000 steps), which scored above 256 × 4,000 (Fashion-MNIST's validation split, ε = 10,
# 3 seeds: bench/RESULTS.md §17d–f). On the digits and MNIST-5k neither binds: their batch is the
# rate cap (at most 200 images) and their 4,000 steps use at most 0.8M gradients.
IMAGE_DEFAULTS: dict[str, Any] = {
    "batch_size": 1024,
    "epochs": 200.0,
    "max_examples": 1_024_000,
    "n_critic": 1,
    "ema_decay": 0.99,
    "noise_dim": 64,
}


def _whole_sizes(sizes: tuple[int, ...]) -> bool:
    """Every size a whole number (not a bool) from 1 to 4096."""
    return all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 4096 for s in sizes)


@dataclass(frozen=True)
class ImageSettings:
    """Network shapes (the loop's settings stay in TrainingConfig)."""

    # conv channels of the first stage (doubled per stage): 16 rather than DCGAN's wider nets, since
    # DP noise spread over fewer parameters keeps G from collapsing to one image per label on 28×28
    # (chosen on the validation splits of digits, 3 seeds, and MNIST-5k, seed 0: bench/RESULTS.md §17)
    width: int = 16
    # the conv generator's first-stage channels (None: `width`); G is post-processing, so its size
    # costs no ε, while the critic's size sets how far DP noise spreads
    generator_width: int | None = None
    # the conv generator's upsampling: "transpose" (DCGAN's strided transposed convolutions) or
    # "upsample" (nearest-neighbour upsampling + 3×3 convolutions, a last 3×3 convolution at full size)
    generator_upsampling: str = "transpose"
    critic_norm: str = "group"  # "group" (GroupNorm, per image) or "none"; never BatchNorm
    # the conv critic's label projection: "full" (against every last-stage activation), "grid" (their
    # means over 3×3 regions) or "pooled" (their spatial means): fewer weights for DP noise to spread
    # over, less say of the label (dpgan.models.conv.ConvCritic)
    critic_projection: str = "full"
    mlp_generator_hidden: tuple[int, ...] = (256, 512)
    mlp_critic_hidden: tuple[int, ...] = (512, 256)
    # noise-layer recipes: the activation bound R and the noise std σ·R in the noise layer
    activation_bound: float = 1.0
    # λ of the generator's mode-seeking term (dpgan.training.mode_seeking; free of privacy cost);
    # None: the recipe's (0.3 for dcgan, chosen on the validation splits: bench/RESULTS.md §17b)
    mode_seeking: float | None = None
    # a DP-SGD classifier of the label (trained first, at label_guide_fraction of ε) whose
    # cross-entropy on generated images joins G's loss (dpgan.images.label_guide); dp-critic recipes,
    # labelled sets; None: the recipe's (on for dcgan, chosen on validation splits: RESULTS §17c)
    label_guide: bool | None = None
    label_guide_fraction: float = 0.1
    label_guide_weight: float = 1.0
    label_guide_epochs: float = 10.0
    label_guide_hidden: tuple[int, ...] = ()

    @property
    def conv_generator_width(self) -> int:
        return self.width if self.generator_width is None else self.generator_width

    def check(self) -> None:
        sizes = (self.width, self.conv_generator_width, *self.mlp_generator_hidden, *self.mlp_critic_hidden)
        if not _whole_sizes(sizes):
            raise InputError("network sizes must be whole numbers from 1 to 4096")
        if self.generator_upsampling not in ("transpose", "upsample"):
            raise InputError("generator_upsampling must be 'transpose' or 'upsample'")
        if not (0.0 < self.label_guide_fraction < 0.5 and self.label_guide_epochs > 0 and self.label_guide_weight >= 0):
            raise InputError("label_guide_fraction must be in (0, 0.5), label_guide_epochs > 0, label_guide_weight ≥ 0")
        if not _whole_sizes(self.label_guide_hidden):
            raise InputError("label_guide_hidden must list whole numbers from 1 to 4096")
        if self.critic_projection not in PROJECTION_GRIDS:
            raise InputError(f"critic_projection must be one of {', '.join(map(repr, PROJECTION_GRIDS))}")
        if self.critic_norm not in ("group", "none"):
            raise InputError("critic_norm must be 'group' or 'none' (BatchNorm would couple the images of a batch)")
        if not self.activation_bound > 0:
            raise InputError("activation_bound must be positive")
        if self.mode_seeking is not None and not (
            isinstance(self.mode_seeking, (int, float)) and 0 <= self.mode_seeking <= 100
        ):
            raise InputError("mode_seeking must be a number from 0 to 100")


class ImageSynthesizer(Synthesizer):
    """Fit on N×H×W or N×C×H×W images (uint8, or float in [0, 1]) with optional labels; sample new ones."""

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 1e-5,
        accountant: str = "pld",
        seed: int | None = None,
        noise_multiplier: float | None = None,
        recipe: str = "dcgan",
        conditional: bool = True,
        classes: list[str] | tuple[str, ...] | None = None,
        label_prior: list[float] | np.ndarray | None = None,
        image_shape: tuple[int, int, int] | list[int] | None = None,
        device: str | torch.device = "cpu",
        threads: int | None = None,
        **settings: Any,
    ) -> None:
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            accountant=accountant,
            seed=seed,
            noise_multiplier=noise_multiplier,
            device=device,
            threads=threads,
        )
        self.recipe: ImageRecipe = get_image_recipe(recipe)
        network_keys = {k: settings.pop(k) for k in list(settings) if k in ImageSettings.__dataclass_fields__}
        self.networks = ImageSettings(**network_keys)
        self.networks.check()
        if self.networks.label_guide and self.recipe.strategy != "dp-critic":
            raise InputError("label_guide is for the dp-critic recipes (dcgan, dp-cgan)")
        self.config = critic_config(IMAGE_DEFAULTS | self.recipe.overrides, settings)
        self.conditional = bool(conditional)
        self.classes = None if classes is None else tuple(str(c) for c in classes)
        if self.classes is not None and (len(self.classes) < 2 or len(set(self.classes)) != len(self.classes)):
            raise InputError("classes must list at least two distinct labels")
        self.label_prior = None if label_prior is None else np.asarray(label_prior, dtype=np.float64)
        if self.label_prior is not None:
            if self.classes is None or self.label_prior.shape != (len(self.classes),):
                raise InputError("label_prior needs classes and one non-negative weight per class")
            if not (np.all(np.isfinite(self.label_prior)) and np.all(self.label_prior >= 0) and self.label_prior.sum()):
                raise InputError("label_prior needs one non-negative weight per class, not all zero")
        # the declared (C, H, W): public, so a PNG folder's other shapes are dropped and nothing is bought
        self.declared_shape = None if image_shape is None else check_shape(image_shape)
        self.image_shape: tuple[int, int, int] | None = None  # the fitted shape
        self.released_units: ReleasedTally | None = None  # the fit's DP tally (not saved: its to_dict is)
        self.label_names: tuple[str, ...] = ()
        self.input_dtype = "uint8"
        # the rank of the array fitted on: 3 for N×H×W (then sampled as n×H×W), else 4 (n×C×H×W;
        # what read_images gives, and what model files written before the rank was saved sample)
        self.input_rank = 4

    @property
    def certified(self) -> bool:
        return self.recipe.certified

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        images: np.ndarray | ImageSet | ImageGroups,
        labels: np.ndarray | None = None,
        *,
        progress: FitProgressFn | None = None,
    ) -> ImageSynthesizer:
        """Train on `images` (an N×H×W or N×C×H×W array with, for a conditional model, its `labels`;
        or what dpgan.images.read_images gives, labels included: read a folder with `labelled=`
        declared, as the CLI does, so that its layout is public); spends at most (ε, δ), all of it
        recorded in `self.ledger` (nothing is claimed for `noise-layer`). Images that a rule of
        their own drops are counted in the DP tally (``training["units"]``), never refused.
        Trains on `self.device`; the fitted generator is on the CPU (dpgan.devices). `progress` is
        called with (step, total, ε spent so far; NaN for the uncertified noise layer)."""
        with on_device(self.device), fit_threads(self.threads):
            self._fit(images, labels, progress)
        released_on_cpu(self.generator, getattr(self, "_critic_in_memory", None))
        return self

    def _public_input(
        self, images: np.ndarray | ImageSet | ImageGroups, labels: np.ndarray | None
    ) -> ImageSet | ImageGroups:
        """The input as an ImageSet (an array's shape is public) or ImageGroups (a folder read
        without a shape), refused on public structure only: labels given or not, the layout, the
        declared shape against an array's."""
        if isinstance(images, (ImageSet, ImageGroups)):
            if labels is not None:
                raise InputError("an image set read by read_images carries its own labels: pass no labels")
            labelled = images.labelled if isinstance(images, ImageGroups) else images.labels is not None
            if self.conditional and not labelled:
                raise InputError(
                    "a conditional model needs labelled images (label subfolders, or an .npz 'labels' array), "
                    "or conditional=False"
                )
            data = images
        else:
            if self.conditional and labels is None:
                raise InputError("a conditional model needs labels (or conditional=False)")
            data = check_images(images, labels if self.conditional else None)
        if isinstance(data, ImageSet):
            if self.declared_shape is not None and data.shape != self.declared_shape:
                raise InputError("the images' shape (C, H, W) is not the declared image_shape")
        return data

    def _check_shape(self, shape: tuple[int, int, int]) -> None:
        if self.recipe.architecture == "conv" and min(halvings(shape[1]), halvings(shape[2])) == 0:
            raise InputError("conv recipes need even image sides of at least 8 pixels; use recipe='dp-cgan'")

    def _fit(
        self,
        images: np.ndarray | ImageSet | ImageGroups,
        labels: np.ndarray | None,
        progress: FitProgressFn | None = None,
    ) -> None:
        # refusals on public inputs come first, before any release; after a release only its output decides
        given = self._public_input(images, labels)
        # the caller's array rank is public (its form, not its content): samples come back in it
        input_rank = 4 if isinstance(images, (ImageSet, ImageGroups)) or np.ndim(images) != 3 else 3
        if isinstance(given, ImageSet):
            self._check_shape(given.shape)
        elif self.declared_shape is not None:
            self._check_shape(self.declared_shape)
        rng = np.random.default_rng(self.seed if self.seed is not None else secrets.randbits(64))
        if self.seed is not None:
            torch.manual_seed(self.seed)
        ledger = PrivacyLedger(budget=Budget(self.epsilon, self.delta, self.accountant))
        shares = BudgetShares(self.epsilon, self.delta, self.accountant)
        before = 0.0  # the share of ε spent before the tally
        if isinstance(given, ImageSet):  # an array's shape, or a folder read at a declared shape
            data, shape_source = given, "public" if self.declared_shape is None else "declared"
        elif self.declared_shape is not None:
            data, shape_source = given.select(self.declared_shape), "declared"
        else:
            chosen = release_shape(given.counts(), target=shares.at(SHAPE_SHARE), ledger=ledger, rng=rng)
            self._check_shape(chosen)  # post-processing of the DP release
            data, shape_source, before = given.select(chosen), "dp", SHAPE_SHARE
        if not self.conditional:
            data = ImageSet(data.images, reasons=data.reasons, dropped=data.dropped)
        shape = data.shape
        released = release_labels(
            data.label_names,
            data.labels,
            len(data.images),
            reasons=data.reasons,
            dropped=data.dropped,
            classes=self.classes,
            target=shares.at(before + LABEL_SHARE),
            ledger=ledger,
            rng=rng,
            second_cap=shares.at(before + LABEL_SHARE + SECOND_LABEL_SHARE),
        )
        before += LABEL_SHARE + (SECOND_LABEL_SHARE if released.second_chance else 0.0)  # spent up to here
        unit_range = to_unit_range(data.images)  # float32 input comes back as the caller's own array:
        scaled = torch.from_numpy(unit_range)  # scale a copy of it, in place only what is already a copy
        scaled = scaled.mul(2.0) if np.may_share_memory(unit_range, data.images) else scaled.mul_(2.0)
        pixels = scaled.sub_(1.0).reshape(len(data), math.prod(shape))
        del unit_range, scaled
        units, n_labels = pixels, len(released.names)
        if data.labels is not None:
            assert data.label_names is not None
            keep, codes = kept_codes(data.label_names, data.labels, released)
            one_hot = torch.nn.functional.one_hot(torch.from_numpy(codes), n_labels).to(pixels.dtype)
            units = torch.cat([pixels[torch.from_numpy(keep)], one_hot], dim=1)
        input_dtype = "uint8" if data.images.dtype == np.uint8 else "float"
        units = to_device(units)  # read from NumPy on the CPU: onto the fit's device
        del pixels, data
        G = self._generator(shape, n_labels)
        if n_labels:
            prior = self.label_prior if self.label_prior is not None else released.shares
            G.set_label_shares(torch.tensor(prior, dtype=torch.float32))
        config = replace(self.config, noise_dim=G.noise_dim)
        if self.recipe.strategy == "noise-layer":
            result = self._fit_noise_layer(units, shape, n_labels, G, config, released, ledger, rng, progress)
        else:
            result = self._fit_dp_critic(units, shape, n_labels, G, config, released, ledger, rng, before, progress)
        if self.certified:
            spent = ledger.epsilon(self.delta, self.accountant)
            if spent > self.epsilon * (1 + 1e-9):
                raise BudgetError(f"internal error: the ledger spent ε={spent:.4f} > target {self.epsilon}")
        self.image_shape, self.label_names, self.ledger = shape, released.names, ledger
        self.released_units = released.tally  # for the CLI's summary line; training["units"] is what is saved
        self.input_dtype, self.input_rank = input_dtype, input_rank
        self.generator = result["generator"]
        self.training = {
            "recipe": self.recipe.name,
            "certified": self.certified,
            "estimated_images": released.total,
            "label_source": released.source,
            "shape_source": shape_source,
            "units": released.tally.to_dict(),
            **{k: v for k, v in result.items() if k != "generator"},
            "seeded": self.seed is not None,
        }

    def _generator(self, shape: tuple[int, int, int], n_labels: int) -> ImageUnitGenerator:
        net = self.networks
        return ImageUnitGenerator(
            shape,
            n_labels,
            architecture=self.recipe.architecture,
            noise_dim=self.config.noise_dim,
            width=net.conv_generator_width,
            hidden=net.mlp_generator_hidden,
            upsample=net.generator_upsampling == "upsample",
        )

    def _critic(self, shape: tuple[int, int, int], n_labels: int) -> torch.nn.Module:
        net = self.networks
        if self.recipe.architecture == "mlp":
            return mlp_critic(shape, n_labels, net.mlp_critic_hidden)
        return ImageUnitCritic(shape, n_labels, width=net.width, norm=net.critic_norm, projection=net.critic_projection)

    def _fit_dp_critic(
        self,
        units: torch.Tensor,
        shape: tuple[int, int, int],
        n_labels: int,
        G: ImageUnitGenerator,
        config: TrainingConfig,
        released: ReleasedLabels,
        ledger: PrivacyLedger,
        rng: np.random.Generator,
        before: float = 0.0,
        progress: FitProgressFn | None = None,
    ) -> dict[str, Any]:
        guide = self._label_guide(units, n_labels, config, released, ledger, rng, before)
        self._guide_in_memory = guide[0].classifier if guide else None  # the bench's measure only; never saved
        fitted = fit_dp_critic(
            self,
            units,
            config,
            rows=released.total,
            ledger=ledger,
            rng=rng,
            critic=self._critic(shape, n_labels),
            generator_net=G,
            hooks=(*self._hooks(rng), *guide),
            progress=progress,
        )
        result, schedule, budget = fitted.result, fitted.schedule, fitted.budget
        self._critic_in_memory = result.critic  # white-box attacks only; never saved
        return {
            "generator": result.generator,
            "unit": "one image (with its label)",
            "noise_multiplier": budget.noise_multiplier,
            "sample_rate": schedule.sample_rate,
            "expected_batch_size": schedule.expected_batch_size,
            "steps": result.steps,
        }

    def _label_guide(
        self,
        units: torch.Tensor,
        n_labels: int,
        config: TrainingConfig,
        released: ReleasedLabels,
        ledger: PrivacyLedger,
        rng: np.random.Generator,
        before: float = 0.0,
    ) -> tuple[ImageLabelGuideHook, ...]:
        """The label guide's classifier, trained with DP-SGD on the images (one record each) before
        the critic, so the critic's σ is calibrated on what it leaves (dpgan.images.label_guide);
        `before` is the share of ε spent before it (the shape and label releases)."""
        net = self.networks
        wanted = self.recipe.label_guide if net.label_guide is None else net.label_guide
        if not wanted or (not n_labels and net.label_guide is None):
            return ()
        if not n_labels:
            raise InputError("label_guide needs labels (a conditional model)")
        pixels = units.shape[1] - n_labels
        classifier = fit_private_classifier(
            units[:, :pixels],
            units[:, pixels:].argmax(dim=1),
            n_labels,
            rows=max(int(round(released.total)), 1),
            epochs=net.label_guide_epochs,
            batch_size=config.batch_size,
            max_sample_rate=config.max_sample_rate,
            lr=1e-3,
            hidden=net.label_guide_hidden,
            max_grad_norm=config.max_grad_norm,
            share=BudgetShares(self.epsilon, self.delta, self.accountant).at(before + net.label_guide_fraction),
            ledger=ledger,
            generator=seeded_generator(int(rng.integers(0, 2**63 - 1))),
            mechanism=GUIDE_EVENT,
            note="Poisson; each image's cross-entropy gradient clipped",
        )
        hook_generator = seeded_generator(int(rng.integers(0, 2**63 - 1)))
        return (ImageLabelGuideHook(classifier, net.label_guide_weight, LABEL_GUIDE_BATCH, hook_generator),)

    def _hooks(self, rng: np.random.Generator) -> tuple[ModeSeekingHook, ...]:
        """The generator's public-only plug-ins: the mode-seeking term (the user's λ, else the recipe's)."""
        weight = self.recipe.mode_seeking if self.networks.mode_seeking is None else self.networks.mode_seeking
        if not weight:
            return ()
        generator = seeded_generator(int(rng.integers(0, 2**63 - 1)))
        return (ModeSeekingHook(weight, MODE_SEEKING_PAIRS, generator),)

    def _fit_noise_layer(
        self,
        units: torch.Tensor,
        shape: tuple[int, int, int],
        n_labels: int,
        G: ImageUnitGenerator,
        config: TrainingConfig,
        released: ReleasedLabels,
        ledger: PrivacyLedger,
        rng: np.random.Generator,
        progress: FitProgressFn | None = None,
    ) -> dict[str, Any]:
        """The noise-layer GAN (dpgan.training.noise_layer). Both forms use the noise σ that the
        sound form's release would need for the rest of ε (same noise, so the two compare); only
        the sound form charges the ledger. The batch capacity is public: the expected batch qN̂
        (N̂ released) plus three of its standard deviations."""
        schedule = gan_schedule_for(config, released.total, "critic")
        budget = calibrate_feature_release(
            sample_rate=schedule.sample_rate,
            passes=schedule.steps,
            epsilon=self.epsilon,
            delta=self.delta,
            accountant=self.accountant,
            prior=ledger.committed(),
            noise_multiplier=self.noise_multiplier,
        )
        capacity = int(math.ceil(schedule.expected_batch_size + 3.0 * math.sqrt(schedule.expected_batch_size)))
        critic = NoiseLayerCritic.build(shape, n_labels, width=self.networks.width)
        torch_gen = seeded_generator(int(rng.integers(0, 2**63 - 1)))
        if self.certified:  # ε so far from the passes' own ledger entry, as for the DP critic
            entry = release_entry(budget.noise_multiplier, schedule.sample_rate, capacity)
            reporter = StepReporter(progress, budget.steps, entry, ledger, self.delta, self.accountant)
        else:  # the published form claims no ε: the bar says so

            def reporter(step: int) -> None:
                if progress is not None:
                    progress(step, budget.steps, math.nan)

        result = train_noise_layer_gan(
            units,
            config,
            G=G,
            critic=critic,
            certified=self.certified,
            sample_rate=schedule.sample_rate,
            capacity=capacity,
            noise_multiplier=budget.noise_multiplier,
            activation_bound=self.networks.activation_bound,
            steps=budget.steps,
            generator=torch_gen,
            ledger=ledger if self.certified else None,
            progress=reporter,
        )
        self._critic_in_memory = result.critic
        return {
            "generator": result.generator,
            "unit": "one image (with its label)",
            "noise_layer_sigma": budget.noise_multiplier,
            "capacity": capacity,
            "sample_rate": schedule.sample_rate,
            "expected_batch_size": schedule.expected_batch_size,
            "steps": result.steps,
            **({} if result.certified else {"not_certified": result.reason}),
        }

    # --------------------------------------------------------------- sample
    def sample(self, n: int, *, seed: int | None = None, label: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
        """n images in the input's form: (n, H, W) for a model fitted on an N×H×W array, else
        (n, C, H, W); uint8, or float in [0, 1], as the input was. Also their labels (the label
        names, or None for an unlabelled model). `label` fixes every image's label."""
        self._require_fitted()
        assert isinstance(self.generator, ImageUnitGenerator)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_SAMPLE:
            raise InputError(f"n must be a whole number from 1 to {MAX_SAMPLE:,}")
        imposed = None
        if label is not None:
            if not self.label_names:
                raise InputError("this model has no labels: it cannot generate by label")
            if str(label) not in self.label_names:
                raise InputError(f"{label!r} is not a label of this model; choose one of {', '.join(self.label_names)}")
            imposed = torch.full((int(n),), self.label_names.index(str(label)), dtype=torch.long)
        generator = torch.Generator(device="cpu").manual_seed(seed if seed is not None else secrets.randbits(63))
        chunks, codes_out = [], []
        for start in range(0, int(n), 4096):
            size = min(4096, int(n) - start)
            part = None if imposed is None else imposed[start : start + size]
            images, codes = self.generator.sample(size, generator, part)
            chunks.append(((images.clamp(-1, 1) + 1) / 2).cpu().numpy())
            if codes is not None:
                codes_out.append(codes.cpu().numpy())
        unit = np.concatenate(chunks)
        out = np.round(unit * 255).astype(np.uint8) if self.input_dtype == "uint8" else unit.astype(np.float32)
        if self.input_rank == 3:  # one channel (an N×H×W input has C = 1): drop its axis again
            out = out[:, 0]
        labels = np.array(self.label_names)[np.concatenate(codes_out)] if codes_out else None
        return out, labels

    # ------------------------------------------------------------ report, save, load
    def privacy_report(self) -> dict[str, Any]:
        """As every kind's, except for a recipe that earns no ε: then no ε at all, and why."""
        if self.certified:
            return super().privacy_report()
        self._require_fitted()
        return {
            "certified": False,
            "epsilon": None,
            "reason": NOT_CERTIFIED,
            "warning": f"NOT CERTIFIED: no ε is claimed. {NOT_CERTIFIED}",
            "ledger": [entry.to_dict() for entry in self.ledger.entries],
            **self._report_details(),
            "training": dict(self.training),
        }

    def _repr_details(self) -> dict[str, Any]:
        return {"recipe": self.recipe.name}

    def _report_details(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "recipe": self.recipe.name,
            "certified": self.certified,
            "unit_of_privacy": "one image with its label (add or remove one image)",
            "input_rule": INPUT_RULE,
            "label_source": self.training.get("label_source"),
            "shape_source": self.training.get("shape_source"),
            "image_shape": list(self.image_shape or ()),
            "units": self.training.get("units"),
        }

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        self._require_fitted()
        assert self.generator is not None and self.image_shape is not None
        check_model_destination(path, overwrite)
        metadata = {
            "kind": KIND,
            "recipe": self.recipe.name,
            "certified": self.certified,
            "epsilon_target": self.epsilon,
            "epsilon": self.ledger.epsilon(self.delta, self.accountant) if self.certified else None,
            "not_certified_reason": None if self.certified else NOT_CERTIFIED,
            "delta": self.delta,
            "accountant": self.accountant,
            "image_shape": list(self.image_shape),
            "label_names": list(self.label_names),
            "input_dtype": self.input_dtype,
            "input_rank": self.input_rank,
            "config": self.config.to_dict(),
            "networks": asdict(self.networks),
            "ledger": self.ledger.to_dict(),
            "training": self.training,
        }
        return write_model_dir(path, self.generator.state_dict(), metadata, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path) -> ImageSynthesizer:
        tensors, meta = read_model_dir(path)
        if meta.get("kind") != KIND:
            raise ModelFileError(f"{path} is not an image model")
        try:
            networks = dict(meta["networks"])
            for key in ("mlp_generator_hidden", "mlp_critic_hidden"):
                networks[key] = tuple(networks[key])
            if "label_guide_hidden" in networks:  # absent from files written before the label guide
                networks["label_guide_hidden"] = tuple(networks["label_guide_hidden"])
            synth = cls(
                epsilon=meta["epsilon_target"],
                delta=meta["delta"],
                accountant=meta["accountant"],
                recipe=meta["recipe"],
                **networks,
            )
            synth.config = TrainingConfig.from_dict(meta["config"])
            synth.ledger = PrivacyLedger.from_dict(meta["ledger"])
            synth.training = dict(meta["training"])
            synth.input_dtype = str(meta["input_dtype"])
            synth.input_rank = int(meta.get("input_rank", 4))  # files written before it: (n, C, H, W)
            synth.image_shape = tuple(int(s) for s in meta["image_shape"])  # type: ignore[assignment]
            synth.label_names = tuple(str(s) for s in meta["label_names"])
            assert synth.image_shape is not None and len(synth.image_shape) == 3
            assert synth.input_rank == 4 or (synth.input_rank == 3 and synth.image_shape[0] == 1)
            G = synth._generator(synth.image_shape, len(synth.label_names))
            G.load_state_dict(tensors, strict=True)
            G.eval()
            synth.generator = G
        except (KeyError, TypeError, ValueError, RuntimeError, AssertionError, InputError) as exc:
            raise ModelFileError(f"{path} holds an inconsistent model: {exc}") from None
        return synth


__all__ = ["ImageSettings", "ImageSynthesizer"]
