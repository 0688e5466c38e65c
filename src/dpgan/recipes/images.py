"""Image recipes: which networks, which loss, where the noise goes, and whether an ε is earned.

- `dcgan`: a DCGAN-style conditional conv GAN (dpgan.models.conv), WGAN-GP with DP-SGD on the
  critic through the engine's generic per-example backend; GroupNorm, never BatchNorm, in the critic.
- `dp-cgan`: Torkzadehmahani et al.'s DP-CGAN with fully connected networks (paper: MNIST), a BCE
  GAN with DP-SGD on the discriminator, per-example clipping or microbatches (2C, as for tables).
- `noise-layer`: Triastcyn & Faltings' Gaussian noise layer inside the discriminator, as published:
  NOT differentially private (../shared/privacy/README.md §2 (vi)): no ε is printed or saved.
- `noise-layer-sound`: the variant that is DP: public frozen layers before the noise, per-image
  clipping of the activation, each pass over real images a Gaussian release in the ledger.
- `gaussian` (the default): DP statistics first and only: each class's DP Gaussian (pixel mean,
  covariance in a public low-frequency DCT basis with centred, clipped coefficients; at ε ≥ 10 a DP
  mixture matched to a DP pixel histogram) on all of ε; no GAN steps.
Values marked (paper) come from the recipe's paper; the others are dpgan's choices.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpgan.errors import InputError
from dpgan.model_catalog import ModelEntry
from dpgan.recipes.dp_cgan import DP_CGAN
from dpgan.recipes.recipe import Recipe


@dataclass(frozen=True, kw_only=True)
class ImageRecipe(Recipe):
    """A recipe for images: besides a recipe's parts, its networks and whether it earns an ε.

    Its `plugins` are dpgan.images.settings.ImageSettings' switches the recipe turns on unless the
    user says: `mode_seeking` (λ of G's mode-seeking term, dpgan.training.mode_seeking; 0.3 for
    dcgan, chosen on the validation splits: digits, 3 seeds, ε = 3 and 10; MNIST-5k, seed 0,
    ε = 10: RESULTS §17b) and `label_guide` (G's DP-SGD label classifier, dpgan.images.label_guide,
    for labelled sets; on for dcgan: validation splits, RESULTS §17c)."""

    architecture: str  # "conv", "mlp" (dpgan.models.image_units) or "gaussian" (no network: a statistics model)
    certified: bool = True  # False: the recipe claims no ε (its published argument does not hold)
    conditional: bool = True  # labelled sets condition on the label unless the user says otherwise


DCGAN = ImageRecipe(
    name="dcgan",
    paper="Radford et al. 2016 (DCGAN) with Frigerio et al.'s WGAN-GP + DP-SGD on the critic",
    summary="conditional conv WGAN-GP (GroupNorm critic), DP-SGD on the critic, a DP label guide and "
    "mode seeking for G",
    strategy="dp-critic",
    architecture="conv",
    plugins={"mode_seeking": 0.3, "label_guide": True},
)
DP_CGAN_IMAGES = ImageRecipe(
    name="dp-cgan",
    paper=DP_CGAN.paper,
    summary="fully connected conditional BCE GAN, DP-SGD on the discriminator (per-image clipping or microbatches)",
    strategy="dp-critic",
    architecture="mlp",
    overrides={**DP_CGAN.overrides, "ema_decay": 0.99},
)
NOISE_LAYER = ImageRecipe(
    name="noise-layer",
    paper="Triastcyn & Faltings 2018, as published (not certified)",
    summary="a Gaussian noise layer inside the discriminator, as published: no ε is claimed",
    strategy="noise-layer",
    architecture="conv",
    certified=False,
)
NOISE_LAYER_SOUND = ImageRecipe(
    name="noise-layer-sound",
    paper="Triastcyn & Faltings 2018, sound variant (frozen public layers before the noise)",
    summary="frozen public layers before the noise, each pass over real images a Gaussian release in the ledger",
    strategy="noise-layer",
    architecture="conv",
)

GAUSSIAN = ImageRecipe(
    name="gaussian",
    paper="dpgan's DP statistics first (cf. DP-MERF's mean embeddings, DP-FETA's central images)",
    summary="each class's DP Gaussian: pixel mean and a low-frequency DCT covariance, on all of ε (no GAN steps)",
    strategy="released-statistics",
    architecture="gaussian",
)

# the recipe of a fit that names none: `gaussian` is ahead of `dcgan`, or level, on every set and ε
# measured (students and Fréchet distance: digits, MNIST-5k and Fashion-MNIST at ε = 1 and 10, bench/notes/24, 25, 29)
# and fits in seconds where the GAN takes minutes to hours on a CPU
DEFAULT_IMAGE_RECIPE = "gaussian"
IMAGE_RECIPES: dict[str, ImageRecipe] = {
    r.name: r for r in (DCGAN, DP_CGAN_IMAGES, NOISE_LAYER, NOISE_LAYER_SOUND, GAUSSIAN)
}
# The settings each recipe reads (dpgan.model_catalog; the GANs read the loop's too), so that the one
# check refuses the rest: the gaussian recipe its DP Gaussian's form, mixture and marginals alone; a
# GAN its networks' (the conv networks' for dcgan and the noise layer, whose critic takes only the
# width, with the noise layer's activation bound; the fully connected ones' for dp-cgan), and the
# dp-critic recipes their plug-ins too (dpgan.images.fit_kind: the label guide, the mode-seeking term
# and the warm start on the same DP Gaussian, whose form they read); the noise layer takes no plug-in
GAUSSIAN_SETTINGS = (
    "gaussian_basis", "gaussian_clip", "gaussian_shrink", "gaussian_components", "gaussian_lloyd_steps",
    "gaussian_steering_scale", "gaussian_copula", "gaussian_match_marginals", "gaussian_copula_bins",
    "gaussian_copula_fraction",
)  # fmt: skip
CONV_GENERATOR = ("width", "generator_width", "generator_upsampling")
NETWORK_SETTINGS = {
    "conv": (*CONV_GENERATOR, "critic_norm", "critic_projection"),
    "mlp": ("mlp_generator_hidden", "mlp_critic_hidden"),
}
NOISE_LAYER_SETTINGS = (*CONV_GENERATOR, "activation_bound")
DP_CRITIC_PLUGINS = (
    "mode_seeking", "label_guide", "label_guide_fraction", "label_guide_weight", "label_guide_epochs",
    "label_guide_hidden", "gaussian_warm_start", "gaussian_warm_start_fraction", "gaussian_warm_start_steps",
    "gaussian_anchor", *GAUSSIAN_SETTINGS,
)  # fmt: skip


def recipe_settings(recipe: ImageRecipe) -> tuple[str, ...]:
    """The ImageSettings fields `recipe` reads (dpgan.images.fit_kind builds from these alone)."""
    if recipe.strategy == "released-statistics":
        return GAUSSIAN_SETTINGS
    if recipe.strategy == "noise-layer":
        return NOISE_LAYER_SETTINGS
    return (*NETWORK_SETTINGS[recipe.architecture], *DP_CRITIC_PLUGINS)


IMAGE_MODELS = tuple(
    ModelEntry(
        r.name,
        "statistics" if r.strategy == "released-statistics" else "GAN",
        r.summary,
        recipe_settings(r),
        default=r.name == DEFAULT_IMAGE_RECIPE,
    )
    for r in IMAGE_RECIPES.values()
)
NOT_CERTIFIED = (
    "the noise-layer GAN as published is not differentially private: the layers before the noise "
    "are trained on raw, unclipped gradients of the images and the generator learns through them; no ε is claimed"
)


def get_image_recipe(name: str) -> ImageRecipe:
    if not isinstance(name, str) or name not in IMAGE_RECIPES:
        raise InputError(f"unknown image recipe {name!r}; choose one of {', '.join(IMAGE_RECIPES)}")
    return IMAGE_RECIPES[name]


__all__ = ["DEFAULT_IMAGE_RECIPE", "GAUSSIAN_SETTINGS", "IMAGE_MODELS", "IMAGE_RECIPES", "NOT_CERTIFIED", "ImageRecipe",
           "get_image_recipe"]  # fmt: skip
