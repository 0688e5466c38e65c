"""ImageSynthesizer: DP synthetic images (DP-CGAN, a DCGAN-style conv GAN, the noise-layer GAN).

The unit of privacy is one image with its label, and no image decides a public fact
(dpgan.privacy.unit_rule): the fit, the shape, the label names and their order, and model.json
depend on public inputs (the array's dtype and non-N shape, the declared `image_shape` and
`classes`, the folder's layout) and on DP releases in the ledger; an image that breaks a rule of
its own (dpgan.images.checks, .io) is dropped and counted. The fit is the one pipeline (dpgan.fit)
with the image kind (dpgan.images.fit_kind); sampling the released generator is post-processing.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from dpgan.api import (
    Synthesizer,
    check_sample_count,
    imposed_labels,
    network_settings,
    sampling_generator,
)
from dpgan.devices import on_device, released_on_cpu
from dpgan.errors import InputError, ModelFileError
from dpgan.fit import run_fit
from dpgan.images.checks import INPUT_RULE, ImageGroups, ImageSet, check_pixel_range, check_shape
from dpgan.images.fit_kind import (
    ImageDetails,
    ImageKind,
    check_conv_shape,
    image_generator,
    public_input,
    public_labels,
)
from dpgan.images.released_gaussian import ReleasedImageGaussian
from dpgan.images.sample_files import stream_images
from dpgan.images.sampling import render_samples, sample_chunks
from dpgan.images.settings import (
    IMAGE_DEFAULTS,
    MAX_SAMPLE,
    ImageSettings,
    match_marginals,
    mixture_components,
)
from dpgan.images.stream import ImageStream
from dpgan.images.stream_run import refuse_distributed, stream_input
from dpgan.model_catalog import model_entry, one_name, refuse_unread_settings
from dpgan.privacy.distributed import process_group_context
from dpgan.privacy.ledger import PrivacyLedger
from dpgan.privacy.unit_rule import ReleasedTally
from dpgan.recipes.images import DEFAULT_IMAGE_RECIPE, IMAGE_MODELS, NOT_CERTIFIED, ImageRecipe, get_image_recipe
from dpgan.serialization import (
    REPORT_KEY,
    check_model_destination,
    read_model_dir,
    statistics_file,
    write_model_dir,
)
from dpgan.tables.settings import loop_config
from dpgan.threads import fit_threads
from dpgan.training.context import FitContext
from dpgan.training.progress import FitProgressFn
from dpgan.training.progress_bar import fit_progress
from dpgan.training.strategies import critic_config

KIND = "image"


class ImageSynthesizer(Synthesizer):
    """Fit on N×H×W or N×C×H×W images (uint8, or float in [0, 1] or in a declared `pixel_range`)
    with optional labels, or a list of images (each read by its own dtype and shape:
    dpgan.images.lists); sample new ones in the input's form (uint8, or float in its range).

    `model` names the recipe (dpgan.recipes.images; `dpgan models --kind image` lists them; `recipe`
    is its other word); a setting that recipe does not read is one line (dpgan.model_catalog)."""

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 1e-5,
        accountant: str = "pld",
        seed: int | None = None,
        noise_multiplier: float | None = None,
        model: str | None = None,
        recipe: str | None = None,
        conditional: bool = True,
        classes: list[str] | tuple[str, ...] | None = None,
        label_prior: list[float] | np.ndarray | None = None,
        image_shape: tuple[int, int, int] | list[int] | None = None,
        pixel_range: tuple[float, float] | list[float] | None = None,
        device: str | torch.device = "cpu",
        threads: int | None = None,
        **settings: Any,
    ) -> None:
        budget = {"epsilon": epsilon, "delta": delta, "accountant": accountant, "seed": seed}
        super().__init__(**budget, noise_multiplier=noise_multiplier, device=device, threads=threads)
        self.recipe: ImageRecipe = get_image_recipe(one_name(model, recipe) or DEFAULT_IMAGE_RECIPE)
        given = {key for key, value in settings.items() if value is not None}  # before the networks' are taken out
        self.networks = network_settings(ImageSettings, settings)
        if self.networks.gaussian_components is None:  # the gaussian recipe's rule of the public ε, before any read
            chosen = mixture_components(epsilon) if self.recipe.architecture == "gaussian" else 1
            self.networks = replace(self.networks, gaussian_components=chosen)
        if self.networks.gaussian_match_marginals is None:  # the same: the public ε, the recipe, the copula
            gaussian = self.recipe.architecture == "gaussian" and not self.networks.gaussian_copula
            self.networks = replace(self.networks, gaussian_match_marginals=gaussian and match_marginals(epsilon))
        self.config = critic_config(IMAGE_DEFAULTS | self.recipe.overrides, settings)  # unknown: its own line
        # a setting the recipe does not read would do nothing: one line (dpgan.model_catalog)
        refuse_unread_settings(model_entry(IMAGE_MODELS, self.recipe.name, KIND), given, IMAGE_MODELS)
        self.conditional = bool(conditional)
        self.classes, self.label_prior = public_labels(classes, label_prior)
        # the declared (C, H, W): public, so a PNG folder's other shapes are dropped and nothing is bought
        self.declared_shape = None if image_shape is None else check_shape(image_shape)
        self.image_shape: tuple[int, int, int] | None = None  # the fitted shape
        # the declared range of float pixels, e.g. (0, 255): public, so the [0, 1] rule becomes this
        # range's and samples come back in it; uint8 images are 0-255 and take none
        self.declared_pixel_range = check_pixel_range(pixel_range)
        self.pixel_range: tuple[float, float] | None = None  # the fitted samples' range (float input only)
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
        images: np.ndarray | list | tuple | ImageSet | ImageGroups | ImageStream,
        labels: np.ndarray | None = None,
        *,
        progress: FitProgressFn | bool | None = None,
    ) -> ImageSynthesizer:
        """Train on `images` (an N×H×W or N×C×H×W array with, for a conditional model, its `labels`;
        or what dpgan.images.read_images gives, labels included: read a folder with `labelled=`
        declared, as the CLI does, so that its layout is public; or dpgan.images.open_images' stream,
        which the "gaussian" model reads a block at a time in flat memory, also under torchrun);
        spends at most (ε, δ), all of it recorded in `self.ledger` (nothing is claimed for
        `noise-layer`). Images that a rule of their own drops are counted in the DP tally
        (``training["units"]``), never refused.
        Trains on `self.device`; the fitted generator is on the CPU (dpgan.devices). `progress`, as
        for tables: a bar where a person watches (False: none), or a callable given (step, total, ε
        spent so far; NaN for the uncertified noise layer); the gaussian recipe takes no steps."""
        with on_device(self.device), fit_threads(self.threads):
            self._fit(images, labels, fit_progress(progress, self.accountant))
        released_on_cpu(self.generator, getattr(self, "_critic_in_memory", None))
        return self

    def _fit(
        self,
        images: np.ndarray | list | tuple | ImageSet | ImageGroups | ImageStream,
        labels: np.ndarray | None,
        progress: FitProgressFn | None = None,
    ) -> None:
        # refusals on public inputs come first, before any release; after a release only its output decides
        context = process_group_context()  # torchrun's ranks, or the one process (dpgan.images.stream_run)
        refuse_distributed(self.recipe, images, context)
        given = public_input(
            images, labels, conditional=self.conditional, declared_shape=self.declared_shape,
            pixel_range=self.declared_pixel_range,
        )  # fmt: skip
        ctx = None
        if isinstance(given, ImageStream):
            given = stream_input(self.recipe, given)
        if isinstance(given, ImageStream) and context.distributed:
            seed = context.lockstep_seed(given.digest(), "images", self.budget.seed)
            given, ctx = given.on_ranks(context), FitContext.open(replace(self.budget, seed=seed))
        # the caller's array rank is public (its form, not its content): samples come back in it; a
        # list's elements may differ in rank, so its samples are N×C×H×W (as read_images' are)
        one_array = not isinstance(images, (list, tuple, ImageSet, ImageGroups, ImageStream))
        input_rank = 3 if one_array and np.ndim(images) == 3 else 4
        if isinstance(given, (ImageSet, ImageStream)) and given.shape is not None:
            check_conv_shape(self.recipe, given.shape, self.networks)
        elif self.declared_shape is not None:
            check_conv_shape(self.recipe, self.declared_shape, self.networks)
        kind = ImageKind(
            self.recipe, self.networks, self.config, conditional=self.conditional,
            declared_shape=self.declared_shape, classes=self.classes, label_prior=self.label_prior,
            pixel_range=self.declared_pixel_range,
        )  # fmt: skip
        fitted = run_fit(kind, given, self.budget, progress, ctx)
        details: ImageDetails = fitted.data.details
        self.image_shape, self.label_names, self.ledger = details.shape, details.released.names, fitted.ledger
        self.released_units = details.released.tally  # for the CLI's summary line; training["units"] is saved
        self.input_dtype, self.pixel_range, self.input_rank = details.input_dtype, details.pixel_range, input_rank
        self.generator, self.training = fitted.model, fitted.record
        self._critic_in_memory = fitted.critic  # white-box attacks only; never saved
        guide = kind.label_guide
        self._guide_in_memory = guide.classifier if guide is not None else None  # the bench's measure; never saved

    # --------------------------------------------------------------- sample
    def sample(self, n: int, *, seed: int | None = None, label: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
        """n images in the input's form: (n, H, W) for a model fitted on an N×H×W array, else
        (n, C, H, W); uint8, or float32 in [0, 1] (in `pixel_range` when the fit declared one), as
        the input was (a list: float). Also their labels (the label names, or None for an
        unlabelled model). `label` fixes every image's label."""
        self._require_fitted()
        n = check_sample_count(n, MAX_SAMPLE)
        imposed = imposed_labels(label, self.label_names, n, "this model has no labels: it cannot generate by label")
        generator = sampling_generator(seed)
        return render_samples(
            self.generator, n, generator, imposed, self.input_dtype, self.input_rank, self.label_names,
            self.pixel_range,
        )  # fmt: skip

    def sample_to(
        self, path: str | Path, n: int, *, seed: int | None = None, label: Any = None, overwrite: bool = False
    ) -> Path:
        """The images of `sample(n, seed=seed, label=label)` streamed to `path` (an .npz or a PNG
        folder, dpgan.images.sample_files) a chunk at a time, memory flat in n; and their contact
        sheet beside it (returned)."""
        self._require_fitted()
        n = check_sample_count(n, MAX_SAMPLE)
        imposed = imposed_labels(label, self.label_names, n, "this model has no labels: it cannot generate by label")
        chunks = sample_chunks(
            self.generator, n, sampling_generator(seed), imposed, self.input_dtype, self.input_rank, self.pixel_range
        )
        out = Path(path)
        sheet = out.with_suffix(".png") if out.suffix else out.parent / f"{out.name}-contact-sheet.png"
        stream_images(out, chunks, n, self.label_names, overwrite=overwrite, pixel_range=self.pixel_range, sheet=sheet)
        return sheet

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
            "pixel_range": None if self.pixel_range is None else list(self.pixel_range),
            "input_rank": self.input_rank,
            "config": self.config.to_dict(),
            "networks": asdict(self.networks),
            "ledger": self.ledger.to_dict(),
            "training": self.training,
            REPORT_KEY: self.privacy_report(),  # what `dpgan inspect` reads (dpgan.inspection)
        }
        if isinstance(self.generator, ReleasedImageGaussian):  # a statistics model: its form and arrays alone
            metadata["statistics"] = {"model": self.recipe.name, **self.generator.form()}
            return write_model_dir(path, self.generator.state_dict(), metadata, overwrite=overwrite, statistics=True)
        return write_model_dir(path, self.generator.state_dict(), metadata, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path) -> ImageSynthesizer:
        tensors, meta = read_model_dir(path)
        if meta.get("kind") != KIND:
            raise ModelFileError(f"{path} is not an image model")
        try:
            budget = {"epsilon": meta["epsilon_target"], "delta": meta["delta"], "accountant": meta["accountant"]}
            synth = cls(**budget, recipe=meta["recipe"])
            # the saved networks as they were resolved at the fit (every field, the GAN-only ones too)
            synth.networks = network_settings(ImageSettings, ImageSettings.saved(meta["networks"]))
            synth.config = loop_config(meta["config"])
            synth.ledger = PrivacyLedger.from_dict(meta["ledger"])
            synth.training = dict(meta["training"])
            synth.input_dtype = str(meta.get("input_dtype", "uint8"))  # files written before it: uint8
            synth.pixel_range = check_pixel_range(meta.get("pixel_range"))  # before it: [0, 1] (None)
            assert synth.input_dtype in ("uint8", "float") and (synth.input_dtype == "float" or not synth.pixel_range)
            synth.input_rank = int(meta.get("input_rank", 4))  # files written before it: (n, C, H, W)
            synth.image_shape = tuple(int(s) for s in meta["image_shape"])  # type: ignore[assignment]
            synth.label_names = tuple(str(s) for s in meta["label_names"])
            assert synth.image_shape is not None and len(synth.image_shape) == 3
            assert synth.input_rank == 4 or (synth.input_rank == 3 and synth.image_shape[0] == 1)
            synth.generator = released_model(path, synth, meta, tensors)
        except (KeyError, TypeError, ValueError, RuntimeError, AssertionError, InputError) as exc:
            raise ModelFileError(f"{path} holds an inconsistent model: {exc}") from None
        return synth


