"""The sequence kind's settings: the networks' shapes and the plug-ins' switches and shares (the
loop's own settings stay in TrainingConfig), and the loop's defaults for series."""

from __future__ import annotations

from dataclasses import dataclass

from dpgan.errors import InputError
from dpgan.model_catalog import ModelEntry
from dpgan.setting import setting

CRITICS = ("mlp", "lstm")  # the critics dpgan.models.sequence_units builds (a test checks they agree)
# The series' statistics models (dpgan.model): DP statistics on all of ε after the data releases are
# the model, no network, no GAN steps. Each is one entry here: its one line, and where its released
# model lives ("module:class", loaded on first use: this module stays free of PyTorch for the command
# line); the class releases (`release`), samples, and writes and reads its files
# (dpgan.sequences.statistics_models). Its mechanism and sensitivities live in dpgan.statistics.
STATISTICS_MODELS: dict[str, tuple[str, str]] = {
    "gaussian": (
        "the DP Gaussian of each label's series: no GAN steps",
        "dpgan.sequences.released_gaussian:ReleasedSeriesGaussian",
    ),
    "gaussian-copula": (
        "each label's DP value histogram and the DP Gaussian of scores through it",
        "dpgan.sequences.released_gaussian:ReleasedSeriesGaussian",
    ),
    "independent": (
        "each label's DP histogram of every step's value, drawn independently: a plain baseline",
        "dpgan.statistics.independent:DPIndependentMarginals",
    ),
}
# what generates the series (issue 35): the LSTM GAN alone; a statistics model alone; or the
# composition, the DP Gaussian released first and a GAN residual trained on the rest of ε
GAN_MODELS = ("gan", "gaussian+gan")
MODELS = (*GAN_MODELS, *STATISTICS_MODELS)
DEFAULT_MODEL = "gaussian-copula"

# The settings each model reads (dpgan.model_catalog; the GANs read the loop's too): a setting given
# that the chosen model does not read is one line. The networks' shapes are the GANs'; the plug-ins
# (label profile, step and moment anchors, label guide) the LSTM GAN's alone; the DP Gaussian's form
# is the "gaussian" model's and the base's of "gaussian+gan"; the copula's is its own.
GAN_NETWORKS = ("critic", "critic_hidden", "generator_hidden", "generator_layers", "step_noise", "series_noise",
                "label_projection", "critic_differences")  # fmt: skip
GAN_PLUGINS = ("label_profile", "profile_offset", "label_guide", "label_guide_fraction", "label_guide_weight",
               "label_guide_epochs", "step_anchor", "step_anchor_fraction", "step_anchor_warmup", "step_anchor_weight",
               "moment_anchor")  # fmt: skip
GAUSSIAN_FORM = ("gaussian_basis", "gaussian_clip", "gaussian_shrink", "gaussian_residual")
COPULA_SETTINGS = ("copula_bins", "copula_fraction", "copula_basis", "copula_clip", "copula_residual",
                   "gaussian_shrink")  # fmt: skip
SEQUENCE_MODELS = (
    ModelEntry("gan", "GAN", "an LSTM GAN, DP-SGD on its critic", (*GAN_NETWORKS, *GAN_PLUGINS)),
    ModelEntry(
        "gaussian+gan",
        "GAN on statistics",
        "draws of the DP Gaussian plus a GAN's residual",
        (*GAN_NETWORKS, "gaussian_base_fraction", "gaussian_base_gate", "base_anchor", *GAUSSIAN_FORM),
    ),
    ModelEntry("gaussian", "statistics", STATISTICS_MODELS["gaussian"][0], GAUSSIAN_FORM),
    ModelEntry("gaussian-copula", "statistics", STATISTICS_MODELS["gaussian-copula"][0], COPULA_SETTINGS, default=True),
    ModelEntry("independent", "statistics", STATISTICS_MODELS["independent"][0]),
)
RELEASED_MODELS = tuple(STATISTICS_MODELS)  # DP statistics on all of ε, no GAN steps
# the statistics models an earlier dpgan saved inside a network's weights (model format 2, before
# format 3 held the released arrays alone): such a file is "fit it again" ("independent" came later)
NETWORK_SAVED_MODELS = ("gaussian", "gaussian-copula")
COUNT_EVENT = "unit count (kept, dropped per reason)"
COUNT_SHARE = 0.01  # of ε, for the counts


