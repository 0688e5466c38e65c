"""The image kind's settings: the networks' shapes, the plug-ins' switches and shares (the loop's
own settings stay in TrainingConfig), the loop's defaults for images and the releases' shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpgan.errors import InputError
from dpgan.setting import setting

PROJECTIONS = ("full", "grid", "pooled")  # the conv critic's label projections (dpgan.models.conv; a test checks)
LABEL_SHARE = 0.02  # of ε, for the image tally (kept per label, dropped per reason)
SHAPE_SHARE = 0.01  # of ε, for the image shape of a PNG folder read without a declared shape
MAX_SAMPLE = 1_000_000
MAX_COMPONENTS = 32  # gaussian_components: Gaussians per class of the gaussian recipe's DP mixture
MIXTURE_COMPONENTS, MIXTURE_EPSILON = 4, 10.0  # the unset rule: K from this ε on (validation: bench/notes/25)
MATCH_EPSILON = 10.0  # the unset rule: matched marginals from this ε on (validation: bench/notes/29)
MATCH_SOURCE_BINS = 256  # matched marginals: the bins of the table of the Gaussian's own marginal


def mixture_components(epsilon: float | None) -> int:
    """The gaussian recipe's Gaussians per class where the user set none: a function of the public
    ε alone (one Gaussian without a target ε: a fit at a given noise multiplier)."""
    return MIXTURE_COMPONENTS if epsilon is not None and epsilon >= MIXTURE_EPSILON else 1


def match_marginals(epsilon: float | None) -> bool:
    """Whether the gaussian recipe matches its draws to a DP pixel histogram where the user did not
    say: a function of the public ε alone (off without a target ε)."""
    return epsilon is not None and epsilon >= MATCH_EPSILON


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
    width: int = setting(16, "conv channels of the critic's first stage (doubled per stage)", metavar="C")
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
    critic_projection: str = setting(
        "full",
        "how the conv critic reads the label: against every activation, 3×3 region means, or their mean",
        choices=PROJECTIONS,
    )
    mlp_generator_hidden: tuple[int, ...] = (256, 512)
    mlp_critic_hidden: tuple[int, ...] = (512, 256)
    # noise-layer recipes: the activation bound R and the noise std σ·R in the noise layer
    activation_bound: float = 1.0
    # λ of the generator's mode-seeking term (dpgan.training.mode_seeking; free of privacy cost);
    # None: the recipe's (0.3 for dcgan, chosen on the validation splits: bench/RESULTS.md §17b)
    mode_seeking: float | None = setting(None, "λ of G's mode-seeking term (free of privacy cost)", metavar="λ")
    # a DP-SGD classifier of the label (trained first, at label_guide_fraction of ε) whose
    # cross-entropy on generated images joins G's loss (dpgan.images.label_guide); dp-critic recipes,
    # labelled sets; None: the recipe's (on for dcgan, chosen on validation splits: RESULTS §17c)
    label_guide: bool | None = setting(None, "a DP-SGD label classifier guides G (labelled sets, dp-critic recipes)")
    label_guide_fraction: float = setting(0.1, "with --label-guide: its share of ε", metavar="F")
    label_guide_weight: float = 1.0
    label_guide_epochs: float = 10.0
    label_guide_hidden: tuple[int, ...] = ()

    # the "gaussian" recipe (dpgan.images.gaussian): the share of the DCT grid's low-frequency corner
    # kept as its covariance's basis, the clip of an image's centred coefficients as a share of the
    # pixels' largest norm √(C·H·W), and the eigenvalue shrink; chosen on the validation splits of the
    # digits, MNIST-5k and Fashion-MNIST at ε = 1 and 10 (students and Fréchet distance: bench/notes/24)
    gaussian_basis: float = setting(0.4, "gaussian recipe: share of the low frequencies kept", metavar="F")
    # a GAN recipe's G warm-started on the same release (at gaussian_warm_start_fraction of ε), then,
    # with gaussian_anchor > 0, held to it by that weight in each generator step
    gaussian_warm_start: bool = setting(False, "warm-start G on each class's DP Gaussian (dp-critic recipes)")
    gaussian_warm_start_fraction: float = 0.3
    gaussian_warm_start_steps: int = 1000
    gaussian_anchor: float = 0.0
    gaussian_shrink: str = "spike"  # how the covariance's noisy eigenvalues are shrunk (dpgan.statistics.gaussian)
    gaussian_clip: float = setting(0.3, "gaussian recipe: clip of centred coefficients, share of √pixels", metavar="F")
    # a DP mixture per class (dpgan.statistics.mixture): K cells found by DP Lloyd steps, each its own
    # Gaussian; the steering releases (the start and the Lloyd steps) at `steering_scale` times the
    # cells' noise. Unset: `mixture_components(ε)`, a rule of the public ε chosen on validation splits
    # (bench/notes/25), resolved by the facade so that a saved model holds the number it was fitted with
    gaussian_components: int | None = setting(
        None,
        "gaussian recipe: Gaussians per class, a DP mixture",
        metavar="K",
        shown=f"{MIXTURE_COMPONENTS} at ε ≥ {MIXTURE_EPSILON:g}, else one",
    )
    gaussian_lloyd_steps: int = 2
    gaussian_steering_scale: float = 3.0
    # a DP copula around it (dpgan.statistics.copula): each class's pixel values in a DP histogram of
    # gaussian_copula_bins bins at gaussian_copula_fraction of ε, pooled over the pixels, and the
    # Gaussian (or mixture) of the normal scores through it on the rest: the background stays at the
    # data's values instead of a Gaussian's speckle (bench/notes/27)
    gaussian_copula: bool = setting(
        False, "gaussian recipe: each class's DP pixel histogram, then the Gaussian of scores"
    )
    # the same histogram with the Gaussian (or mixture) of the pixels themselves, its draws matched to
    # the histogram afterwards (dpgan.statistics.matched; bench/notes/29): the mixture's accuracy with
    # most of the copula's look; gaussian_copula_bins and gaussian_copula_fraction size the histogram
    gaussian_match_marginals: bool | None = setting(
        None,
        "gaussian recipe: each class's DP pixel histogram; the Gaussian's draws matched to it",
        shown=f"on at ε ≥ {MATCH_EPSILON:g} unless gaussian_copula, else off",
    )
    gaussian_copula_bins: int = 32
    gaussian_copula_fraction: float = 0.2

    @classmethod
    def saved(cls, networks: dict[str, Any]) -> dict[str, Any]:
        """A model file's `networks` entry as keyword arguments (JSON lists back to tuples; files
        written before the label guide have no `label_guide_hidden`)."""
        out = dict(networks)
        for key in ("mlp_generator_hidden", "mlp_critic_hidden", "label_guide_hidden"):
            if key in out:
                out[key] = tuple(out[key])
        out.setdefault("gaussian_match_marginals", False)  # files written before the option: none
        return out

    @property
    def conv_generator_width(self) -> int:
        return self.width if self.generator_width is None else self.generator_width

    @property
    def marginal_bins(self) -> int:
        """The copula's (or the matched marginals') histogram bins, 0 without one (the gaussian
        recipe and its warm start)."""
        return self.gaussian_copula_bins if self.gaussian_copula or self.gaussian_match_marginals else 0

    @property
    def marginal_source_bins(self) -> int:
        """The bins of the table of the Gaussian's own marginal that matching reads, 0 without it."""
        return MATCH_SOURCE_BINS if self.gaussian_match_marginals else 0

    @property
    def mixture_size(self) -> int:
        """K, the Gaussians per class (unset: one; the facade sets it from ε before a fit)."""
        return 1 if self.gaussian_components is None else self.gaussian_components

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
        if self.critic_projection not in PROJECTIONS:
            raise InputError(f"critic_projection must be one of {', '.join(map(repr, PROJECTIONS))}")
        if self.critic_norm not in ("group", "none"):
            raise InputError("critic_norm must be 'group' or 'none' (BatchNorm would couple the images of a batch)")
        shares = (self.gaussian_basis, self.gaussian_clip)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 < v <= 1.0 for v in shares):
            raise InputError("gaussian_basis and gaussian_clip must be in (0, 1]")
        if self.gaussian_shrink not in ("level", "spike"):
            raise InputError("gaussian_shrink must be 'level' or 'spike'")
        if not (0.0 < self.gaussian_warm_start_fraction < 1.0 and 0 <= self.gaussian_warm_start_steps <= 100_000):
            raise InputError("gaussian_warm_start_fraction must be in (0, 1) and its steps from 0 to 100,000")
        if not self.gaussian_anchor >= 0:
            raise InputError("gaussian_anchor must be ≥ 0")
        components = self.mixture_size
        whole = (components, self.gaussian_lloyd_steps)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in whole) or not (
            1 <= components <= MAX_COMPONENTS and 0 <= self.gaussian_lloyd_steps <= 20
        ):
            raise InputError(
                f"gaussian_components must be from 1 to {MAX_COMPONENTS}, gaussian_lloyd_steps from 0 to 20"
            )
        if not (isinstance(self.gaussian_steering_scale, (int, float)) and 1.0 <= self.gaussian_steering_scale <= 100):
            raise InputError("gaussian_steering_scale must be from 1 to 100")
        if self.gaussian_match_marginals not in (None, True, False):
            raise InputError("gaussian_match_marginals must be true or false")
        if self.gaussian_copula and self.gaussian_match_marginals:
            raise InputError("gaussian_copula and gaussian_match_marginals are two uses of one histogram: choose one")
        bins = self.gaussian_copula_bins
        if isinstance(bins, bool) or not isinstance(bins, int) or not 2 <= bins <= 4096:
            raise InputError("gaussian_copula_bins must be a whole number from 2 to 4096")
        if not (isinstance(self.gaussian_copula_fraction, (int, float)) and 0.0 < self.gaussian_copula_fraction < 0.5):
            raise InputError("gaussian_copula_fraction must be in (0, 0.5)")
        if not self.activation_bound > 0:
            raise InputError("activation_bound must be positive")
        if self.mode_seeking is not None and not (
            isinstance(self.mode_seeking, (int, float)) and 0 <= self.mode_seeking <= 100
        ):
            raise InputError("mode_seeking must be a number from 0 to 100")


__all__ = [
    "IMAGE_DEFAULTS",
    "MIXTURE_COMPONENTS",
    "MIXTURE_EPSILON",
    "MATCH_EPSILON",
    "MATCH_SOURCE_BINS",
    "match_marginals",
    "mixture_components",
    "LABEL_GUIDE_BATCH",
    "LABEL_SHARE",
    "MAX_SAMPLE",
    "MODE_SEEKING_PAIRS",
    "SHAPE_SHARE",
    "ImageSettings",
]