def released_model(path: str | Path, synth: ImageSynthesizer, meta: dict[str, Any], tensors: dict) -> Any:
    """The saved model, strictly: the "gaussian" recipe's statistics from their form and arrays, or
    the GAN's generator with every weight fitting the network the settings describe. A "gaussian"
    model saved before format 3 (inside a network's buffers) is refused in one line: fit it again."""
    statistics = synth.recipe.strategy == "released-statistics"  # the one, "gaussian", had a network's format
    if statistics_file(path, meta, synth.recipe.name, statistics=statistics, saved_in_network=True):
        form = dict(meta["statistics"])
        if form.pop("model") != synth.recipe.name or form.get("image_shape") != list(synth.image_shape or ()):
            raise ValueError("the statistics file describes another model than model.json")
        if form.get("n_labels") != len(synth.label_names) or form.get("components") != synth.networks.mixture_size:
            raise ValueError("the statistics file describes another model than model.json")
        return ReleasedImageGaussian.from_files(form, tensors)
    assert synth.image_shape is not None
    G = image_generator(synth.recipe, synth.networks, synth.config.noise_dim, synth.image_shape, len(synth.label_names))
    G.load_state_dict(tensors, strict=True)
    return G.eval()


__all__ = ["ImageSettings", "ImageSynthesizer"]
