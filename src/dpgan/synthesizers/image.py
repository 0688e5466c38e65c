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

import secrets
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from dpgan.api import Synthesizer
from dpgan.devices import on_device, released_on_cpu
from dpgan.errors import InputError, ModelFileError
from dpgan.fit import run_fit
from dpgan.images.checks import INPUT_RULE, ImageGroups, ImageSet, check_images, check_shape
from dpgan.images.fit_kind import ImageDetails, ImageKind, check_conv_shape, image_generator
from dpgan.images.settings import IMAGE_DEFAULTS, MAX_SAMPLE, ImageSettings
from dpgan.models.image_units import ImageUnitGenerator
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.unit_rule import ReleasedTally
from dpgan.recipes.images import NOT_CERTIFIED, ImageRecipe, get_image_recipe
from dpgan.serialization import check_model_destination, read_model_dir, write_model_dir
from dpgan.threads import fit_threads
from dpgan.training.config import TrainingConfig
from dpgan.training.progress import FitProgressFn
from dpgan.training.strategies import critic_config

KIND = "image"


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
            check_conv_shape(self.recipe, given.shape)
        elif self.declared_shape is not None:
            check_conv_shape(self.recipe, self.declared_shape)
        kind = ImageKind(
            self.recipe, self.networks, self.config, conditional=self.conditional,
            declared_shape=self.declared_shape, classes=self.classes, label_prior=self.label_prior,
        )  # fmt: skip
        fitted = run_fit(kind, given, self.fit_budget(), progress)
        details: ImageDetails = fitted.data.details
        self.image_shape, self.label_names, self.ledger = details.shape, details.released.names, fitted.ledger
        self.released_units = details.released.tally  # for the CLI's summary line; training["units"] is saved
        self.input_dtype, self.input_rank = details.input_dtype, input_rank
        self.generator, self.training = fitted.generator, fitted.record
        self._critic_in_memory = fitted.critic  # white-box attacks only; never saved
        guide = kind.label_guide
        self._guide_in_memory = guide.classifier if guide is not None else None  # the bench's measure; never saved

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
            G = image_generator(
                synth.recipe, synth.networks, synth.config.noise_dim, synth.image_shape, len(synth.label_names)
            )
            G.load_state_dict(tensors, strict=True)
            G.eval()
            synth.generator = G
        except (KeyError, TypeError, ValueError, RuntimeError, AssertionError, InputError) as exc:
            raise ModelFileError(f"{path} holds an inconsistent model: {exc}") from None
        return synth


__all__ = ["ImageSettings", "ImageSynthesizer"]