def _check_form(prefix: str, basis: object, clip: object, residual: object) -> None:
    """A Gaussian form's shares lie in (0, 1] or are None, and a residual needs a basis."""
    for share in (basis, clip, residual):
        if share is not None and not (
            isinstance(share, (int, float)) and not isinstance(share, bool) and 0.0 < share <= 1.0
        ):
            raise InputError(f"{prefix}_basis, {prefix}_clip and {prefix}_residual must be in (0, 1] (or None)")
    if residual is not None and basis is None:
        raise InputError(f"{prefix}_residual needs {prefix}_basis: the residual is what the basis leaves out")


@dataclass(frozen=True)
class SequenceSettings:
    """The sequence networks' shapes and the step-statistics anchor (the loop's settings stay in
    TrainingConfig)."""

    critic: str = setting("mlp", "the critic on a series", choices=CRITICS)
    critic_hidden: tuple[int, ...] = (128, 128)
    generator_hidden: int = 64
    generator_layers: int = 1
    step_noise: int = 4
    series_noise: int = 0  # a series-wide latent of this size beside the per-step noise
    # the label enters the MLP critic as a projection term instead of input channels
    label_projection: bool = False
    # G draws labels from the released label shares and adds the released per-label, per-step mean
    # profile (the step statistics, at step_anchor_fraction of ε) to its LSTM's read-out
    label_profile: bool = False
    profile_offset: bool = True  # False: only the label shares
    # a DP-SGD classifier of the label (at label_guide_fraction of ε) guides G (series unit only)
    label_guide: bool = False
    label_guide_fraction: float = 0.1
    label_guide_weight: float = 1.0
    label_guide_epochs: float = 5.0
    # DP per-label, per-step means and spreads as a generator plug-in (dpgan.sequences.anchor)
    step_anchor: bool = setting(False, "DP per-label, per-step means and spreads warm-start and anchor G")
    step_anchor_fraction: float = 0.2
    step_anchor_warmup: int = 300
    step_anchor_weight: float = 10.0
    # the DP Gaussian's per-label mean and covariance (dpgan.sequences.baseline) as a generator
    # plug-in, at step_anchor_fraction of ε, with the same warm start and weight (series unit only)
    moment_anchor: bool = setting(False, "the DP Gaussian's per-label mean and covariance anchor G")
    # "gaussian+gan": G = a draw of the DP Gaussian (dpgan.sequences.baseline, released at
    # gaussian_base_fraction of ε) plus the LSTM's residual times a learned gate that starts at
    # gaussian_base_gate; "gaussian": the draw alone (both take an entity unit: noise × its k series).
    # The default, "gaussian-copula", was chosen on the validation splits of the water days (ε = 1,
    # 3, 10), the load profiles and ItalyPowerDemand (ε = 3), frozen before their test splits were
    # scored (bench/notes/25 and 26): far ahead of "gaussian" on the water days at ε ≤ 3, level elsewhere
    # (chosen by `--model`, every kind's word, not a flag of its own: SEQUENCE_MODELS lists them)
    model: str = DEFAULT_MODEL
    gaussian_base_fraction: float = setting(0.85, "with --model gaussian+gan: the Gaussian's share of ε", metavar="F")
    gaussian_base_gate: float = 0.0
    # "gaussian+gan": the weight of the penalty holding G's mean and covariance to the released
    # Gaussian's (0: the residual is free; dpgan.sequences.plugins.GaussianBasePlugin). This and the
    # 0.85 share were chosen on the water days' validation split at ε = 3 (bench/notes/23): free
    # residual at 0.6, DTW ratio 5.90 / TSTR 0.393; anchored at 0.6, 4.13 / 0.597; at 0.85, 3.16 / 0.619
    base_anchor: float = 10.0
    # the DP Gaussian's form (dpgan.statistics.gaussian): None, the uncentred moments of the whole
    # series (Δ d); a share of the steps' low DCT frequencies as its covariance's basis, and/or the
    # centred coefficients clipped to a share of √d (Δ c²)
    gaussian_basis: float | None = None  # (library settings: the image recipe's flags share these names)
    gaussian_clip: float | None = None
    gaussian_shrink: str = "level"  # the eigenvalue shrink (dpgan.statistics.gaussian: "level" or "spike")
    # with gaussian_basis: the residual's spectrum outside the basis, its coefficients clipped to this
    # share of √d (a fourth release; dpgan.statistics.gaussian), so draws keep the series' wiggles
    gaussian_residual: float | None = None
    critic_differences: bool = False  # the critic also reads the first differences of the values
    # "gaussian-copula" (dpgan.statistics.copula): each label's values pooled into a DP histogram of
    # copula_bins bins at copula_fraction of ε, the DP Gaussian of normal scores through it on the rest
    copula_bins: int = 32
    copula_fraction: float = 0.2
    # the copula's scores' Gaussian in its own public form (dpgan.statistics.gaussian): the steps'
    # low DCT frequencies (copula_basis, a share), centred scores clipped to a share of √d
    # (copula_clip), and the residual's spectrum outside the basis, clipped to a share of √d
    # (copula_residual: the days' quick wiggles); None turns one off. Chosen on validation splits
    # (water days at ε = 1, 3, 10; load profiles and ItalyPowerDemand at ε = 3; bench/notes/26): the
    # highest TSTR of the forms never behind the DP Gaussian on the water days (water, ε = 3: TSTR
    # 0.822 against 0.745 without them, the two-sample score 0.43 against 0.50)
    copula_basis: float | None = 0.25
    copula_clip: float | None = 0.3
    copula_residual: float | None = 0.05

    @property
    def released_only(self) -> bool:
        """The model is DP statistics on all of ε, no GAN steps ("gaussian", "gaussian-copula")."""
        return self.model in RELEASED_MODELS

    @property
    def gaussian_base(self) -> bool:
        """G starts from a draw of the DP Gaussian ("gaussian+gan")."""
        return self.model == "gaussian+gan"

    def check(self) -> None:
        if self.model not in MODELS:
            raise InputError(f"model must be one of {', '.join(MODELS)}, not {self.model!r}")
        if self.critic not in CRITICS:
            raise InputError(f"critic must be one of {', '.join(CRITICS)}, not {self.critic!r}")
        sizes = (*self.critic_hidden, self.generator_hidden, self.generator_layers, self.step_noise)
        if not all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 4096 for s in sizes):
            raise InputError("network sizes must be whole numbers from 1 to 4096")
        if not 0.0 < self.step_anchor_fraction < 0.5:
            raise InputError("step_anchor_fraction must be in (0, 0.5)")
        if self.label_projection and self.critic != "mlp":
            raise InputError("label_projection needs the mlp critic")
        if (
            isinstance(self.series_noise, bool)
            or not isinstance(self.series_noise, int)
            or not 0 <= self.series_noise <= 4096
        ):
            raise InputError("series_noise must be a whole number from 0 to 4096")
        if not 0.0 < self.label_guide_fraction < 0.5 or not self.label_guide_epochs > 0:
            raise InputError("label_guide_fraction must be in (0, 0.5) and label_guide_epochs > 0")
        weights = (self.step_anchor_weight, self.label_guide_weight, self.base_anchor)
        if self.step_anchor_warmup < 0 or not all(w >= 0 for w in weights):
            raise InputError("step_anchor_warmup and the plug-ins' weights must be ≥ 0")
        for prefix in ("gaussian", "copula"):  # each Gaussian form: basis, clip and residual shares
            _check_form(prefix, *(getattr(self, f"{prefix}_{part}") for part in ("basis", "clip", "residual")))
        if self.gaussian_shrink not in ("level", "spike"):
            raise InputError("gaussian_shrink must be 'level' or 'spike'")
        bins = self.copula_bins
        if isinstance(bins, bool) or not isinstance(bins, int) or not 2 <= bins <= 4096:
            raise InputError("copula_bins must be a whole number from 2 to 4096")
        if not (isinstance(self.copula_fraction, (int, float)) and 0.0 < self.copula_fraction < 0.5):
            raise InputError("copula_fraction must be in (0, 0.5)")
        if self.model != "gan":
            if not 0.0 < self.gaussian_base_fraction <= 0.85:
                raise InputError("gaussian_base_fraction must be in (0, 0.85]: the critic needs the rest of ε")
            if not -10.0 <= self.gaussian_base_gate <= 10.0:
                raise InputError("gaussian_base_gate must be in [-10, 10]")


# dp-GAN's loop on series: the tabular defaults with a smaller batch cap (a few thousand series)
SEQUENCE_DEFAULTS = {"batch_size": 256, "epochs": 60.0, "ema_decay": 0.99}


__all__ = ["COUNT_EVENT", "COUNT_SHARE", "DEFAULT_MODEL", "GAN_MODELS", "MODELS", "NETWORK_SAVED_MODELS",
           "RELEASED_MODELS", "SEQUENCE_DEFAULTS", "SEQUENCE_MODELS", "STATISTICS_MODELS",
           "SequenceSettings"]  # fmt: skip
