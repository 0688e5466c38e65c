"""Image recipes: which networks, which loss, where the noise goes, and whether an ε is earned.

- `dcgan`: a DCGAN-style conditional conv GAN (dpgan.models.conv), WGAN-GP with DP-SGD on the
  critic through the engine's generic per-example backend; GroupNorm, never BatchNorm, in the critic.
- `dp-cgan`: Torkzadehmahani et al.'s DP-CGAN with fully connected networks (paper: MNIST), a BCE
  GAN with DP-SGD on the discriminator, per-example clipping or microbatches (2C, as for tables).
- `noise-layer`: Triastcyn & Faltings' Gaussian noise layer inside the discriminator, as published:
  NOT differentially private (../shared/privacy/README.md §2 (vi)): no ε is printed or saved.
- `noise-layer-sound`: the variant that is DP: public frozen layers before the noise, per-image
  clipping of the activation, each pass over real images a Gaussian release in the ledger.
Values marked (paper) come from the recipe's paper; the others are dpgan's choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpgan.errors import InputError
from dpgan.recipes.dp_cgan import DP_CGAN


@dataclass(frozen=True)
class ImageRecipe:
    name: str
    paper: str
    architecture: str  # "conv" or "mlp" (dpgan.models.image_units)
    strategy: str  # "dp-critic" (the engine's DP-SGD on D) or "noise-layer"
    certified: bool  # False: the recipe claims no ε (its published argument does not hold)
    overrides: dict[str, Any] = field(default_factory=dict)
    # λ of G's mode-seeking term (dpgan.training.mode_seeking) unless the user sets one; 0.3 for dcgan
    # (validation splits: digits, 3 seeds, ε = 3 and 10; MNIST-5k, seed 0, ε = 10: RESULTS §17b)
    mode_seeking: float = 0.0
    # G's label guide (dpgan.images.label_guide: a DP-SGD classifier charged before the critic) for
    # labelled sets unless the user says; on for dcgan (validation splits: RESULTS §17c)
    label_guide: bool = False


DCGAN = ImageRecipe(
    "dcgan",
    "Radford et al. 2016 (DCGAN) with Frigerio et al.'s WGAN-GP + DP-SGD on the critic",
    "conv",
    "dp-critic",
    True,
    mode_seeking=0.3,
    label_guide=True,
)
DP_CGAN_IMAGES = ImageRecipe(
    "dp-cgan",
    DP_CGAN.paper,
    "mlp",
    "dp-critic",
    True,
    {**DP_CGAN.overrides, "ema_decay": 0.99},
)
NOISE_LAYER = ImageRecipe(
    "noise-layer", "Triastcyn & Faltings 2018, as published (not certified)", "conv", "noise-layer", False
)
NOISE_LAYER_SOUND = ImageRecipe(
    "noise-layer-sound",
    "Triastcyn & Faltings 2018, sound variant (frozen public layers before the noise)",
    "conv",
    "noise-layer",
    True,
)

IMAGE_RECIPES: dict[str, ImageRecipe] = {r.name: r for r in (DCGAN, DP_CGAN_IMAGES, NOISE_LAYER, NOISE_LAYER_SOUND)}
NOT_CERTIFIED = (
    "the noise-layer GAN as published is not differentially private: the layers before the noise "
    "are trained on raw, unclipped gradients of the images and the generator learns through them; no ε is claimed"
)


def get_image_recipe(name: str) -> ImageRecipe:
    if not isinstance(name, str) or name not in IMAGE_RECIPES:
        raise InputError(f"unknown image recipe {name!r}; choose one of {', '.join(IMAGE_RECIPES)}")
    return IMAGE_RECIPES[name]


__all__ = ["IMAGE_RECIPES", "NOT_CERTIFIED", "ImageRecipe", "get_image_recipe"]
